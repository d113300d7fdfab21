"""``dynagrad._dynamo``: the names of ``torch._dynamo`` that libraries import and call.

PyTorch's compiler front end is not public API, but libraries (transformers, accelerate,
peft) reach into it for markers and settings. Here those names are what they mean for
dynagrad's compile (see ``dynagrad.compiler``): the markers are the same as
``dynagrad.compiler``'s, the shape hints change nothing because dynagrad makes a program
for every batch size on its own when the tapes allow it, and ``optimize`` is ``compile``.
"""
from ..compiler import (allow_in_graph, assume_constant_result, compile, disable,  # noqa: F401
                        explain, is_compiling, is_dynamo_compiling, is_exporting, reset,
                        set_stance, substitute_in_graph)
from . import config, eval_frame, exc  # noqa: F401
from ..compiler import OptimizedModule  # noqa: F401
from .exc import Unsupported  # noqa: F401

__all__ = ['allow_in_graph', 'assume_constant_result', 'disable', 'explain', 'is_compiling',
           'is_dynamo_compiling', 'is_exporting', 'reset', 'set_stance', 'substitute_in_graph',
           'mark_dynamic', 'maybe_mark_dynamic', 'mark_static', 'mark_static_address',
           'optimize', 'run', 'config', 'exc', 'Unsupported', 'OptimizedModule',
           'is_dynamo_supported', 'list_backends']


# torch tags these backends 'debug': list_backends() leaves them out unless asked
_DEBUG_BACKENDS = frozenset({'eager', 'aot_eager'})


def list_backends(exclude_tags=('debug', 'experimental')):
    """The backend names ``compile`` accepts, as torch lists them (kornia's conftest
    parametrises over them)."""
    from ..compiler.api import BACKENDS
    names = {b for b in BACKENDS if b != 'default'}
    if exclude_tags and 'debug' in exclude_tags:
        names -= _DEBUG_BACKENDS
    return sorted(names)


def is_dynamo_supported():
    """True, as on torch's CPU build: ``dynagrad.compile`` is available here."""
    return True


def _dims(t, index):
    if index is None:
        return
    for i in (index if isinstance(index, (list, tuple)) else [index]):
        if not isinstance(i, int):
            raise TypeError(f'mark_dynamic: dimension must be an int, got {type(i).__name__}')


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """A hint that changes nothing: ``dynagrad.compile`` finds batch-size-generic programs
    itself (and only along the first dimension)."""
    _dims(t, index)


def maybe_mark_dynamic(t, index):
    _dims(t, index)


def mark_static(t, index=None):
    _dims(t, index)


def mark_static_address(t, guard=False):
    """Nothing to do: replays read parameters and buffers where they live."""


def optimize(backend='inductor', *, nopython=False, dynamic=None, **kwargs):
    """``torch._dynamo.optimize(backend)``: the decorator ``compile`` would be."""
    return lambda fn: compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic)


def run(fn=None):
    """``fn`` as it is: nothing of it is compiled."""
    return fn
