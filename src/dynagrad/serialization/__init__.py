"""Checkpoints: ``save(obj, f)`` and ``load(f)`` in PyTorch's own file format.

``dynagrad.save`` writes what ``torch.save`` writes: a zip archive holding ``data.pkl`` (the
object, pickled with protocol 2, tensors as calls of ``torch._utils._rebuild_tensor_v2`` on
storages), one ``data/<key>`` record per storage (its raw bytes, 64-byte aligned), and
``version``, ``byteorder``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id``. Files move both ways: ``torch.load(path)`` reads what
dynagrad saved (``weights_only=True`` included), ``dynagrad.load(path)`` reads what
PyTorch saved. Neither needs the other installed: dynagrad writes PyTorch's global names
without importing torch and maps them onto its own rebuild functions when reading.

Loading:

* ``weights_only=True`` (the default, as in PyTorch 2.6+) never runs code from the file: a
  restricted unpickler allows PyTorch's allowlist (tensors, Parameters, storages, dtypes,
  ``torch.Size``, ``torch.device``, ``OrderedDict``, ``Counter``, sets, bytes, complex)
  plus what ``add_safe_globals`` / ``safe_globals`` add. Anything else raises
  ``pickle.UnpicklingError`` ("Weights only load failed ...") naming the global and how to
  allow it. NumPy arrays are refused by default, as PyTorch 2.13 refuses them; allow them
  with ``add_safe_globals([numpy._core.multiarray._reconstruct, numpy.ndarray,
  numpy.dtype, type(numpy.dtype('float32'))])``.
* ``weights_only=False`` unpickles anything (whole modules, custom classes), so only for
  files you trust.
* A truncated, corrupted or hostile file raises ``CheckpointError`` (a ``RuntimeError``)
  naming the file and the problem. Every record's size is checked against the bytes the
  file holds (and its CRC-32 against its data) before anything is allocated for it, so a
  file cannot make ``load`` allocate memory it does not itself contain.
* ``map_location``, ``mmap=True`` and the legacy (pre-1.6, non-zip) format work as in
  ``torch.load`` (a legacy file loads onto the CPU only; map it there and move it).
* Loaded tensors that were views of one another share memory and one version counter.
* Safetensors files, including checkpoints saved by dynagrad before it wrote PyTorch's
  format, still load (the previous layout keeps its checksums and checks).

Where dynagrad differs from PyTorch, on purpose: tensors viewing one memory with different
dtypes are saved (as separate copies) where ``torch.save`` refuses them; dynagrad's own
Tensor subclasses (0.3's ``Variable``) are saved as plain tensors; ``dynagrad.save`` takes
only the standard ``pickle`` module as ``pickle_module``; and the weights-only loader also
bounds what PyTorch's does not (tuple nesting, hash-colliding dict keys, the arguments of
``bytearray``/``set``/``complex``), refuses calling ``torch.Tensor`` (a legacy constructor
that allocates from sizes) and checks every tensor against its storage's bounds.

Writes to a path are atomic: the bytes go to a temporary file in the same directory, which
is flushed, fsynced and renamed over the target (``os.replace``), then the directory is
fsynced. A crash or an exception mid-save leaves the previous file as it was.

For safetensors files, see ``dynagrad.utils.safetensors``.
"""
from .files import CheckpointError
from .reader import get_unsafe_globals_in_checkpoint, load
from .unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .writer import DEFAULT_PROTOCOL, save

import os as _os
from typing import IO as _IO, Any as _Any, Callable as _Callable, Union as _Union

# The type aliases of torch.serialization that libraries annotate with (pyro imports
# MAP_LOCATION): what ``load``'s map_location and ``save``/``load``'s f accept.
MAP_LOCATION = _Union[_Callable[[_Any, str], _Any], 'dynagrad.device', str, dict[str, str], None]
FileLike = _Union[str, _os.PathLike, _IO[bytes]]


class SourceChangeWarning(Warning):
    """PyTorch's warning when a pickled module's source changed since it was saved."""

__all__ = ['save', 'load', 'CheckpointError', 'add_safe_globals', 'get_safe_globals',
           'clear_safe_globals', 'safe_globals', 'get_unsafe_globals_in_checkpoint',
           'DEFAULT_PROTOCOL', 'SourceChangeWarning']

