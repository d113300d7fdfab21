"""Deterministic tensor constructors (the random ones live in ops/random.py)."""
import builtins

import numpy as np

from .. import _dtype
from .._device import (DEVICE_ARRAY_TYPES, backend_of, default_device_set, is_any_array,
                       resolve)
from .._coo import COO
from ..backend import xp
from ..tensor import NOT_FLOAT_FACTORY_ERROR, Tensor, to_nested, size_args, wrap
from ..autograd.function import Op
from ._elementwise import REFUSED, WIDE_UNSIGNED, refused


def _finish(data, requires_grad):
    t = wrap(data)
    if requires_grad:
        t._set_requires_grad(True, NOT_FLOAT_FACTORY_ERROR)   # the factories' wording
    return t


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or _dtype.get_default_dtype()).numpy
    return _dtype.to_dtype(dtype).numpy


_PY_SCALAR = {float: _dtype._FLOAT, int: _dtype._INT, bool: _dtype._BOOL,
              complex: _dtype._COMPLEX}


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
    if isinstance(data, (np.ndarray, np.generic)) or cls in DEVICE_ARRAY_TYPES:
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
    for base in (bool, int, float, complex):    # subclasses of the Python number types (IntEnum...)
        if isinstance(data, base):
            return _category_dtype(_PY_SCALAR[base])
    raise RuntimeError(f'Could not infer dtype of {cls.__name__}')


def _category_dtype(category):
    if category == _dtype._FLOAT:
        return _dtype.get_default_dtype()
    if category == _dtype._COMPLEX:
        return _dtype.default_complex_dtype()
    return _dtype.int64 if category == _dtype._INT else _dtype.bool


def _place(array, backend):
    """``array`` on ``backend``'s device (moved there when it was computed elsewhere)."""
    return array if backend_of(array) is backend else backend.asarray(array)


