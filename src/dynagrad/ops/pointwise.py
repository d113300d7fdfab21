"""Elementwise ops: arithmetic, unary math, activations, comparisons."""
import numpy as np

from ..backend import xp
from ..tensor import Tensor
from ..autograd.function import Op
from .. import _dtype
from . import _formula as fm

# -- arithmetic ---------------------------------------------------------------------------


class Add(Op):
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
    float_result = True

    def forward(self, x):
        y = xp.exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        y, = self.saved_tensors
        return g * y


class Log(Op):
    float_result = True

    def forward(self, x):
        self.save_for_backward(x)
        return xp.log(x)

    def backward(self, g):
        x, = self.saved_tensors
        return g / x


class Sqrt(Op):
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


def div(input, other, *, rounding_mode=None):
    if rounding_mode is not None:
        raise NotImplementedError('div(rounding_mode=...) arrives with the op library (issue 4)')
    if not hasattr(other, '_data'):
        return Div.apply(input, other)
    return Div.apply(input, other)


true_divide = divide = div
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


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp.apply(input, min=min, max=max)


clip = clamp


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


def div_(self, other, *, rounding_mode=None):
    if self._data.dtype.kind != 'f':
        raise RuntimeError(f'result type Float can\'t be cast to the desired output type '
                           f'{self.dtype.legacy_name[:-6]}')
    return Div.apply_(self, other)


def clamp_(self, min=None, max=None):
    return Clamp.apply_(self, min=min, max=max)


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


__all__ = ['add', 'sub', 'subtract', 'rsub', 'mul', 'multiply', 'div', 'divide', 'true_divide',
           'pow', 'neg', 'negative', 'exp', 'log', 'sqrt', 'tanh', 'sigmoid', 'relu', 'abs',
           'absolute', 'sign', 'clamp', 'clip', 'where', 'clone', 'eq', 'ne', 'lt', 'le', 'gt',
           'ge', 'greater', 'greater_equal', 'less', 'less_equal', 'not_equal']

# Tensor methods (bound in ops/__init__.py): the function forms, then the in-place ones.
METHODS = {name: globals()[name] for name in __all__ if name != 'rsub'}
METHODS.update(add_=add_, sub_=sub_, subtract_=sub_, mul_=mul_, multiply_=mul_, div_=div_,
               divide_=div_, true_divide_=div_, clamp_=clamp_, clip_=clamp_, zero_=zero_,
               fill_=fill_, copy_=copy_, pow_=pow_)
METHODS.update({name + '_': _unary_inplace(cls) for name, cls in (
    ('exp', Exp), ('log', Log), ('sqrt', Sqrt), ('tanh', Tanh), ('sigmoid', Sigmoid),
    ('relu', Relu), ('abs', Abs), ('neg', Neg), ('negative', Neg), ('sign', Sign))})
