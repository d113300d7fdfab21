"""``dynagrad.autocast``: PyTorch's automatic mixed precision regions, on the CPU.

Inside an enabled region, ops of PyTorch's CPU "lower precision" list (matmul, linear,
convolutions, bmm, addmm, baddbmm, addbmm, prelu, scaled_dot_product_attention, ...) cast
their floating inputs to the autocast dtype (bfloat16 by default, float16 on request), ops
of its "float32" list (losses, prod, trace, cdist, grid_sample, reflection and replication
padding, linear algebra, ...) cast them to float32, and ``index_copy`` promotes them to the
widest; everything else runs in the dtypes it is given. The casts are recorded ops, so
gradients flow back to float32 parameters in float32. float64 and integer tensors are
never cast, in-place ops and calls with an explicit ``dtype=`` are not eligible.

The state is per thread, as in PyTorch, and lives in ``dynagrad.autograd.autocast``
(where ``Op.apply`` reads it); this module is its API. There is no CUDA here: asking for
a 'cuda' region warns and disables it, as a CPU-only PyTorch does.
"""
import functools
import warnings

from .. import _dtype
from .._device import device as _device_cls
from ..autograd.autocast import (autocast_thread_state, set_cpu_autocast,
                                 clear_autocast_cache as _clear_cache)

__all__ = ['autocast', 'is_autocast_available', 'custom_fwd', 'custom_bwd',
           'is_autocast_enabled', 'set_autocast_enabled', 'get_autocast_dtype',
           'set_autocast_dtype', 'is_autocast_cache_enabled', 'set_autocast_cache_enabled',
           'clear_autocast_cache', 'autocast_increment_nesting', 'autocast_decrement_nesting']

_CPU_DTYPES = (_dtype.bfloat16, _dtype.float16)


def _device_type(device_type):
    """The device type a string names (PyTorch's RuntimeError for an unknown one)."""
    return _device_cls(device_type).type


def _default_dtype(device_type):
    return _dtype.bfloat16 if device_type == 'cpu' else _dtype.float16


# -- the state, as torch's functions expose it -----------------------------------------------

def is_autocast_available(device_type):
    """Whether autocast supports ``device_type`` (PyTorch answers for its device types, built
    or not)."""
    _device_type(device_type)
    return True


def is_autocast_enabled(device_type=None):
    """Whether autocast is enabled for ``device_type`` in this thread ('cuda' when omitted,
    as in PyTorch)."""
    kind = 'cuda' if device_type is None else _device_type(device_type)
    return autocast_thread_state.enabled.get(kind, False)


def set_autocast_enabled(device_type, enabled):
    set_cpu_autocast(enabled, _device_type(device_type))


def get_autocast_dtype(device_type):
    """The dtype autocast casts to for ``device_type``: bfloat16 on the CPU by default,
    float16 elsewhere."""
    kind = _device_type(device_type)
    return autocast_thread_state.dtypes.get(kind) or _default_dtype(kind)


def set_autocast_dtype(device_type, dtype):
    autocast_thread_state.dtypes[_device_type(device_type)] = _dtype.to_dtype(dtype)


def is_autocast_cache_enabled():
    return autocast_thread_state.cache_enabled


def set_autocast_cache_enabled(enabled):
    autocast_thread_state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Forget the casted copies of weights kept for the current region."""
    _clear_cache()


def autocast_increment_nesting():
    tls = autocast_thread_state
    tls.nesting += 1
    return tls.nesting


def autocast_decrement_nesting():
    tls = autocast_thread_state
    tls.nesting -= 1
    return tls.nesting


# -- the region ---------------------------------------------------------------------------

class autocast:
    """A region where ops run in mixed precision: context manager and decorator.

    ``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: ``dtype``
    defaults to ``get_autocast_dtype(device_type)`` (bfloat16 on the CPU), and the CPU takes
    bfloat16 or float16 only (another dtype warns and disables the region, as PyTorch).
    Regions nest; ``enabled=False`` turns autocast off inside an enabled one. The casted
    copies of weights are cached until the outermost region exits (``cache_enabled``).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
        self.device = device_type
        self.custom_backend_name = None
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else \
            _dtype.to_dtype(dtype)
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else bool(cache_enabled))
        kind = _device_type(device_type)
        if kind == 'cpu':
            if enabled and self.fast_dtype not in _CPU_DTYPES:
                warnings.warn('In CPU autocast, but the target dtype is not supported. '
                              'Disabling autocast.\nCPU Autocast only supports dtypes of '
                              + ', '.join(str(d) for d in _CPU_DTYPES) + ' currently.',
                              UserWarning, stacklevel=2)
                enabled = False
        elif device_type == 'cuda' and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn('CUDA is not available or torch_xla is imported. Disabling '
                              'autocast.', UserWarning, stacklevel=2)
                enabled = False
            elif self.fast_dtype is not _dtype.float16:
                # CuPy, which holds device arrays, has no bfloat16
                warnings.warn('In CUDA autocast, but the target dtype is not supported. '
                              'Disabling autocast.\nCUDA Autocast only supports dtypes of '
                              'dynagrad.float16 currently (dynagrad\'s device arrays are '
                              "CuPy's, which have no bfloat16).", UserWarning, stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast

    def __repr__(self):
        return (f'{type(self).__module__}.{type(self).__qualname__}(device_type={self.device!r}, '
                f'dtype={self.fast_dtype}, enabled={self._enabled})')


# -- custom autograd Functions under autocast -------------------------------------------------

def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's ``forward``: with ``cast_inputs``, inside an enabled
    region its floating tensor arguments are cast to that dtype and it runs with autocast
    off; ``backward`` (under ``custom_bwd``) then runs in the same autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's ``backward``: runs it in the autocast state its
    ``forward`` (under ``custom_fwd``) ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _cast(value, device_type, dtype):
    """Floating tensors in ``value`` (nested in lists, tuples, dicts) cast to ``dtype``."""
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        d = value._data.dtype
        if d.kind in 'fV' and d.char != 'd':
            return value.to(dtype)
        return value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if not hasattr(value, '_fields') else type(value)(*items)
    return value



# -- PyTorch's older per-device spellings (deprecated there, with these warnings) ------------

def _deprecated(old, new):
    warnings.warn(f'dynagrad.{old} is deprecated. Please use dynagrad.{new} instead.',
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    _deprecated('is_autocast_cpu_enabled()', "is_autocast_enabled('cpu')")
    return is_autocast_enabled('cpu')


def set_autocast_cpu_enabled(enabled):
    _deprecated('set_autocast_cpu_enabled(enabled)', "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled('cpu', enabled)


def get_autocast_cpu_dtype():
    _deprecated('get_autocast_cpu_dtype()', "get_autocast_dtype('cpu')")
    return get_autocast_dtype('cpu')


def set_autocast_cpu_dtype(dtype):
    _deprecated('set_autocast_cpu_dtype(dtype)', "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype('cpu', dtype)


def get_autocast_gpu_dtype():
    _deprecated('get_autocast_gpu_dtype()', "get_autocast_dtype('cuda')")
    return get_autocast_dtype('cuda')


def set_autocast_gpu_dtype(dtype):
    _deprecated('set_autocast_gpu_dtype(dtype)', "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype('cuda', dtype)


__all__ += ['is_autocast_cpu_enabled', 'set_autocast_cpu_enabled', 'get_autocast_cpu_dtype',
            'set_autocast_cpu_dtype', 'get_autocast_gpu_dtype', 'set_autocast_gpu_dtype']
