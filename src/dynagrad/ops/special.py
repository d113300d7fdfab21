"""Special functions: erf, erfc, erfinv, lgamma, digamma, polygamma, as functions on
arrays (``erf(x)``, ...: ``__all__``) and as the ops ``Erf``, ``Erfc``, ... (at the end, their
function forms ``dynagrad.erf``, ... in ``unary.py``).

NumPy has none of them. ``scipy.special`` computes them when it is importable (it is an
optional extra, imported on first use); otherwise the NumPy fallbacks below do, from
standard published formulas:

* ``erf``, ``erfc``, ``lgamma``: the C library's functions (``math.erf``, ``math.erfc``,
  ``math.lgamma``) mapped over the array, correctly rounded in float64.
* ``erfinv``: M. Giles' polynomial approximation ("Approximating the erfinv function",
  GPU Computing Gems, 2011) refined by Newton steps on ``erf`` (on ``log erfc`` in the tails,
  where ``1 - x`` is exact).
* ``digamma``: the reflection formula ``psi(x) = psi(1 - x) - pi / tan(pi x)`` for
  negative ``x``, the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to ``x >= 10``, then the
  asymptotic series ``ln x - 1/(2x) - sum B_2k / (2k x^2k)``.
* ``polygamma(n, x)``, ``n >= 1``: ``(-1)^(n+1) n! zeta(n + 1, x)`` with the Hurwitz zeta
  shifted by its recurrence and summed by Euler-Maclaurin; the trigamma reflection
  ``psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)`` for negative ``x``.

Every function takes a floating array and returns an array of the same dtype; the values
at poles and infinities follow PyTorch (``digamma(0) = -inf``, ``lgamma(-inf) = inf``).
"""
import math

import numpy as np

from ..backend import xp
from ..autograd.function import Op
from . import formula as fm
from ._elementwise import Unary

__all__ = ['erf', 'erfc', 'erfinv', 'lgamma', 'digamma', 'polygamma']

USE_SCIPY = True      # tests set this to False to exercise the NumPy fallbacks
_scipy_special = None
_scipy_missing = False


def _sc():
    """``scipy.special`` or None (imported once, on first use)."""
    global _scipy_special, _scipy_missing
    if not USE_SCIPY or _scipy_missing:
        return None
    if _scipy_special is None:
        try:
            import scipy.special as sc
        except ImportError:
            _scipy_missing = True
            return None
        _scipy_special = sc
    return _scipy_special


def _f64(x):
    return xp.asarray(x, dtype=np.float64)


def _like(y, x):
    return xp.asarray(y).astype(x.dtype, copy=False)


# -- erf, erfc, lgamma: the C library, element by element (fallback only) --------------------

_erf_u = xp.frompyfunc(math.erf, 1, 1)
_erfc_u = xp.frompyfunc(math.erfc, 1, 1)


def _lgamma1(v):
    try:
        return math.lgamma(v)
    except ValueError:   # a pole: 0 or a negative integer
        return math.inf


_lgamma_u = xp.frompyfunc(_lgamma1, 1, 1)


def _map(ufunc, x):
    return _f64(ufunc(_f64(x))) if x.size else _f64(x)


def erf(x):
    sc = _sc()
    return _like(sc.erf(x) if sc else _map(_erf_u, x), x)


def erfc(x):
    sc = _sc()
    return _like(sc.erfc(x) if sc else _map(_erfc_u, x), x)


def lgamma(x):
    sc = _sc()
    if sc:
        y = sc.gammaln(x)
        y = xp.where(x == -np.inf, np.inf, y)   # PyTorch: lgamma(-inf) = inf
    else:
        y = _map(_lgamma_u, x)
    return _like(y, x)


# -- erfinv ------------------------------------------------------------------------------------

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs, w):
    p = xp.full_like(w, coefs[0])
    for c in coefs[1:]:
        p = p * w + c
    return p


def _erfinv_fallback(x):
    x = _f64(x)
    a = xp.abs(x)
    with np.errstate(divide='ignore', invalid='ignore'):
        w = -xp.log((1.0 - a) * (1.0 + a))
        central = _horner(_GILES_CENTRAL, w - 2.5)
        tail = _horner(_GILES_TAIL, xp.sqrt(xp.maximum(w, 5.0)) - 3.0)
        z = xp.where(w < 5.0, central, tail) * a
        inner = a <= 0.5
        zi = z[inner]
        ai = a[inner]
        zo = z[~inner]
        co = 1.0 - a[~inner]               # exact for a in [0.5, 1]
        k = 2.0 / math.sqrt(math.pi)
        for _ in range(3):                 # Newton on erf: quadratic convergence
            if zi.size:
                zi = zi - (_map(_erf_u, zi) - ai) / (k * xp.exp(-zi * zi))
        for _ in range(6):                 # Newton on log(erfc) in the tails: near-linear
            if zo.size:
                e = _map(_erfc_u, zo)
                step = (xp.log(e) - xp.log(co)) * e / (k * xp.exp(-zo * zo))
                zo = xp.where(xp.isfinite(step), zo + step, zo)
        z[inner] = zi
        z[~inner] = zo
    z = xp.where(a == 1.0, np.inf, z)
    z = xp.where((a > 1.0) | xp.isnan(a), np.nan, z)
    return xp.copysign(z, x)


def erfinv(x):
    sc = _sc()
    return _like(sc.erfinv(x) if sc else _erfinv_fallback(x), x)


