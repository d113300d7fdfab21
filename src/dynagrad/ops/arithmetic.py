"""Arithmetic: add, sub, mul, div, pow, division with rounding, remainder, fmod, and the
binary math built on them (atan2, xlogy, hypot, copysign, ldexp, logaddexp, nextafter,
heaviside, gcd, lcm, igamma, float_power, frexp, addcmul, addcdiv)."""
import math

import numpy as np

from .._device import is_any_array
from ..backend import xp
from ..tensor import Tensor, method
from ..autograd.function import Op
from ..autograd.promotion import number_operand
from .. import _dtype
from . import formula as fm
from ._elementwise import (FLOAT8, REFUSED, _NoDerivative, _as_array, _binary, _need_tensor,
                           _operator, not_implemented, refused)
from .special import Igamma, Igammac
from .reduction import return_types
from .out_args import call_into



class Add(Op):
    supports_complex = True
    __slots__ = ('alpha',)  # hot ops keep their state in slots: no per-node dict
    promotes = True

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        out = a + b if alpha == 1 else a + b * alpha
        if out.dtype in REFUSED:
            raise refused('add_stub', out)
        return out

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
    supports_complex = True
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
        out = a - b if alpha == 1 else a - b * alpha
        if out.dtype in REFUSED:
            raise refused('add_stub', out)
        return out

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha)


class Rsub(Op):
    """``other - x * alpha`` for a scalar ``other`` (``1 - x``)."""
    supports_complex = True
    node_name = 'RsubBackward1'
    promotes = True

    @classmethod
    def apply(cls, x, other, **params):
        _check_bool_sub(x, other)
        return super().apply(x, other, **params)

    def forward(self, x, other, alpha=1):
        self.alpha = alpha
        out = other - x if alpha == 1 else other - x * alpha
        if out.dtype in REFUSED:
            raise refused('add_stub', out)
        return out

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -self.alpha), None


class Mul(Op):
    supports_complex = True
    promotes = True
    scalar_opmath = True

    def forward(self, a, b):
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        out = a * b
        # torch multiplies two float8 tensors, not one with a number or 0-d tensor
        if out.dtype in FLOAT8 and (a.ndim == 0 or b.ndim == 0):
            raise refused('mul_cpu_reduced_float', out)
        return out

    def backward(self, g):
        a, b = self.saved_tensors
        return (g * b if b is not None else None), (g * a if a is not None else None)


class Div(Op):
    supports_complex = True
    quiet_fp = True
    promotes = True
    float_result = True
    scalar_opmath = True

    def forward(self, a, b):
        # the dividend only for the divisor's gradient (as PyTorch saves it): x / 2 does not
        # tie x's later in-place updates to this node
        self.save_for_backward(a if self.needs_input_grad[1] else None, b)
        out = a / b
        if out.dtype in FLOAT8:
            raise refused('div_cpu_reduced_float' if a.ndim == 0 or b.ndim == 0 else 'div_cpu',
                          out)
        return out

    def backward(self, g):
        a, b = self.saved_tensors
        ga = g / b
        return ga, (-ga * a / b if a is not None else None)


class Rdiv(Op):
    """``other / x`` for a scalar ``other`` (torch records it as ``other * x.reciprocal()``)."""
    supports_complex = True
    quiet_fp = True
    node_name = 'MulBackward0'
    promotes = True
    float_result = True

    def forward(self, x, other):
        self.save_for_backward(x)
        self.other = other
        out = other / x
        if out.dtype in FLOAT8:
            raise refused('reciprocal_cpu', out)
        return out

    def backward(self, g):
        x, = self.saved_tensors
        return -g * self.other / (x * x), None


