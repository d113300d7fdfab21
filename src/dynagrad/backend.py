"""The array namespace ops compute with.

Op code calls ``xp.<function>`` and never branches on the device. NumPy dispatches its
functions to other array libraries that implement ``__array_ufunc__`` and
``__array_function__`` (CuPy does), so a GPU backend plugs in here, not in each op.
"""
import contextlib
import os
import warnings

import numpy

from . import _platform


class ArrayNamespace:
    """The door to arrays: ``xp.exp``, ``xp.zeros``, ``xp.float32``... forward to the array
    library in use (NumPy unless ``array_namespace`` says otherwise).

    Every module holds this one object, so pointing it at another library reaches every
    op at once. A name is looked up in the library on first use and then kept as an
    attribute, so ``xp.exp`` costs what ``numpy.exp`` costs.
    """

    def __init__(self, module):
        self.__dict__['_module'] = module
        self.__dict__['_caches'] = {}

    def __getattr__(self, name):
        value = getattr(self.__dict__['_module'], name)
        self.__dict__[name] = value
        return value

    def _use(self, module):
        """Point the door at ``module``. Each library keeps its own cache of looked-up
        names, so a device op switching the door there and back (``on_namespace``) costs
        two dict swaps, not a fresh lookup of every name it calls."""
        state = self.__dict__
        if state['_module'] is module:
            return
        caches = state['_caches']
        caches[id(state['_module'])] = state
        cached = caches.get(id(module))
        if cached is None or cached['_module'] is not module:
            cached = {'_module': module, '_caches': caches}
        object.__setattr__(self, '__dict__', cached)

    def _forget(self, module):
        """Drop the cache kept for ``module`` (a namespace a test made and throws away)."""
        self.__dict__['_caches'].pop(id(module), None)

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
        xp._forget(module)


def current_namespace():
    """The library the door points at now."""
    return xp.__dict__['_module']


