"""The array namespace ops compute with.

Op code calls ``xp.<function>`` and never branches on the device. NumPy dispatches its
functions to other array libraries that implement ``__array_ufunc__`` and
``__array_function__`` (CuPy does), so a GPU backend plugs in here, not in each op.
"""
import contextlib

import numpy


class ArrayNamespace:
    """The door to arrays: ``xp.exp``, ``xp.zeros``, ``xp.float32``... forward to the array
    library in use (NumPy unless ``array_namespace`` says otherwise).

    Every module holds this one object, so pointing it at another library reaches every
    op at once. A name is looked up in the library on first use and then kept as an
    attribute, so ``xp.exp`` costs what ``numpy.exp`` costs.
    """

    def __init__(self, module):
        self.__dict__['_module'] = module

    def __getattr__(self, name):
        value = getattr(self.__dict__['_module'], name)
        self.__dict__[name] = value
        return value

    def _use(self, module):
        self.__dict__.clear()
        self.__dict__['_module'] = module

    def __repr__(self):
        return f'<array namespace {self.__dict__["_module"].__name__}>'


xp = ArrayNamespace(numpy)


@contextlib.contextmanager
def array_namespace(module):
    """Compute with ``module`` (NumPy's API) instead of NumPy inside the block."""
    previous = xp.__dict__['_module']
    xp._use(module)
    try:
        yield xp
    finally:
        xp._use(previous)


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

    This changes the allocator of the whole process, for good, so dynagrad never does it
    by itself: a training program opts in (the examples and the benchmarks do). A process
    that frees large arrays then keeps their memory (resident size does not go back down).
    Returns True when the setting was applied (Linux with glibc), else False.
    """
    import ctypes
    import sys
    if not sys.platform.startswith('linux'):
        return False
    try:
        libc = ctypes.CDLL('libc.so.6')
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...): leave the allocator alone
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(
        mallopt(M_TRIM_THRESHOLD, int(trim_threshold)))