class Pow(Op):
    supports_complex = True
    quiet_fp = True
    __slots__ = ('exponent',)
    """``x ** exponent`` with a scalar exponent."""
    promotes = True
    scalar_params = ('exponent',)

    def forward(self, x, exponent):
        if x.dtype in REFUSED:
            raise refused('pow', x)
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
    supports_complex = True
    quiet_fp = True
    node_name = 'PowBackward1'
    promotes = True

    def forward(self, a, b):
        out = a ** b
        if out.dtype in REFUSED:
            raise refused('pow', out)
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
    supports_complex = True
    quiet_fp = True
    node_name = 'PowBackward2'
    promotes = True
    float_result = False

    def forward(self, x, base):
        out = base ** x
        if out.dtype in REFUSED:
            raise refused('pow', out)
        self.save_for_backward(out)
        self.base = base
        return out

    def backward(self, g):
        out, = self.saved_tensors
        return g * out * float(xp.log(self.base)), None


# -- division with rounding, floor_divide, remainder, fmod --------------------------------


def _result_kind(a, b):
    return xp.result_type(a, b).kind


def _check_integer_division(kernel, a, b):
    """Integer division by zero raises (NumPy would warn and give 0); bool, uint16/32/64 and
    float8 have no kernel."""
    common = xp.result_type(a, b)
    if common in REFUSED:
        raise refused(kernel, xp.asarray(a) if xp.asarray(a).dtype == common else b)
    kind = common.kind
    if kind == 'b':
        raise not_implemented(kernel, xp.asarray(b) if xp.asarray(a).dtype != bool else a)
    if kind in 'iu' and xp.any(xp.equal(b, 0)):
        raise RuntimeError('ZeroDivisionError')
    return kind


def _div_rounded(a, b, mode):
    """``a / b`` rounded toward zero ('trunc') or down ('floor'), in the dtype of a and b."""
    kind = _check_integer_division('div_' + mode + '_cpu', a, b)
    if kind in 'iu':
        q = xp.floor_divide(a, b)
        if mode == 'trunc':   # floor and trunc differ for inexact negative quotients
            q = q + ((q < 0) & (q * b != a))
        return q
    with np.errstate(divide='ignore', invalid='ignore'):
        if mode == 'trunc':
            return xp.trunc(xp.true_divide(a, b))
        return xp.floor_divide(a, b)


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
        _check_integer_division('remainder_cpu', a, b)
        if self.needs_input_grad[1]:
            self.save_for_backward(a, b)
        return xp.remainder(a, b)   # quiet_fp: x % 0 gives nan without a warning

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
        return xp.remainder(a, b)


class Fmod(Op):
    """C's ``fmod`` (the sign of the dividend); d/db = -trunc(a / b)."""
    quiet_fp = True
    node_name = 'FmodBackward1'
    promotes = True

    def forward(self, a, b):
        _check_integer_division('fmod_cpu', a, b)
        if self.needs_input_grad[1]:
            self.save_for_backward(a, b)
        return xp.fmod(a, b)

    def backward(self, g):
        gb = None
        if self._saved:
            a, b = self.saved_tensors
            gb = -g * _div_rounded(_as_array(a), _as_array(b), 'trunc')
        return g, gb


# -- binary math --------------------------------------------------------------------------


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


