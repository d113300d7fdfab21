"""Process-wide switches and facts PyTorch keeps at top level: deterministic algorithms,
warn-always, anomaly mode, flush-denormal, the default tensor type (deprecated), build
facts (``has_lapack``, ...), the device module lookup, and shape broadcasting.

Each switch only records state when called; nothing here runs at import.
"""
import math
import warnings

from . import _dtype
from ._device import device as _device_type, get_default_device
from .autograd import anomaly
from .size import Size

__all__ = ['use_deterministic_algorithms', 'are_deterministic_algorithms_enabled',
           'is_deterministic_algorithms_warn_only_enabled', 'set_deterministic_debug_mode',
           'get_deterministic_debug_mode', 'set_warn_always', 'is_warn_always_enabled',
           'set_anomaly_enabled', 'is_anomaly_enabled', 'is_anomaly_check_nan_enabled',
           'set_flush_denormal', 'init_num_threads', 'set_default_tensor_type',
           'get_device_module', 'get_device', 'is_distributed', 'is_inference', 'is_storage',
           'broadcast_shapes', 'from_dlpack', 'to_dlpack', 'OutOfMemoryError', 'AcceleratorError',
           'has_lapack', 'has_mkl', 'has_openmp', 'has_spectral', 'is_vulkan_available',
           'e', 'pi', 'inf', 'nan', 'newaxis']

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

# Build facts, as PyTorch reports its own: LAPACK through NumPy's linalg; no MKL or OpenMP
# in dynagrad itself (NumPy's BLAS threads on its own); no FFT yet.
has_lapack, has_mkl, has_openmp, has_spectral = True, False, False, False


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (``torch.OutOfMemoryError``)."""


class AcceleratorError(RuntimeError):
    """Raised by errors while executing on an accelerator (``torch.AcceleratorError``)."""


class _Options:
    deterministic = False
    deterministic_warn_only = False
    warn_always = False


_options = _Options()


def _need_bool(value, what):
    if not isinstance(value, bool):
        raise TypeError(f"{what}(): argument 'mode' (position 1) must be bool, not "
                        f'{type(value).__name__}')


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the request. Every dynagrad op on the CPU is already deterministic (NumPy
    kernels, fixed reduction orders), so there is nothing to refuse or warn about."""
    _need_bool(mode, 'use_deterministic_algorithms')
    _need_bool(warn_only, 'use_deterministic_algorithms')
    _options.deterministic, _options.deterministic_warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _options.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _options.deterministic_warn_only


_DEBUG_MODES = ('default', 'warn', 'error')


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError('invalid value of debug_mode, expected one of `default`, '
                               f'`warn`, `error`, but got {debug_mode}')
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f'invalid value of debug_mode, expected 0, 1, or 2, but got '
                               f'{debug_mode}')
    else:
        raise TypeError(f'debug_mode must be str or int, but got {type(debug_mode).__name__}')
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _options.deterministic:
        return 0
    return 1 if _options.deterministic_warn_only else 2


def set_warn_always(b):
    """Warnings PyTorch gives once per process (deprecations) are given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f'setWarnOnlyOnce expects a bool, but got {type(b).__name__}')
    _options.warn_always = b


def is_warn_always_enabled():
    return _options.warn_always


def set_anomaly_enabled(enabled, check_nan=True):
    anomaly.set_detect_anomaly(enabled, check_nan)


is_anomaly_enabled = anomaly.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly.is_anomaly_check_nan_enabled


def set_flush_denormal(mode):
    """False: NumPy gives no control over the CPU's flush-to-zero flags, so dynagrad
    cannot turn denormal flushing on (PyTorch also returns False where it cannot)."""
    return False


def init_num_threads():
    """Nothing to do: NumPy's BLAS sizes its own thread pool."""


def is_vulkan_available():
    return False


