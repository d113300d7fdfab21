"""Elementwise ops: arithmetic, unary math, activations, comparisons."""
import numpy as np

from ..backend import xp
from ..tensor import Tensor
from ..autograd.function import Op
from .. import _dtype
from . import _formula as fm

# -- arithmetic ---------------------------------------------------------------------------


class Add(Op):
    __slots__ = ('alpha',)  # hot ops keep their state in slots: no per-node dict
    promotes = True

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a + b if alpha == 1 else a + b * alpha

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)


def _is_bool(v):
    return v.__class__ is bool or getattr(v, 'dtype', None) is _dtype.bool


def _check_bool_sub(a, b):
    """torch refuses ``-`` on booleans (NumPy either allows it or raises a TypeError)."""
    if _is_bool(a) or _is_bool(b):
        if _is_bool(a) and _is_bool(b):
            raise RuntimeError('Subtraction, the `-` operator, with two bool tensors is not '
                               'supported. Use the `^` or `logical_xor()` operator instead.')
        raise RuntimeError('Subtraction, the `-` operator, with a bool tensor is not supported. '
                           'If you are trying to invert a mask, use the `~` or `logical_not()` '
                           'operator instead.')


class Sub(Op):
    __slots__ = ('alpha',)
    promotes = True

    @classmethod
    def apply(cls, a, b, **params):
        _check_bool_sub(a, b)
        return super().apply(a, b, **params)

    @classmethod
    def apply_(cls, a, b, **params):
        _check_bool_sub(a, b)
        return super().apply_(a, b, **params)

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a - b if alpha == 1 else a - b * alpha

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha)


class Rsub(Op):
    """``other - x * alpha`` for a scalar ``other`` (``1 - x``)."""
    node_name = 'RsubBackward1'
    promotes = True

    @classmethod
    def apply(cls, x, other, **params):
        _check_bool_sub(x, other)
        return super().apply(x, other, **params)

    def forward(self, x, other, alpha=1):
        self.alpha = alpha
        return other - x if alpha == 1 else other - x * alpha

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -self.alpha), None


class Mul(Op):
    promotes = True

    def forward(self, a, b):
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        return a * b

    def backward(self, g):
        a, b = self.saved_tensors
        return (g * b if b is not None else None), (g * a if a is not None else None)


class Div(Op):
    quiet_fp = True
    promotes = True
    float_result = True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a / b

    def backward(self, g):
        a, b = self.saved_tensors
        ga = g / b
        return ga, (-ga * a / b if self.needs_input_grad[1] else None)


class Rdiv(Op):
    """``other / x`` for a scalar ``other`` (torch records it as ``other * x.reciprocal()``)."""
    quiet_fp = True
    node_name = 'MulBackward0'
    promotes = True
    float_result = True

    def forward(self, x, other):
        self.save_for_backward(x)
        self.other = other
        return other / x

    def backward(self, g):
        x, = self.saved_tensors
        return -g * self.other / (x * x), None


class Pow(Op):
    quiet_fp = True
    __slots__ = ('exponent',)
    """``x ** exponent`` with a scalar exponent."""
    promotes = True

    def forward(self, x, exponent):
        self.save_for_backward(x)
        self.exponent = exponent
        if exponent == 2:
            return x * x
        return x ** exponent

    def backward(self, g):
        x, = self.saved_tensors
        p = self.exponent
        if p == 0:
            return g * 0, None
        return g * p * x ** (p - 1), None


class PowTensor(Op):
    """``a ** b`` with a tensor exponent."""
    quiet_fp = True
    node_name = 'PowBackward1'
    promotes = True

    def forward(self, a, b):
        out = a ** b
        self.save_for_backward(a, b, out)
        return out

    def backward(self, g):
        a, b, out = self.saved_tensors
        ga = g * b * a ** (b - 1) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            # d(a^b)/db = a^b log a, taken as 0 where a == 0 (PyTorch's convention).
            zero = _as_array(a) == 0
            gb = g * fm.where(zero, 0.0, out * fm.log(fm.where(zero, 1.0, a)))
        return ga, gb


class Rpow(Op):
    """``base ** x`` for a scalar ``base``."""
    quiet_fp = True
    node_name = 'PowBackward2'
    promotes = True
    float_result = False

    def forward(self, x, base):
        out = base ** x
        self.save_for_backward(out)
        self.base = base
        return out

    def backward(self, g):
        out, = self.saved_tensors
        return g * out * float(np.log(self.base)), None


def _as_array(x):
    return x._data if hasattr(x, '_data') else x


class Neg(Op):
    def forward(self, x):
        if x.dtype == bool:
            raise RuntimeError('Negation, the `-` operator, on a bool tensor is not supported. If '
                               'you are trying to invert a mask, use the `~` or `logical_not()` '
                               'operator instead.')
        return -x

    def backward(self, g):
        return -g


# -- unary math ---------------------------------------------------------------------------