def _target(device, data):
    """The backend ``tensor``/``as_tensor`` put their result on: ``device``, else the
    default device if one is set, else the device of ``data`` when it is a tensor or a
    device's array (CuPy's: PyTorch keeps those on their GPU too)."""
    if device is None and not default_device_set():
        if isinstance(data, Tensor):
            return backend_of(data._data)
        if data.__class__ in DEVICE_ARRAY_TYPES:
            return backend_of(data)
    return resolve(device)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor),
    on ``device`` (by default the default device, or the device of a tensor ``data``)."""
    backend = _target(device, data)
    if isinstance(data, Tensor):
        array = data._data.copy()
        if dtype is not None:
            array = _dtype.cast(array, _np_dtype(dtype))
        return _finish(_place(array, backend), requires_grad)
    if isinstance(data, np.ndarray) and dtype is not None and data.dtype.kind in 'biuf':
        pass    # a numeric array converts to any dtype asked for, even one dynagrad lacks
    else:
        inferred = _infer_dtype(data)
        if dtype is None:
            dtype = inferred if inferred is not None else _dtype.get_default_dtype()
    np_dtype = _np_dtype(dtype)
    if data.__class__ in DEVICE_ARRAY_TYPES:   # a device's array: copied where it is
        return _finish(_place(backend_of(data).xp.array(data, dtype=np_dtype), backend),
                       requires_grad)
    with np.errstate(over='ignore'):  # out-of-range floats become inf, as in PyTorch
        if _dtype.is_float8(np_dtype):     # PyTorch's rounding, not ml_dtypes'
            array = _dtype.cast(xp.array(to_nested(data), dtype=np.float64), np_dtype)
        else:
            try:
                array = xp.array(to_nested(data), dtype=np_dtype)
            except OverflowError:
                array = _wrapped_integers(data, np_dtype)
            except ValueError:
                _refuse_ragged(data, 0)
                raise
    return _finish(_place(array, backend), requires_grad)


def _refuse_ragged(data, dim):
    """torch's error for nested sequences of unequal lengths (NumPy's names its own
    'inhomogeneous shape')."""
    if not isinstance(data, (list, tuple)) or not data:
        return
    first = data[0]
    expected = len(first) if isinstance(first, (list, tuple)) else None
    for d in data:
        got = len(d) if isinstance(d, (list, tuple)) else None
        if got != expected:
            if expected is None or got is None:
                raise TypeError(f'expected a sequence or a number at dim {dim + 1}, got a '
                                f'mixture of both')
            raise ValueError(f'expected sequence of length {expected} at dim {dim + 1} '
                             f'(got {got})')
    for d in data:
        _refuse_ragged(d, dim + 1)


def _numbers(data):
    if isinstance(data, (list, tuple)):
        for d in data:
            yield from _numbers(d)
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield data


def _wrapped_integers(data, np_dtype):
    """``data`` in an integer dtype NumPy refused a number of: PyTorch wraps a negative int
    whose magnitude fits an unsigned dtype (-1 is 255 in uint8) and refuses the rest."""
    info = np.iinfo(np_dtype)
    name = _dtype.FROM_NUMPY[np_dtype].name
    for v in _numbers(data):
        if np_dtype == np.uint64:
            if v < 0:
                if isinstance(v, float):
                    raise TypeError('an integer is required')
                raise OverflowError("can't convert negative int to unsigned")
            if v > info.max:
                raise OverflowError('int too big to convert')
        elif isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:   # read as a C long long
            raise ValueError('Overflow when unpacking long long')
        if info.min == 0:       # an int wraps if its magnitude fits; a float does not
            overflows = v > info.max or v < 0 and (isinstance(v, float) or -v > info.max)
        else:
            overflows = not info.min <= v <= info.max
        if overflows:
            raise RuntimeError(f'value cannot be converted to type {name} without overflow')
    return xp.array(to_nested(data), dtype=np.int64).astype(np_dtype)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an array or tensor when no conversion is needed
    (same dtype, and already on the device ``tensor`` would choose)."""
    backend = _target(device, data)
    if isinstance(data, Tensor):
        return data.to(device=backend.device, dtype=dtype)
    if (is_any_array(data) and backend is backend_of(data)
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
    shape = size_args(size, name)
    for n in shape:
        if n < 0:
            raise RuntimeError(f'Trying to create tensor with negative dimension {n}: '
                               f'{list(shape)}')
    return shape


def _check_fill(fill, np_dtype):
    """PyTorch refuses a fill value that overflows the dtype (a finite float beyond its
    range, an integer beyond an integer type's; negative integers wrap into uint8)."""
    if np_dtype.kind == 'b' or isinstance(fill, (bool, np.bool_)):
        return
    value = fill.item() if isinstance(fill, (Tensor, np.generic)) else fill
    if _dtype.is_float8(np_dtype):
        return      # PyTorch saturates or writes NaN; it never refuses a float8 fill
    if _dtype.is_floating(np_dtype):
        top = _dtype.finfo(_dtype.FROM_NUMPY[np_dtype]).max
        if xp.isfinite(value) and abs(value) > top:
            raise RuntimeError(f'value cannot be converted to type {np_dtype} without overflow')
        return
    if np_dtype.kind == 'c':
        return      # complex parts overflow to inf, as in PyTorch
    if isinstance(value, complex):
        raise RuntimeError(f'value cannot be converted to type {np_dtype} without overflow')
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
    if fill is None:
        data = ns.empty(shape, np_dtype)
    elif _dtype.is_float8(np_dtype):        # PyTorch's rounding (0 is 2**-127 in e8m0)
        data = _dtype.cast(ns.full(shape, fill, np.float32), np_dtype)
    else:
        data = ns.full(shape, fill, np_dtype)
    return _finish(data, requires_grad)


def _size_keyword(size, keyword, fn):
    """``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``, not two of them."""
    if keyword is None:
        return size
    if size:
        raise TypeError(f"{fn}() received an invalid combination of arguments: got sizes "
                        f"both as positional arguments and as size=")
    return (keyword,)


def zeros(*size, dtype=None, device=None, requires_grad=False, **kw):
    size = _size_keyword(size, kw.pop('size', None), 'zeros')
    _no_extra(kw, 'zeros')
    return _filled(0, size, dtype, requires_grad, device, 'zeros')


def ones(*size, dtype=None, device=None, requires_grad=False, **kw):
    size = _size_keyword(size, kw.pop('size', None), 'ones')
    _no_extra(kw, 'ones')
    return _filled(1, size, dtype, requires_grad, device, 'ones')


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, **kw):
    size = _size_keyword(size, kw.pop('size', None), 'empty')
    _no_extra(kw, 'empty')
    return _filled(None, size, dtype, requires_grad, device, 'empty')


def _no_extra(kw, fn):
    if kw:
        name = next(iter(kw))
        raise TypeError(f"{fn}() got an unexpected keyword argument '{name}'")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if not isinstance(fill_value, (int, float, complex, np.number, np.bool_, Tensor)):
        raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not "
                        f'{type(fill_value).__name__}')
    if dtype is None:
        dtype = _dtype.result_type(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad, device)


