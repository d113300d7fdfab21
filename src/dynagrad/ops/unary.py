"""Unary math: exponentials and logarithms, trigonometric and hyperbolic functions,
activations, rounding.

Each op is a ``Unary`` class that declares its value ``f`` and its gradient ``df`` (see
``_elementwise.Unary``); the special functions (erf, lgamma, ...) are declared the same way
in ``special.py``, and their function forms are here.
"""
import math

import numpy as np

from ..backend import native_kernel, xp
from . import formula as fm
from ..autograd.function import Op
from ..autograd.promotion import float_argument
from ..tensor import Tensor, method
from ._elementwise import (FLOAT8, REFUSED, WIDE_UNSIGNED_OR_E8M0, Unary, _as_array,
                           not_implemented, refused, _unary, _need_tensor,
                           unordered_complex)
from .complex_numbers import ComplexAngle, ComplexSgn
from .out_args import EXACT
from .special import (Erf, Erfc, Erfinv, Lgamma, Digamma, Polygamma, PolygammaInplace, I0,
                      Mvlgamma)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# -- activations, sign and negation ---------------------------------------------------------


class Neg(Unary):
    float_result = False
    saves = None

    def f(x):
        if x.dtype == bool:
            raise RuntimeError('Negation, the `-` operator, on a bool tensor is not supported. If '
                               'you are trying to invert a mask, use the `~` or `logical_not()` '
                               'operator instead.')
        if x.dtype in REFUSED:
            raise refused('neg_cpu', x)
        return -x

    def df(g): return -g


class Tanh(Unary):
    supports_complex = True
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('tanh_vml_cpu', x)
        return xp.tanh(x)

    def df(g, y): return g * (1 - y * y)


