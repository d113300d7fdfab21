"""Elementwise ops, gathered: the families live in their own modules, and this one keeps the
old import path ``dynagrad.ops.pointwise`` (its functions, op classes and helpers).

* ``arithmetic``: add, sub, mul, div, pow, floor_divide, remainder, fmod, atan2, xlogy,
  hypot, copysign, ldexp, logaddexp(2), nextafter, heaviside, gcd, lcm, igamma(c),
  float_power, frexp, addcmul, addcdiv
* ``unary``: exp, log, sqrt, tanh, sigmoid, relu, abs, sign, sgn, angle, neg, positive,
  trig and hyperbolic functions, sinc, rad2deg, deg2rad, rounding, logit (and the function
  forms of the special functions: erf, ..., i0, mvlgamma)
* ``special``: erf, erfc, erfinv, lgamma, digamma, polygamma, i0, i1, igamma, igammac
  (array functions and ops), mvlgamma
* ``comparison``: comparisons (and their in-place forms), predicates, logical and bitwise
  ops, dtype predicates and the identities of real tensors (conj, real, ...)
* ``clamping``: clamp, maximum, minimum, nan_to_num, where, lerp, fill, fill_, copy_, clone,
  cast
* ``_elementwise``: the ``Unary`` declaration form and the shared helpers
"""
from . import arithmetic, unary, comparison, clamping
from .arithmetic import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .clamping import *  # noqa: F401,F403
from ._elementwise import (  # noqa: F401
    Unary, _NoDerivative, _as_array, type_name, not_implemented, _need_tensor, _unary,
    _binary, _operator)
from .arithmetic import (  # noqa: F401
    Add, Sub, Rsub, Mul, Div, Rdiv, Pow, PowTensor, Rpow, DivMode, FloorDivide,
    FloorDivideInplace, Remainder, RemainderScalarSelf, Fmod, Atan2, Xlogy, Hypot, Addcmul,
    Addcdiv, Copysign, Ldexp, Logaddexp, Logaddexp2, Nextafter, Heaviside, Gcd, Lcm, Frexp,
    add_, sub_, mul_, div_, true_divide_, pow_, square_, floor_divide_, remainder_,
    fmod_, xlogy_, addcmul_, addcdiv_)
from .unary import (  # noqa: F401
    Neg, Tanh, Sigmoid, Relu, Abs, Sign, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt,
    Rsqrt, Reciprocal, Logit, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh,
    Atanh, AsinhInplace, AcoshInplace, AtanhInplace, Floor, Ceil, Trunc, Round, RoundDecimals,
    Frac, Sgn, Angle, Sinc, Rad2Deg, Deg2Rad, round_, logit_, polygamma_)
from .special import (  # noqa: F401
    Erf, Erfc, Erfinv, Lgamma, Digamma, Polygamma, PolygammaInplace, I0, I1, Igamma, Igammac,
    Mvlgamma)
from .comparison import (  # noqa: F401
    _Compare, Eq, Ne, Lt, Le, Gt, Ge, Isclose, Isnan, Isinf, Isfinite, Isposinf, Isneginf,
    LogicalAnd, LogicalOr, LogicalXor, LogicalNot, _Bitwise, BitwiseAnd, BitwiseOr, BitwiseXor,
    BitwiseNot, BitwiseLeftShift, BitwiseRightShift, Signbit, Isreal, EqInplace, NeInplace,
    LtInplace, LeInplace, GtInplace, GeInplace)
from .clamping import (  # noqa: F401
    Clamp, Where, Maximum, Minimum, Fmax, Fmin, NanToNum, ClampTensor, ClampMin, ClampMax,
    ClampMinTensor, ClampMaxTensor, Lerp, LerpTensor, Cast, Clone, Fill, Zero, FillTensor, Copy,
    clamp_,
    clamp_min_, clamp_max_, nan_to_num_, lerp_, zero_, fill_, copy_)

FAMILIES = (arithmetic, unary, comparison, clamping)
__all__ = [name for family in FAMILIES for name in family.__all__]