class Xlogy(Op):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is nan)."""
    quiet_fp = True
    promotes = True
    float_result = True

    def forward(self, a, b):
        if not is_any_array(a):
            a_, b_ = xp.asarray(a, b.dtype), b
        elif not is_any_array(b):
            a_, b_ = a, xp.asarray(b, a.dtype)
        else:
            a_, b_ = a, b
        need = self.needs_input_grad
        self.save_for_backward(a if need[1] else None, b)
        # d/da = xlogy(g, b), taken as 0 where a == 0 and b <= 0 (PyTorch's convention)
        self.zero = (a_ == 0) & (b_ <= 0) if need[0] else None
        out = xp.where(a_ == 0, 0, a_ * xp.log(b_))
        return xp.where(xp.isnan(b_), b_, out)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = gb = None
        if self.zero is not None:
            logb = fm.log(b) if not fm.is_array(b) else xp.log(b)
            ga = g * logb
            if self.zero.any():
                ga = fm.where(self.zero, 0.0, ga)
        if a is not None:
            gb = g * a / b
        return ga, gb


class Hypot(Op):
    quiet_fp = True
    promotes = True

    def forward(self, a, b):
        if a.dtype.kind not in 'fV':
            raise not_implemented('hypot_cpu', a)
        out = xp.hypot(a, b)
        self.save_for_backward(a, b, out)
        return out

    def backward(self, g):
        a, b, out = self.saved_tensors
        scale = g / out
        need = self.needs_input_grad
        return (scale * a if need[0] else None), (scale * b if need[1] else None)


class Copysign(Op):
    """``|a|`` with the sign of ``b``; d/da = sign(a) sign(result), 0 where a == 0; d/db = 0."""
    promotes = True
    float_result = True

    def forward(self, a, b):
        out = xp.copysign(a, b)
        if self.needs_input_grad[0]:
            self.save_for_backward(a, out)
        return out

    def backward(self, g):
        need = self.needs_input_grad
        ga = None
        if need[0]:
            a, out = self.saved_tensors
            zero = _as_array(a) == 0
            if zero.any():
                ga = fm.where(zero, 0.0, g * out / fm.where(zero, 1.0, a))
            else:
                ga = g * out / a
        return ga, (g * 0 if need[1] else None)


class Ldexp(Op):
    """``a * 2 ** e``. ``int_exponent``: the dtype of an integer ``e``, for which PyTorch's
    gradient of ``a`` takes ``2 ** e`` in that integer dtype (0 for ``e < 0``, wrapping
    past its width)."""
    quiet_fp = True
    promotes = True
    float_result = True

    def forward(self, a, e, int_exponent=None):
        out = a * xp.exp2(e)
        need = self.needs_input_grad
        self.int_exponent = int_exponent
        self.save_for_backward(e if need[0] else None, out if need[1] else None)
        return out

    def backward(self, g):
        e, out = self.saved_tensors
        ga = gb = None
        if e is not None:
            if self.int_exponent is None:
                ga = g * 2.0 ** e
            else:
                ga = g * _integer_power_of_two(fm.unwrap(e), self.int_exponent)
        if out is not None:
            gb = g * out * math.log(2.0)
        return ga, gb


def _integer_power_of_two(e, int_dtype):
    """``2 ** e`` in the integer dtype ``int_dtype``, as an integer power computes it."""
    bits = int_dtype.itemsize * 8
    inside = (e >= 0) & (e < bits)
    ones = xp.ones(e.shape, int_dtype)
    shift = xp.where(inside, e, 0).astype(int_dtype)
    return xp.where(inside, xp.left_shift(ones, shift), 0).astype(int_dtype)


def _need_float(kernel, a, b):
    """The kernels defined on floating dtypes only (logaddexp, nextafter, igamma)."""
    if xp.result_type(a, b).kind not in 'fV':
        raise not_implemented(kernel, a if hasattr(a, 'dtype') else b)


class Logaddexp(Op):
    """``log(exp(a) + exp(b))``; the gradients are the softmax weights of a and b."""
    quiet_fp = True
    promotes = True

    def forward(self, a, b):
        _need_float('logaddexp_cpu', a, b)
        self.save_for_backward(a, b)
        return xp.logaddexp(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        return (g / (fm.exp(b - a) + 1) if need[0] else None,
                g / (fm.exp(a - b) + 1) if need[1] else None)


class Logaddexp2(Op):
    """``log2(2 ** a + 2 ** b)``."""
    quiet_fp = True
    promotes = True

    def forward(self, a, b):
        _need_float('logaddexp2_cpu', a, b)
        self.save_for_backward(a, b)
        return xp.logaddexp2(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        return (g / (2.0 ** (b - a) + 1) if need[0] else None,
                g / (2.0 ** (a - b) + 1) if need[1] else None)


class Nextafter(Op):
    """The next representable value after ``a`` toward ``b``; PyTorch passes the gradient
    to ``a`` where ``a != b`` (elsewhere the result is ``b``) and gives ``b`` none."""
    promotes = True

    def forward(self, a, b):
        _need_float('nextafter_cpu', a, b)
        if self.needs_input_grad[0]:
            self.equal = a == b
        return xp.nextafter(a, b)

    def backward(self, g):
        need = self.needs_input_grad
        ga = fm.where(self.equal, 0.0, g) if need[0] else None
        return ga, (g * 0 if need[1] else None)


class Heaviside(_NoDerivative):
    """The step function: ``values`` where ``x == 0``, else ``x > 0``."""
    node_name = 'NotImplemented'
    aten = 'heaviside'

    def forward(self, x, values):
        return xp.where(x == 0, values, x > 0).astype(x.dtype)


class Gcd(Op):
    differentiable = False
    promotes = True
    kernel = 'gcd_cpu'

    def forward(self, a, b):
        if xp.result_type(a, b).kind not in 'iu':
            raise not_implemented(self.kernel, xp.zeros(0, xp.result_type(a, b)))
        return xp.gcd(a, b)


class Lcm(Gcd):
    kernel = 'lcm_cpu'

    def forward(self, a, b):
        super().forward(a, b)    # the dtype check
        return xp.lcm(a, b)


class Frexp(Op):
    """``(mantissa, exponent)`` with ``x = mantissa * 2 ** exponent``; d mantissa / dx is
    ``2 ** -exponent``."""

    def forward(self, x):
        mantissa, exponent = xp.frexp(x)
        if self.needs_input_grad[0]:
            self.scale = xp.ldexp(xp.ones((), x.dtype), -exponent)
        return mantissa, exponent.astype(np.int32)

    def backward(self, g, g_exponent=None):
        return g * self.scale


class Addcmul(Op):
    supports_complex = True
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
    supports_complex = True
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


# -- function forms and Tensor methods ------------------------------------------------------
# Each function is registered as its Tensor method where it is defined, its in-place form
# follows it, then its operators: those call the op's apply directly (one frame, no more).


def _check_alpha(alpha, input, other, op):
    """``alpha`` as a number (a 0-dim tensor is read, as PyTorch reads a Scalar), after
    PyTorch's refusals of one the result's dtype cannot take (checked off the hot path: only
    for an alpha other than the int 1)."""
    if isinstance(alpha, Tensor):
        if alpha._data.ndim:
            raise TypeError(f"{op}(): argument 'alpha' must be Number, not Tensor")
        return alpha.item()
    if not isinstance(alpha, (bool, float, complex, np.generic)):
        return alpha
    d = _dtype.result_type(input, other)
    if isinstance(alpha, (bool, np.bool_)):
        if d is not _dtype.bool:
            raise RuntimeError('Boolean alpha only supported for Boolean results.')
    elif isinstance(alpha, (complex, np.complexfloating)):
        if not d.is_complex:
            raise RuntimeError('For non-complex input tensors, argument alpha must not be a '
                               'complex number.')
    elif isinstance(alpha, (float, np.floating)) and not (d.is_floating_point or d.is_complex):
        raise RuntimeError('For integral input tensors, argument alpha must not be a floating '
                           'point number.')
    return alpha


# add, sub, mul and div take out= in their own signatures, since out_args.with_out would
# cost dynagrad.add(a, b) a frame (about 5%); their Tensor methods accept it too.

@method
def add(input, other, *, alpha=1, out=None):
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha(alpha, input, other, 'add')
    elif out is None:
        return Add.apply(input, other)
    if out is None:
        return Add.apply(input, other, alpha=alpha)
    return call_into(out, 'add', Add.apply, input, other, alpha=alpha)


@method('add_', '__iadd__')
def add_(self, other, *, alpha=1):
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha(alpha, self, other, 'add_')
    return Add.apply_(self, other, alpha=alpha)


_operator(Add, '__add__', '__radd__')


@method('sub', 'subtract')
def sub(input, other, *, alpha=1, out=None):
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha(alpha, input, other, 'sub')
    elif out is None:
        return Sub.apply(input, other)
    if out is None:
        return Sub.apply(input, other, alpha=alpha)
    return call_into(out, 'sub', Sub.apply, input, other, alpha=alpha)


subtract = sub


@method('sub_', 'subtract_', '__isub__')
def sub_(self, other, *, alpha=1):
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha(alpha, self, other, 'sub_')
    return Sub.apply_(self, other, alpha=alpha)


_operator(Sub, '__sub__')
_operator(Rsub, '__rsub__')


def rsub(input, other, *, alpha=1):         # a function only, as in PyTorch
    return Rsub.apply(input, other, alpha=alpha)


@method('mul', 'multiply')
def mul(input, other, *, out=None):
    if out is None:
        return Mul.apply(input, other)
    return call_into(out, 'mul', Mul.apply, input, other)


multiply = mul


@method('mul_', 'multiply_', '__imul__')
def mul_(self, other):
    return Mul.apply_(self, other)


_operator(Mul, '__mul__', '__rmul__')


@method
def pow(input, exponent):
    if hasattr(exponent, '_data'):
        if not hasattr(input, '_data'):
            return Rpow.apply(exponent, input)
        return PowTensor.apply(input, exponent)
    if exponent.__class__ is not float and exponent.__class__ is not int:
        exponent = number_operand(Pow, exponent, 1)
    if isinstance(exponent, (float, complex)) and input._data.dtype.kind not in 'fVc':
        # The exponent is a parameter, not an input, so promotion does not see it.
        input = input.to(_dtype.result_type(input, exponent))
    return Pow.apply(input, exponent=exponent)


@method('pow_', '__ipow__')
def pow_(self, exponent):
    if hasattr(exponent, '_data'):
        return PowTensor.apply_(self, exponent)
    return Pow.apply_(self, exponent=exponent)


_operator(pow, '__pow__')
_operator(Rpow, '__rpow__')


@method('div', 'divide')
def div(input, other, *, rounding_mode=None, out=None):
    if out is not None:
        return call_into(out, 'div', div, input, other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        return Div.apply(input, other)
    _check_rounding_mode(rounding_mode)
    return DivMode.apply(input, other, rounding_mode=rounding_mode)


divide = div


@method('div_', 'divide_', '__itruediv__')
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        if self._data.dtype.kind not in 'fcV':     # true division: float or complex targets
            raise RuntimeError(f'result type Float can\'t be cast to the desired output type '
                               f'{self.dtype.legacy_name[:-6]}')
        return Div.apply_(self, other)
    _check_rounding_mode(rounding_mode)
    return DivMode.apply_(self, other, rounding_mode=rounding_mode)


_operator(Div, '__truediv__')
_operator(Rdiv, '__rtruediv__')


@method
def true_divide(input, other):
    return Div.apply(input, other)


@method
def true_divide_(self, other):
    return div_(self, other)


_ROUNDING_MODES = (None, 'trunc', 'floor')


def _check_rounding_mode(rounding_mode):
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")


def _scalar_variant(op, other):
    """The op for a Scalar ``other``: PyTorch names that overload's node ...Backward0."""
    return op if isinstance(other, Tensor) else op.named(op.__qualname__ + 'Backward0')


