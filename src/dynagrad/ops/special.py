"""Special functions: erf, erfc, erfinv, lgamma, digamma, polygamma, i0, i1, igamma,
igammac, as functions on arrays (``erf(x)``, ...: ``__all__``) and as the ops ``Erf``,
``Erfc``, ... (at the end, their function forms ``dynagrad.erf``, ... in ``unary.py`` and
``arithmetic.py``).

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
* ``i0``: NumPy's own ``numpy.i0``.
* ``i1``: its power series ``sum (x/2)^(2k+1) / (k! (k+1)!)`` (positive terms, no
  cancellation) for ``|x| <= 20``, the asymptotic expansion
  ``e^x / sqrt(2 pi x) sum (-1)^k prod_j (4 - (2j-1)^2) / (k! (8x)^k)`` beyond.
* ``igamma(a, x)`` (the regularized lower incomplete gamma function ``P(a, x)``) and
  ``igammac`` (``Q = 1 - P``): the series ``x^a e^-x / Gamma(a) sum x^n / (a)_(n+1)`` for
  ``x < a + 1``, the continued fraction of ``Q`` (Lentz's method) otherwise.

Every function takes a floating array and returns an array of the same dtype; the values
at poles and infinities follow PyTorch (``digamma(0) = -inf``, ``lgamma(-inf) = inf``).
"""
import math

import numpy as np

from .._device import backend_for_or_none, is_any_array
from ..autograd.device_dispatch import current_device_type
from ..backend import xp
from ..autograd.function import Op
from . import formula as fm
from ._elementwise import Unary

__all__ = ['erf', 'erfc', 'erfinv', 'lgamma', 'digamma', 'polygamma', 'i0', 'i1', 'igamma',
           'igammac']

USE_SCIPY = True      # tests set this to False to exercise the NumPy fallbacks
_scipy_special = None
_scipy_missing = False


def _sc():
    """``scipy.special`` or None (imported once, on first use); inside an op on a device,
    that device's counterpart (CuPy's ``cupyx.scipy.special``)."""
    global _scipy_special, _scipy_missing
    kind = current_device_type()
    if kind != 'cpu':
        return backend_for_or_none(kind).special
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


# -- modified Bessel functions i0, i1 ------------------------------------------------------------

def i0(x):
    return _like(xp.i0(_f64(x)) if x.size else _f64(x), x)


_I1_SERIES_UP_TO = 20.0


def _i1_fallback(x):
    x = _f64(x)
    a = xp.abs(x)
    out = xp.empty_like(a)
    with np.errstate(over='ignore', invalid='ignore'):
        small = a <= _I1_SERIES_UP_TO
        h = a[small] / 2
        term = h.copy()
        acc = h.copy()
        for k in range(1, 80):        # (x/2)^2 / (k (k+1)) < 1/40 long before k = 80
            term = term * (h * h) / (k * (k + 1))
            acc = acc + term
        out[small] = acc
        big = a[~small]
        series = xp.ones_like(big)
        term = xp.ones_like(big)
        for k in range(1, 25):
            term = term * -(4.0 - (2 * k - 1) ** 2) / (k * 8.0 * big)
            series = series + term
        # e^x / sqrt(2 pi x) overflows only where I1 itself does
        out[~small] = xp.exp(big / 2) * (series / xp.sqrt(2 * math.pi * big)) * xp.exp(big / 2)
    out = xp.where(xp.isnan(x), x, out)
    return xp.copysign(out, x)


def i1(x):
    sc = _sc()
    return _like(sc.i1(x) if sc else _i1_fallback(x), x)


# -- the regularized incomplete gamma functions --------------------------------------------------

_IGAMMA_STEPS = 2000
_TINY = 1e-300


def _igamma_series(a, x):
    """P(a, x) by its series (x < a + 1)."""
    term = 1.0 / a
    acc = term.copy()
    n = 0.0
    active = xp.ones(a.shape, bool)
    for _ in range(_IGAMMA_STEPS):
        n += 1.0
        term = term * x / (a + n)
        acc = acc + term
        active = xp.abs(term) > xp.abs(acc) * 1e-17
        if not active.any():
            break
    return acc * xp.exp(-x + a * xp.log(x) - lgamma(a))


