"""Scalar maths the kernels share, written so LLVM vectorises the loops calling them.

numba turns ``math.exp``, ``math.erf`` and ``math.tanh`` into one libm call per element,
which no loop around them can vectorise (``math.exp`` over float32 measured 5x slower than
NumPy's SIMD ``exp``). In float32 these functions are polynomials and rational functions
instead, with no call and no data-dependent branch; float64 keeps libm (its accuracy is the
point of computing in float64). Each is an ``overload`` inlined at the call, so one kernel
source serves both dtypes.

The rational fits were made for this module (weighted least squares on Chebyshev points
against mpmath, iterated towards minimax): erfc(a) e^(a^2) as P(a)/Q(a), tanh(u)/u as P(z)/Q(z) in z = u^2.
"""
import math

import numpy as np
from numba import types
from llvmlite import ir
from numba.extending import intrinsic, overload

F = np.float32
# erfc(a) = e^(-a^2) P(a) / Q(a) for a >= 0 (relative error 5e-9 on [0, 9.5]; beyond,
# e^(-a^2) is 0 in float32): the normal CDF keeps its relative accuracy in the left tail
_ERFC_P = tuple(F(c) for c in (1.0000000050783613, 1.2331972384032497, 0.7261551935744534,
                               0.2266255198611768, 0.03225354478233702))
_ERFC_Q = tuple(F(c) for c in (1.0, 2.3615769222136427, 2.3909009710179316,
                               1.3151980845856412, 0.4017123306846242, 0.05716712645856148))
# tanh(u) = u P(u^2) / Q(u^2) on |u| <= 9 (relative error 2e-8); beyond, tanh rounds to +-1
_TANH_P = tuple(F(c) for c in (1.0, 0.1338101178407669, 0.0034955726005136967,
                               2.060883525700774e-05, 1.3354336303450509e-08))
_TANH_Q = tuple(F(c) for c in (1.0, 0.4671432673931122, 0.02587692253291607,
                               0.00032856097095645964, 7.776421284688695e-07))
E0, E1, E2, E3, E4 = _ERFC_P
D0, D1, D2, D3, D4, D5 = _ERFC_Q
T0, T1, T2, T3, T4 = _TANH_P
S0, S1, S2, S3, S4 = _TANH_Q
ERFC_EDGE, TANH_EDGE = F(9.5), F(9)
INV_SQRT2, INV_SQRT2PI = 1 / math.sqrt(2), 1 / math.sqrt(2 * math.pi)

# e^y = 2^n e^r, n = round(y / ln 2), r = y - n ln 2 in two parts (Cody and Waite: n ln2_hi
# is exact), e^r by its Taylor series to r^7 (error below 5e-9 for |r| <= ln2 / 2), and 2^n
# built from its bits. Below -87.34 (2^-126) the result is 0: subnormal results (under
# 1.2e-38) are flushed, which a probability or a density never notices.
LOG2E, LN2_HI, LN2_LO = F(1.4426950408889634), F(0.693145751953125), F(1.428606765330187e-06)
# 2^f on |f| <= 1/2 (near-minimax, relative error 2e-9): the normal density's e^(-x^2/2),
# taken as 2^z with z = -x^2 log2(e) / 2, splits z = n + f with one subtraction where e^y
# needs Cody and Waite's two products (rounding x^2 already costs that exponent's
# relative precision; base 2 adds nothing to it). A sixth of GELU's forward time.
B0, B1, B2, B3, B4, B5, B6 = (F(c) for c in (
    1.0000000005541685, 0.6931472057372672, 0.24022646890627966, 0.05550328776968158,
    0.009618488957775085, 0.001339993121825402, 0.00015345811826851638))
NEG_HALF_LOG2E, EXP2_LOW = F(-0.5 * 1.4426950408889634), F(-126)
EXP_LOW = F(-87.33654)
ONE, HALF, ZERO = F(1), F(0.5), F(0)
F32_INV_SQRT2, F32_INV_SQRT2PI = F(INV_SQRT2), F(INV_SQRT2PI)
C2, C3, C4, C5, C6, C7 = (F(1 / math.factorial(k)) for k in range(2, 8))


def exp_nonpos(y):
    """e^y for y <= 0 (or NaN): every kernel's exponent is one (softmax's x - max, GELU's
    -x^2/2), so overflow needs no handling (y > 0 gives a wrong value, never asked for)."""
    return math.exp(y)