def _xlogy_variant(input, other):
    if not isinstance(input, Tensor):
        return Xlogy.named('XlogyBackward1')       # xlogy(Scalar, Tensor)
    if not isinstance(other, Tensor):
        return Xlogy.named('XlogyBackward2')       # xlogy(Tensor, Scalar)
    return Xlogy


@method
def floor_divide(input, other):
    return FloorDivide.apply(input, other)


@method('floor_divide_', '__ifloordiv__')
def floor_divide_(self, other):
    return FloorDivideInplace.apply_(self, other)


_operator(FloorDivide, '__floordiv__')
_operator(FloorDivide, '__rfloordiv__', reflected=True)


@method
def remainder(input, other):
    if not isinstance(input, Tensor):
        return RemainderScalarSelf.apply(input, other)
    return _scalar_variant(Remainder, other).apply(input, other)


@method('remainder_', '__imod__')
def remainder_(self, other):
    return _scalar_variant(Remainder, other).apply_(self, other)


_operator(remainder, '__mod__')
_operator(RemainderScalarSelf, '__rmod__', reflected=True)


@method
def fmod(input, other):
    _need_tensor('fmod', input, 1, 'input')
    return _scalar_variant(Fmod, other).apply(input, other)


@method
def fmod_(self, other):
    return _scalar_variant(Fmod, other).apply_(self, other)