def window_view(array, shape, strides):
    """``array`` seen through ``shape`` and byte ``strides`` (overlapping windows: im2col's
    columns), read-only where the library can say so: NumPy's views are, CuPy's
    ``as_strided`` has no such option (its views must then never be written)."""
    if array.__class__ is numpy.ndarray:
        return xp.lib.stride_tricks.as_strided(array, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(array, shape, strides)


class _Interface:
    """An ``__array_interface__`` holder; its ``base`` keeps the memory alive."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def writable_alias(array):
    """A writable view of the memory the read-only NumPy view ``array`` sees (an expanded
    tensor's, whose elements share memory), or None when nothing under it is writable.
    NumPy keeps broadcast views read-only; torch writes through them where the op allows
    it (fill_, index_put_...)."""
    root = array.base
    while root is not None and not (root.__class__ is numpy.ndarray and root.flags.writeable):
        root = getattr(root, 'base', None)
    if root is None:
        return None
    return writable_view(array, root)


def writable_view(array, owner):
    """``array``'s memory as a writable NumPy array, holding ``owner`` (what keeps that
    memory alive): the array interface offered again without its read-only flag."""
    interface = dict(array.__array_interface__)
    interface['data'] = (interface['data'][0], False)
    view = numpy.asarray(_Interface(interface, owner))
    # the interface spells extension dtypes (bfloat16, float8) as raw bytes
    return view if view.dtype == array.dtype else view.view(array.dtype)


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


# -- threads ---------------------------------------------------------------------------------

class _Threads:
    """What the thread-count functions remember (only ever changed when a program asks)."""
    intra = None        # set_num_threads' last value, when threadpoolctl could not apply it
    interop = None      # set_num_interop_threads' value
    controller = None   # threadpoolctl's controller, made on first use


_threads = _Threads()


def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, or None without threadpoolctl."""
    if _threads.controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return None
        _threads.controller = ThreadpoolController()
    return _threads.controller


def _cpu_count():
    return os.cpu_count() or 1


def _check_thread_count(n, fn):
    if isinstance(n, bool) or not isinstance(n, (int, numpy.integer)):
        raise RuntimeError(f'{fn} expects an int, but got {type(n).__name__}')
    if n <= 0:
        raise RuntimeError(f'{fn} expects a positive integer')
    return int(n)


def set_num_threads(n):
    """Use ``n`` threads inside ops: NumPy's BLAS (matmul, linalg) is what runs threaded.

    Applied through threadpoolctl (imported on first use; ``pip install threadpoolctl``),
    which changes the thread count of every BLAS library loaded in the process. Without
    it (or when it finds no BLAS) the number is remembered (``get_num_threads`` returns it) but the BLAS keeps its
    own count, set by ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` at
    start-up, and a ``UserWarning`` says so. Where Python has no threads (Pyodide) it
    checks ``n`` and does nothing.
    """
    n = _check_thread_count(n, 'set_num_threads')
    if _platform.lacks_processes():
        return  # one thread is all there is: nothing to set, nothing to warn about
    controller = _blas_controller()
    if controller is not None:
        blas = controller.select(user_api='blas')
        if blas.lib_controllers:
            blas.limit(limits=n)
            _threads.intra = None
            return
    warnings.warn('set_num_threads: cannot change the BLAS thread count (threadpoolctl is not '
                  'installed, or finds no BLAS: pip install threadpoolctl); set '
                  'OMP_NUM_THREADS before starting Python instead', UserWarning, stacklevel=2)
    _threads.intra = n


def get_num_threads():
    """The threads ops use: the BLAS's thread count as threadpoolctl reports it (what
    ``set_num_threads`` set), else the number of CPUs."""
    if _threads.intra is not None:
        return _threads.intra
    controller = _blas_controller()
    if controller is not None:
        libs = controller.select(user_api='blas').lib_controllers
        # NumPy's own BLAS first (its wheel's copy lives in numpy.libs), when several loaded
        numpys = [lib for lib in libs if 'numpy' in lib.filepath]
        if libs:
            return (numpys or libs)[0].num_threads
    return _cpu_count()


class _Blas:
    library = None      # threadpoolctl's controller of NumPy's BLAS, found on first use
    looked = False


def blas_thread_count():
    """``get_num_threads()``, with the BLAS library it asks looked up once:
    threadpoolctl's lookup on each call cost 7-9 us inside a 200 us kernel call (measured),
    reading the count from the library found costs 1 us. Still read on every call, so a
    ``set_num_threads`` or a ``threadpool_limits`` block takes effect at once."""
    if _threads.intra is not None:
        return _threads.intra
    library = blas_library()
    if library is None:
        return get_num_threads()
    return library.num_threads


def blas_library():
    """threadpoolctl's controller of NumPy's own BLAS (looked up once), or None."""
    if not _Blas.looked:
        _Blas.looked = True
        controller = _blas_controller()
        libraries = [] if controller is None else \
            controller.select(user_api='blas').lib_controllers
        numpys = [lib for lib in libraries if 'numpy' in lib.filepath]
        # only NumPy's own copy is kept: it cannot be unloaded, nor another BLAS put first
        _Blas.library = numpys[0] if numpys else None
    return _Blas.library


def set_num_interop_threads(n):
    """PyTorch's inter-op thread pool size. dynagrad runs ops one after another, so the
    number is only remembered; as in PyTorch it can be set once per process."""
    n = _check_thread_count(n, 'set_num_interop_threads')
    if _threads.interop is not None:
        raise RuntimeError('Error: cannot set number of interop threads after parallel work '
                           'has started or set_num_interop_threads called')
    _threads.interop = n


def get_num_interop_threads():
    """What ``set_num_interop_threads`` set, else the number of CPUs (PyTorch's default)."""
    return _cpu_count() if _threads.interop is None else _threads.interop


# -- native kernels ------------------------------------------------------------------------

class _Kernels:
    """Which kernels ops run: 'numpy' (the reference path) or 'native' (numba's, from
    ``dynagrad.native``). Read from ``DYNAGRAD_KERNELS`` at import; 'auto' (the default)
    means native when numba loads. Nothing is imported until an op first asks."""
    mode = os.environ.get('DYNAGRAD_KERNELS', 'auto').strip().lower() or 'auto'
    on = None           # decided on first ask: True, or False (the NumPy path)
    loaded = {}         # kernel name -> function
    why_not = None      # numba's import error, when native was asked for and failed


_kernels = _Kernels()
_NATIVE_DTYPES = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


def native_kernel(name, array):
    """The native kernel ``name`` for ``array``, or None, and the op computes with NumPy.

    The one place ops reach native kernels through: None for anything but a NumPy array of
    float32 or float64 (bfloat16, float16, integers, device arrays keep the NumPy path),
    with the kernels switched off, or where numba does not load."""
    on = _kernels.on
    if on is False or array.__class__ is not numpy.ndarray or array.dtype not in _NATIVE_DTYPES:
        return None
    if on is None:
        _decide_kernels()
        if not _kernels.on:
            return None
    kernel = _kernels.loaded.get(name)
    if kernel is None:
        from . import native
        kernel = _kernels.loaded[name] = native.load(name)
    return kernel


def native_compiler():
    """The function that compiles ``dynagrad.compile``'s generated numba sources
    (``dynagrad.native.fused.load_kernels``), or None, and programs keep their NumPy code:
    the one place the compiler reaches native code through, on the same switch as
    ``native_kernel`` (``set_kernels('numpy')``, or numba not loading, turns it off)."""
    on = _kernels.on
    if on is None:
        _decide_kernels()
        on = _kernels.on
    if not on:
        return None
    from .native import fused
    return fused.load_kernels


def _decide_kernels():
    mode = _kernels.mode
    if mode not in ('native', 'numpy', 'auto'):
        warnings.warn(f"DYNAGRAD_KERNELS={mode!r} is none of 'native', 'numpy', 'auto': "
                      f"running as 'auto'", RuntimeWarning, stacklevel=3)
        mode = _kernels.mode = 'auto'
    if mode == 'numpy':
        _kernels.on = False
        return
    from . import native
    _kernels.why_not = native.available()
    _kernels.on = _kernels.why_not is None
    if mode == 'native' and not _kernels.on:
        warnings.warn(f'native kernels asked for, but numba does not load '
                      f'({_kernels.why_not}); running the NumPy kernels',
                      RuntimeWarning, stacklevel=3)


def set_kernels(mode):
    """Run ops with ``'native'`` kernels (numba's; ``pip install 'dynagrad[fast]'``), the
    ``'numpy'`` ones, or ``'auto'``: native when numba loads. Returns the mode before."""
    if mode not in ('native', 'numpy', 'auto'):
        raise ValueError(f"kernels must be 'native', 'numpy' or 'auto', not {mode!r}")
    previous = get_kernels()
    _kernels.mode, _kernels.on = mode, None
    return previous


def get_kernels():
    """The kernel mode ``set_kernels`` (or ``DYNAGRAD_KERNELS``) chose."""
    return _kernels.mode


def native_kernels_active():
    """Whether ops run native kernels now (this loads numba under 'auto' and 'native')."""
    if _kernels.on is None:
        _decide_kernels()
    return _kernels.on
