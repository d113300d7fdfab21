"""Clamping and selection: clamp, clamp_min/max, maximum, minimum, fmax, fmin, nan_to_num,
where, lerp; and filling and copying: fill_, zero_, copy_, clone, the dtype cast."""
import warnings

import numpy as np

from .._device import backend_of, is_any_array
from .._layout import memory_order
from ..backend import xp
from ..tensor import Tensor, method, wrap
from ..autograd.graph import real_grad_as
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.function import Op
from ..autograd.promotion import OperandTypeError, float_argument, number_operand
from ..autograd.widening import widened
from .. import _dtype
from . import formula as fm
from ._elementwise import (REFUSED, _as_array, _binary, _need_tensor,
                           not_implemented, refused, unordered_complex)



# -- clamp with scalar bounds, where ------------------------------------------------------


class Clamp(Op):
    widens_bfloat16 = True
    node_name = 'ClampBackward1'

    def forward(self, x, min=None, max=None):
        if x.dtype.kind == 'c':
            raise unordered_complex()
        if x.dtype in REFUSED:
            raise refused('clamp_scalar_cpu' if min is not None and max is not None else
                          'clamp_min_scalar_cpu' if min is not None else 'clamp_max_scalar_cpu', x)
        self.save_for_backward(x)
        self.bounds = (min, max)
        return xp.clip(x, min, max)

    def backward(self, g):
        x, = self.saved_tensors
        lo, hi = self.bounds
        inside = xp.ones(x.shape, bool)
        x = _as_array(x)
        if lo is not None:
            inside &= x >= lo
        if hi is not None:
            inside &= x <= hi
        return g * inside


class Where(Op):

    def forward(self, cond, a, b):
        self.save_for_backward(cond)
        return xp.where(cond, a, b)

    def backward(self, g):
        cond, = self.saved_tensors
        cond = _as_array(cond)
        return None, fm.where(cond, g, 0.0), fm.where(cond, 0.0, g)


# -- maximum, minimum, fmax, fmin, nan_to_num -------------------------------------------


class Maximum(Op):
    """Ties split the gradient in half; NaN propagates (and takes the whole gradient)."""
    supports_complex = True     # its forward refuses them with PyTorch's RuntimeError
    promotes = True
    _sign = 1

    def forward(self, a, b):
        if a.dtype in REFUSED:
            raise refused('maximum_cpu', a)
        if a.dtype.kind == 'c':
            raise RuntimeError('maximum not implemented for complex tensors.')
        self.save_for_backward(a, b)
        return xp.maximum(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        a, b = _as_array(a), _as_array(b)
        tie = a == b
        half = g * 0.5
        need = self.needs_input_grad
        a_loses = a < b if self._sign == 1 else a > b
        b_loses = a > b if self._sign == 1 else a < b
        ga = fm.where(tie, half, fm.where(a_loses, 0.0, g)) if need[0] else None
        gb = fm.where(tie, half, fm.where(b_loses, 0.0, g)) if need[1] else None
        return ga, gb


class Minimum(Maximum):
    _sign = -1

    def forward(self, a, b):
        if a.dtype in REFUSED:
            raise refused('minimum_cpu', a)
        self.save_for_backward(a, b)
        return xp.minimum(a, b)


class Fmax(Op):
    """Like maximum, but NaN loses; ties give the whole gradient to the first input."""
    promotes = True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return xp.fmax(a, b)

    def _first_wins(self, a, b):
        return (a >= b) | xp.isnan(b)

    def backward(self, g):
        a, b = self.saved_tensors
        first = self._first_wins(_as_array(a), _as_array(b))
        need = self.needs_input_grad
        return (fm.where(first, g, 0.0) if need[0] else None,
                fm.where(first, 0.0, g) if need[1] else None)


class Fmin(Fmax):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return xp.fmin(a, b)

    def _first_wins(self, a, b):
        return (a <= b) | xp.isnan(b)


class NanToNum(Op):
    def forward(self, x, nan=0.0, posinf=None, neginf=None):
        if x.dtype.kind not in 'fV':
            return x.copy()
        self.save_for_backward(x)
        low = getattr(self, '_low', None)   # bfloat16 computed in float32: its own range
        if low is not None:
            top = _dtype.finfo(_dtype.FROM_NUMPY[low]).max
            posinf = top if posinf is None else posinf
            neginf = -top if neginf is None else neginf
        return xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, g):
        x, = self.saved_tensors
        finite = xp.isfinite(_as_array(x))
        return g if finite.all() else fm.where(finite, g, 0.0)


