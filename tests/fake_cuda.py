"""A stand-in for CuPy on a machine without a GPU: NumPy computing, arrays tagged as
device arrays, and a host array reaching a device computation refused, as CuPy refuses it.

``DeviceArray`` is NumPy's array marked as living on the device. ``FakeCupy`` is the
namespace a device backend computes with: it forwards to NumPy and hands back device
arrays. What CuPy refuses, it refuses with a TypeError naming the call:

- a NumPy (host) array given to any function but ``asarray``/``array`` (the copies onto
  the device), to a ufunc, an operator, or assigned into a device array (as an index it
  is accepted, as CuPy accepts it);
- bfloat16 and float8 arrays (CuPy has no such dtypes);
- ufuncs that are not NumPy's own (SciPy's special functions) applied to device arrays,
  and the few NumPy functions CuPy lacks (``frompyfunc``...): ``NotOnDevice``.

What it cannot catch: ``numpy.asarray(device_array)`` (a subclass converts silently where
CuPy raises) and ``isinstance(a, numpy.ndarray)`` (true here, false for CuPy's arrays).

``fake_cuda_backend()`` is the 'cuda' device backend over it, built by the same function
as the real one (``dynagrad.cuda._backend.cuda_backend``), with a small stand-in for
``cupy.cuda`` (devices, streams, events, the memory pool) so ``dynagrad.cuda``'s API runs.
"""
import types

import numpy as np


class HostArrayOnDevice(TypeError):
    """A NumPy array reached a device computation (CuPy: 'Unsupported type ...')."""


class NotOnDevice(TypeError):
    """A computation CuPy has no counterpart for (SciPy's ufuncs, ``frompyfunc``)."""


def _numpy_internal(ufunc):
    """A private ufunc NumPy applies inside one of its own functions (NumPy 2.0's power
    with a zero exponent calls ``_ones_like``): CuPy's counterpart of the public function
    runs on the device."""
    umath = getattr(getattr(np, '_core', None), 'umath', None)
    return ufunc.__name__.startswith('_') and getattr(umath, ufunc.__name__, None) is ufunc


class DeviceArray(np.ndarray):
    """An array on the (pretend) device."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if getattr(np, ufunc.__name__, None) is not ufunc and not _numpy_internal(ufunc):
            # SciPy's ufuncs (scipy.special), frompyfunc's: CuPy answers NotImplemented
            raise NotOnDevice(f'fake cuda: {ufunc.__name__} is not a NumPy ufunc; CuPy cannot '
                              'apply it to device arrays')
        _refuse_host(inputs, f'{ufunc.__name__}.{method}')
        out = kwargs.get('out')
        if out is not None:
            _refuse_host(out, f'{ufunc.__name__}.{method}(out=)')
            kwargs['out'] = tuple(_untag(o) for o in out)
        result = getattr(ufunc, method)(*[_untag(x) for x in inputs], **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return tag(result)

    def __array_function__(self, func, types_, args, kwargs):
        _refuse_host((args, kwargs), func.__name__)
        return tag(func(*_untag_all(args), **_untag_all(kwargs)))

    # CuPy takes NumPy arrays as indices (it copies them over); values must be its own
    def __getitem__(self, key):
        return tag(super().__getitem__(_untag_all(key)))

    def __setitem__(self, key, value):
        _refuse_host(value, 'item assignment')
        super().__setitem__(_untag_all(key), _untag_all(value))

    # CuPy's arrays have no read-only flag and no host array interface
    @property
    def flags(self):
        f = np.ndarray.flags.__get__(self)
        return types.SimpleNamespace(c_contiguous=f.c_contiguous, f_contiguous=f.f_contiguous,
                                     owndata=f.owndata)

    @property
    def __array_interface__(self):
        raise AttributeError("fake cuda: a device array has no '__array_interface__' (CuPy's "
                             "have '__cuda_array_interface__' and .data.ptr)")

    @property
    def data(self):
        """CuPy's memory pointer (``.data.ptr``), not a host buffer."""
        return types.SimpleNamespace(ptr=np.ndarray.__array_interface__.__get__(self)['data'][0])

    def get(self):
        """The array copied to the host (CuPy's ``ndarray.get``)."""
        return np.array(self.view(np.ndarray), copy=True)

    def __reduce__(self):   # pickling copies to the host, as CuPy's arrays do not allow
        raise TypeError('a device array cannot be pickled; copy it to the host first')


def _is_host(x):
    return isinstance(x, np.ndarray) and not isinstance(x, DeviceArray)