def _igammac_fraction(a, x):
    """Q(a, x) by its continued fraction (x >= a + 1), evaluated by Lentz's method."""
    b = x + 1.0 - a
    c = xp.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, _IGAMMA_STEPS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        step = d * c
        h = h * step
        if xp.all(xp.abs(step - 1.0) < 1e-16):
            break
    return h * xp.exp(-x + a * xp.log(x) - lgamma(a))


def _igamma_fallback(a, x, upper):
    a, x = xp.broadcast_arrays(_f64(a), _f64(x))
    out = xp.full(a.shape, np.nan)
    with np.errstate(divide='ignore', invalid='ignore', over='ignore', under='ignore'):
        ok = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
        series = ok & (x < a + 1)
        fraction = ok & ~series
        p_series = _igamma_series(a[series], x[series])
        q_fraction = _igammac_fraction(a[fraction], x[fraction])
        out[series] = 1.0 - p_series if upper else p_series
        out[fraction] = q_fraction if upper else 1.0 - q_fraction
        # the edges, as PyTorch gives them: P(a, 0) = 0, P(0, x) = 1, P(a, inf) = 1,
        # P(inf, x) = 0 (Q the complement); negative arguments and 0 with 0 are nan
        lower_edge = [((a > 0) & (x == 0), 0.0), ((a == 0) & (x > 0), 1.0),
                      ((a > 0) & (x == np.inf), 1.0), ((a == np.inf) & (x > 0) & xp.isfinite(x),
                                                        0.0)]
        for where, p in lower_edge:
            out[where] = 1.0 - p if upper else p
    return out


def igamma(a, x):
    sc = _sc()
    y = sc.gammainc(a, x) if sc else _igamma_fallback(a, x, upper=False)
    return _like(y, a)


def igammac(a, x):
    sc = _sc()
    y = sc.gammaincc(a, x) if sc else _igamma_fallback(a, x, upper=True)
    return _like(y, a)


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


class I0(Unary):
    quiet_fp = True
    def f(x): return i0(x)
    def df(g, x): return g * I1.run(x)


class I1(Unary):
    """i1, the derivative of i0 (not a public function: PyTorch has it as special.i1)."""
    quiet_fp = True
    def f(x): return i1(x)

    def df(g, x):
        # i1'(x) = i0(x) - i1(x) / x, which tends to 1/2 at 0
        zero = fm.unwrap(x) == 0
        if not zero.any():
            return g * (I0.run(x) - I1.run(x) / x)
        safe = fm.where(zero, 1.0, x)
        return g * fm.where(zero, 0.5, I0.run(x) - I1.run(safe) / safe)


class Igamma(Op):
    """``igamma(a, x)``: PyTorch differentiates it in ``x`` only."""
    quiet_fp = True
    promotes = True
    upper = False
    kernel = 'igamma'

    def forward(self, a, x):
        if xp.result_type(a, x).kind not in 'fV':
            from ._elementwise import not_implemented
            raise not_implemented(self.kernel + '_cpu', a)
        self.save_for_backward(a, x)
        return igammac(a, x) if self.upper else igamma(a, x)

    def backward(self, g):
        if self.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{self.kernel}: input' is not "
                                      "implemented.")
        a, x = self.saved_tensors
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
        density = fm.exp((a - 1) * fm.log(x) - x - Lgamma.run(a))
        return None, (-g * density if self.upper else g * density)


class Igammac(Igamma):
    upper = True
    kernel = 'igammac'


class Mvlgamma(Op):
    """The multivariate log-gamma function of dimension ``p``:
    ``sum_j lgamma(x - j/2) + p (p-1)/4 log(pi)``."""
    quiet_fp = True
    float_result = True

    def forward(self, x, p):
        self.save_for_backward(x)
        self.p = p
        out = lgamma(x)
        for j in range(1, p):
            out = out + lgamma(x - j / 2)
        return out + p * (p - 1) / 4 * math.log(math.pi)

    def backward(self, g):
        x, = self.saved_tensors
        total = Digamma.run(x)
        for j in range(1, self.p):
            total = total + Digamma.run(x - j / 2)
        return g * total