# -- clamp with tensor bounds, clamp_min, clamp_max ---------------------------------------


class ClampTensor(Op):
    """``clamp(x, min, max)`` with tensor bounds (either may be absent, given by ``which``).

    Where ``min > max`` the result is ``max`` and the gradient goes to ``max`` only."""
    node_name = 'ClampBackward0'
    promotes = True

    def forward(self, x, lo, hi=None, which='both'):
        self.which = which
        if which == 'max':
            lo, hi = None, lo
        self.save_for_backward(x, lo, hi)
        if lo is None:
            return xp.minimum(x, hi)
        if hi is None:
            return xp.maximum(x, lo)
        return xp.minimum(xp.maximum(x, lo), hi)

    def backward(self, g):
        x, lo, hi = (_as_array(v) for v in self.saved_tensors)
        need = self.needs_input_grad
        if self.which == 'both':
            gx = fm.where((x >= lo) & (x <= hi), g, 0.0) if need[0] else None
            glo = fm.where((x < lo) & (lo < hi), g, 0.0) if need[1] else None
            ghi = fm.where((x > hi) | (hi < lo), g, 0.0) if need[2] else None
            return gx, glo, ghi
        if self.which == 'min':
            return (fm.where(x >= lo, g, 0.0) if need[0] else None,
                    fm.where(x < lo, g, 0.0) if need[1] else None)
        return (fm.where(x <= hi, g, 0.0) if need[0] else None,
                fm.where(x > hi, g, 0.0) if need[1] else None)


class ClampMin(Op):
    widens_bfloat16 = True
    def forward(self, x, min):
        if x.dtype.kind == 'c' or min.__class__ is complex:
            raise unordered_complex()
        self.save_for_backward(x)
        self.bound = min
        return xp.maximum(x, min)

    def backward(self, g):
        x, = self.saved_tensors
        return fm.where(_as_array(x) >= self.bound, g, 0.0)


class ClampMax(Op):
    widens_bfloat16 = True
    def forward(self, x, max):
        if x.dtype.kind == 'c' or max.__class__ is complex:
            raise unordered_complex()
        self.save_for_backward(x)
        self.bound = max
        return xp.minimum(x, max)

    def backward(self, g):
        x, = self.saved_tensors
        return fm.where(_as_array(x) <= self.bound, g, 0.0)


class ClampMinTensor(Op):
    node_name = 'ClampMinBackward1'
    promotes = True

    def forward(self, x, m):
        self.save_for_backward(x, m)
        return xp.maximum(x, m)

    def backward(self, g):
        x, m = (_as_array(v) for v in self.saved_tensors)
        need = self.needs_input_grad
        return (fm.where(x >= m, g, 0.0) if need[0] else None,
                fm.where(x < m, g, 0.0) if need[1] else None)


class ClampMaxTensor(Op):
    node_name = 'ClampMaxBackward1'
    promotes = True

    def forward(self, x, m):
        self.save_for_backward(x, m)
        return xp.minimum(x, m)

    def backward(self, g):
        x, m = (_as_array(v) for v in self.saved_tensors)
        need = self.needs_input_grad
        return (fm.where(x <= m, g, 0.0) if need[0] else None,
                fm.where(x > m, g, 0.0) if need[1] else None)


# -- lerp ---------------------------------------------------------------------------------


def _lerp_values(s, e, w):
    # Two formulas, each exact at its end: start + w (end - start) for w < 0.5, else
    # end - (end - start)(1 - w).
    d = e - s
    if not is_any_array(w):
        return s + w * d if abs(w) < 0.5 else e - d * (1 - w)
    return xp.where(xp.abs(w) < 0.5, s + w * d, e - d * (1 - w))


class Lerp(Op):
    """``lerp(start, end, weight)`` with a scalar weight."""
    supports_complex = True
    widens_half = True
    node_name = 'LerpBackward0'

    def forward(self, s, e, weight):
        self.weight = weight
        return _lerp_values(s, e, weight)

    def backward(self, g):
        w = self.weight
        need = self.needs_input_grad
        return (g * (1 - w) if need[0] else None), (g * w if need[1] else None)


class LerpTensor(Op):
    """``lerp(start, end, weight)`` with a tensor weight."""
    supports_complex = True
    widens_half = True
    node_name = 'LerpBackward1'

    def forward(self, s, e, w):
        need = self.needs_input_grad
        self.save_for_backward(s if need[2] else None, e if need[2] else None,
                               w if need[0] or need[1] else None)
        return _lerp_values(s, e, w)

    def backward(self, g):
        s, e, w = self.saved_tensors
        need = self.needs_input_grad
        return (g * (1 - w) if need[0] else None, g * w if need[1] else None,
                g * (e - s) if need[2] else None)


