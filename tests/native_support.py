"""What the native-kernel tests share: whether numba loads, the skip mark and the two kernel
modes to parametrise over, and a block that runs with one mode's kernels and counts the
native kernels' calls (the tests prove a kernel ran, or that it did not, by its count)."""
import contextlib

import pytest

from dynagrad import backend, native

NUMBA_MISSING = native.available()
needs_numba = pytest.mark.skipif(NUMBA_MISSING is not None,
                                 reason=f'numba does not load: {NUMBA_MISSING}')
MODES = ['numpy', pytest.param('native', marks=needs_numba)]


@contextlib.contextmanager
def kernels_counted(mode, names=None):
    """Run the block with ``mode``'s kernels; yields a dict of the calls of the native
    kernels ``names`` (every kernel when None), by name, filled under 'native' only. The
    backend's loaded kernels are put back afterwards, so the counting wrappers do not leak
    into later tests."""
    calls = {}
    previous = backend.set_kernels(mode)
    saved = dict(backend._kernels.loaded)
    if mode == 'native':
        for name in native.FAMILIES if names is None else names:
            kernel = native.load(name)

            def counted(*args, _name=name, _kernel=kernel, **kwargs):
                calls[_name] = calls.get(_name, 0) + 1
                return _kernel(*args, **kwargs)
            backend._kernels.loaded[name] = counted
    try:
        yield calls
    finally:
        backend.set_kernels(previous)
        backend._kernels.loaded.clear()
        backend._kernels.loaded.update(saved)


def kernels_mode(mode):
    """Run the block with ``mode``'s kernels, counting nothing."""
    return kernels_counted(mode, names=())
