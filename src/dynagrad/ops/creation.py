"""Deterministic tensor constructors (the random ones live in ops/random.py)."""
import numpy as np

from .. import _dtype
from .._device import backend_of, default_device_set, resolve
from ..backend import xp
from ..tensor import Tensor, to_nested, size_args, wrap


def _finish(data, requires_grad):
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or _dtype.get_default_dtype()).numpy
    return _dtype.to_dtype(dtype).numpy


_PY_SCALAR = {float: _dtype._FLOAT, int: _dtype._INT, bool: _dtype._BOOL}


def _infer_dtype(data):
    """PyTorch's dtype for ``data``, or None for an empty sequence.

    Python floats give the default dtype, ints int64, bools bool; NumPy scalars, arrays
    and tensors keep their dtype; a sequence promotes over its items with promote_types.
    """
    cls = data.__class__
    if cls in _PY_SCALAR:
        return _category_dtype(_PY_SCALAR[cls])
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)):
        kinds = set(map(type, data))
        if kinds <= _PY_SCALAR.keys():
            # the fast path for plain Python numbers: the highest category decides
            return _category_dtype(max(_PY_SCALAR[k] for k in kinds)) if kinds else None
        result = None
        for item in data:
            d = _infer_dtype(item)
            if d is not None:
                result = d if result is None else _dtype.promote_types(result, d)
        return result
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{cls.__name__}'")
    for base in (bool, int, float):    # subclasses of the Python number types (IntEnum...)
        if isinstance(data, base):
            return _category_dtype(_PY_SCALAR[base])
    raise RuntimeError(f'Could not infer dtype of {cls.__name__}')


def _category_dtype(category):
    if category == _dtype._FLOAT:
        return _dtype.get_default_dtype()
    return _dtype.int64 if category == _dtype._INT else _dtype.bool


def _place(array, backend):
    """``array`` on ``backend``'s device (moved there when it was computed elsewhere)."""
    return array if backend_of(array) is backend else backend.asarray(array)


def _target(device, data):
    """The backend ``tensor``/``as_tensor`` put their result on: ``device``, else the
    default device if one is set, else the device of ``data`` when it is a tensor."""
    if device is None and isinstance(data, Tensor) and not default_device_set():
        return backend_of(data._data)
    return resolve(device)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor),
    on ``device`` (by default the default device, or the device of a tensor ``data``)."""
    backend = _target(device, data)
    if isinstance(data, Tensor):
        array = data._data.copy()
        if dtype is not None:
            array = array.astype(_np_dtype(dtype))
        return _finish(_place(array, backend), requires_grad)
    if isinstance(data, np.ndarray) and dtype is not None and data.dtype.kind in 'biuf':
        pass    # a numeric array converts to any dtype asked for, even one dynagrad lacks
    else:
        inferred = _infer_dtype(data)
        if dtype is None:
            dtype = inferred if inferred is not None else _dtype.get_default_dtype()
    with np.errstate(over='ignore'):  # out-of-range floats become inf, as in PyTorch
        array = xp.array(to_nested(data), dtype=_np_dtype(dtype))
    return _finish(_place(array, backend), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an array or tensor when no conversion is needed
    (same dtype, and already on the device ``tensor`` would choose)."""
    backend = _target(device, data)
    if isinstance(data, Tensor):
        return data.to(device=backend.device, dtype=dtype)
    if (isinstance(data, np.ndarray) and backend is backend_of(data)
            and (dtype is None or _np_dtype(dtype) == data.dtype)):
        _dtype.from_numpy_dtype(data.dtype)
        return wrap(data)
    return tensor(data, dtype=dtype, device=backend.device)


def from_numpy(array):
    if not isinstance(array, np.ndarray):
        raise TypeError(f'expected np.ndarray (got {type(array).__name__})')
    _dtype.from_numpy_dtype(array.dtype)
    return wrap(array)


def _shape(size, name):
    """Sizes as varargs, one tuple or list, or a Size; ``zeros()`` with none is an error."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return size_args(size)


def _check_fill(fill, np_dtype):
    """PyTorch refuses a fill value that overflows the dtype (a finite float beyond its
    range, an integer beyond an integer type's; negative integers wrap into uint8)."""
    if np_dtype.kind == 'b' or isinstance(fill, (bool, np.bool_)):
        return
    value = fill.item() if isinstance(fill, (Tensor, np.generic)) else fill
    if _dtype.is_floating(np_dtype):
        top = _dtype.finfo(_dtype.FROM_NUMPY[np_dtype]).max
        if xp.isfinite(value) and abs(value) > top:
            raise RuntimeError(f'value cannot be converted to type {np_dtype} without overflow')
        return
    info = np.iinfo(np_dtype)
    low = -info.max if np_dtype.kind == 'u' and isinstance(value, int) else info.min
    if not (xp.isfinite(value) and low <= value <= info.max):
        raise RuntimeError(f'value cannot be converted to type {np_dtype} without overflow')


def _filled(fill, size, dtype, requires_grad, device=None, name='full'):
    ns = resolve(device).xp      # the device's own namespace allocates
    shape = _shape(size, name)
    np_dtype = _np_dtype(dtype)
    if fill is not None:
        _check_fill(fill, np_dtype)
        if np_dtype.kind == 'u' and isinstance(fill, (int, np.integer)) and fill < 0:
            fill = xp.array(fill, np.int64).astype(np_dtype)  # wraps, as in PyTorch
    data = ns.empty(shape, np_dtype) if fill is None else ns.full(shape, fill, np_dtype)
    return _finish(data, requires_grad)


def _size_keyword(size, keyword, fn):
    """``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``, not two of them."""
    if keyword is None:
        return size
    if size:
        raise TypeError(f"{fn}() received an invalid combination of arguments: got sizes "
                        f"both as positional arguments and as size=")
    return (keyword,)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, **kw):
    size = _size_keyword(size, kw.pop('size', None), 'zeros')
    _no_extra(kw, 'zeros')
    return _filled(0, size, dtype, requires_grad, device, 'zeros')


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, **kw):
    size = _size_keyword(size, kw.pop('size', None), 'ones')
    _no_extra(kw, 'ones')
    return _filled(1, size, dtype, requires_grad, device, 'ones')


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, memory_format=None,
          **kw):
    size = _size_keyword(size, kw.pop('size', None), 'empty')
    _no_extra(kw, 'empty')
    return _filled(None, size, dtype, requires_grad, device, 'empty')


