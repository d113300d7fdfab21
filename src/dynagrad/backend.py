"""The array namespace ops compute with.

Op code calls ``xp.<function>`` and never branches on the device. NumPy dispatches its
functions to other array libraries that implement ``__array_ufunc__`` and
``__array_function__`` (CuPy does), so a GPU backend plugs in here, not in each op.
"""
import numpy

xp = numpy


def get_array_module(*arrays):
    """The namespace that owns ``arrays`` (Chainer's and DeZero's hook for CuPy)."""
    for a in arrays:
        module = type(a).__module__.split('.')[0]
        if module not in ('numpy', 'builtins'):
            return __import__(module)
    return numpy


def _errstate_switch():
    """(enter, exit) functions that turn NumPy's floating-point warnings off and back on.

    PyTorch never warns when log(0) gives -inf or 1/0 gives inf; NumPy does unless its
    error state says otherwise. ``numpy.errstate`` costs about 1 us a call, a fifth of an
    op, so where NumPy exposes the context variable behind it (NumPy 2) we set and reset
    that directly (about 0.1 us); elsewhere we fall back to ``numpy.errstate``.
    """
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
        with numpy.errstate(all='ignore'):
            ignore_all = var.get()
        return (lambda: var.set(ignore_all)), var.reset
    except (ImportError, AttributeError):
        def enter():
            state = numpy.errstate(all='ignore')
            state.__enter__()
            return state

        def exit_(state):
            state.__exit__(None, None, None)
        return enter, exit_


fp_errors_off, fp_errors_restore = _errstate_switch()


def keep_freed_memory(mmap_threshold=64 << 20, trim_threshold=256 << 20):
    """Ask glibc's malloc to keep freed array buffers in the process for reuse.

    A training step frees and reallocates the same large arrays every iteration. By
    default glibc serves blocks above a (moving) threshold with fresh mmap()ed pages and
    returns them to the system on free, so every step pays page faults for memory it just
    gave back (a third of an MLP step here). Raising the mmap and trim thresholds keeps
    those buffers in the heap, which is the job PyTorch's caching allocator does for it.
    dynagrad calls this once at import; set DYNAGRAD_KEEP_FREED_MEMORY=0 to opt out.
    Returns True when the setting was applied (Linux with glibc), else False.
    """
    import ctypes
    import os
    import sys
    if os.environ.get('DYNAGRAD_KEEP_FREED_MEMORY', '1') == '0' or not sys.platform.startswith(
            'linux'):
        return False
    try:
        libc = ctypes.CDLL('libc.so.6')
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...): leave the allocator alone
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(
        mallopt(M_TRIM_THRESHOLD, int(trim_threshold)))