class Exp(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        y = xp.exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * y


class Log(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.log(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / x


class Sqrt(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        y = xp.sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g / (2 * y)


class Tanh(Op):
    float_result = True

    def forward(self, x):
        y = xp.tanh(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * (1 - y * y)


class Sigmoid(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        # exp of a large negative x overflows; the split keeps both halves finite.
        y = xp.empty_like(x)
        pos = x >= 0
        y[pos] = 1 / (1 + xp.exp(-x[pos]))
        ex = xp.exp(x[~pos])
        y[~pos] = ex / (1 + ex)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * y * (1 - y)


class Relu(Op):
    def forward(self, x):
        y = xp.maximum(x, 0)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * (_as_array(y) > 0)


class Abs(Op):
    def forward(self, x):
        self.save_for_backward(x)
        return xp.abs(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * fm.sign(x)


class Sign(Op):
    def forward(self, x):
        self.shape = x.shape
        return x.copy() if x.dtype == bool else xp.sign(x)

    def backward(self, g):
        return g * 0


class Clamp(Op):
    node_name = 'ClampBackward1'

    def forward(self, x, min=None, max=None):
        self.save_for_backward(x)
        self.bounds = (min, max)
        return xp.clip(x, min, max)

    def backward(self, g):
        x, = self.saved_tensors
        lo, hi = self.bounds
        inside = np.ones(x.shape, bool)
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


# -- conversions ------------------------------------------------------------------------


class Cast(Op):
    node_name = 'ToCopyBackward0'

    def forward(self, x, dtype):
        self.in_dtype = x.dtype
        return x.astype(dtype)

    def backward(self, g):
        from .._dtype import FROM_NUMPY
        if hasattr(g, '_data'):
            return g.to(FROM_NUMPY[self.in_dtype])
        return g.astype(self.in_dtype)


class Clone(Op):
    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return g


# -- comparisons (never differentiable) ---------------------------------------------------


class _Compare(Op):
    differentiable = False


class Eq(_Compare):
    def forward(self, a, b):
        return xp.equal(a, b)


class Ne(_Compare):
    def forward(self, a, b):
        return xp.not_equal(a, b)


class Lt(_Compare):
    def forward(self, a, b):
        return xp.less(a, b)


class Le(_Compare):
    def forward(self, a, b):
        return xp.less_equal(a, b)


class Gt(_Compare):
    def forward(self, a, b):
        return xp.greater(a, b)


class Ge(_Compare):
    def forward(self, a, b):
        return xp.greater_equal(a, b)


# -- function forms ---------------------------------------------------------------------
# dynagrad.<name>(input, ...) and, bound in ops/__init__.py, tensor.<name>(...).


def add(input, other, *, alpha=1):
    return Add.apply(input, other) if alpha == 1 else Add.apply(input, other, alpha=alpha)


def sub(input, other, *, alpha=1):
    return Sub.apply(input, other) if alpha == 1 else Sub.apply(input, other, alpha=alpha)


def rsub(input, other, *, alpha=1):
    return Rsub.apply(input, other, alpha=alpha)


def mul(input, other):
    return Mul.apply(input, other)


multiply = mul
subtract = sub


def pow(input, exponent):
    if hasattr(exponent, '_data'):
        if not hasattr(input, '_data'):
            return Rpow.apply(exponent, input)
        return PowTensor.apply(input, exponent)
    if isinstance(exponent, float) and not input.is_floating_point():
        # The exponent is a parameter, not an input, so promotion does not see it.
        from .._dtype import get_default_dtype
        input = input.to(get_default_dtype())
    return Pow.apply(input, exponent=exponent)


def neg(input):
    return Neg.apply(input)


negative = neg


def exp(input):
    return Exp.apply(input)


def log(input):
    return Log.apply(input)


def sqrt(input):
    return Sqrt.apply(input)


def tanh(input):
    return Tanh.apply(input)


def sigmoid(input):
    return Sigmoid.apply(input)


def relu(input):
    return Relu.apply(input)


def abs(input):
    return Abs.apply(input)


absolute = abs


def sign(input):
    return Sign.apply(input)


def where(condition, input=None, other=None):
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    from .._dtype import result_type
    target = result_type(input, other)
    if hasattr(input, '_data') and input._data.dtype != target.numpy:
        input = input.to(target)
    if hasattr(other, '_data') and other._data.dtype != target.numpy:
        other = other.to(target)
    return Where.apply(condition, input, other)


def clone(input, *, memory_format=None):
    return Clone.apply(input)


def eq(input, other):
    return Eq.apply(input, other)


def ne(input, other):
    return Ne.apply(input, other)


def lt(input, other):
    return Lt.apply(input, other)


def le(input, other):
    return Le.apply(input, other)


def gt(input, other):
    return Gt.apply(input, other)


def ge(input, other):
    return Ge.apply(input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


# -- in-place ops -----------------------------------------------------------------------

class Fill(Op):
    node_name = 'FillBackward2'

    def forward(self, x, value):
        return xp.full_like(x, value)

    def backward(self, g):
        return g * 0


class Zero(Fill):
    pass


class Copy(Op):
    """``x.copy_(src)``: src broadcast to x's shape and cast to its dtype."""
    node_name = 'CopyBackwards'

    def forward(self, x, src):
        if src.ndim > x.ndim:  # leading size-1 dimensions of src are dropped, as in PyTorch
            src = src.reshape(src.shape[src.ndim - x.ndim:])
        return xp.broadcast_to(src, x.shape).astype(x.dtype)

    def backward(self, g):
        return g * 0, g


# -- in-place variants --------------------------------------------------------------------

def add_(self, other, *, alpha=1):
    return Add.apply_(self, other, alpha=alpha)


def sub_(self, other, *, alpha=1):
    return Sub.apply_(self, other, alpha=alpha)


def mul_(self, other):
    return Mul.apply_(self, other)


def zero_(self):
    return Zero.apply_(self, value=0)


def fill_(self, value):
    value = value.item() if hasattr(value, '_data') else value
    return Fill.apply_(self, value=value)


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
        if np.broadcast_shapes(trimmed, shape) != shape:
            raise ValueError
    except ValueError:
        where = next((f'The size of tensor a ({x}) must match the size of tensor b ({y}) at '
                      f'non-singleton dimension {len(shape) - k}' for k, (x, y) in
                      enumerate(zip(shape[::-1], trimmed[::-1]), 1) if x != y and y != 1),
                     'The source has more dimensions than the destination')
        raise RuntimeError(f'{where} (copy_: source of shape '
                           f'{list(src_shape)} into destination of shape {list(shape)})') from None
    return Copy.apply_(self, src)


def _unary_inplace(op_cls):
    def method(self):
        return op_cls.apply_(self)
    method.__name__ = op_cls.__name__.lower() + '_'
    return method


def pow_(self, exponent):
    if hasattr(exponent, '_data'):
        return PowTensor.apply_(self, exponent)
    return Pow.apply_(self, exponent=exponent)


# =======================================================================================
# The op library: rounding division, unary math, special functions, binary math,
# clamp with tensor bounds, lerp, predicates, logical and bitwise ops.
# =======================================================================================

from . import special as _sp  # noqa: E402

_ndarray = np.ndarray
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_SQRT_PI = float(np.sqrt(np.pi))
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI

_sin = fm._dual(xp.sin, 'sin')
_cos = fm._dual(xp.cos, 'cos')
_sinh = fm._dual(xp.sinh, 'sinh')
_cosh = fm._dual(xp.cosh, 'cosh')
_digamma = fm._dual(_sp.digamma, 'digamma')


def _polygamma(x, n):
    return _sp.polygamma(n, x) if fm.is_array(x) else polygamma(n, x)


def _type_name(a):
    """PyTorch's scalar-type name of an array's dtype ('Float', 'Long', 'Bool', ...)."""
    return _dtype.FROM_NUMPY[np.asarray(a).dtype].legacy_name[:-6]


def _not_implemented(kernel, a):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(a)}\'')


def _need_tensor(fn_name, value, position, arg='other'):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _result_kind(a, b):
    return np.result_type(a, b).kind


def _check_integer_division(kernel, a, b):
    """Integer division by zero raises (NumPy would warn and give 0); bool has no kernel."""
    kind = _result_kind(a, b)
    if kind == 'b':
        raise _not_implemented(kernel, np.asarray(b) if np.asarray(a).dtype != bool else a)
    if kind in 'iu' and np.any(np.equal(b, 0)):
        raise RuntimeError('ZeroDivisionError')
    return kind


def _div_rounded(a, b, mode):
    """``a / b`` rounded toward zero ('trunc') or down ('floor'), in the dtype of a and b."""
    kind = _check_integer_division('div_' + mode + '_cpu', a, b)
    if kind in 'iu':
        q = np.floor_divide(a, b)
        if mode == 'trunc':   # floor and trunc differ for inexact negative quotients
            q = q + ((q < 0) & (q * b != a))
        return q
    with np.errstate(divide='ignore', invalid='ignore'):
        if mode == 'trunc':
            return np.trunc(np.true_divide(a, b))
        return np.floor_divide(a, b)


class _NoDerivative(Op):
    """An op whose backward PyTorch does not define: the graph records it, backward raises."""
    aten = ''

    def backward(self, *grads):
        raise RuntimeError(f'derivative for aten::{self.aten} is not implemented')


# -- division with rounding, floor_divide, remainder, fmod --------------------------------


class DivMode(Op):
    """``div(a, b, rounding_mode='trunc'|'floor')``: piecewise constant, zero gradient."""
    node_name = 'DivBackward2'
    promotes = True

    def forward(self, a, b, rounding_mode):
        return _div_rounded(a, b, rounding_mode)

    def backward(self, g):
        need = self.needs_input_grad
        return (g * 0 if need[0] else None), (g * 0 if need[1] else None)


class FloorDivide(_NoDerivative):
    quiet_fp = True
    node_name = 'NotImplemented'
    aten = 'floor_divide'
    promotes = True

    def forward(self, a, b):
        return _div_rounded(a, b, 'floor')


class FloorDivideInplace(FloorDivide):
    node_name = 'NotImplemented'
    aten = 'floor_divide_'


class Remainder(Op):
    """Python's ``a % b`` (the sign of the divisor); d/db = -floor(a / b)."""
    quiet_fp = True
    node_name = 'RemainderBackward1'
    promotes = True

    def forward(self, a, b):
        kind = _check_integer_division('remainder_cpu', a, b)
        if b.__class__ is not _ndarray:
            self._node_name = 'RemainderBackward0'
        elif self.needs_input_grad[1]:
            self.save_for_backward(a, b)
        if kind in 'iu':
            return np.remainder(a, b)
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.remainder(a, b)

    def backward(self, g):
        gb = None
        if self._saved:
            a, b = self.saved_tensors
            gb = -g * _div_rounded(_as_array(a), _as_array(b), 'floor')
        return g, gb


class RemainderScalarSelf(_NoDerivative):
    """``scalar % tensor``: PyTorch defines no derivative."""
    quiet_fp = True
    node_name = 'NotImplemented'
    aten = 'remainder'
    promotes = True

    def forward(self, a, b):
        _check_integer_division('remainder_cpu', a, b)
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.remainder(a, b)


class Fmod(Op):
    """C's ``fmod`` (the sign of the dividend); d/db = -trunc(a / b)."""
    quiet_fp = True
    node_name = 'FmodBackward1'
    promotes = True

    def forward(self, a, b):
        kind = _check_integer_division('fmod_cpu', a, b)
        if b.__class__ is not _ndarray:
            self._node_name = 'FmodBackward0'
        elif self.needs_input_grad[1]:
            self.save_for_backward(a, b)
        if kind in 'iu':
            return np.fmod(a, b)
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.fmod(a, b)

    def backward(self, g):
        gb = None
        if self._saved:
            a, b = self.saved_tensors
            gb = -g * _div_rounded(_as_array(a), _as_array(b), 'trunc')
        return g, gb


# -- exponentials and logarithms ----------------------------------------------------------


class Exp2(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        y = xp.exp2(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * y * _LN2


class Expm1(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        y = xp.expm1(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * (y + 1)


class Log2(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(divide='ignore', invalid='ignore'):
            return xp.log2(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / (x * _LN2)


class Log10(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(divide='ignore', invalid='ignore'):
            return xp.log10(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / (x * _LN10)


class Log1p(Op):
    quiet_fp = True
    node_name = 'Log1PBackward0'
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(divide='ignore', invalid='ignore'):
            return xp.log1p(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / (x + 1)


class Rsqrt(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        with np.errstate(divide='ignore', invalid='ignore'):
            y = 1 / xp.sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * (y * y * y) * -0.5


class Reciprocal(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        with np.errstate(divide='ignore'):
            y = xp.reciprocal(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return -g * (y * y)


# -- trigonometric and hyperbolic ---------------------------------------------------------


class Sin(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(invalid='ignore'):
            return xp.sin(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _cos(x)


class Cos(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(invalid='ignore'):
            return xp.cos(x)

    def backward(self, g):
        x, = self.saved_tensors
        return -g * _sin(x)


class Tan(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        with np.errstate(invalid='ignore'):
            y = xp.tan(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * (y * y + 1)


class Asin(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(invalid='ignore'):
            return xp.arcsin(x)

    def backward(self, g):
        x, = self.saved_tensors
        with np.errstate(invalid='ignore', divide='ignore'):
            return g / fm.sqrt(1 - x * x)


class Acos(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(invalid='ignore'):
            return xp.arccos(x)

    def backward(self, g):
        x, = self.saved_tensors
        with np.errstate(invalid='ignore', divide='ignore'):
            return -g / fm.sqrt(1 - x * x)


class Atan(Op):
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.arctan(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / (x * x + 1)


class Sinh(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.sinh(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _cosh(x)


class Cosh(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.cosh(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _sinh(x)


class Asinh(Op):
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.arcsinh(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / fm.sqrt(x * x + 1)


class Acosh(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(invalid='ignore'):
            return xp.arccosh(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / fm.sqrt((x - 1) * (x + 1))


class AsinhInplace(Asinh):
    """``asinh_``: PyTorch records it but defines no derivative."""
    node_name = 'AsinhBackward1'

    def backward(self, g):
        raise NotImplementedError("the derivative for 'inplace version of asinh' is not "
                                  "implemented.")


class AcoshInplace(Acosh):
    """``acosh_``: PyTorch records it but defines no derivative."""
    node_name = 'AcoshBackward1'

    def backward(self, g):
        raise NotImplementedError("the derivative for 'inplace version of acosh' is not "
                                  "implemented.")


class Atanh(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        with np.errstate(divide='ignore', invalid='ignore'):
            return xp.arctanh(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / (1 - x * x)


class AtanhInplace(Atanh):
    """``atanh_``: PyTorch records it but defines no derivative."""
    node_name = 'AtanhBackward1'

    def backward(self, g):
        raise NotImplementedError("the derivative for 'inplace version of atanh' is not "
                                  "implemented.")


class Atan2(Op):
    quiet_fp = True
    promotes = True
    float_result = True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return xp.arctan2(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        scale = g / (a * a + b * b)
        need = self.needs_input_grad
        return (scale * b if need[0] else None), (-scale * a if need[1] else None)


class Logit(Op):
    """``log(x / (1 - x))`` of ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    quiet_fp = True
    float_result = True

    def forward(self, x, eps=None):
        self.save_for_backward(x)
        self.eps = eps
        z = x if eps is None else xp.clip(x, eps, 1 - eps)
        with np.errstate(divide='ignore', invalid='ignore'):
            return xp.log(z / (1 - z))

    def backward(self, g):
        x, = self.saved_tensors
        xa = _as_array(x)
        with np.errstate(invalid='ignore', divide='ignore'):
            grad = g / (x * (1 - x))
        if self.eps is None:   # outside [0, 1] the derivative is nan, as in PyTorch
            outside = (xa < 0) | (xa > 1)
            return fm.where(outside, float('nan'), grad) if outside.any() else grad
        clamped = (xa < self.eps) | (xa > 1 - self.eps)
        return fm.where(clamped, 0.0, grad) if clamped.any() else grad


# -- special functions (values from ops/special.py: scipy or NumPy fallbacks) -------------


class Erf(Op):
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return _sp.erf(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * fm.exp(-(x * x)) * _TWO_OVER_SQRT_PI


class Erfc(Op):
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return _sp.erfc(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * fm.exp(-(x * x)) * -_TWO_OVER_SQRT_PI


class Erfinv(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        y = _sp.erfinv(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * fm.exp(y * y) * (_SQRT_PI / 2)


class Lgamma(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return _sp.lgamma(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _digamma(x)


class Digamma(Op):
    quiet_fp = True
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return _sp.digamma(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _polygamma(x, 1)


class Polygamma(Op):
    """The n-th derivative of digamma; ``x`` is input 0, ``n`` a parameter."""
    quiet_fp = True
    float_result = True

    def forward(self, x, n):
        self.save_for_backward(x)
        self.n = n
        return _sp.polygamma(n, x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _polygamma(x, self.n + 1)


class PolygammaInplace(Polygamma):
    node_name = 'PolygammaBackward1'


# -- rounding (zero gradient) -------------------------------------------------------------


class _Rounding(Op):
    kernel = ''

    def forward(self, x):
        if x.dtype.kind != 'f':
            if x.dtype == bool:
                raise _not_implemented(self.kernel, x)
            return x.copy()
        return self.round(x)

    def backward(self, g):
        return g * 0


class Floor(_Rounding):
    kernel = 'floor_vml_cpu'
    round = staticmethod(xp.floor)


class Ceil(_Rounding):
    kernel = 'ceil_vml_cpu'
    round = staticmethod(xp.ceil)


class Trunc(_Rounding):
    kernel = 'trunc_vml_cpu'
    round = staticmethod(xp.trunc)


class Round(_Rounding):
    """Round half to even."""
    kernel = 'round_cpu'
    round = staticmethod(xp.rint)


class RoundDecimals(Op):
    node_name = 'RoundBackward1'

    def forward(self, x, decimals):
        if x.dtype.kind != 'f':
            raise _not_implemented('round_cpu', x)
        return xp.round(x, decimals)

    def backward(self, g):
        return g * 0


class Frac(Op):
    def forward(self, x):
        if x.dtype.kind != 'f':
            raise _not_implemented('frac_cpu', x)
        with np.errstate(invalid='ignore'):
            return x - xp.trunc(x)

    def backward(self, g):
        return g


# -- binary math --------------------------------------------------------------------------


class Xlogy(Op):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is nan)."""
    quiet_fp = True
    promotes = True
    float_result = True

    def forward(self, a, b):
        if a.__class__ is not _ndarray:
            self._node_name = 'XlogyBackward1'
            a_, b_ = np.asarray(a, b.dtype), b
        elif b.__class__ is not _ndarray:
            self._node_name = 'XlogyBackward2'
            a_, b_ = a, np.asarray(b, a.dtype)
        else:
            a_, b_ = a, b
        need = self.needs_input_grad
        self.save_for_backward(a if need[1] else None, b)
        # d/da = xlogy(g, b), taken as 0 where a == 0 and b <= 0 (PyTorch's convention)
        self.zero = (a_ == 0) & (b_ <= 0) if need[0] else None
        with np.errstate(divide='ignore', invalid='ignore'):
            out = xp.where(a_ == 0, 0, a_ * xp.log(b_))
        return xp.where(xp.isnan(b_), b_, out)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = gb = None
        if self.zero is not None:
            with np.errstate(divide='ignore', invalid='ignore'):
                logb = fm.log(b) if not fm.is_array(b) else np.log(b)
                ga = g * logb
            if self.zero.any():
                ga = fm.where(self.zero, 0.0, ga)
        if a is not None:
            with np.errstate(divide='ignore', invalid='ignore'):
                gb = g * a / b
        return ga, gb


class Hypot(Op):
    quiet_fp = True
    promotes = True

    def forward(self, a, b):
        if a.dtype.kind != 'f':
            raise _not_implemented('hypot_cpu', a)
        out = xp.hypot(a, b)
        self.save_for_backward(a, b, out)
        return out

    def backward(self, g):
        a, b, out = self.saved_tensors
        scale = g / out
        need = self.needs_input_grad
        return (scale * a if need[0] else None), (scale * b if need[1] else None)


class Maximum(Op):
    """Ties split the gradient in half; NaN propagates (and takes the whole gradient)."""
    promotes = True
    _pick = staticmethod(xp.maximum)
    _sign = 1

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return self._pick(a, b)

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
    _pick = staticmethod(xp.minimum)
    _sign = -1


class Fmax(Op):
    """Like maximum, but NaN loses; ties give the whole gradient to the first input."""
    promotes = True
    _pick = staticmethod(xp.fmax)

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return self._pick(a, b)

    def _first_wins(self, a, b):
        return (a >= b) | np.isnan(b)

    def backward(self, g):
        a, b = self.saved_tensors
        first = self._first_wins(_as_array(a), _as_array(b))
        need = self.needs_input_grad
        return (fm.where(first, g, 0.0) if need[0] else None,
                fm.where(first, 0.0, g) if need[1] else None)


class Fmin(Fmax):
    _pick = staticmethod(xp.fmin)

    def _first_wins(self, a, b):
        return (a <= b) | np.isnan(b)


class Addcmul(Op):
    promotes = True

    def forward(self, x, t1, t2, value=1):
        self.value = value
        need = self.needs_input_grad
        self.save_for_backward(t1 if need[2] else None, t2 if need[1] else None)
        prod = t1 * t2
        return x + (prod if value == 1 else prod * value)

    def backward(self, g):
        t1, t2 = self.saved_tensors
        gv = g if self.value == 1 else g * self.value
        return (g, gv * t2 if t2 is not None else None,
                gv * t1 if t1 is not None else None)


class Addcdiv(Op):
    quiet_fp = True
    promotes = True

    def forward(self, x, t1, t2, value=1):
        self.value = value
        self.save_for_backward(t1 if self.needs_input_grad[2] else None, t2)
        q = t1 / t2
        return x + (q if value == 1 else q * value)

    def backward(self, g):
        t1, t2 = self.saved_tensors
        gv = g if self.value == 1 else g * self.value
        g1 = gv / t2
        return g, g1, (-g1 * t1 / t2 if t1 is not None else None)


class NanToNum(Op):
    def forward(self, x, nan=0.0, posinf=None, neginf=None):
        if x.dtype.kind != 'f':
            return x.copy()
        self.save_for_backward(x)
        return np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, g):
        x, = self.saved_tensors
        finite = np.isfinite(_as_array(x))
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
    def forward(self, x, min):
        self.save_for_backward(x)
        self.bound = min
        return xp.maximum(x, min)

    def backward(self, g):
        x, = self.saved_tensors
        return fm.where(_as_array(x) >= self.bound, g, 0.0)


class ClampMax(Op):
    def forward(self, x, max):
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
    if w.__class__ is not _ndarray:
        return s + w * d if abs(w) < 0.5 else e - d * (1 - w)
    return xp.where(xp.abs(w) < 0.5, s + w * d, e - d * (1 - w))


class Lerp(Op):
    """``lerp(start, end, weight)`` with a scalar weight."""
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


# -- predicates, logical and bitwise ops (never differentiable) ---------------------------


class Isclose(_Compare):
    def forward(self, a, b, rtol, atol, equal_nan):
        close = a == b
        if a.dtype == bool:
            return close
        if equal_nan and a.dtype.kind == 'f':
            close |= xp.isnan(a) & xp.isnan(b)
        if a.dtype.kind != 'f':
            a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid='ignore', over='ignore'):
            diff = xp.abs(a - b)
            close |= xp.isfinite(diff) & (diff <= atol + xp.abs(rtol * b))
        return close


class Isnan(_Compare):
    def forward(self, x):
        return xp.isnan(x) if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isinf(_Compare):
    def forward(self, x):
        return xp.isinf(x) if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isfinite(_Compare):
    def forward(self, x):
        return xp.isfinite(x) if x.dtype.kind == 'f' else xp.ones(x.shape, bool)


class Isposinf(_Compare):
    def forward(self, x):
        return x == np.inf if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isneginf(_Compare):
    def forward(self, x):
        return x == -np.inf if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class LogicalAnd(_Compare):
    def forward(self, a, b):
        return xp.logical_and(a, b)


class LogicalOr(_Compare):
    def forward(self, a, b):
        return xp.logical_or(a, b)


class LogicalXor(_Compare):
    def forward(self, a, b):
        return xp.logical_xor(a, b)


class LogicalNot(_Compare):
    def forward(self, x):
        return xp.logical_not(x)


class _Bitwise(_Compare):
    promotes = True
    kernel = ''
    allow_bool = True

    def _check(self, dt):
        if dt.kind == 'f' or (dt == bool and not self.allow_bool):
            raise _not_implemented(self.kernel, np.zeros(0, dt))


class BitwiseAnd(_Bitwise):
    kernel = 'bitwise_and_cpu'

    def forward(self, a, b):
        self._check(np.result_type(a, b))
        return xp.bitwise_and(a, b)


class BitwiseOr(_Bitwise):
    kernel = 'bitwise_or_cpu'

    def forward(self, a, b):
        self._check(np.result_type(a, b))
        return xp.bitwise_or(a, b)


class BitwiseXor(_Bitwise):
    kernel = 'bitwise_xor_cpu'

    def forward(self, a, b):
        self._check(np.result_type(a, b))
        return xp.bitwise_xor(a, b)


class BitwiseNot(_Bitwise):
    kernel = 'bitwise_not_cpu'

    def forward(self, x):
        self._check(x.dtype)
        return xp.invert(x)


def _shift_operands(op, a, b):
    dt = np.result_type(a, b)
    if dt.kind == 'f' or dt == bool:
        raise _not_implemented(op.kernel, np.zeros(0, dt))
    a = np.asarray(a, dt)
    b = np.asarray(b, dt)
    bits = dt.itemsize * 8
    # PyTorch: a shift by a negative count or by the width or more gives what shifting
    # out every bit gives; NumPy (and C) leave that undefined.
    out_of_range = (b < 0) | (b >= bits)
    return a, b, out_of_range, bits


class BitwiseLeftShift(_Bitwise):
    kernel = 'lshift_cpu'

    def forward(self, a, b):
        a, b, bad, bits = _shift_operands(self, a, b)
        if bad.any():
            return xp.where(bad, 0, xp.left_shift(a, xp.where(bad, 0, b))).astype(a.dtype)
        return xp.left_shift(a, b)


class BitwiseRightShift(_Bitwise):
    kernel = 'rshift_cpu'

    def forward(self, a, b):
        a, b, bad, bits = _shift_operands(self, a, b)
        if bad.any():
            full = xp.right_shift(a, bits - 1) if a.dtype.kind == 'i' else xp.zeros_like(a)
            return xp.where(bad, full, xp.right_shift(a, xp.where(bad, 0, b))).astype(a.dtype)
        return xp.right_shift(a, b)


# -- function forms of the op library -----------------------------------------------------


_ROUNDING_MODES = (None, 'trunc', 'floor')


def _check_rounding_mode(rounding_mode):
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")


def floor_divide(input, other):
    return FloorDivide.apply(input, other)


def remainder(input, other):
    if not isinstance(input, Tensor):
        return RemainderScalarSelf.apply(input, other)
    return Remainder.apply(input, other)


def fmod(input, other):
    _need_tensor('fmod', input, 1, 'input')
    return Fmod.apply(input, other)


def _unary(op_cls, name):
    def fn(input):
        return op_cls.apply(input)
    fn.__name__ = name
    return fn


exp2 = _unary(Exp2, 'exp2')
expm1 = _unary(Expm1, 'expm1')
log2 = _unary(Log2, 'log2')
log10 = _unary(Log10, 'log10')
log1p = _unary(Log1p, 'log1p')
rsqrt = _unary(Rsqrt, 'rsqrt')
reciprocal = _unary(Reciprocal, 'reciprocal')
sin = _unary(Sin, 'sin')
cos = _unary(Cos, 'cos')
tan = _unary(Tan, 'tan')
asin = arcsin = _unary(Asin, 'asin')
acos = arccos = _unary(Acos, 'acos')
atan = arctan = _unary(Atan, 'atan')
sinh = _unary(Sinh, 'sinh')
cosh = _unary(Cosh, 'cosh')
asinh = arcsinh = _unary(Asinh, 'asinh')
acosh = arccosh = _unary(Acosh, 'acosh')
atanh = arctanh = _unary(Atanh, 'atanh')
erf = _unary(Erf, 'erf')
erfc = _unary(Erfc, 'erfc')
erfinv = _unary(Erfinv, 'erfinv')
lgamma = _unary(Lgamma, 'lgamma')
digamma = _unary(Digamma, 'digamma')
floor = _unary(Floor, 'floor')
ceil = _unary(Ceil, 'ceil')
trunc = fix = _unary(Trunc, 'trunc')
frac = _unary(Frac, 'frac')
isnan = _unary(Isnan, 'isnan')
isinf = _unary(Isinf, 'isinf')
isfinite = _unary(Isfinite, 'isfinite')
isposinf = _unary(Isposinf, 'isposinf')
isneginf = _unary(Isneginf, 'isneginf')
logical_not = _unary(LogicalNot, 'logical_not')
bitwise_not = _unary(BitwiseNot, 'bitwise_not')


def polygamma(n, input):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError('polygamma(n, x) does not support negative n.')
    return Polygamma.apply(input, n=n)


def _polygamma_method(self, n):
    return polygamma(n, self)


def square(input):
    if input._data.dtype == bool:      # bool ** 2 is an integer power in PyTorch
        input = input.to(_dtype.int64)
    return pow(input, 2)


def round(input, *, decimals=0):
    if decimals == 0:
        return Round.apply(input)
    return RoundDecimals.apply(input, decimals=decimals)


def logit(input, eps=None):
    return Logit.apply(input, eps=eps)


def atan2(input, other):
    _need_tensor('atan2', other, 2)
    return Atan2.apply(input, other)


arctan2 = atan2


def xlogy(input, other):
    if not isinstance(input, Tensor):
        _need_tensor('xlogy', other, 2)
    return Xlogy.apply(input, other)


def _binary_tensors(op_cls, name):
    def fn(input, other):
        _need_tensor(name, other, 2)
        return op_cls.apply(input, other)
    fn.__name__ = name
    return fn


hypot = _binary_tensors(Hypot, 'hypot')
maximum = _binary_tensors(Maximum, 'maximum')
minimum = _binary_tensors(Minimum, 'minimum')
fmax = _binary_tensors(Fmax, 'fmax')
fmin = _binary_tensors(Fmin, 'fmin')
logical_and = _binary_tensors(LogicalAnd, 'logical_and')
logical_or = _binary_tensors(LogicalOr, 'logical_or')
logical_xor = _binary_tensors(LogicalXor, 'logical_xor')


def _bitwise(op_cls, name):
    def fn(input, other):
        return op_cls.apply(input, other)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(BitwiseAnd, 'bitwise_and')
bitwise_or = _bitwise(BitwiseOr, 'bitwise_or')
bitwise_xor = _bitwise(BitwiseXor, 'bitwise_xor')
bitwise_left_shift = _bitwise(BitwiseLeftShift, 'bitwise_left_shift')
bitwise_right_shift = _bitwise(BitwiseRightShift, 'bitwise_right_shift')


def _check_addc(name, input, tensor1, tensor2, value):
    kinds = [t._data.dtype.kind if isinstance(t, Tensor) else 'f'
             for t in (input, tensor1, tensor2)]
    if name == 'addcdiv' and kinds[1] in 'iub' and kinds[2] in 'iub':
        raise RuntimeError(
            'Integer division with addcdiv is no longer supported, and in a future  release '
            'addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv '
            'behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))'
            '.to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) '
            'for float inputs. The future addcdiv behavior is just the latter implementation: '
            '(input + value * tensor1 / tensor2), for all dtypes.')
    if isinstance(value, float) and all(k in 'iub' for k in kinds):
        if name == 'addcdiv':
            raise RuntimeError('For integral input tensors, argument value must not be a '
                               'floating point number.')
        return int(value)   # PyTorch casts the scalar to the integer type
    return value


def addcmul(input, tensor1, tensor2, *, value=1):
    value = _check_addc('addcmul', input, tensor1, tensor2, value)
    return Addcmul.apply(input, tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    _check_addc('addcdiv', input, tensor1, tensor2, value)
    return Addcdiv.apply(input, tensor1, tensor2, value=value)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


def _scalar_bound_input(input, bounds):
    """Scalar bounds take part in promotion: ``clamp(int_tensor, 0.5)`` is float."""
    if input._data.dtype.kind == 'f':
        return input
    target = _dtype.result_type(input, *[b for b in bounds if b is not None])
    return input if target is input.dtype else input.to(target)


def clamp_min(input, min):
    if isinstance(min, Tensor):
        return ClampMinTensor.apply(input, min)
    return ClampMin.apply(_scalar_bound_input(input, (min,)), min=min)


def clamp_max(input, max):
    if isinstance(max, Tensor):
        return ClampMaxTensor.apply(input, max)
    return ClampMax.apply(_scalar_bound_input(input, (max,)), max=max)


def _lerp_args(input, end, weight):
    _need_tensor('lerp', end, 2, 'end')
    dt = input._data.dtype
    if end._data.dtype != dt:
        raise RuntimeError(f'expected dtype {_torch_dtype_name(dt)} for `end` but got dtype '
                           f'{_torch_dtype_name(end._data.dtype)}')
    if dt.kind != 'f':
        raise _not_implemented('lerp_kernel_scalar' if not isinstance(weight, Tensor)
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
            'uint8': 'unsigned char', 'bool': 'bool'}[np.dtype(np_dtype).name]


def lerp(input, end, weight):
    weight = _lerp_args(input, end, weight)
    if isinstance(weight, Tensor):
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, weight=weight)


def _check_isclose(input, other, rtol, atol):
    _need_tensor('isclose', other, 2)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f'{input.dtype} did not match {other.dtype} (isclose(): both '
                           'inputs must have the same dtype; convert one with .to())')
    if rtol < 0:
        raise RuntimeError(f'rtol must be greater than or equal to zero, but got {rtol}')
    if atol < 0:
        raise RuntimeError(f'atol must be greater than or equal to zero, but got {atol}')


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_isclose(input, other, rtol, atol)
    return Isclose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (a Python bool)."""
    return builtins_bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """Same shape and same values (a Python bool)."""
    _need_tensor('equal', other, 2)
    a, b = input._data, other._data
    return a.shape == b.shape and builtins_bool(np.array_equal(a, b))


import builtins as _builtins  # noqa: E402
builtins_bool = _builtins.bool


# -- the redefined division and clamp (rounding modes, tensor bounds) ---------------------


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return Div.apply(input, other)
    _check_rounding_mode(rounding_mode)
    return DivMode.apply(input, other, rounding_mode=rounding_mode)


def true_divide(input, other):
    return Div.apply(input, other)


divide = div


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        if self._data.dtype.kind != 'f':
            raise RuntimeError(f'result type Float can\'t be cast to the desired output type '
                               f'{self.dtype.legacy_name[:-6]}')
        return Div.apply_(self, other)
    _check_rounding_mode(rounding_mode)
    return DivMode.apply_(self, other, rounding_mode=rounding_mode)


def true_divide_(self, other):
    return div_(self, other)


def _clamp_tensor_args(min, max):
    tmin, tmax = isinstance(min, Tensor), isinstance(max, Tensor)
    if (tmin or tmax) and ((min is not None and not tmin) or (max is not None and not tmax)):
        raise TypeError('clamp() received an invalid combination of arguments - got (Tensor, '
                        f'min={type(min).__name__}, max={type(max).__name__}): bounds are both '
                        'Tensors or both Numbers (pass a Tensor for each, or None)')
    return tmin or tmax


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _clamp_tensor_args(min, max):
        if min is None:
            return ClampTensor.apply(input, max, which='max')
        if max is None:
            return ClampTensor.apply(input, min, which='min')
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(_scalar_bound_input(input, (min, max)), min=min, max=max)


clip = clamp


def clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _clamp_tensor_args(min, max):
        if min is None:
            return ClampTensor.apply_(self, max, which='max')
        if max is None:
            return ClampTensor.apply_(self, min, which='min')
        return ClampTensor.apply_(self, min, max)
    return Clamp.apply_(self, min=min, max=max)


def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return ClampMinTensor.apply_(self, min)
    return ClampMin.apply_(self, min=min)


def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return ClampMaxTensor.apply_(self, max)
    return ClampMax.apply_(self, max=max)


# -- in-place forms of the op library -----------------------------------------------------


def floor_divide_(self, other):
    return FloorDivideInplace.apply_(self, other)


def remainder_(self, other):
    return Remainder.apply_(self, other)


def fmod_(self, other):
    return Fmod.apply_(self, other)


def square_(self):
    if self._data.dtype == bool:
        raise RuntimeError("result type Long can't be cast to the desired output type Bool")
    return pow_(self, 2)


def round_(self, *, decimals=0):
    if decimals == 0:
        return Round.apply_(self)
    return RoundDecimals.apply_(self, decimals=decimals)


def logit_(self, eps=None):
    return Logit.apply_(self, eps=eps)


def polygamma_(self, n):
    return PolygammaInplace.apply_(self, n=n)


def xlogy_(self, other):
    return Xlogy.apply_(self, other)


def addcmul_(self, tensor1, tensor2, *, value=1):
    value = _check_addc('addcmul', self, tensor1, tensor2, value)
    return Addcmul.apply_(self, tensor1, tensor2, value=value)


def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addc('addcdiv', self, tensor1, tensor2, value)
    return Addcdiv.apply_(self, tensor1, tensor2, value=value)


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return NanToNum.apply_(self, nan=nan, posinf=posinf, neginf=neginf)


def lerp_(self, end, weight):
    weight = _lerp_args(self, end, weight)
    if isinstance(weight, Tensor):
        return LerpTensor.apply_(self, end, weight)
    return Lerp.apply_(self, end, weight=weight)


def _binary_inplace(op_cls, name, tensors_only=True):
    def method(self, other):
        if tensors_only:
            _need_tensor(name, other, 1)
        return op_cls.apply_(self, other)
    method.__name__ = name
    return method


# -- operators ----------------------------------------------------------------------------


def _invert(self):
    if self._data.dtype.kind == 'f':
        raise TypeError('~ (operator.invert) is only implemented on integer and Boolean-type '
                        'tensors')
    return BitwiseNot.apply(self)


def _commuted(fn):
    def method(self, other):
        return fn(self, other)
    method.__name__ = fn.__name__
    return method


def _rfloordiv(self, other):
    return FloorDivide.apply(other, self)


def _rmod(self, other):
    return RemainderScalarSelf.apply(other, self)


def _rshift_reflected(op_cls):
    def method(self, other):
        return op_cls.apply(other, self)
    return method


__all__ = ['add', 'sub', 'subtract', 'rsub', 'mul', 'multiply', 'div', 'divide', 'true_divide',
           'pow', 'neg', 'negative', 'exp', 'log', 'sqrt', 'tanh', 'sigmoid', 'relu', 'abs',
           'absolute', 'sign', 'clamp', 'clip', 'where', 'clone', 'eq', 'ne', 'lt', 'le', 'gt',
           'ge', 'greater', 'greater_equal', 'less', 'less_equal', 'not_equal',
           # the op library
           'floor_divide', 'remainder', 'fmod', 'exp2', 'expm1', 'log2', 'log10', 'log1p',
           'rsqrt', 'square', 'reciprocal', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan',
           'arcsin', 'arccos', 'arctan', 'atan2', 'arctan2', 'sinh', 'cosh', 'asinh', 'acosh',
           'atanh', 'arcsinh', 'arccosh', 'arctanh', 'logit', 'erf', 'erfc', 'erfinv',
           'lgamma', 'digamma', 'polygamma', 'xlogy', 'addcmul', 'addcdiv', 'floor', 'ceil',
           'round', 'trunc', 'fix', 'frac', 'clamp_min', 'clamp_max', 'lerp', 'maximum',
           'minimum', 'fmax', 'fmin', 'hypot', 'nan_to_num', 'isclose', 'allclose', 'equal',
           'isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf', 'logical_and', 'logical_or',
           'logical_xor', 'logical_not', 'bitwise_and', 'bitwise_or', 'bitwise_xor',
           'bitwise_not', 'bitwise_left_shift', 'bitwise_right_shift']

# Tensor methods (bound in ops/__init__.py): the function forms, then the in-place ones.
METHODS = {name: globals()[name] for name in __all__ if name not in ('rsub', 'polygamma')}
METHODS.update(polygamma=_polygamma_method)
METHODS.update(add_=add_, sub_=sub_, subtract_=sub_, mul_=mul_, multiply_=mul_, div_=div_,
               divide_=div_, true_divide_=true_divide_, clamp_=clamp_, clip_=clamp_,
               zero_=zero_, fill_=fill_, copy_=copy_, pow_=pow_)
METHODS.update({name + '_': _unary_inplace(cls) for name, cls in (
    ('exp', Exp), ('log', Log), ('sqrt', Sqrt), ('tanh', Tanh), ('sigmoid', Sigmoid),
    ('relu', Relu), ('abs', Abs), ('absolute', Abs), ('neg', Neg), ('negative', Neg),
    ('sign', Sign), ('exp2', Exp2), ('expm1', Expm1), ('log2', Log2), ('log10', Log10),
    ('log1p', Log1p), ('rsqrt', Rsqrt), ('reciprocal', Reciprocal), ('sin', Sin),
    ('cos', Cos), ('tan', Tan), ('asin', Asin), ('acos', Acos), ('atan', Atan),
    ('arcsin', Asin), ('arccos', Acos), ('arctan', Atan), ('sinh', Sinh), ('cosh', Cosh),
    ('asinh', AsinhInplace), ('acosh', AcoshInplace), ('atanh', AtanhInplace),
    ('arcsinh', AsinhInplace), ('arccosh', AcoshInplace), ('arctanh', AtanhInplace),
    ('erf', Erf), ('erfc', Erfc),
    ('erfinv', Erfinv), ('lgamma', Lgamma), ('digamma', Digamma), ('floor', Floor),
    ('ceil', Ceil), ('trunc', Trunc), ('fix', Trunc), ('frac', Frac),
    ('logical_not', LogicalNot), ('bitwise_not', BitwiseNot))})
METHODS.update(
    floor_divide_=floor_divide_, remainder_=remainder_, fmod_=fmod_, square_=square_,
    round_=round_, logit_=logit_, polygamma_=polygamma_, xlogy_=xlogy_,
    addcmul_=addcmul_, addcdiv_=addcdiv_, nan_to_num_=nan_to_num_, lerp_=lerp_,
    clamp_min_=clamp_min_, clamp_max_=clamp_max_,
    atan2_=_binary_inplace(Atan2, 'atan2_'), arctan2_=_binary_inplace(Atan2, 'arctan2_'),
    hypot_=_binary_inplace(Hypot, 'hypot_'),
    logical_and_=_binary_inplace(LogicalAnd, 'logical_and_'),
    logical_or_=_binary_inplace(LogicalOr, 'logical_or_'),
    logical_xor_=_binary_inplace(LogicalXor, 'logical_xor_'),
    bitwise_and_=_binary_inplace(BitwiseAnd, 'bitwise_and_', False),
    bitwise_or_=_binary_inplace(BitwiseOr, 'bitwise_or_', False),
    bitwise_xor_=_binary_inplace(BitwiseXor, 'bitwise_xor_', False),
    bitwise_left_shift_=_binary_inplace(BitwiseLeftShift, 'bitwise_left_shift_', False),
    bitwise_right_shift_=_binary_inplace(BitwiseRightShift, 'bitwise_right_shift_', False),
)
# Operators: //, %, &, |, ^, ~, <<, >> with their reflected and in-place forms.
METHODS.update(
    __floordiv__=floor_divide, __rfloordiv__=_rfloordiv, __ifloordiv__=floor_divide_,
    __mod__=remainder, __rmod__=_rmod, __imod__=remainder_,
    __and__=bitwise_and, __rand__=_commuted(bitwise_and), __iand__=METHODS['bitwise_and_'],
    __or__=bitwise_or, __ror__=_commuted(bitwise_or), __ior__=METHODS['bitwise_or_'],
    __xor__=bitwise_xor, __rxor__=_commuted(bitwise_xor), __ixor__=METHODS['bitwise_xor_'],
    __invert__=_invert,
    __lshift__=bitwise_left_shift, __rlshift__=_rshift_reflected(BitwiseLeftShift),
    __ilshift__=METHODS['bitwise_left_shift_'],
    __rshift__=bitwise_right_shift, __rrshift__=_rshift_reflected(BitwiseRightShift),
    __irshift__=METHODS['bitwise_right_shift_'],
)