def _like(fill, input, dtype, requires_grad, device=None):
    if input._data.__class__ is COO:    # PyTorch keeps the result sparse
        from .sparse_inplace import sparse_like
        return sparse_like(fill, input, dtype, requires_grad)
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


_INT62 = 1 << 62    # bounds within which int64 arithmetic on a range cannot overflow


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``start + step * i`` below ``end``, computed the way PyTorch's CPU kernel does.

    Integer dtypes truncate the bounds to integers first; float dtypes compute in double.
    """
    # The everyday call (int bounds, int64, the CPU): a loop building position ids calls
    # this once per step, and the general path's checks cost twice its array
    if (start.__class__ is int and step.__class__ is int and (end is None or end.__class__ is int)
            and (dtype is None or dtype is _dtype.int64) and device is None
            and not requires_grad and not default_device_set()):
        low, high = (0, start) if end is None else (start, end)
        if (-_INT62 < low < _INT62 and -_INT62 < high < _INT62 and -_INT62 < step < _INT62
                and step and (low <= high if step > 0 else high <= low)):
            data = xp.arange(low, high, step, dtype=np.int64)
            if data.__class__ is np.ndarray:    # (inside a device op the door may not be NumPy)
                return wrap(data)
    backend = resolve(device)
    if end is None:
        start, end = 0, start
    for name, x in (('end', end), ('start', start), ('step', step)):
        if not isinstance(x, (int, float, np.number, np.bool_, Tensor)):
            raise TypeError(f"arange(): argument '{name}' must be Number, not "
                            f'{type(x).__name__}')
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError('step must be nonzero')
    if dtype is None:
        dtype = _dtype.result_type(start, end, step)
    np_dtype = _np_dtype(dtype)
    if np_dtype in REFUSED:      # uint16/32/64 and float8
        raise refused('arange_cpu', xp.zeros(0, np_dtype))
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
    if np_dtype in REFUSED:      # uint16/32/64 and float8
        raise refused('linspace_cpu', xp.zeros(0, np_dtype))
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
    np_dtype = _np_dtype(dtype)
    if np_dtype in WIDE_UNSIGNED:      # float8 it fills
        raise refused('eye', xp.zeros(0, np_dtype))
    return _finish(ns.eye(n, m, dtype=np_dtype), requires_grad)


_builtin_float, _builtin_int = float, int
_builtin_range = range


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``, computed in double and cast once."""
    backend = resolve(device)
    start, end, steps = (x.item() if isinstance(x, Tensor) else x for x in (start, end, steps))
    steps = _builtin_int(steps)
    if steps < 0:
        raise RuntimeError('number of steps must be non-negative')
    np_dtype = _np_dtype(dtype)
    if np_dtype in REFUSED:      # uint16/32/64 and float8
        raise refused('logspace_cpu', xp.zeros(0, np_dtype))
    exponents = linspace(start, end, steps, dtype=_dtype.float64)._data
    with np.errstate(over='ignore'):
        data = xp.power(_builtin_float(base), exponents)
    if not _dtype.is_floating(np_dtype):
        data = xp.trunc(data)
    return _finish(_place(data.astype(np_dtype), backend), requires_grad)


# -- windows ----------------------------------------------------------------------------------

def _window(name, length, periodic, dtype, requires_grad, device, formula):
    """``formula(n, N)`` over ``n = 0..N-1`` with ``N = length`` (``length + 1`` when
    periodic, the last point dropped), as PyTorch's window functions."""
    length = _builtin_int(length)
    np_dtype = _np_dtype(dtype)
    if not _dtype.is_floating(np_dtype):
        raise RuntimeError(f'{name} expects floating point dtypes, got: '
                           f'{_dtype.FROM_NUMPY[np_dtype]}')
    if length < 0:
        raise RuntimeError(f'{name} requires non-negative window_length, got '
                           f'window_length={length}')
    ns = resolve(device).xp
    if length <= 1:
        return _finish(ns.ones(length, np_dtype), requires_grad)
    total = length + 1 if periodic else length
    n = xp.arange(total, dtype=np.float64)
    data = formula(n, total)[:length]
    return _finish(_place(data.astype(np_dtype), resolve(device)), requires_grad)


def _cosine_window(a0, a1, a2=0.0):
    def formula(n, N):
        w = 2 * np.pi * n / (N - 1)
        return a0 - a1 * xp.cos(w) + a2 * xp.cos(2 * w)
    return formula