def normal_cdf_pdf(x):
    """(Phi(x), phi(x)): the standard normal distribution's CDF and density, GELU's parts."""
    return HALF * math.erfc(-x * INV_SQRT2), math.exp(-HALF * x * x) * INV_SQRT2PI


def tanh(u):
    return math.tanh(u)


def _is_float32(t):
    return isinstance(t, types.Float) and t.bitwidth == 32


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 ``bits`` (a bit cast, vectorisable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


@overload(exp_nonpos, inline='always')
def _exp_nonpos(y):
    if not _is_float32(y):
        return lambda y: math.exp(y)

    def impl(y):
        # NaN compares false: it takes the clamped value and comes back at the end
        c = y if y > EXP_LOW else EXP_LOW
        # c <= 0: truncation rounds c / ln 2 - 1/2 up, i.e. c / ln 2 to nearest (a
        # conversion vectorises where math.floor is a call per element)
        i = np.int32(c * LOG2E - HALF)
        n = F(i)
        r = c - n * LN2_HI - n * LN2_LO
        p = ((((((C7 * r + C6) * r + C5) * r + C4) * r + C3) * r + C2) * r + ONE) * r + ONE
        e = p * _float32_from_bits((i + np.int32(127)) << np.int32(23))
        e = e if y > EXP_LOW else ZERO
        return e if y == y else y
    return impl


@overload(normal_cdf_pdf, inline='always')
def _normal_cdf_pdf(x):
    if not _is_float32(x):
        # float64 constants here (a float32 global would round them)
        return lambda x: (0.5 * math.erfc(-x * INV_SQRT2),
                          math.exp(-0.5 * x * x) * INV_SQRT2PI)

    def impl(x):
        # Phi(x) = erfc(-x / sqrt 2) / 2, from the tail side so nothing cancels: for x < 0
        # it is half_erfc(|x|), for x >= 0 it is 1 - that; e^(-a^2) is also the density's
        a = abs(x) * F32_INV_SQRT2
        a = a if not (a > ERFC_EDGE) else ERFC_EDGE    # (NaN passes through)
        # e^(-x^2 / 2) = 2^z (see B0..B6); below 2^-126 it is 0. A NaN takes the clamped
        # value here and comes back through a.
        z = x * x * NEG_HALF_LOG2E
        c = z if z > EXP2_LOW else EXP2_LOW
        i = np.int32(c - HALF)      # c <= 0: truncation rounds c to nearest
        f = c - F(i)
        e = ((((((B6 * f + B5) * f + B4) * f + B3) * f + B2) * f + B1) * f + B0) * \
            _float32_from_bits((i + np.int32(127)) << np.int32(23))
        e = e if z > EXP2_LOW else ZERO
        p = (((E4 * a + E3) * a + E2) * a + E1) * a + E0
        q = ((((D5 * a + D4) * a + D3) * a + D2) * a + D1) * a + D0
        half_erfc = HALF * e * p / q
        cdf = half_erfc if x < ZERO else ONE - half_erfc
        return cdf, e * F32_INV_SQRT2PI
    return impl


@overload(tanh, inline='always')
def _tanh(u):
    if not _is_float32(u):
        return lambda u: math.tanh(u)

    def impl(u):
        c = u if not (u > TANH_EDGE) else TANH_EDGE
        c = c if not (c < -TANH_EDGE) else -TANH_EDGE
        z = c * c
        p = (((T4 * z + T3) * z + T2) * z + T1) * z + T0
        q = (((S4 * z + S3) * z + S2) * z + S1) * z + S0
        return c * p / q
    return impl


def kernel(fn):
    """numba's compilation as every kernel here uses it: cached on disk; NumPy's error
    model (division gives inf/NaN, no exception check: that check blocks vectorisation);
    sums may be reassociated (vectorised) and products fused, but NaN and inf keep their
    IEEE meaning. Not 'arcp': with it ``1 / sqrt(inf)`` became an estimate refined by a
    Newton step, NaN instead of 0 (an RMS norm row holding inf)."""
    from numba import njit
    return njit(cache=True, nogil=True, error_model='numpy',
                fastmath={'reassoc', 'contract'})(fn)


def c_array(a, like=None):
    """``a`` as a C-contiguous NumPy array (a copy only where needed), broadcast to the
    shape and cast to the dtype of ``like`` when given (an upstream gradient may be an
    expanded view). Unlike ``ascontiguousarray`` it keeps 0-d arrays 0-d."""
    if like is None:
        return np.asarray(a, order='C')
    return np.asarray(np.broadcast_to(a, like.shape), like.dtype, order='C')