# -- conversions ------------------------------------------------------------------------


class Cast(Op):
    node_name = 'ToCopyBackward0'
    supports_complex = True
    linear = True

    @classmethod
    def apply(cls, x, dtype):
        if dtype.kind not in 'fVc' and cls.differentiable:
            # an integer or boolean result has no gradient (and no node), as in PyTorch
            return _IntegerCast.apply(x, dtype=dtype)
        return super().apply(x, dtype=dtype)

    def forward(self, x, dtype):
        self.in_dtype = x.dtype
        if x.dtype.kind == 'c' and dtype.kind != 'c':
            warnings.warn('Casting complex values to real discards the imaginary part',
                          UserWarning, stacklevel=4)
            x = x.real
        return _dtype.cast(x, dtype)

    def backward(self, g):
        return real_grad_as(g, self.in_dtype)


class _IntegerCast(Cast):
    differentiable = False


class Clone(Op):
    linear = True
    supports_complex = True

    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return g


# -- fill, zero, copy ---------------------------------------------------------------------


class Fill(Op):
    overlapping_write = 'silent'    # torch writes it through an expanded tensor
    node_name = 'FillBackward2'

    def forward(self, x, value):
        if x.dtype.itemsize == 1 and x.dtype.kind in 'fV':    # float8: PyTorch's rounding
            return _dtype.cast(xp.full(x.shape, value, np.float32), x.dtype)
        return xp.full_like(x, value)

    def backward(self, g):
        return g * 0


class Zero(Fill):
    pass


class FillTensor(Op):
    """``fill(x, value)`` with a 0-dim tensor ``value``: its gradient is the sum of g."""
    node_name = 'FillBackward3'

    def forward(self, x, value):
        if x.dtype.itemsize == 1 and x.dtype.kind in 'fV':    # float8: PyTorch's rounding
            return _dtype.cast(xp.full(x.shape, value, np.float32), x.dtype)
        return xp.full_like(x, value)

    def backward(self, g):
        need = self.needs_input_grad
        return (g * 0 if need[0] else None), (g.sum() if need[1] else None)


class Copy(Op):
    """``x.copy_(src)``: src broadcast to x's shape and cast to its dtype."""
    node_name = 'CopyBackwards'

    def forward(self, x, src):
        if src.ndim > x.ndim:  # leading size-1 dimensions of src are dropped, as in PyTorch
            src = src.reshape(src.shape[src.ndim - x.ndim:])
        return _dtype.cast(xp.broadcast_to(src, x.shape), x.dtype)

    def backward(self, g):
        return g * 0, g


# -- function forms and Tensor methods ------------------------------------------------------
# Each function is registered as its Tensor method where it is defined; its in-place form
# follows it.


@method
def where(condition, input=None, other=None):
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition._data.dtype.kind != 'b':
        kind = condition._data.dtype
        if kind != np.uint8:
            raise RuntimeError('where expected condition to be a boolean tensor, but got a '
                               f'tensor with dtype {_dtype.type_name(_dtype.FROM_NUMPY[kind])}')
        warnings.warn('where received a uint8 condition tensor. This behavior is deprecated '
                      'and will be removed in a future version of PyTorch. Use a boolean '
                      'condition instead.', UserWarning, stacklevel=2)
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        input, other = _where_operands(condition, input, other)
    from .._dtype import result_type
    target = result_type(input, other)
    if hasattr(input, '_data') and input._data.dtype != target.numpy:
        input = input.to(target)
    if hasattr(other, '_data') and other._data.dtype != target.numpy:
        other = other.to(target)
    if target.numpy.kind == 'V':
        # bfloat16, computed in float32 (its condition comes first, so Op.apply cannot tell)
        return widened(Where, target.numpy).apply(condition, input, other)
    return Where.apply(condition, input, other)


def _where_operands(condition, input, other):
    """where's Scalar operands as Python numbers (a NumPy scalar is weak, as in torch);
    anything else is refused with torch's message."""
    try:
        # (an array: a backward formula's operand, on the fast path of arrays)
        return tuple(x if isinstance(x, Tensor) or is_any_array(x)
                     else number_operand(Where, x, i) for i, x in enumerate((input, other)))
    except OperandTypeError:
        got = ', '.join(type(x).__name__ for x in (condition, input, other))
        raise TypeError(f'where() received an invalid combination of arguments - got ({got}),'
                        ' but expected one of: (Tensor condition, Tensor input, Tensor other),'
                        ' (Tensor condition, Number self, Tensor other), (Tensor condition,'
                        ' Tensor input, Number other), (Tensor condition, Number self, Number'
                        ' other)') from None