@method
def square(input):
    if input._data.dtype == bool:      # bool ** 2 is an integer power in PyTorch
        input = input.to(_dtype.int64)
    return pow(input, 2)


@method
def square_(self):
    if self._data.dtype == bool:
        raise RuntimeError("result type Long can't be cast to the desired output type Bool")
    return pow_(self, 2)


atan2 = arctan2 = _binary(Atan2, 'atan2', aliases=('arctan2',), inplace=True,
                          tensors_only=True)


@method
def xlogy(input, other):
    if not isinstance(input, Tensor):
        _need_tensor('xlogy', other, 2)
    return _xlogy_variant(input, other).apply(input, other)


@method
def xlogy_(self, other):
    return _xlogy_variant(self, other).apply_(self, other)


hypot = _binary(Hypot, 'hypot', inplace=True, tensors_only=True)


def _copysign_variant(other):
    return Copysign if isinstance(other, Tensor) else Copysign.named('CopysignBackward1')


def _check_copysign_input(input, other):
    if not isinstance(input, Tensor):
        raise TypeError(f'copysign() received an invalid combination of arguments - got '
                        f'({type(input).__name__}, {type(other).__name__}), but expected one '
                        'of: (Tensor input, Tensor other) or (Tensor input, Number other)')


@method
def copysign(input, other):
    _check_copysign_input(input, other)
    return _copysign_variant(other).apply(input, other)