def _refuse_host(value, what):
    if _is_host(value):
        raise HostArrayOnDevice(f'fake cuda: a host (NumPy) array of shape {value.shape} '
                                f'reached the device computation {what}')
    if isinstance(value, (tuple, list)):
        for v in value:
            _refuse_host(v, what)
    elif isinstance(value, dict):
        for v in value.values():
            _refuse_host(v, what)
    elif isinstance(value, slice):
        _refuse_host((value.start, value.stop, value.step), what)


def _untag(x):
    return x.view(np.ndarray) if isinstance(x, DeviceArray) else x


def _untag_all(value):
    if isinstance(value, DeviceArray):
        return value.view(np.ndarray)
    if isinstance(value, list):
        return [_untag_all(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, '_fields'):
        return tuple(_untag_all(v) for v in value)
    if isinstance(value, dict):
        return {k: _untag_all(v) for k, v in value.items()}
    return value


_NO_DTYPE = ('bfloat16', 'float8')


def tag(value):
    """NumPy's result as the device's: arrays and NumPy scalars become device arrays (CuPy
    returns 0-d arrays where NumPy returns scalars), tuples stay tuples."""
    if isinstance(value, np.ndarray):
        if value.dtype.name.startswith(_NO_DTYPE):
            raise TypeError(f'fake cuda: CuPy has no {value.dtype.name} dtype')
        return value if isinstance(value, DeviceArray) else value.view(DeviceArray)
    if isinstance(value, np.generic):
        return tag(np.asarray(value))
    if isinstance(value, tuple):
        items = [tag(v) for v in value]
        return type(value)(*items) if hasattr(value, '_fields') else tuple(items)
    if isinstance(value, list):
        return [tag(v) for v in value]
    return value


# functions that copy host data onto the device (every other one refuses host arrays)
_COPIES_TO_DEVICE = {'asarray', 'array', 'asanyarray', 'ascontiguousarray'}


class _Ufunc:
    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        _refuse_host((args, kwargs), self.__name__)
        return tag(self._ufunc(*args, **kwargs))

    def __getattr__(self, name):
        value = getattr(self._ufunc, name)
        if not callable(value):
            return value

        def method(*args, **kwargs):
            _refuse_host((args, kwargs), f'{self.__name__}.{name}')
            return tag(value(*args, **kwargs))
        return method


class _Namespace:
    """A NumPy module (``numpy``, ``numpy.linalg``, ``numpy.fft``) on the device."""

    def __init__(self, module):
        self._module = module
        self.__name__ = 'fake_cupy' + module.__name__[len('numpy'):]

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType) and value.__name__.startswith('numpy.'):
            wrapped = _Namespace(value)
        elif isinstance(value, np.ufunc):
            wrapped = _Ufunc(value)
        elif name in ('ogrid', 'mgrid', 'r_', 'c_'):
            wrapped = _Grid(value)
        elif callable(value) and not isinstance(value, type):
            wrapped = _function(name, value)
        else:
            wrapped = value
        setattr(self, name, wrapped)
        return wrapped


class _Grid:
    """``ogrid``/``mgrid``/``r_``/``c_``: index grids and concatenations, on the device (as
    CuPy's)."""

    def __init__(self, grid):
        self._grid = grid

    def __getitem__(self, key):
        return tag(self._grid[_untag_all(key)])


# NumPy functions CuPy does not have
_MISSING_IN_CUPY = {'frompyfunc', 'nditer', 'piecewise', 'apply_along_axis',
                    'apply_over_axes'}


def _function(name, fn):
    if name == 'as_strided':        # CuPy's takes (x, shape, strides) only
        def as_strided(x, shape=None, strides=None, **kwargs):
            if kwargs:
                raise TypeError(f'fake cuda: as_strided() got unexpected keyword arguments '
                                f'{sorted(kwargs)} (CuPy takes shape and strides only)')
            _refuse_host(x, name)
            return tag(fn(_untag(x), shape, strides))
        return as_strided
    if name in _MISSING_IN_CUPY:
        def missing(*args, **kwargs):
            raise NotOnDevice(f'fake cuda: CuPy has no {name}')
        return missing
    if name in _COPIES_TO_DEVICE:
        def copy_to_device(a, *args, **kwargs):
            if _is_host(a) or not isinstance(a, np.ndarray):
                a = np.array(_untag_all(a), *args, **kwargs)    # a copy, as onto a GPU
                return tag(a)
            return tag(fn(a, *args, **kwargs))
        return copy_to_device

    def on_device(*args, **kwargs):
        _refuse_host((args, kwargs), name)
        return tag(fn(*_untag_all(args), **_untag_all(kwargs)))
    on_device.__name__ = name
    return on_device


