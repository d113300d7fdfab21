"""The 'cuda' device backend over CuPy, and what ``dynagrad.cuda`` asks of it.

``load()`` is what the device registry calls the first time 'cuda' is asked for (a
factory's ``device='cuda'``, ``.cuda()``, ``dynagrad.cuda.is_available()``): it imports
CuPy and registers the backend when CuPy imports and sees at least one GPU, and returns
None otherwise (then 'cuda' stays unavailable, with PyTorch's "not compiled with CUDA
enabled" errors). Importing dynagrad never imports CuPy.

Tensors on the device hold CuPy arrays; ops compute on them through the array door, which
the op mechanism points at CuPy while they run (``dynagrad.autograd.device_dispatch``).
One device is addressed: ``cuda:0``, CuPy's current device when the backend loaded.

``cuda_backend(cupy)`` builds the backend from any module with CuPy's API: the tests build
it from a NumPy stand-in (tests/fake_cuda.py) to run everything but the GPU itself.
"""
import warnings

from .._device import DeviceBackend

__all__ = ['CudaBackend', 'cuda_backend', 'load']


class CudaBackend(DeviceBackend):
    """The 'cuda' backend: the ``DeviceBackend`` the registry needs, plus the CuPy module
    and the memory counters ``dynagrad.cuda`` reads."""
    __slots__ = ('cupy', 'peak_bytes')

    def __init__(self, cupy, count, special=None):
        super().__init__('cuda', cupy, (cupy.ndarray,), cupy.asarray,
                         device_count=lambda: count, special=special)
        self.cupy = cupy
        self.peak_bytes = 0

    # -- memory: CuPy's default pool is the caching allocator ------------------------------
    def pool(self):
        return self.cupy.get_default_memory_pool()

    def allocated(self):
        used = self.pool().used_bytes()
        self.peak_bytes = max(self.peak_bytes, used)
        return used

    def max_allocated(self):
        self.allocated()
        return self.peak_bytes

    def reset_peak(self):
        self.peak_bytes = self.pool().used_bytes()

    def reserved(self):
        return self.pool().total_bytes()

    def _track_peak(self):
        """Route CuPy's allocations through the pool with a peak counter: PyTorch reports
        the highest allocation ever made, which CuPy's pool does not remember."""
        set_allocator = getattr(self.cupy.cuda, 'set_allocator', None)
        if set_allocator is None:
            return
        pool = self.pool()

        def malloc(size):
            pointer = pool.malloc(size)
            self.peak_bytes = max(self.peak_bytes, pool.used_bytes())
            return pointer
        set_allocator(malloc)


def cuda_backend(cupy, special=None):
    """The 'cuda' backend over ``cupy`` (CuPy, or a module with its API) and ``special``
    (``cupyx.scipy.special``: the special functions' kernels), or None when it sees no
    GPU."""
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception:   # noqa: BLE001 (CUDARuntimeError: no driver, no device)
        return None
    if count < 1:
        return None
    backend = CudaBackend(cupy, count, special)
    backend._track_peak()
    return backend


def load():
    """The backend when CuPy imports and a GPU is there, else None."""
    try:
        import cupy
    except ImportError:
        return None
    except Exception as e:      # noqa: BLE001 (a broken install: CUDA stays unavailable)
        warnings.warn(f'dynagrad.cuda: CuPy failed to import ({type(e).__name__}: {e}); CUDA '
                      'is unavailable', RuntimeWarning, stacklevel=2)
        return None
    try:
        import cupyx.scipy.special as special
    except ImportError:     # an old CuPy: erf, lgamma... then fail on the device
        special = None
    return cuda_backend(cupy, special)