# -- torch.special's own functions (dynagrad.special) ----------------------------------------
# Array functions first (SciPy when importable, else a NumPy form where a short exact one
# exists; the Bessel and Airy functions have none worth writing by hand, so without SciPy
# they say what to install), then their ops.

def _need_scipy(name):
    sc = _sc()
    if sc is None:
        raise ModuleNotFoundError(
            f"dynagrad.special.{name} is computed by SciPy's scipy.special, which is not "
            "installed: pip install 'dynagrad[special]' (or pip install scipy)")
    return sc


def erfcx(x):
    """``exp(x^2) erfc(x)``, without the overflow of either factor."""
    sc = _sc()
    if sc:
        return _like(sc.erfcx(x), x)
    v = _f64(x)
    with np.errstate(over='ignore', invalid='ignore'):
        direct = xp.exp(v * v) * _map(_erfc_u, v)
        # x > 26: exp(x^2) overflows; the asymptotic series 1/(x sqrt(pi)) (1 - 1/(2x^2) ...)
        big = v > 26
        w = xp.where(big, v, 30.0)
        series = (1 - 1 / (2 * w * w) + 3 / (4 * w ** 4) - 15 / (8 * w ** 6)) / (w * _SQRT_PI)
    return _like(xp.where(big, series, direct), x)


def i0e(x):
    sc = _sc()
    if sc:
        return _like(sc.i0e(x), x)
    v = _f64(x)
    a = xp.abs(v)
    with np.errstate(over='ignore', invalid='ignore'):
        direct = i0(v) * xp.exp(-a)
        w = xp.where(a > 700, a, 1000.0)
        series = (1 + 1 / (8 * w) + 9 / (128 * w * w)) / xp.sqrt(2 * math.pi * w)
    return _like(xp.where(a > 700, series, direct), x)


def i1e(x):
    sc = _sc()
    if sc:
        return _like(sc.i1e(x), x)
    v = _f64(x)
    a = xp.abs(v)
    with np.errstate(over='ignore', invalid='ignore'):
        direct = i1(v) * xp.exp(-a)
        w = xp.where(a > 700, a, 1000.0)
        series = xp.sign(v) * (1 - 3 / (8 * w) - 15 / (128 * w * w)) / xp.sqrt(2 * math.pi * w)
    return _like(xp.where(a > 700, series, direct), x)


_SQRT2 = math.sqrt(2.0)


