"""Safetensors files, as ``safetensors.torch`` reads and writes them.

``save_file(tensors, filename, metadata=None)`` / ``load_file(filename, device='cpu')`` and
``save(tensors, metadata=None) -> bytes`` / ``load(data) -> dict``: a flat dict of name ->
contiguous tensor, with optional text metadata. The files are interchangeable with
``safetensors.torch``'s. Unlike PyTorch's checkpoint format (``dynagrad.save``), a
safetensors file holds no pickle at all, only a JSON header and raw bytes.

Saving needs the ``safetensors`` package (``pip install dynagrad[checkpoints]``), imported
only when ``save``/``save_file`` is called; loading reads the format itself, checking it as
``dynagrad.load`` does. Writes to a path are atomic, as ``dynagrad.save``'s.
"""
import os

from ..serialization import CheckpointError, safetensors_layout
from ..serialization.files import atomic_write, write_bytes
from ..serialization.rebuild import check_location
from ..tensor import Tensor

__all__ = ['save', 'save_file', 'load', 'load_file']


def _numpy_module():
    try:
        import safetensors.numpy as stn
    except ImportError as e:
        raise ImportError('dynagrad.utils.safetensors reads and writes safetensors files '
                          'with the safetensors package: pip install dynagrad[checkpoints]'
                          ) from e
    return stn


def _byte_span(a):
    """[first byte, one past the last byte) of a non-empty array's memory."""
    lo = hi = a.__array_interface__['data'][0]
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + a.itemsize


def _arrays(tensors):
    """The arrays to write, after safetensors.torch's checks (in its words)."""
    if not isinstance(tensors, dict):
        raise ValueError(f'Expected a dict of [str, dynagrad.Tensor] but received '
                         f'{type(tensors)}')
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise ValueError(f'Key `{k!r}` is invalid, expected a str but received {type(k)}')
        if not isinstance(v, Tensor):
            raise ValueError(f'Key `{k}` is invalid, expected dynagrad.Tensor but received '
                             f'{type(v)}')
    items = [(k, v._data if v.device.type == 'cpu' else v.detach().cpu()._data)
             for k, v in tensors.items()]
    spans = sorted((lo, hi, k) for k, a in items if a.size for lo, hi in [_byte_span(a)])
    shared = []
    reach, owner = None, None
    for lo, hi, k in spans:
        if reach is not None and lo < reach:
            shared.append({owner, k})
        if reach is None or hi > reach:
            reach, owner = hi, k
    if shared:
        raise RuntimeError(f'Some tensors share memory, this will lead to duplicate memory on '
                           f'disk and potential differences when loading them again: '
                           f'{shared}. A potential way to correctly save your model is to '
                           f'save only the full tensors, or `.clone()` the views.')
    out = {}
    for k, a in items:
        if not a.flags.c_contiguous:
            raise ValueError(f'You are trying to save a non contiguous tensor: `{k}` which is '
                             f'not allowed. It either means you are trying to save tensors '
                             f'which are reference of each other in which case it\'s '
                             f'recommended to save only the full tensors, and reslice at load '
                             f'time, or simply call `.contiguous()` on your tensor to pack it '
                             f'before saving.')
        out[k] = a
    return out


def _metadata(metadata):
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise ValueError('metadata must be a dict of str -> str')
    return metadata


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding ``tensors`` (a dict of name -> tensor)."""
    arrays = _arrays(tensors)
    return _numpy_module().save(arrays, metadata=_metadata(metadata))


def save_file(tensors, filename, metadata=None):
    """Write ``tensors`` (a dict of name -> tensor) to the safetensors file ``filename``,
    atomically: a failure leaves the previous file as it was."""
    data = save(tensors, metadata)
    atomic_write(os.fspath(filename), lambda fh: write_bytes(fh, data),
                 who='dynagrad.utils.safetensors.save_file')


def _read(buf, name, who):
    if not buf:
        raise CheckpointError(name, 'the file is empty (0 bytes)', who)
    _meta, entries, start = safetensors_layout.parse_header(buf, name, who)
    return safetensors_layout.load_plain(buf, name, entries, start, who)


def load(data):
    """The tensors of a safetensors file given as bytes, as a dict of name -> tensor.
    The file is checked as ``dynagrad.load`` checks one (``CheckpointError`` if it is
    truncated, corrupted or malformed)."""
    return _read(bytes(data), '<bytes>', 'dynagrad.utils.safetensors.load')


def load_file(filename, device='cpu'):
    """The tensors of the safetensors file ``filename``, as a dict of name -> tensor."""
    device = f'cuda:{device}' if isinstance(device, int) else str(device)
    move = check_location(device)           # PyTorch's error for a device this machine lacks
    with open(os.fspath(filename), 'rb') as fh:
        buf = fh.read()
    out = _read(buf, os.fsdecode(os.fspath(filename)), 'dynagrad.utils.safetensors.load_file')
    return {k: t.to(device) for k, t in out.items()} if move else out