@method
def copysign_(self, other):
    return _copysign_variant(other).apply_(self, other)


def _ldexp_exponent_dtype(other):
    if isinstance(other, Tensor) and other._data.dtype.kind in 'iub':
        return other._data.dtype
    return None


@method
def ldexp(input, other):
    _need_tensor('ldexp', other, 2)
    return Ldexp.apply(input, other, int_exponent=_ldexp_exponent_dtype(other))


@method
def ldexp_(self, other):
    _need_tensor('ldexp_', other, 1)
    return Ldexp.apply_(self, other, int_exponent=_ldexp_exponent_dtype(other))


logaddexp = _binary(Logaddexp, 'logaddexp', tensors_only=True)
logaddexp2 = _binary(Logaddexp2, 'logaddexp2', tensors_only=True)
nextafter = _binary(Nextafter, 'nextafter', inplace=True, tensors_only=True)
gcd = _binary(Gcd, 'gcd', inplace=True, tensors_only=True)
lcm = _binary(Lcm, 'lcm', inplace=True, tensors_only=True)
igamma = _binary(Igamma, 'igamma', inplace=True, tensors_only=True)
igammac = _binary(Igammac, 'igammac', inplace=True, tensors_only=True)


def _check_heaviside(input, values):
    _need_tensor('heaviside', values, 2, 'values')
    if input._data.dtype != values._data.dtype:
        raise RuntimeError('heaviside is not yet implemented for tensors with different dtypes. '
                           f'(got {input.dtype} and {values.dtype}: convert one with .to())')