class FakeCupy(_Namespace):
    """``cupy`` played by NumPy (see the module docstring); ``cuda`` is ``_FakeCudaModule``."""

    ndarray = DeviceArray

    def __init__(self):
        super().__init__(np)
        self.__name__ = 'fake_cupy'
        self.cuda = _FakeCudaModule()
        self._pool = _FakePool()
        self.special = _FakeSpecial()

    def asnumpy(self, a):
        return a.get() if isinstance(a, DeviceArray) else np.asarray(a)

    def get_default_memory_pool(self):
        return self._pool


# SciPy's special functions that cupyx.scipy.special also has (CuPy 13); others refused
_CUPYX_SPECIAL = {
    'erf', 'erfc', 'erfcx', 'erfinv', 'erfcinv', 'gamma', 'gammaln', 'loggamma', 'psi',
    'digamma', 'polygamma', 'zeta', 'gammainc', 'gammaincc', 'i0', 'i0e', 'i1', 'i1e', 'j0',
    'j1', 'y0', 'y1', 'k0', 'k0e', 'k1', 'k1e', 'ndtr', 'ndtri', 'log_ndtr', 'multigammaln',
    'expit', 'logit', 'log_expit', 'xlogy', 'xlog1py', 'entr', 'sinc', 'spherical_yn'}


class _FakeSpecial:
    """``cupyx.scipy.special``'s stand-in: SciPy's functions on device arrays."""

    def __getattr__(self, name):
        if name not in _CUPYX_SPECIAL:
            raise NotOnDevice(f'fake cuda: cupyx.scipy.special has no {name}')
        import scipy.special
        fn = getattr(scipy.special, name)

        def on_device(*args, **kwargs):
            _refuse_host((args, kwargs), f'special.{name}')
            return tag(fn(*_untag_all(args), **_untag_all(kwargs)))
        return on_device


# -- cupy.cuda's stand-in: one device, timing from the host clock -------------------------------

class _FakePool:
    """CuPy's MemoryPool API: counts bytes of the device arrays made since the test
    started (never freed here: NumPy frees them, the pool cannot see it)."""

    def __init__(self):
        self.used = 0
        self.freed_all = 0

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.used

    def free_all_blocks(self):
        self.freed_all += 1


class _FakeDevice:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)
        self.synchronized = 0

    def use(self):
        if self.id != 0:
            raise RuntimeError(f'fake cuda: no device {self.id}')

    def synchronize(self):
        _FakeCudaModule.synchronized += 1

    @property
    def compute_capability(self):
        return '90'

    def __enter__(self):
        self.use()
        return self

    def __exit__(self, *exc):
        return False


class _FakeStream:
    def __init__(self, non_blocking=False, null=False):
        self.non_blocking = non_blocking
        self.ptr = 0 if null else id(self)

    def synchronize(self):
        pass

    def use(self):
        _FakeCudaModule.current = self
        return self

    def __enter__(self):
        self._previous = _FakeCudaModule.current
        _FakeCudaModule.current = self
        return self

    def __exit__(self, *exc):
        _FakeCudaModule.current = self._previous
        return False


class _FakeEvent:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing
        self.time = None

    def record(self, stream=None):
        import time
        self.time = time.perf_counter()

    def synchronize(self):
        pass

    @property
    def done(self):
        return self.time is not None


class _FakeRuntime:
    def getDeviceCount(self):
        return 1

    def getDevice(self):
        return 0

    def setDevice(self, i):
        _FakeDevice(i).use()

    def getDeviceProperties(self, i):
        return {'name': b'Fake GPU (NumPy)', 'totalGlobalMem': 1 << 30, 'major': 9,
                'minor': 0, 'multiProcessorCount': 1}

    def memGetInfo(self):
        return (1 << 29, 1 << 30)


class _FakeCudaModule:
    synchronized = 0
    current = None

    def __init__(self):
        self.Device = _FakeDevice
        self.Stream = _FakeStream
        self.Event = _FakeEvent
        self.runtime = _FakeRuntime()
        _FakeStream.null = _FakeStream(null=True)
        _FakeCudaModule.current = _FakeStream.null

    def get_current_stream(self):
        return _FakeCudaModule.current

    def get_elapsed_time(self, start, end):
        if start.time is None or end.time is None:
            raise RuntimeError('fake cuda: an event was not recorded')
        return (end.time - start.time) * 1000.0


# -- registering it as the 'cuda' device ------------------------------------------------------

import contextlib  # noqa: E402


@contextlib.contextmanager
def registered():
    """The stand-in registered as the 'cuda' backend for the block (the registry's state
    before it, a real CuPy backend included, comes back after)."""
    from dynagrad import _device
    from dynagrad.cuda._backend import cuda_backend
    previous = _device.backend_for_or_none('cuda')
    fake = FakeCupy()
    _device.register_backend(cuda_backend(fake, fake.special))
    try:
        yield fake
    finally:
        if previous is None:
            _device.unregister_backend('cuda')
        else:
            _device.register_backend(previous)