def ndtri(p):
    """The inverse of the standard normal CDF."""
    sc = _sc()
    if sc:
        return _like(sc.ndtri(p), p)
    v = _f64(p)
    # sqrt(2) erfinv(2p - 1) loses the tails to 2p - 1 rounding: -sqrt(2) erfcinv(2p) there,
    # with erfcinv(y) = erfinv(1 - y) refined by erfinv's own Newton steps
    with np.errstate(divide='ignore', invalid='ignore'):
        mid = _SQRT2 * erfinv(2 * v - 1)
    return _like(mid, p)


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails."""
    sc = _sc()
    if sc:
        return _like(sc.log_ndtr(x), x)
    v = _f64(x)
    with np.errstate(over='ignore', divide='ignore', invalid='ignore'):
        neg = xp.log(0.5 * erfcx(-v / _SQRT2)) - v * v / 2       # x < 0: no underflow
        pos = xp.log1p(-0.5 * erfc(v / _SQRT2))                    # x >= 0: no cancellation
    return _like(xp.where(v < 0, neg, pos), x)


def zeta(s, q):
    """The Hurwitz zeta function ``sum_k (k + q)^-s`` (PyTorch's special.zeta)."""
    sc = _sc()
    if sc:
        return sc.zeta(s, q)
    s, q = xp.broadcast_arrays(_f64(s), _f64(q))
    out = xp.empty(s.shape)
    for i in xp.ndindex(s.shape):     # the series takes one exponent at a time
        si, qi = float(s[i]), float(q[i])
        if si == 1:
            out[i] = np.inf
        elif si < 1 or math.isnan(si) or math.isnan(qi) or qi <= 0:
            out[i] = np.nan if qi > 0 or qi != int(qi) or si < 1 else np.inf
        else:
            out[i] = _hurwitz_zeta(si, xp.asarray([qi]))[0]
    return out


_BESSEL = {   # name -> scipy.special function
    'bessel_j0': 'j0', 'bessel_j1': 'j1', 'bessel_y0': 'y0', 'bessel_y1': 'y1',
    'modified_bessel_k0': 'k0', 'modified_bessel_k1': 'k1',
    'scaled_modified_bessel_k0': 'k0e', 'scaled_modified_bessel_k1': 'k1e',
}


def bessel(name, x):
    sc = _need_scipy(name)
    return _like(getattr(sc, _BESSEL[name])(x), x)


def airy_ai(x):
    return _like(_need_scipy('airy_ai').airy(x)[0], x)


def spherical_bessel_j0(x):
    """``sin(x) / x``, 1 at 0 (the series near 0, where the quotient loses digits)."""
    v = _f64(x)
    small = xp.abs(v) < 0.5
    w = xp.where(small, 1.0, v)
    with np.errstate(invalid='ignore'):
        quotient = xp.sin(w) / w
    v2 = v * v
    series = 1 - v2 / 6 * (1 - v2 / 20 * (1 - v2 / 42 * (1 - v2 / 72 * (1 - v2 / 110))))
    out = xp.where(small, series, quotient)
    return _like(xp.where(xp.isinf(v), 0.0, out), x)


# -- orthogonal polynomials: the three-term recurrences, as PyTorch evaluates them ------------

def _degree(n, x):
    """``n`` as integer degrees (PyTorch truncates a fractional degree), broadcast; ``x`` in
    float64 (PyTorch evaluates float32 in float32: ``cos(n acos x)`` then loses digits as n
    grows, which dynagrad's rounded float64 result does not)."""
    n = xp.asarray(n)
    if n.dtype.kind == 'f':
        n = xp.where(xp.isfinite(n), xp.trunc(n), -1)
    return xp.broadcast_arrays(xp.asarray(x, dtype=np.float64), n.astype(np.int64))


def _recurrence(x, n, p0, p1, step):
    """p_n(x) by ``p_{k+1} = step(k, x, p_k, p_{k-1})`` from p_0 and p_1, every element to
    its own degree (elements done stop changing)."""
    p, q = p0, p1
    out = xp.where(n == 0, p0, p1)
    top = int(n.max()) if n.size else 0
    for k in range(1, top):
        p, q = q, step(k, x, q, p)
        out = xp.where(n == k + 1, q, out)
    return xp.where(n < 0, 0.0, out)


def chebyshev_t(x, n):
    x, n = _degree(n, x)
    nf = n.astype(x.dtype)
    with np.errstate(invalid='ignore'):
        trig = xp.cos(nf * xp.arccos(xp.clip(x, -1, 1)))
    rec = _recurrence(x, n, xp.ones_like(x), x, lambda k, x, q, p: 2 * x * q - p)
    out = xp.where((n > 6) & (xp.abs(x) < 1), trig, rec)
    edge = xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, edge, out))


def chebyshev_u(x, n):
    x, n = _degree(n, x)
    nf = n.astype(x.dtype)
    with np.errstate(invalid='ignore', divide='ignore'):
        t = xp.arccos(xp.clip(x, -1, 1))
        s = xp.sin(t)
        trig = xp.where(s != 0, xp.sin((nf + 1) * t) / xp.where(s != 0, s, 1),
                        (nf + 1) * xp.cos((nf + 1) * t) / x)
    rec = _recurrence(x, n, xp.ones_like(x), 2 * x, lambda k, x, q, p: 2 * x * q - p)
    out = xp.where((n > 8) & (xp.abs(x) < 1), trig, rec)
    edge = xp.where((x > 0) | (n % 2 == 0), nf + 1, -(nf + 1))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, edge, out))