@method
def heaviside(input, values):
    _check_heaviside(input, values)
    return Heaviside.apply(input, values)


@method
def heaviside_(self, values):
    _check_heaviside(self, values)
    return Heaviside.apply_(self, values)


_FLOAT64 = _dtype.float64


def _as_float64(value):
    if isinstance(value, Tensor):
        return value if value._data.dtype == np.float64 else value.to(_FLOAT64)
    return float(value)


@method
def float_power(input, exponent):
    """``pow`` computed in float64, whatever the dtypes of the operands."""
    if not isinstance(input, Tensor):
        _need_tensor('float_power', exponent, 2, 'exponent')
        return Rpow.apply(_as_float64(exponent), float(input))
    base = _as_float64(input)
    if isinstance(exponent, Tensor):
        return PowTensor.apply(base, _as_float64(exponent))
    return Pow.apply(base, exponent=float(exponent))


@method
def float_power_(self, exponent):
    if self._data.dtype != np.float64:
        raise RuntimeError(f'the base given to float_power_ has dtype '
                           f'{self.dtype.legacy_name[:-6]} but the operation\'s result '
                           'requires dtype Double')
    if isinstance(exponent, Tensor):
        return PowTensor.apply_(self, _as_float64(exponent))
    return Pow.apply_(self, exponent=float(exponent))


frexp_result = return_types.frexp


@method
def frexp(input):
    _need_tensor('frexp', input, 1, 'input')
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError('torch.frexp() only supports floating-point dtypes (got '
                           f'{input.dtype}; convert with .float())')
    return frexp_result(*Frexp.apply(input))


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
    if value.__class__ is complex and 'c' not in kinds:
        from .clamping import _torch_dtype_name    # (clamping loads after arithmetic)
        result = _dtype.result_type(input, tensor1, tensor2)
        raise RuntimeError(f'value cannot be converted to type '
                           f'{_torch_dtype_name(result.numpy)} without overflow')
    if isinstance(value, float) and all(k in 'iub' for k in kinds):
        if name == 'addcdiv':
            raise RuntimeError('For integral input tensors, argument value must not be a '
                               'floating point number.')
        return int(value)   # PyTorch casts the scalar to the integer type
    return value


@method
def addcmul(input, tensor1, tensor2, *, value=1):
    value = _check_addc('addcmul', input, tensor1, tensor2, value)
    return Addcmul.apply(input, tensor1, tensor2, value=value)


@method
def addcmul_(self, tensor1, tensor2, *, value=1):
    value = _check_addc('addcmul', self, tensor1, tensor2, value)
    return Addcmul.apply_(self, tensor1, tensor2, value=value)


@method
def addcdiv(input, tensor1, tensor2, *, value=1):
    _check_addc('addcdiv', input, tensor1, tensor2, value)
    return Addcdiv.apply(input, tensor1, tensor2, value=value)


@method
def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addc('addcdiv', self, tensor1, tensor2, value)
    return Addcdiv.apply_(self, tensor1, tensor2, value=value)


# torch.xlogy_(x, y) and the other in-place functions: the in-place methods themselves.
square_, xlogy_, ldexp_, gcd_, lcm_ = (Tensor.square_, Tensor.xlogy_, Tensor.ldexp_,
                                       Tensor.gcd_, Tensor.lcm_)

__all__ = ['add', 'sub', 'subtract', 'rsub', 'mul', 'multiply', 'div', 'divide', 'true_divide',
           'pow', 'square', 'floor_divide', 'remainder', 'fmod', 'atan2', 'arctan2', 'xlogy',
           'hypot', 'addcmul', 'addcdiv', 'copysign', 'ldexp', 'logaddexp', 'logaddexp2',
           'nextafter', 'heaviside', 'gcd', 'lcm', 'igamma', 'igammac', 'float_power', 'frexp',
           'square_', 'xlogy_', 'ldexp_', 'gcd_', 'lcm_']