def hann_window(window_length, periodic=True, *, dtype=None, device=None,
                requires_grad=False, layout=None):
    return _window('hann_window', window_length, periodic, dtype, requires_grad, device,
                   _cosine_window(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False, layout=None):
    return _window('hamming_window', window_length, periodic, dtype, requires_grad, device,
                   _cosine_window(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None):
    return _window('blackman_window', window_length, periodic, dtype, requires_grad, device,
                   _cosine_window(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None):
    return _window('bartlett_window', window_length, periodic, dtype, requires_grad, device,
                   lambda n, N: 1 - xp.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False, layout=None):
    def formula(n, N):
        alpha = (N - 1) / 2.0
        r = (n - alpha) / alpha
        return xp.i0(beta * xp.sqrt(xp.clip(1 - r * r, 0, None))) / xp.i0(beta)
    return _window('kaiser_window', window_length, periodic, dtype, requires_grad, device,
                   formula)


# -- memory and conversion ------------------------------------------------------------------------

def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """Uninitialised memory seen with the given strides (in elements)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f'mismatch in length of strides and shape (size {list(size)}, '
                           f'stride {list(stride)})')
    if any(n < 0 for n in size):
        raise RuntimeError(f'Trying to create tensor with negative dimension: {list(size)}')
    if any(st < 0 for st in stride):
        raise RuntimeError(f'as_strided: Negative strides are not supported at the moment, got '
                           f'strides: {list(stride)}')
    np_dtype = np.dtype(_np_dtype(dtype))
    count = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    ns = resolve(device).xp
    data = ns.lib.stride_tricks.as_strided(
        ns.empty(count, np_dtype), size, tuple(st * np_dtype.itemsize for st in stride))
    return _finish(data, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Uninitialised, dense memory of logical shape ``size`` whose dims lie in memory in
    the order ``physical_layout`` (outermost first): ``(0, 2, 3, 1)`` is channels-last."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError('Number of dimensions in size does not match the length of the '
                           f'physical_layout; i.e. len(size) = {len(size)} is not equal to '
                           f'len(physical_layout) = {len(order)}')
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError('Duplicate dim not allowed')
    if any(n < 0 for n in size):
        raise RuntimeError(f'Trying to create tensor with negative dimension: {list(size)}')
    data = resolve(device).xp.empty([size[d] for d in order], np.dtype(_np_dtype(dtype)))
    inverse = sorted(builtins.range(len(order)), key=order.__getitem__)
    return _finish(data.transpose(inverse), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """A 0-dim tensor holding ``s``, in the default float dtype unless ``dtype`` says."""
    if isinstance(s, Tensor):
        s = s.item()
    ns = resolve(device).xp
    return _finish(ns.asarray(s, dtype=_np_dtype(dtype)), requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``obj`` as a tensor, sharing memory with a tensor or NumPy array when no conversion is
    needed and ``copy`` is not True; ``copy=False`` refuses to copy. A tensor keeps its
    ``requires_grad`` unless told (PyTorch 2.13 warns then, as here)."""
    if isinstance(obj, Tensor):
        return _asarray_tensor(obj, dtype, copy, requires_grad)
    requires_grad = bool(requires_grad)
    elements = getattr(obj, '_elements', None)
    if elements is not None:
        # a storage: its memory as elements of dtype; PyTorch's default is int64, or the
        # default float dtype for an empty storage (read as an empty sequence)
        if dtype is None:
            dtype = _dtype.int64 if len(obj) else _dtype.get_default_dtype()
        data = elements(_dtype.to_dtype(dtype))
        return _finish(data.copy() if copy else data, requires_grad)
    if isinstance(obj, np.ndarray):
        _dtype.from_numpy_dtype(obj.dtype)
        target = obj.dtype if dtype is None else _np_dtype(dtype)
        if target == obj.dtype and not copy:
            return _finish(obj, requires_grad)
        if copy is False:
            raise ValueError(f"can't alias NumPy array with dtype '{obj.dtype}' into dtype "
                             f"'{_dtype.to_dtype(dtype)}'.")
        return _finish(obj.astype(target, copy=True), requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return frombuffer(obj, dtype=dtype or _dtype.uint8, requires_grad=requires_grad)
    return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def _asarray_tensor(obj, dtype, copy, requires_grad):
    import warnings
    converts = dtype is not None and _np_dtype(dtype) != obj._data.dtype
    if copy is False and converts:
        raise ValueError(f"can't alias tensor with dtype '{obj.dtype.legacy_name[:-6]}' "
                         f"into dtype '{_dtype.to_dtype(dtype).legacy_name[:-6]}'.")
    if requires_grad is None:
        if obj.requires_grad:
            warnings.warn('torch.asarray: unspecified requires_grad now defaults to '
                          'obj.requires_grad instead of False. Pass requires_grad=False '
                          'explicitly to get the old behavior and silence this warning.',
                          UserWarning, stacklevel=3)
        requires_grad = obj.requires_grad
    if copy or converts:
        data = obj._data.astype(_np_dtype(dtype) if converts else obj._data.dtype, copy=True)
        return _finish(data, requires_grad)
    if requires_grad == obj.requires_grad:
        return obj
    alias = obj.detach()
    return alias._set_requires_grad(True, NOT_FLOAT_FACTORY_ERROR) if requires_grad else alias


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over a Python buffer (bytes, bytearray, array.array, ...), sharing its
    memory."""
    import warnings
    np_dtype = np.dtype(_np_dtype(dtype))
    view = memoryview(buffer)
    length = view.nbytes
    if count == 0 or length == 0:
        raise ValueError(f'both buffer length ({length}) and count ({count}) must not be 0')
    if not 0 <= offset < length:
        raise ValueError(f'offset ({offset} bytes) must be non-negative and no greater than '
                         f'buffer length ({length} bytes) minus 1')
    if count < 0:
        if (length - offset) % np_dtype.itemsize:
            raise ValueError(f'buffer length ({length - offset} bytes) after offset ({offset} '
                             f'bytes) must be a multiple of element size ({np_dtype.itemsize})')
        count = (length - offset) // np_dtype.itemsize
    elif offset + count * np_dtype.itemsize > length:
        raise ValueError(f'requested buffer length ({count} * {np_dtype.itemsize} bytes) after '
                         f'offset ({offset} bytes) must not be greater than actual buffer length '
                         f'({length} bytes)')
    if view.readonly:
        warnings.warn('The given buffer is not writable, and PyTorch does not support '
                      'non-writable tensors. This means you can write to the underlying '
                      '(supposedly non-writable) buffer using the tensor. You may want to copy '
                      'the buffer to protect its data or make it writable before converting it '
                      'to a tensor.', UserWarning, stacklevel=2)
    data = xp.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    if not data.flags.writeable:
        data = data.view()
        data.flags.writeable = False
    return _finish(data, requires_grad)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated: ``start`` to ``end`` inclusive, by ``step`` (use ``arange``)."""
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError('step must be nonzero')
    if not (xp.isfinite(start) and xp.isfinite(end)):
        raise RuntimeError(f'unsupported range: {start} -> {end}')
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError('upper bound and larger bound inconsistent with step sign')
    np_dtype = _np_dtype(dtype)
    n = _builtin_int((_builtin_float(end) - _builtin_float(start)) / _builtin_float(step)) + 1
    data = (_builtin_float(start) + _builtin_float(step) * xp.arange(n, dtype=np.float64))
    return _finish(_place(data.astype(np_dtype), resolve(device)), requires_grad)


def can_cast(from_, to):
    """PyTorch's casting rule: no float to integer, no complex to real, nothing but bool to
    bool."""
    a, b = _dtype.to_dtype(from_), _dtype.to_dtype(to)
    if a.is_complex and not b.is_complex:
        return False
    if a.is_floating_point and not (b.is_floating_point or b.is_complex):
        return False
    if a is not _dtype.bool and b is _dtype.bool:
        return False
    return True


# -- index helpers ---------------------------------------------------------------------------

def _tri_indices(name, row, col, offset, dtype, device, lower):
    for arg, value in (('row', row), ('col', col)):
        if value < 0:
            raise RuntimeError(f'{arg} must be non-negative, got{value}')
    np_dtype = _np_dtype(dtype, _dtype.int64)
    if lower:
        r, c = xp.tril_indices(row, offset, col)
    else:
        r, c = xp.triu_indices(row, offset, col)
    data = xp.stack([r, c]).astype(np_dtype).reshape(2, -1)
    return _finish(_place(data, resolve(device)), False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices('tril_indices', row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices('triu_indices', row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in ``shape`` (one tensor per dimension); indices
    wrap around as with Python's ``divmod``, as in PyTorch."""
    if not isinstance(indices, Tensor):
        indices = tensor(indices)
    if indices._data.dtype.kind not in 'iu':
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(_builtin_int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    rest = indices._data.astype(np.int64)
    coords = []
    for n in reversed(shape):
        if n == 0:
            coords.append(xp.zeros_like(rest))
            continue
        coords.append(rest % n)
        rest = rest // n
    return tuple(wrap(xp.asarray(c, dtype=np.int64)) for c in reversed(coords))


# -- differentiable constructions -------------------------------------------------------------

def vander(x, N=None, increasing=False):
    """Columns ``x ** (N-1), ..., x ** 0`` (reversed when ``increasing``), built by a
    cumulative product, as PyTorch's."""
    from .shape import cat
    if x.ndim != 1:
        raise RuntimeError('x must be a one-dimensional tensor.')
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError('N must be non-negative.')
    if x._data.dtype == np.bool_:
        x = x.long()
    if n == 0:
        return x.reshape(-1, 1)[:, :0] * 1
    ones = wrap(backend_of(x._data).xp.ones((x.shape[0], 1), x._data.dtype))   # x's device
    if n == 1:
        result = ones
    else:
        powers = x.reshape(-1, 1).expand(x.shape[0], n - 1).cumprod(1)
        result = cat([ones.to(powers.dtype), powers], 1)
    return result if increasing else result.flip(1)


def cartesian_prod(*tensors):
    from .shape import meshgrid, stack
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f'Expect a 1D vector, but got shape {list(t.shape)}')
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing='ij')
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    import itertools
    from .shape import stack
    if input.ndim != 1:
        raise RuntimeError(f'Expect a 1D vector, but got shape {list(input.shape)}')
    if r < 0:
        raise RuntimeError(f'Expect a non-negative number, but got {r}')
    if r == 0:
        return wrap(xp.empty(0, input._data.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = xp.array(list(pick(_builtin_range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return stack([input[wrap(idx[:, k].copy())] for k in _builtin_range(r)], 1)


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) along the diagonal of a zero matrix."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f'block_diag(): argument {i} must be Tensor, not {type(t).__name__}')
        if t.ndim > 2:
            raise RuntimeError(f'torch.block_diag: Input tensors must have 2 or fewer dimensions. '
                               f'Input {i} has {t.ndim} dimensions')
    if not tensors:
        return wrap(xp.empty((1, 0), _dtype.get_default_dtype().numpy))
    return BlockDiag.apply(*tensors)


class BlockDiag(Op):
    """Blocks placed along the diagonal; each block's gradient is its slice of ``g``."""

    def forward(self, *blocks):
        shapes = [b.reshape(1, -1).shape if b.ndim < 2 else b.shape for b in blocks]
        dtype = _dtype.FROM_NUMPY[blocks[0].dtype]
        for b in blocks[1:]:
            dtype = _dtype.promote_types(dtype, _dtype.FROM_NUMPY[b.dtype])
        dtype = dtype.numpy
        out = xp.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), dtype)
        r = c = 0
        self.spans = []
        for b, (h, w) in zip(blocks, shapes):
            out[r:r + h, c:c + w] = b.reshape(h, w)
            self.spans.append((r, c, h, w, b.shape))
            r, c = r + h, c + w
        return out

    def backward(self, g):
        return tuple(g[r:r + h, c:c + w].reshape(shape) for r, c, h, w, shape in self.spans)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


__all__ = ['tensor', 'as_tensor', 'from_numpy', 'zeros', 'ones', 'empty', 'full', 'zeros_like',
           'ones_like', 'empty_like', 'full_like', 'arange', 'linspace', 'eye', 'is_tensor',
           'numel', 'logspace', 'hann_window', 'hamming_window', 'bartlett_window',
           'blackman_window', 'kaiser_window', 'empty_strided', 'empty_permuted',
           'scalar_tensor', 'asarray',
           'frombuffer', 'range', 'can_cast', 'vander', 'cartesian_prod', 'combinations',
           'block_diag', 'tril_indices', 'triu_indices', 'unravel_index']

_MOVED = ('Generator', 'default_generator', 'manual_seed', 'initial_seed', 'seed',
          'get_rng_state', 'set_rng_state', 'rand', 'randn', 'randint', 'rand_like',
          'randn_like', 'randint_like', 'randperm')


def __getattr__(name):
    """The random constructors moved to ops/random.py; old imports from here still work."""
    if name in _MOVED:
        from . import random
        return getattr(random, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