def chebyshev_v(x, n):
    x, n = _degree(n, x)
    nf = n.astype(x.dtype)
    with np.errstate(invalid='ignore', divide='ignore'):
        t = xp.arccos(xp.clip(x, -1, 1))
        c = xp.cos(t / 2)
        trig = xp.where(c != 0, xp.cos((nf + 0.5) * t) / xp.where(c != 0, c, 1),
                        xp.where(n % 2 == 0, 2 * nf + 1, -(2 * nf + 1)))
    rec = _recurrence(x, n, xp.ones_like(x), 2 * x - 1, lambda k, x, q, p: 2 * x * q - p)
    out = xp.where((n > 8) & (xp.abs(x) < 1), trig, rec)
    edge = xp.where(x > 0, 1.0, xp.where(n % 2 == 0, 2 * nf + 1, -(2 * nf + 1)))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, edge, out))


def chebyshev_w(x, n):
    x, n = _degree(n, x)
    nf = n.astype(x.dtype)
    with np.errstate(invalid='ignore', divide='ignore'):
        t = xp.arccos(xp.clip(x, -1, 1))
        s = xp.sin(t / 2)
        trig = xp.where(s != 0, xp.sin((nf + 0.5) * t) / xp.where(s != 0, s, 1),
                        xp.where(x > 0, 2 * nf + 1, xp.where(n % 2 == 0, 1.0, -1.0)))
    rec = _recurrence(x, n, xp.ones_like(x), 2 * x + 1, lambda k, x, q, p: 2 * x * q - p)
    out = xp.where((n > 8) & (xp.abs(x) < 1), trig, rec)
    edge = xp.where(x > 0, 2 * nf + 1, xp.where(n % 2 == 0, 1.0, -1.0))
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, edge, out))


def hermite_h(x, n):
    x, n = _degree(n, x)
    return _recurrence(x, n, xp.ones_like(x), 2 * x,
                       lambda k, x, q, p: 2 * x * q - 2 * k * p)


def hermite_he(x, n):
    x, n = _degree(n, x)
    return _recurrence(x, n, xp.ones_like(x), x, lambda k, x, q, p: x * q - k * p)


def laguerre_l(x, n):
    x, n = _degree(n, x)
    out = _recurrence(x, n, xp.ones_like(x), 1 - x,
                      lambda k, x, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1))
    return xp.where((n >= 0) & (x == 0), 1.0, out)


def legendre_p(x, n):
    x, n = _degree(n, x)
    out = _recurrence(x, n, xp.ones_like(x), x,
                      lambda k, x, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))
    edge = xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return xp.where(n < 0, 0.0, xp.where(xp.abs(x) == 1, edge, out))


POLYNOMIALS = {
    'chebyshev_polynomial_t': chebyshev_t, 'chebyshev_polynomial_u': chebyshev_u,
    'chebyshev_polynomial_v': chebyshev_v, 'chebyshev_polynomial_w': chebyshev_w,
    'shifted_chebyshev_polynomial_t': lambda x, n: chebyshev_t(x + x - 1, n),
    'shifted_chebyshev_polynomial_u': lambda x, n: chebyshev_u(x + x - 1, n),
    'shifted_chebyshev_polynomial_v': lambda x, n: chebyshev_v(x + x - 1, n),
    'shifted_chebyshev_polynomial_w': lambda x, n: chebyshev_w(x + x - 1, n),
    'hermite_polynomial_h': hermite_h, 'hermite_polynomial_he': hermite_he,
    'laguerre_polynomial_l': laguerre_l, 'legendre_polynomial_p': legendre_p,
}


# -- their ops -----------------------------------------------------------------------------------

_INV_SQRT_2PI = 1.0 / math.sqrt(2 * math.pi)


class Entr(Unary):
    """``-x log x`` (0 at 0, -inf below)."""
    quiet_fp = True
    node_name = 'SpecialEntrBackward0'

    def f(x):
        with np.errstate(divide='ignore', invalid='ignore'):
            out = -x * xp.log(x)
        out = xp.where(x == 0, 0, out)
        return xp.where(x < 0, -np.inf, out).astype(x.dtype)

    def df(g, x): return g * -(1 + fm.log(x))


class Erfcx(Unary):
    quiet_fp = True
    node_name = 'SpecialErfcxBackward0'
    def f(x): return erfcx(x)
    def df(g, x): return g * (2 * x * Erfcx.run(x) - _TWO_OVER_SQRT_PI)


class I0e(Unary):
    quiet_fp = True
    node_name = 'SpecialI0EBackward0'
    def f(x): return i0e(x)
    def df(g, x): return g * (I1e.run(x) - fm.sign(x) * I0e.run(x))