@method
def clone(input, *, memory_format=None):
    if memory_format is not None:
        memory_order(memory_format, input.ndim)   # PyTorch's error for a format of another rank
    return Clone.apply(input)


maximum = _binary(Maximum, 'maximum', tensors_only=True)
minimum = _binary(Minimum, 'minimum', tensors_only=True)
fmax = _binary(Fmax, 'fmax', tensors_only=True)
fmin = _binary(Fmin, 'fmin', tensors_only=True)


@method
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    nan, posinf, neginf = _nan_to_num_args('nan_to_num', nan, posinf, neginf)
    if isinstance(input, Tensor) and input._data.dtype.kind == 'c':
        if input._requires_grad and is_grad_enabled():
            raise RuntimeError('nan_to_num does not support automatic differentiation for '
                               'outputs with complex dtype.')
        data = xp.nan_to_num(input._data, copy=True, nan=nan, posinf=posinf, neginf=neginf)
        return wrap(data)
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


@method
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    nan, posinf, neginf = _nan_to_num_args('nan_to_num_', nan, posinf, neginf)
    return NanToNum.apply_(self, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_args(op, nan, posinf, neginf):
    nan = 0.0 if nan is None else nan       # torch: None is the default, 0
    return (float_argument(op, 'nan', nan, 1), float_argument(op, 'posinf', posinf),
            float_argument(op, 'neginf', neginf))


def _scalar_bound_input(input, bounds):
    """Scalar bounds take part in promotion: ``clamp(int_tensor, 0.5)`` is float."""
    if input._data.dtype.kind in 'fV':
        return input
    target = _dtype.result_type(input, *[b for b in bounds if b is not None])
    return input if target is input.dtype else input.to(target)


@method
def clamp_min(input, min):
    if isinstance(min, Tensor):
        return ClampMinTensor.apply(input, min)
    return ClampMin.apply(_scalar_bound_input(input, (min,)), min=min)


@method
def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return ClampMinTensor.apply_(self, min)
    return ClampMin.apply_(self, min=min)


@method
def clamp_max(input, max):
    if isinstance(max, Tensor):
        return ClampMaxTensor.apply(input, max)
    return ClampMax.apply(_scalar_bound_input(input, (max,)), max=max)


@method
def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return ClampMaxTensor.apply_(self, max)
    return ClampMax.apply_(self, max=max)


def _clamp_tensor_args(min, max):
    tmin, tmax = isinstance(min, Tensor), isinstance(max, Tensor)
    if (tmin or tmax) and ((min is not None and not tmin) or (max is not None and not tmax)):
        raise TypeError('clamp() received an invalid combination of arguments - got (Tensor, '
                        f'min={type(min).__name__}, max={type(max).__name__}): bounds are both '
                        'Tensors or both Numbers (pass a Tensor for each, or None)')
    return tmin or tmax


def _number_bound(bound):
    # a NumPy scalar bound is a number like any other: np.float64 keeps float32 float32
    return bound if bound is None or bound.__class__ in (float, int) else \
        number_operand(Clamp, bound, 1)


@method('clamp', 'clip')
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _clamp_tensor_args(min, max):
        if min is None:
            return ClampTensor.apply(input, max, which='max')
        if max is None:
            return ClampTensor.apply(input, min, which='min')
        return ClampTensor.apply(input, min, max)
    min, max = _number_bound(min), _number_bound(max)
    return Clamp.apply(_scalar_bound_input(input, (min, max)), min=min, max=max)


clip = clamp


@method('clamp_', 'clip_')
def clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _clamp_tensor_args(min, max):
        if min is None:
            return ClampTensor.apply_(self, max, which='max')
        if max is None:
            return ClampTensor.apply_(self, min, which='min')
        return ClampTensor.apply_(self, min, max)
    min, max = _number_bound(min), _number_bound(max)
    return Clamp.apply_(self, min=min, max=max)


def _lerp_args(input, end, weight):
    _need_tensor('lerp', end, 2, 'end')
    dt = input._data.dtype
    if weight.__class__ is complex and dt.kind != 'c':
        raise RuntimeError(f'value cannot be converted to type {_torch_dtype_name(dt)} without '
                           'overflow')
    if end._data.dtype != dt:
        raise RuntimeError(f'expected dtype {_torch_dtype_name(dt)} for `end` but got dtype '
                           f'{_torch_dtype_name(end._data.dtype)}')
    if dt.kind not in 'fVc':
        raise not_implemented('lerp_kernel_scalar' if not isinstance(weight, Tensor)
                               else 'lerp_kernel_tensor', input._data)
    if isinstance(weight, Tensor) and weight._data.dtype != dt:
        if weight._data.ndim:
            raise RuntimeError(f'expected dtype {_torch_dtype_name(dt)} for `weight` but got '
                               f'dtype {_torch_dtype_name(weight._data.dtype)}')
        weight = weight.to(input.dtype)
    return weight


def _torch_dtype_name(np_dtype):
    """The C++ type name PyTorch's dtype-mismatch messages use ('float', 'double', ...)."""
    return {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'int64': 'long int',
            'int32': 'int', 'int16': 'short int', 'int8': 'signed char',
            'uint8': 'unsigned char', 'bool': 'bool', 'complex64': 'c10::complex<float>',
            'complex128': 'c10::complex<double>'}[np.dtype(np_dtype).name]


@method
def lerp(input, end, weight):
    weight = _lerp_args(input, end, weight)
    if isinstance(weight, Tensor):
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, weight=weight)


