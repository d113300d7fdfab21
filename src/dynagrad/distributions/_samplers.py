"""Samplers and special functions the distributions need that ``dynagrad`` lacks: gamma and
Dirichlet draws with reparameterised gradients, the regularised incomplete gamma function
(Gamma's cdf), binomial draws. Draws come from dynagrad's default generator's NumPy stream
(``dynagrad.random.array_rng``), so ``dynagrad.manual_seed`` makes them repeatable.

Reparameterised gradients are implicit derivatives of the quantile: a draw ``x`` with cdf
``F(x; a)`` moves with the parameter as ``dx/da = -(dF/da) / pdf(x)``. The cdfs are computed
here in float64 by their power series and continued fractions; the parameter derivative is
exact for the series and a central difference of the continued fraction's logarithm
(relative accuracy about 1e-8), so no cancellation between 1 and the cdf enters.
"""
import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from ..ops.random import array_rng
from ..ops.special import digamma, lgamma

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 100000


def _loop(n_active_fn, body, state):
    for _ in range(_MAX_ITER):
        if not n_active_fn(state):
            break
        body(state)


def _gamma_series(a, x):
    """S and dS/da where P(a, x) = exp(-x + a log x - lgamma(a + 1)) * S (x < a + 1)."""
    term = np.ones_like(x)
    s = np.ones_like(x)
    dterm = np.zeros_like(x)     # d term / da
    ds = np.zeros_like(x)
    harmonic = np.zeros_like(x)  # sum of 1/(a + k)
    n = 0
    active = np.ones(x.shape, bool)
    while active.any() and n < _MAX_ITER:
        n += 1
        ratio = x / (a + n)
        term = np.where(active, term * ratio, 0.0)
        harmonic = harmonic + 1.0 / (a + n)
        dterm = -term * harmonic
        s = s + term
        ds = ds + dterm
        active = active & (term > _EPS * s)
    return s, ds


def _gamma_cf(a, x):
    """h where Q(a, x) = exp(-x + a log x - lgamma(a)) * h (x >= a + 1), modified Lentz."""
    b = x + 1.0 - a
    c = np.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    active = np.ones(x.shape, bool)
    i = 0
    while active.any() and i < _MAX_ITER:
        i += 1
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = np.where(active, d * c, 1.0)
        h = h * delta
        active = active & (np.abs(delta - 1.0) > _EPS)
    return h


def _split(a, x):
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    return a.astype(np.float64), x.astype(np.float64), x < a + 1.0