# -- digamma and polygamma ---------------------------------------------------------------------

_SHIFT_TO = 10.0


def _reduced(x):
    """``x - floor(x)``: exact, and the period-1 argument of tan(pi x) and sin^2(pi x)."""
    return x - xp.floor(x)


def _digamma_pos(x):
    """psi(x) for x >= 1 (finite): recurrence up to 10, then the asymptotic series."""
    acc = xp.zeros_like(x)
    x = x.copy()
    while True:
        low = x < _SHIFT_TO
        if not low.any():
            break
        acc -= xp.where(low, 1.0 / x, 0.0)
        x = xp.where(low, x + 1.0, x)
    r = 1.0 / (x * x)
    series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (
        1 / 132 - r * (691 / 32760 - r / 12))))))
    return acc + xp.log(x) - 0.5 / x - series


def _digamma_fallback(x):
    x = _f64(x)
    out = xp.full_like(x, np.nan)
    with np.errstate(divide='ignore', invalid='ignore'):
        pos = x >= 1.0
        mid = (x > 0) & (x < 1)
        neg = (x < 0) & xp.isfinite(x) & (x != xp.floor(x))
        fin = pos & xp.isfinite(x)
        out[fin] = _digamma_pos(x[fin])
        out[x == np.inf] = np.inf
        out[mid] = _digamma_pos(x[mid] + 1.0) - 1.0 / x[mid]
        xn = x[neg]
        out[neg] = _digamma_pos(1.0 - xn) - math.pi / xp.tan(math.pi * _reduced(xn))
        zero = x == 0
        out[zero] = xp.where(xp.signbit(x[zero]), np.inf, -np.inf)
    return out


def _hurwitz_zeta(s, x):
    """zeta(s, x) = sum_k (x + k)^-s for integer s >= 2 and finite non-pole x."""
    acc = xp.zeros_like(x)
    x = x.copy()
    limit = _SHIFT_TO + s
    while True:
        low = x < limit
        if not low.any():
            break
        acc += xp.where(low, x ** -s, 0.0)
        x = xp.where(low, x + 1.0, x)
    # Euler-Maclaurin: x^(1-s)/(s-1) + x^-s/2 + sum_k B_2k/(2k)! (s)_(2k-1) x^(-s-2k+1)
    tail = x ** (1 - s) / (s - 1) + 0.5 * x ** -s
    bernoulli = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
    rising = float(s)          # (s)_(2k-1), the rising factorial
    for k, b in enumerate(bernoulli, 1):
        if k > 1:
            rising *= (s + 2 * k - 3) * (s + 2 * k - 2)
        tail = tail + b / math.factorial(2 * k) * rising * x ** (-s - 2 * k + 1)
    return acc + tail


def _polygamma_fallback(n, x):
    if n == 0:
        return _digamma_fallback(x)
    x = _f64(x)
    out = xp.full_like(x, np.nan)
    sign_fact = (-1.0) ** (n + 1) * math.factorial(n)
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        pole = (x <= 0) & (x == xp.floor(x))
        out[pole] = np.inf if n % 2 else -np.inf
        out[x == np.inf] = 0.0 if n % 2 else -0.0
        ok = xp.isfinite(x) & ~pole
        if n == 1:
            pos = ok & (x > 0)
            neg = ok & (x < 0)
            out[pos] = _hurwitz_zeta(2, x[pos])
            xn = x[neg]
            out[neg] = (math.pi / xp.sin(math.pi * _reduced(xn))) ** 2 \
                - _hurwitz_zeta(2, 1.0 - xn)
        else:
            out[ok] = sign_fact * _hurwitz_zeta(n + 1, x[ok])
    return out


def digamma(x):
    sc = _sc()
    return _like(sc.psi(x) if sc else _digamma_fallback(x), x)


def polygamma(n, x):
    sc = _sc()
    if n == 0:
        return digamma(x)
    if sc:
        y = sc.polygamma(n, _f64(x))
    else:
        y = _polygamma_fallback(n, x)
    return _like(y, x)


# -- the ops -------------------------------------------------------------------------------------
# Declared like every unary op (see _elementwise.Unary): the value f, the gradient df.

_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


class Erf(Unary):
    def f(x): return erf(x)
    def df(g, x): return g * fm.exp(-(x * x)) * _TWO_OVER_SQRT_PI


class Erfc(Unary):
    def f(x): return erfc(x)
    def df(g, x): return g * fm.exp(-(x * x)) * -_TWO_OVER_SQRT_PI


class Erfinv(Unary):
    quiet_fp = True
    saves = 'output'
    def f(x): return erfinv(x)
    def df(g, y): return g * fm.exp(y * y) * (_SQRT_PI / 2)


class Lgamma(Unary):
    quiet_fp = True
    def f(x): return lgamma(x)
    def df(g, x): return g * Digamma.run(x)


class Digamma(Unary):
    quiet_fp = True
    def f(x): return digamma(x)
    def df(g, x): return g * Polygamma.run(x, n=1)


class Polygamma(Op):
    """The n-th derivative of digamma; ``x`` is input 0, ``n`` a parameter."""
    quiet_fp = True
    float_result = True

    def forward(self, x, n):
        self.save_for_backward(x)
        self.n = n
        return polygamma(n, x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * Polygamma.run(x, n=self.n + 1)


class PolygammaInplace(Polygamma):
    node_name = 'PolygammaBackward1'