def _no_extra(kw, fn):
    if kw:
        name = next(iter(kw))
        raise TypeError(f"{fn}() got an unexpected keyword argument '{name}'")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.result_type(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad, device)


def _like(fill, input, dtype, requires_grad, device=None):
    if device is None:           # the input's device, not the default one (as PyTorch)
        device = backend_of(input._data).device
    return _filled(fill, (input.shape,), dtype or input.dtype, requires_grad, device)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(0, input, dtype, requires_grad, device)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(1, input, dtype, requires_grad, device)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(None, input, dtype, requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(fill_value, input, dtype, requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``start + step * i`` below ``end``, computed the way PyTorch's CPU kernel does.

    Integer dtypes truncate the bounds to integers first; float dtypes compute in double.
    """
    backend = resolve(device)
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError('step must be nonzero')
    if dtype is None:
        dtype = _dtype.result_type(start, end, step)
    np_dtype = _np_dtype(dtype)
    if _dtype.is_floating(np_dtype):
        xstart, xend, xstep = (_builtin_float(x) for x in (start, end, step))
    else:
        xstart, xend, xstep = (_builtin_int(x) for x in (start, end, step))
        if xstep == 0 and np_dtype == np.int64:
            raise ValueError('step must be nonzero')
    if not (xp.isfinite(xstart) and xp.isfinite(xend)):
        raise RuntimeError(f'unsupported range: {xstart} -> {xend}')
    if not ((step > 0 and xend >= xstart) or (step < 0 and xend <= xstart)):
        raise RuntimeError('upper bound and larger bound inconsistent with step sign')
    if np_dtype == np.int64:
        sign = 1 if xstep > 0 else -1
        n = (xend - xstart + xstep - sign) // xstep   # both operands share a sign: truncates
    else:
        n = int(xp.ceil((_builtin_float(end) - _builtin_float(start)) / _builtin_float(step)))
    if _dtype.is_floating(np_dtype):
        data = (xstart + xstep * xp.arange(n, dtype=np.float64)).astype(np_dtype)
    else:
        data = (xstart + xstep * xp.arange(n, dtype=np.int64)).astype(np_dtype)
    return _finish(_place(data, backend), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` points from ``start`` to ``end``; the first half counts up from ``start``
    and the second half down from ``end``, as PyTorch's kernel does."""
    backend = resolve(device)
    start, end, steps = (x.item() if isinstance(x, Tensor) else x for x in (start, end, steps))
    steps = _builtin_int(steps)
    if steps < 0:
        raise RuntimeError('linspace(): number of steps must be non-negative')
    np_dtype = _np_dtype(dtype)
    comp = np_dtype.type if _dtype.is_floating(np_dtype) else np.float64
    s, e = (comp(np_dtype.type(x)) for x in (start, end))
    if steps <= 1:
        data = xp.full(steps, s, comp)
    else:
        step = (e - s) / comp(steps - 1)
        idx = xp.arange(steps, dtype=comp)
        data = xp.where(xp.arange(steps) < steps // 2, s + step * idx,
                        e - step * (comp(steps - 1) - idx))
    return _finish(_place(data.astype(np_dtype), backend), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    ns = resolve(device).xp
    if n < 0:
        raise RuntimeError(f'n must be greater or equal to 0, got {n}')
    if m is not None and m < 0:
        raise RuntimeError(f'm must be greater or equal to 0, got {m}')
    return _finish(ns.eye(n, m, dtype=_np_dtype(dtype)), requires_grad)


_builtin_float, _builtin_int = float, int


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


__all__ = ['tensor', 'as_tensor', 'from_numpy', 'zeros', 'ones', 'empty', 'full', 'zeros_like',
           'ones_like', 'empty_like', 'full_like', 'arange', 'linspace', 'eye', 'is_tensor',
           'numel']

_MOVED = ('Generator', 'default_generator', 'manual_seed', 'initial_seed', 'seed',
          'get_rng_state', 'set_rng_state', 'rand', 'randn', 'randint', 'rand_like',
          'randn_like', 'randint_like', 'randperm')


def __getattr__(name):
    """The random constructors moved to ops/random.py; old imports from here still work."""
    if name in _MOVED:
        from . import random
        return getattr(random, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