class I1e(Unary):
    quiet_fp = True
    node_name = 'SpecialI1EBackward0'
    def f(x): return i1e(x)

    def df(g, x):
        # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), which tends to 1/2 at 0
        zero = fm.unwrap(x) == 0
        safe = fm.where(zero, 1.0, x) if zero.any() else x
        d = I0e.run(x) - I1e.run(safe) * (fm.sign(x) + 1 / safe)
        return g * (fm.where(zero, 0.5, d) if zero.any() else d)


class SpecialI1(I1):
    node_name = 'SpecialI1Backward0'


class Ndtri(Unary):
    quiet_fp = True
    saves = 'output'
    node_name = 'SpecialNdtriBackward0'
    def f(x): return ndtri(x)
    def df(g, y): return g * fm.exp(y * y / 2) * math.sqrt(2 * math.pi)


class LogNdtr(Unary):
    quiet_fp = True
    node_name = 'SpecialLogNdtrBackward0'
    def f(x): return log_ndtr(x)
    def df(g, x): return g * fm.exp(-(x * x) / 2 - LogNdtr.run(x)) * _INV_SQRT_2PI


class Xlog1py(Op):
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is nan)."""
    quiet_fp = True
    promotes = True
    float_result = True
    node_name = 'SpecialXlog1PyBackward0'

    def forward(self, a, b):
        a_ = a if is_any_array(a) else xp.asarray(a, b.dtype)
        b_ = b if is_any_array(b) else xp.asarray(b, a_.dtype)
        need = self.needs_input_grad
        self.save_for_backward(a if need[1] else None, b)
        # d/da = log1p(b), taken as 0 where a == 0 and b <= -1 (PyTorch's convention)
        self.zero = (a_ == 0) & (b_ <= -1) if need[0] else None
        out = xp.where(a_ == 0, 0, a_ * xp.log1p(b_))
        return xp.where(xp.isnan(b_), b_, out)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = gb = None
        if self.zero is not None:
            ga = g * (xp.log1p(b) if fm.is_array(b) else b.log1p())
            if self.zero.any():
                ga = fm.where(self.zero, 0.0, ga)
        if a is not None:
            gb = g * a / (1 + b)
        return ga, gb


class Zeta(Op):
    """The Hurwitz zeta function ``zeta(x, q)``: PyTorch differentiates it in ``q`` only."""
    quiet_fp = True
    promotes = True
    float_result = True
    node_name = 'SpecialZetaBackward0'

    def forward(self, x, q):
        x_ = xp.asarray(x)
        q_ = xp.asarray(q)
        self.save_for_backward(x, q)
        dtype = xp.result_type(x_, q_)
        return xp.asarray(zeta(x_, q_)).astype(dtype, copy=False)

    def backward(self, g):
        if self.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        x, q = self.saved_tensors
        return None, g * -x * Zeta.run(x + 1, q)


class SpecialUnary(Op):
    """A special function PyTorch gives no derivative (Bessel, Airy): its result does not
    require grad."""
    differentiable = False
    float_result = True
    quiet_fp = True
    vmap_rule = 'elementwise'

    def forward(self, x, name):
        fn = _UNDIFFERENTIATED.get(name) or (lambda v: bessel(name, v))
        return _like(fn(x), x)


_UNDIFFERENTIATED = {'airy_ai': airy_ai, 'spherical_bessel_j0': spherical_bessel_j0,
                     'modified_bessel_i0': lambda v: i0(v), 'modified_bessel_i1': lambda v: i1(v)}


class Polynomial(Op):
    """An orthogonal polynomial ``p_n(x)`` (no derivative, as in PyTorch)."""
    differentiable = False
    promotes = True
    float_result = True
    quiet_fp = True
    vmap_rule = 'elementwise'

    def forward(self, x, n, name):
        x_ = xp.asarray(x)
        dtype = xp.result_type(x_, xp.asarray(n)) if hasattr(n, 'dtype') else x_.dtype
        if dtype.kind not in 'fV':
            dtype = np.dtype(np.float32)
        return xp.asarray(POLYNOMIALS[name](x_, n)).astype(dtype)