def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x), elementwise (float64)."""
    a, x, low = _split(a, x)
    out = np.zeros_like(x)
    with np.errstate(all='ignore'):
        pos = x > 0
        lo, hi = low & pos, ~low & pos
        if lo.any():
            s, _ = _gamma_series(a[lo], x[lo])
            out[lo] = np.exp(-x[lo] + a[lo] * np.log(x[lo]) - lgamma(a[lo] + 1.0)) * s
        if hi.any():
            h = _gamma_cf(a[hi], x[hi])
            out[hi] = 1.0 - np.exp(-x[hi] + a[hi] * np.log(x[hi]) - lgamma(a[hi])) * h
        out[np.isinf(x) & (x > 0)] = 1.0
    return out


def standard_gamma_grad(a, x):
    """dx/da for a Gamma(a, 1) draw x at fixed quantile (float64, elementwise)."""
    a, x, low = _split(a, x)
    out = np.zeros_like(x)
    with np.errstate(all='ignore'):
        x = np.maximum(x, np.finfo(np.float64).tiny)
        if low.any():
            al, xl = a[low], x[low]
            s, ds = _gamma_series(al, xl)
            out[low] = -(xl / al) * (s * (np.log(xl) - digamma(al + 1.0)) + ds)
        hi = ~low
        if hi.any():
            ah, xh = a[hi], x[hi]
            step = np.minimum(1e-5 * (1.0 + ah), ah / 2)
            dlogh = (np.log(_gamma_cf(ah + step, xh)) - np.log(_gamma_cf(ah - step, xh))) \
                / (2 * step)
            out[hi] = xh * _gamma_cf(ah, xh) * (np.log(xh) - digamma(ah) + dlogh)
    return out


def _beta_cf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    d = 1.0 / d
    h = d.copy()
    active = np.ones(x.shape, bool)
    m = 0
    while active.any() and m < _MAX_ITER:
        m += 1
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            d = 1.0 / d
            delta = np.where(active, d * c, 1.0)
            h = h * delta
        active = active & (np.abs(delta - 1.0) > _EPS)
    return h


def _dlog_beta_cf(a, b, x, wrt_first):
    step = np.minimum(1e-5 * (1.0 + (a if wrt_first else b)), (a if wrt_first else b) / 2)
    if wrt_first:
        up, down = _beta_cf(a + step, b, x), _beta_cf(a - step, b, x)
    else:
        up, down = _beta_cf(a, b + step, x), _beta_cf(a, b - step, x)
    return (np.log(up) - np.log(down)) / (2 * step)


def beta_grad(x, a, b):
    """dx/da for a Beta(a, b) draw x at fixed quantile with b held fixed (float64)."""
    x, a, b = [np.asarray(v, np.float64) for v in np.broadcast_arrays(x, a, b)]
    tiny = np.finfo(np.float64).tiny
    x = np.clip(x, tiny, 1.0 - np.finfo(np.float64).epsneg)
    out = np.zeros_like(x)
    direct = x < (a + 1.0) / (a + b + 2.0)
    with np.errstate(all='ignore'):
        base = np.log(x) - digamma(a) + digamma(a + b)
        if direct.any():
            xd, ad, bd = x[direct], a[direct], b[direct]
            cf = _beta_cf(ad, bd, xd)
            dlog = base[direct] - 1.0 / ad + _dlog_beta_cf(ad, bd, xd, True)
            out[direct] = -xd * (1.0 - xd) * cf / ad * dlog
        mirror = ~direct
        if mirror.any():
            xm, am, bm = x[mirror], a[mirror], b[mirror]
            cf = _beta_cf(bm, am, 1.0 - xm)
            dlog = base[mirror] + _dlog_beta_cf(bm, am, 1.0 - xm, False)
            out[mirror] = xm * (1.0 - xm) * cf / bm * dlog
    return out


def dirichlet_grad(x, alpha, total):
    """What ``torch._dirichlet_grad`` computes: moving alpha_i moves x_i along its
    Beta(alpha_i, total - alpha_i) marginal (the other alphas, so their sum, fixed) while the
    other coordinates keep their ratios, i.e. dx_j/dalpha_i = D_i (delta_ij - x_j); this is
    D_i = (dx_i/dalpha_i) / (1 - x_i)."""
    x = np.asarray(x, np.float64)
    return beta_grad(x, alpha, np.asarray(total, np.float64) - alpha) / (1.0 - x)


def _log_standard_gamma(rng, alpha):
    """log of Gamma(alpha, 1) draws, accurate for tiny alpha (where the draws underflow):
    Gamma(alpha) = Gamma(alpha + 1) * U ** (1 / alpha)."""
    alpha = np.asarray(alpha, np.float64)
    small = alpha < 1.0
    g = rng.standard_gamma(np.where(small, alpha + 1.0, alpha))
    with np.errstate(divide='ignore'):
        log_g = np.log(g)
        if small.any():
            u = rng.random(alpha.shape)
            log_g = np.where(small, log_g + np.log1p(-u) / np.where(small, alpha, 1.0), log_g)
    return log_g


def _saved_arrays(op):
    """The op's saved values as arrays: the gradients below are computed in NumPy (so they
    are not themselves differentiated under create_graph)."""
    return [t._data if isinstance(t, Tensor) else t for t in op.saved_tensors]


class StandardGamma(Op):
    """Gamma(concentration, 1) draws; the gradient is the implicit reparameterisation."""
    node_name = 'StandardGammaBackward0'

    def forward(self, alpha, generator=None):
        rng = array_rng(generator)
        x = np.exp(_log_standard_gamma(rng, alpha))
        x = np.maximum(x, np.finfo(alpha.dtype).tiny).astype(alpha.dtype)
        self.save_for_backward(alpha, x)
        return x

    def backward(self, g):
        alpha, x = _saved_arrays(self)
        return g * standard_gamma_grad(alpha, x).astype(alpha.dtype)


class DirichletSample(Op):
    """Dirichlet(concentration) draws along the last dimension, reparameterised."""
    node_name = 'DirichletBackward'

    def forward(self, alpha, generator=None):
        rng = array_rng(generator)
        log_g = _log_standard_gamma(rng, alpha)
        log_g = log_g - log_g.max(-1, keepdims=True)
        g = np.exp(log_g)
        x = g / g.sum(-1, keepdims=True)
        info = np.finfo(alpha.dtype)
        x = np.clip(x, info.tiny, 1.0 - info.eps).astype(alpha.dtype)
        self.save_for_backward(alpha, x)
        return x

    def backward(self, g):
        alpha, x = _saved_arrays(self)
        total = alpha.sum(-1, keepdims=True)
        grad = dirichlet_grad(x, alpha, total).astype(alpha.dtype)
        return grad * (g - (x * g).sum(-1, keepdims=True))


class GammaInc(Op):
    """P(a, x); differentiable in x only, like ``torch.special.gammainc``."""
    node_name = 'IgammaBackward0'

    def forward(self, a, x):
        dtype = np.result_type(a, x)
        self.save_for_backward(a, x)
        return gammainc(a, x).astype(dtype)

    def backward(self, g):
        a, x = _saved_arrays(self)
        if self.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        with np.errstate(all='ignore'):
            pdf = np.exp((a - 1.0) * np.log(x) - x - lgamma(a))
        return None, g * pdf.astype(np.result_type(a, x))


def binomial_array(total_count, probs, generator=None):
    """Binomial(total_count, probs) counts as floats of probs' dtype."""
    rng = array_rng(generator)
    n = np.asarray(total_count)
    p = np.clip(np.asarray(probs, np.float64), 0.0, 1.0)
    n, p = np.broadcast_arrays(n, p)
    return rng.binomial(np.rint(n).astype(np.int64), p).astype(np.asarray(probs).dtype)