def set_default_tensor_type(t):
    """Deprecated: set the default floating dtype from a legacy tensor type or its name."""
    warnings.warn('torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please '
                  'use torch.set_default_dtype() and torch.set_default_device() as '
                  'alternatives.', UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, '__name__', str(t))
    name = name.rsplit('.', 1)[-1]
    dtype = next((d for d in _dtype.ALL if d.legacy_name == name), None)
    if dtype is None:
        raise TypeError(f'invalid type: {t!r}')
    if not dtype.is_floating_point:
        raise TypeError('only floating-point types are supported as the default type')
    _dtype.set_default_dtype(dtype)


def get_device_module(device=None):
    """The module for a device type (``dynagrad.cpu``, ``dynagrad.cuda``, ...); with no
    argument, the default device's."""
    import importlib
    if device is None:
        kind = get_default_device().type
    elif isinstance(device, _device_type):
        kind = device.type
    elif isinstance(device, str):
        kind = _device_type(device).type
    else:
        raise RuntimeError(f'Invalid value of device {device!r}, expect torch.device, str, '
                           'or None')
    try:
        return importlib.import_module(f'dynagrad.{kind}')
    except ImportError:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module "
                           'registered as \'torch.' + kind + "'.") from None


def get_device(input):
    return input.get_device()


def is_distributed(input):
    return False


def is_inference(input):
    return input.is_inference()


def is_storage(obj):
    """Whether ``obj`` is a storage (``UntypedStorage`` or a typed one)."""
    from .storage import is_storage as _is_storage
    return _is_storage(obj)


def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to, without making any tensor."""
    result = []
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if any(d < 0 for d in shape):
            raise ValueError('Attempting to broadcast a dimension with negative length!')
        if len(shape) > len(result):
            result = [1] * (len(shape) - len(result)) + result
        for i in range(1, len(shape) + 1):
            d, r = shape[-i], result[-i]
            if d == r or d == 1:
                continue
            if r == 1:
                result[-i] = d
            else:
                raise RuntimeError(
                    f'Attempting to broadcast a dimension of length {d} at -{i}! Mismatching '
                    f'argument at index {index} had {shape}; but expected shape should be '
                    f'broadcastable to {result}')
    return Size(result)


class _Capsule:
    """A bare DLPack capsule (from ``to_dlpack`` or another library) seen as a producer."""
    __slots__ = ('capsule',)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)   # kDLCPU: the only device a capsule can come from here


def _read_only_unknown(xp, producer):
    """Whether NumPy imported ``producer`` read-only for want of a flag: an unversioned
    capsule carries none, and NumPy before 2.3 reads none at all."""
    if isinstance(producer, _Capsule) and '"dltensor"' in repr(producer.capsule):
        return True
    major, minor = (int(part) for part in xp.__version__.split('.')[:2])
    return (major, minor) < (2, 3)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with another library's array (anything with
    ``__dlpack__``, or a capsule from ``to_dlpack``); ``copy=True`` copies instead.

    The memory is writable, as PyTorch's from_dlpack gives it, unless the producer says it
    is read-only: a legacy, unversioned capsule (what ``torch.to_dlpack`` returns) cannot
    say so, and NumPy before 2.3 hears no such flag, so NumPy's read-only import is undone
    there."""
    from .backend import writable_view, xp
    from .tensor import wrap
    if not hasattr(ext_tensor, '__dlpack__'):
        ext_tensor = _Capsule(ext_tensor)
    unknown = copy or _read_only_unknown(xp, ext_tensor)   # before NumPy renames a capsule
    data = xp.from_dlpack(ext_tensor)      # copy= is NumPy 2.1's: copied here instead
    if copy:
        data = data.copy()
    # a copy is dynagrad's own memory, whatever flag NumPy gave it
    if unknown and not getattr(getattr(data, 'flags', None), 'writeable', True):
        data = writable_view(data, data)
    out = wrap(data)
    return out if device is None else out.to(device)


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory, for another library's ``from_dlpack``
    (a versioned capsule, so that the memory stays writable on the other side)."""
    return tensor.__dlpack__(max_version=(1, 0))
