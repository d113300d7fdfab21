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


def table_columns(op_names):
    """The conformance table's rows of ``op_names`` (values and gradients, and gradcheck)
    as two tests, each run in both kernel modes: ``(rows, gradcheck_rows, test_row,
    test_row_gradcheck)``, for a test module to bind at its top level."""
    from ops import test_conformance as conformance
    rows = [p for p in conformance.device_rows() if p.values[0].name in op_names]
    gradcheck_rows = [p for p in conformance.GRADCHECK if p.values[0].name in op_names]

    @pytest.mark.filterwarnings('ignore::UserWarning')
    @pytest.mark.filterwarnings('ignore::FutureWarning')
    @pytest.mark.parametrize('kernels', MODES, indirect=True)
    @pytest.mark.parametrize('op,sample,i', rows)
    def test_row(kernels, op, sample, i):
        conformance.check_row(op, sample, i)

    @pytest.mark.filterwarnings('ignore::UserWarning')
    @pytest.mark.parametrize('kernels', MODES, indirect=True)
    @pytest.mark.parametrize('op,sample,i', gradcheck_rows)
    def test_row_gradcheck(kernels, op, sample, i):
        conformance.test_gradcheck(op, sample, i)

    return rows, gradcheck_rows, test_row, test_row_gradcheck