class Sigmoid(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('sigmoid_cpu_reduced_float', x)
        # exp of a large negative x overflows; the split keeps both halves finite.
        y = xp.empty_like(x)
        pos = x >= 0
        y[pos] = 1 / (1 + xp.exp(-x[pos]))
        ex = xp.exp(x[~pos])
        y[~pos] = ex / (1 + ex)
        return y

    def df(g, y): return g * y * (1 - y)


class Relu(Unary):
    float_result = False
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('clamp_min_scalar_cpu', x)
        if x.dtype.kind == 'c':
            raise unordered_complex()
        native = native_kernel('relu', x)
        if native is not None:
            return native(x)
        return xp.maximum(x, 0)

    def df(g, y):
        y = _as_array(y)
        if fm.is_array(g) and g.dtype == y.dtype:
            native = native_kernel('relu_backward', y)
            if native is not None:
                return native(g, y)
        # not g * (y > 0): PyTorch passes the gradient on where the output is NaN
        return g * xp.logical_not(y <= 0)


class Abs(Unary):
    float_result = False
    def f(x):
        if x.dtype in WIDE_UNSIGNED_OR_E8M0:
            raise refused('abs_cpu', x)
        return xp.abs(x)
    def df(g, x): return g * fm.sgn(x)      # z / |z| for a complex z

    @staticmethod
    def jvp(tangents, inputs, out, **params):
        t, x = tangents[0], inputs[0]
        if x._data.dtype.kind == 'c':       # not holomorphic: Re(conj(sgn z) t)
            return (t * x.sgn().conj()).real
        return t * fm.sgn(x)

    @classmethod
    def apply_(cls, target, *others, **params):
        if target._data.dtype.kind == 'c':
            raise RuntimeError('In-place abs is not supported for complex tensors.')
        return super().apply_(target, *others, **params)


class Sign(Unary):
    float_result = False
    saves = None

    def f(x):
        if x.dtype == bool:
            return x.copy()
        if x.dtype in REFUSED:
            raise refused('sign_cpu', x)
        if x.dtype.kind == 'c':
            raise NotImplementedError('Unlike NumPy, torch.sign is not intended to support '
                                      'complex numbers. Please use torch.sgn instead.')
        y = xp.sign(x)
        if x.dtype.kind in 'fV':       # PyTorch: the sign of nan is 0
            nan = xp.isnan(x)
            if nan.any():
                y = xp.where(nan, 0, y).astype(x.dtype)
        return y

    def df(g): return g * 0


class Sgn(Sign):
    """``sgn``: ``sign`` for real tensors, ``z / |z|`` for complex ones (ComplexSgn)."""

    @classmethod
    def apply(cls, x, **params):
        if isinstance(x, Tensor) and x._data.dtype.kind == 'c':
            return ComplexSgn.apply(x)
        return super().apply(x, **params)

    @classmethod
    def apply_(cls, target, *others, **params):
        # sgn_ on a complex tensor is z / |z| in place, as sgn is out of place
        if target._data.dtype.kind == 'c':
            return ComplexSgn.apply_(target, *others, **params)
        return super().apply_(target, *others, **params)


class Angle(Unary):
    """The argument of a real number: 0 for ``x >= 0``, pi for ``x < 0``, nan for nan (of a
    complex one: ComplexAngle)."""
    saves = None

    @classmethod
    def apply(cls, x, **params):
        if isinstance(x, Tensor) and x._data.dtype.kind == 'c':
            return ComplexAngle.apply(x)
        return super().apply(x, **params)

    def f(x):
        y = xp.where(x < 0, math.pi, 0.0).astype(x.dtype)
        return xp.where(xp.isnan(x), x, y)

    def df(g): return g * 0


# -- exponentials, logarithms, roots --------------------------------------------------------


class Exp(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('exp_vml_cpu', x)
        return xp.exp(x)

    def df(g, y): return g * y


class Exp2(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'
    def f(x): return xp.exp2(x)
    def df(g, y): return g * y * _LN2


class Expm1(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'
    def f(x): return xp.expm1(x)
    def df(g, y): return g * (y + 1)


class Log(Unary):
    supports_complex = True
    quiet_fp = True

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('log_vml_cpu', x)
        return xp.log(x)

    def df(g, x): return g / x


class Log2(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.log2(x)
    def df(g, x): return g / (x * _LN2)


class Log10(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.log10(x)
    def df(g, x): return g / (x * _LN10)


class Log1p(Unary):
    supports_complex = True
    quiet_fp = True
    node_name = 'Log1PBackward0'
    def f(x): return xp.log1p(x)
    def df(g, x): return g / (x + 1)


class Sqrt(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('sqrt_vml_cpu', x)
        return xp.sqrt(x)

    def df(g, y): return g / (2 * y)


class Rsqrt(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'
    def f(x): return 1 / xp.sqrt(x)
    def df(g, y): return g * (y * y * y) * -0.5


class Reciprocal(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('reciprocal_cpu', x)
        return xp.reciprocal(x)

    def df(g, y): return -g * (y * y)


class Logit(Op):
    """``log(x / (1 - x))`` of ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    quiet_fp = True
    float_result = True

    def forward(self, x, eps=None):
        self.save_for_backward(x)
        self.eps = eps
        z = x if eps is None else xp.clip(x, eps, 1 - eps)
        return xp.log(z / (1 - z))

    def backward(self, g):
        x, = self.saved_tensors
        xa = _as_array(x)
        grad = g / (x * (1 - x))
        if self.eps is None:   # outside [0, 1] the derivative is nan, as in PyTorch
            outside = (xa < 0) | (xa > 1)
            return fm.where(outside, float('nan'), grad) if outside.any() else grad
        clamped = (xa < self.eps) | (xa > 1 - self.eps)
        return fm.where(clamped, 0.0, grad) if clamped.any() else grad


class Sinc(Unary):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    supports_complex = True
    quiet_fp = True

    def f(x):
        zero = x == 0
        px = math.pi * xp.where(zero, 1, x).astype(x.dtype)
        return xp.where(zero, 1, xp.sin(px) / px).astype(x.dtype)

    def df(g, x):
        # (cos(pi x) - sinc(x)) / x, which tends to 0 at 0
        zero = _as_array(x) == 0
        safe = fm.where(zero, 1.0, x) if zero.any() else x
        slope = (_cos(safe * math.pi) - Sinc.run(safe)) / safe
        return g * (fm.where(zero, 0.0, slope) if zero.any() else slope)


# -- trigonometric and hyperbolic -----------------------------------------------------------
# (_cos(x): the cos of an array, or the recorded cos of a tensor; as fm.exp, fm.log.)

_sin = fm.dual(xp.sin, 'sin')
_cos = fm.dual(xp.cos, 'cos')
_sinh = fm.dual(xp.sinh, 'sinh')
_cosh = fm.dual(xp.cosh, 'cosh')


class Sin(Unary):
    supports_complex = True
    quiet_fp = True

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('sin_vml_cpu', x)
        return xp.sin(x)

    def df(g, x): return g * _cos(x)


class Cos(Unary):
    supports_complex = True
    quiet_fp = True

    def f(x):
        if x.dtype in FLOAT8:
            raise refused('cos_vml_cpu', x)
        return xp.cos(x)

    def df(g, x): return -g * _sin(x)


class Tan(Unary):
    supports_complex = True
    quiet_fp = True
    saves = 'output'
    def f(x): return xp.tan(x)
    def df(g, y): return g * (y * y + 1)


class Asin(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.arcsin(x)

    def df(g, x):
        return g / fm.sqrt(1 - x * x)


class Acos(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.arccos(x)

    def df(g, x):
        return -g / fm.sqrt(1 - x * x)


class Atan(Unary):
    supports_complex = True
    def f(x): return xp.arctan(x)
    def df(g, x): return g / (x * x + 1)


class Sinh(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.sinh(x)
    def df(g, x): return g * _cosh(x)


class Cosh(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.cosh(x)
    def df(g, x): return g * _sinh(x)


class Asinh(Unary):
    supports_complex = True
    def f(x): return xp.arcsinh(x)
    def df(g, x): return g / fm.sqrt(x * x + 1)


class Acosh(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.arccosh(x)
    def df(g, x): return g / fm.sqrt((x - 1) * (x + 1))


class Atanh(Unary):
    supports_complex = True
    quiet_fp = True
    def f(x): return xp.arctanh(x)
    def df(g, x): return g / (1 - x * x)


class Rad2Deg(Unary):
    saves = None
    def f(x): return x * (180.0 / math.pi)
    def df(g): return g * (180.0 / math.pi)


class Deg2Rad(Unary):
    saves = None
    def f(x): return x * (math.pi / 180.0)
    def df(g): return g * (math.pi / 180.0)


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


class AtanhInplace(Atanh):
    """``atanh_``: PyTorch records it but defines no derivative."""
    node_name = 'AtanhBackward1'

    def backward(self, g):
        raise NotImplementedError("the derivative for 'inplace version of atanh' is not "
                                  "implemented.")


# -- rounding (zero gradient) ---------------------------------------------------------------


def _rounded(round_fn, kernel, x):
    """``round_fn(x)`` for floats; integers are already whole; bool has no kernel."""
    if x.dtype.kind not in 'fV':
        if x.dtype == bool:
            raise not_implemented(kernel, x)
        if x.dtype.kind == 'c':
            name = kernel.split('_')[0]
            raise (not_implemented(kernel, x) if name == 'round' else
                   NotImplementedError(f'{name} is not supported for complex inputs'))
        return x.copy()
    if x.dtype in FLOAT8:
        raise refused(kernel, x)
    return round_fn(x)


class Floor(Unary):
    float_result = False
    saves = None
    def f(x): return _rounded(xp.floor, 'floor_vml_cpu', x)
    def df(g): return g * 0


class Ceil(Unary):
    float_result = False
    saves = None
    def f(x): return _rounded(xp.ceil, 'ceil_vml_cpu', x)
    def df(g): return g * 0


class Trunc(Unary):
    float_result = False
    saves = None
    def f(x): return _rounded(xp.trunc, 'trunc_vml_cpu', x)
    def df(g): return g * 0


class Round(Unary):
    """Round half to even."""
    float_result = False
    saves = None
    def f(x): return _rounded(xp.rint, 'round_cpu' if x.dtype == bool else 'round_vml_cpu', x)
    def df(g): return g * 0


class RoundDecimals(Op):
    widens_half = True
    node_name = 'RoundBackward1'

    def forward(self, x, decimals):
        if x.dtype.kind not in 'fV':
            raise not_implemented('round_cpu', x)
        return xp.round(x, decimals)

    def backward(self, g):
        return g * 0


class Frac(Unary):
    float_result = False
    saves = None

    def f(x):
        if x.dtype.kind not in 'fV':
            raise not_implemented('frac_cpu', x)
        with np.errstate(invalid='ignore'):
            return x - xp.trunc(x)

    def df(g): return g


# -- function forms and Tensor methods --------------------------------------------------------
# Each line: dynagrad.<name>, Tensor.<name> (and the aliases), and with ``inplace`` the
# in-place Tensor.<name>_ (the op class given, where PyTorch's in-place form is another op).

neg = negative = _unary(Neg, 'neg', aliases=('negative',), inplace=True,
                          out=EXACT)
method('__neg__')(neg)                  # -tensor
method('__pos__')(lambda self: self)    # +tensor
abs = absolute = _unary(Abs, 'abs', aliases=('absolute',), inplace=True,
                          out=EXACT)
method('__abs__')(abs)                  # abs(tensor)
sign = _unary(Sign, 'sign', inplace=True, out=EXACT)
sgn = _unary(Sgn, 'sgn', inplace=True, out=EXACT)
angle = _unary(Angle, 'angle')

exp = _unary(Exp, 'exp', inplace=True)
exp2 = _unary(Exp2, 'exp2', inplace=True)
expm1 = _unary(Expm1, 'expm1', inplace=True)
log = _unary(Log, 'log', inplace=True)
log2 = _unary(Log2, 'log2', inplace=True)
log10 = _unary(Log10, 'log10', inplace=True)
log1p = _unary(Log1p, 'log1p', inplace=True)
sqrt = _unary(Sqrt, 'sqrt', inplace=True)
rsqrt = _unary(Rsqrt, 'rsqrt', inplace=True)
reciprocal = _unary(Reciprocal, 'reciprocal', inplace=True)

tanh = _unary(Tanh, 'tanh', inplace=True)
sigmoid = _unary(Sigmoid, 'sigmoid', inplace=True)
relu = _unary(Relu, 'relu', inplace=True, out=False)

sin = _unary(Sin, 'sin', inplace=True)
cos = _unary(Cos, 'cos', inplace=True)
tan = _unary(Tan, 'tan', inplace=True)
asin = arcsin = _unary(Asin, 'asin', aliases=('arcsin',), inplace=True)
acos = arccos = _unary(Acos, 'acos', aliases=('arccos',), inplace=True)
atan = arctan = _unary(Atan, 'atan', aliases=('arctan',), inplace=True)
sinh = _unary(Sinh, 'sinh', inplace=True)
cosh = _unary(Cosh, 'cosh', inplace=True)
asinh = arcsinh = _unary(Asinh, 'asinh', aliases=('arcsinh',), inplace=AsinhInplace)
acosh = arccosh = _unary(Acosh, 'acosh', aliases=('arccosh',), inplace=AcoshInplace)
atanh = arctanh = _unary(Atanh, 'atanh', aliases=('arctanh',), inplace=AtanhInplace)

erf = _unary(Erf, 'erf', inplace=True)
erfc = _unary(Erfc, 'erfc', inplace=True)
erfinv = _unary(Erfinv, 'erfinv', inplace=True)
lgamma = _unary(Lgamma, 'lgamma', inplace=True)
digamma = _unary(Digamma, 'digamma', inplace=True)

i0 = _unary(I0, 'i0', inplace=True)
sinc = _unary(Sinc, 'sinc', inplace=True)
rad2deg = _unary(Rad2Deg, 'rad2deg', inplace=True)
deg2rad = _unary(Deg2Rad, 'deg2rad', inplace=True)

floor = _unary(Floor, 'floor', inplace=True, out=EXACT)
ceil = _unary(Ceil, 'ceil', inplace=True, out=EXACT)
trunc = fix = _unary(Trunc, 'trunc', aliases=('fix',), inplace=True, out=EXACT)
frac = _unary(Frac, 'frac', inplace=True, out=EXACT)


def polygamma(n, input):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError('polygamma(n, x) does not support negative n.')
    return Polygamma.apply(input, n=n)


@method('polygamma')
def _polygamma_method(self, n):
    return polygamma(n, self)


@method
def polygamma_(self, n):
    return PolygammaInplace.apply_(self, n=n)


@method
def round(input, *, decimals=0):
    if decimals == 0:
        return Round.apply(input)
    return RoundDecimals.apply(input, decimals=decimals)


@method
def round_(self, *, decimals=0):
    if decimals == 0:
        return Round.apply_(self)
    return RoundDecimals.apply_(self, decimals=decimals)


@method
def logit(input, eps=None):
    return Logit.apply(input, eps=float_argument('logit', 'eps', eps, 1))


@method
def logit_(self, eps=None):
    return Logit.apply_(self, eps=float_argument('logit_', 'eps', eps, 1))


@method
def positive(input):
    """``input`` itself (what ``+input`` gives); PyTorch refuses bool tensors."""
    _need_tensor('positive', input, 1, 'input')
    if input._data.dtype == bool:
        raise RuntimeError('The `+` operator, on a bool tensor is not supported.')
    return input


def _check_mvlgamma_p(p):
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError(f'p has to be greater than or equal to 1 (mvlgamma got p={p})')


@method
def mvlgamma(input, p):
    _check_mvlgamma_p(p)
    return Mvlgamma.apply(input, p=p)


@method
def mvlgamma_(self, p):
    _check_mvlgamma_p(p)
    return Mvlgamma.apply_(self, p=p)


# torch.exp_(x) and the other in-place functions: the in-place methods themselves.
(neg_, negative_, abs_, exp_, exp2_, expm1_, log_, log2_, log10_, log1p_, sqrt_, rsqrt_,
 reciprocal_, tanh_, sigmoid_, relu_, sin_, cos_, tan_, asin_, arcsin_, acos_, arccos_, atan_,
 arctan_, sinh_, cosh_, asinh_, arcsinh_, acosh_, arccosh_, atanh_, arctanh_, erf_, erfc_,
 floor_, ceil_, trunc_, fix_, frac_, i0_, sinc_, rad2deg_, deg2rad_) = (
    Tensor.neg_, Tensor.negative_, Tensor.abs_, Tensor.exp_, Tensor.exp2_, Tensor.expm1_,
    Tensor.log_, Tensor.log2_, Tensor.log10_, Tensor.log1p_, Tensor.sqrt_, Tensor.rsqrt_,
    Tensor.reciprocal_, Tensor.tanh_, Tensor.sigmoid_, Tensor.relu_, Tensor.sin_, Tensor.cos_,
    Tensor.tan_, Tensor.asin_, Tensor.arcsin_, Tensor.acos_, Tensor.arccos_, Tensor.atan_,
    Tensor.arctan_, Tensor.sinh_, Tensor.cosh_, Tensor.asinh_, Tensor.arcsinh_, Tensor.acosh_,
    Tensor.arccosh_, Tensor.atanh_, Tensor.arctanh_, Tensor.erf_, Tensor.erfc_, Tensor.floor_,
    Tensor.ceil_, Tensor.trunc_, Tensor.fix_, Tensor.frac_, Tensor.i0_, Tensor.sinc_,
    Tensor.rad2deg_, Tensor.deg2rad_)

_INPLACE_FUNCTIONS = ['neg_', 'negative_', 'abs_', 'exp_', 'exp2_', 'expm1_', 'log_', 'log2_',
                      'log10_', 'log1p_', 'sqrt_', 'rsqrt_', 'reciprocal_', 'tanh_', 'sigmoid_',
                      'relu_', 'sin_', 'cos_', 'tan_', 'asin_', 'arcsin_', 'acos_', 'arccos_',
                      'atan_', 'arctan_', 'sinh_', 'cosh_', 'asinh_', 'arcsinh_', 'acosh_',
                      'arccosh_', 'atanh_', 'arctanh_', 'erf_', 'erfc_', 'floor_', 'ceil_',
                      'trunc_', 'fix_', 'frac_', 'i0_', 'sinc_', 'rad2deg_', 'deg2rad_',
                      'round_', 'logit_']

__all__ = ['neg', 'negative', 'exp', 'log', 'sqrt', 'tanh', 'sigmoid', 'relu', 'abs',
           'absolute', 'sign', 'exp2', 'expm1', 'log2', 'log10', 'log1p', 'rsqrt',
           'reciprocal', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'arcsin', 'arccos',
           'arctan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'arcsinh', 'arccosh',
           'arctanh', 'logit', 'erf', 'erfc', 'erfinv', 'lgamma', 'digamma', 'polygamma',
           'floor', 'ceil', 'round', 'trunc', 'fix', 'frac', 'sgn', 'angle', 'i0', 'sinc',
           'rad2deg', 'deg2rad', 'positive', 'mvlgamma'] + _INPLACE_FUNCTIONS