@method
def lerp_(self, end, weight):
    weight = _lerp_args(self, end, weight)
    if isinstance(weight, Tensor):
        return LerpTensor.apply_(self, end, weight)
    return Lerp.apply_(self, end, weight=weight)


# -- in-place writes: zero_, fill_, copy_ (Tensor methods only) -----------------------------


@method
def zero_(self):
    return Zero.apply_(self, value=0)


def _check_fill_value(value, op):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError('fill_ only supports 0-dimension value tensor but got tensor '
                               f'with {value._data.ndim} dimensions.')
    elif not isinstance(value, (int, float, complex, np.number, np.bool_)):
        raise TypeError(f'{op}() received an invalid combination of arguments - got '
                        f'({type(value).__name__}), but expected one of: (Tensor value), '
                        '(Number value)')


@method
def fill_(self, value):
    _check_fill_value(value, 'fill_')
    if isinstance(value, Tensor):
        return FillTensor.apply_(self, value)
    return Fill.apply_(self, value=value)


def fill(input, value):
    """A tensor like ``input`` filled with ``value`` (out of place: ``torch.fill``)."""
    _need_tensor('fill', input, 1, 'input')
    _check_fill_value(value, 'fill')
    if isinstance(value, Tensor):
        return FillTensor.named('FillBackward1').apply(input, value)
    return Fill.named('FillBackward0').apply(input, value=value)


@method
def copy_(self, src, non_blocking=False):
    if not hasattr(src, '_data'):
        if isinstance(src, (int, float, bool)):
            return fill_(self, src)
        raise TypeError(f'copy_(): argument \'other\' must be Tensor, not {type(src).__name__}')
    src_shape, shape = src._data.shape, self._data.shape
    extra = len(src_shape) - len(shape)
    trimmed = src_shape[extra:] if extra > 0 and all(d == 1 for d in src_shape[:extra]) \
        else src_shape
    try:
        if xp.broadcast_shapes(trimmed, shape) != shape:
            raise ValueError
    except ValueError:
        where = next((f'The size of tensor a ({x}) must match the size of tensor b ({y}) at '
                      f'non-singleton dimension {len(shape) - k}' for k, (x, y) in
                      enumerate(zip(shape[::-1], trimmed[::-1]), 1) if x != y and y != 1),
                     'The source has more dimensions than the destination')
        raise RuntimeError(f'{where} (copy_: source of shape '
                           f'{list(src_shape)} into destination of shape {list(shape)})') from None
    if src._data.__class__ is not self._data.__class__:
        if src.is_sparse != self.is_sparse:
            raise RuntimeError('copy_() between dense and sparse Tensors is not implemented! '
                               f'Found self type = {self.type()} and src type = {src.type()}')
        target = backend_of(self._data)
        if backend_of(src._data) is not target:     # copy_ moves across devices, as torch's
            src = src.to(target.device)
    return Copy.apply_(self, src)


# torch.clamp_(x, ...) and the other in-place functions: the in-place methods themselves.
clip_ = clamp_

__all__ = ['clamp', 'clip', 'clamp_min', 'clamp_max', 'maximum', 'minimum', 'fmax', 'fmin',
           'nan_to_num', 'where', 'lerp', 'clone', 'fill', 'clamp_', 'clip_', 'clamp_min_',
           'clamp_max_', 'nan_to_num_', 'zero_', 'fill_']
