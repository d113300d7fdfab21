"""VonMises: the circular normal distribution, with log I0 of the concentration computed
accurately in NumPy (float64) and differentiable to any order."""
import math

import numpy as np

import dynagrad as dg
from ..autograd.function import Op
from ..ops import formula as fm
from ..ops.special import i1
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ['VonMises']

# Above this, I0(x) and I1(x) overflow float64 (about e^x / sqrt(2 pi x)), so their logs and
# ratio come from the asymptotic series; below it NumPy's i0 (Cephes) is exact to rounding.
_ASYMPTOTIC_FROM = 700.0
_ASYMPTOTIC_TERMS = 12   # at x >= 700 the k-th term is below (k / 1400)^k: 12 is plenty


def _asymptotic_series(x, order):
    """sum_k (-1)^k a_k(order) / x^k with I_order(x) = e^x / sqrt(2 pi x) * that sum."""
    mu = 4.0 * order * order
    term = np.ones_like(x)
    total = np.ones_like(x)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total = total + term
    return total


def _i0_minus_one(x):
    """I0(x) - 1 = sum_{k >= 1} (x^2 / 4)^k / (k!)^2 for |x| <= 1, without the
    cancellation (14 terms: the next is below 1e-40)."""
    q = x * x / 4
    term = np.ones_like(x)
    total = np.zeros_like(x)
    for k in range(1, 15):
        term = term * q / (k * k)
        total = total + term
    return total


def log_i0(x):
    """log I0(x), elementwise in float64 (I0 is even), to a few ulps everywhere."""
    a = np.abs(np.asarray(x, np.float64))
    out = np.empty_like(a)
    tiny = a <= 1.0
    out[tiny] = np.log1p(_i0_minus_one(a[tiny]))
    small = (a <= _ASYMPTOTIC_FROM) & ~tiny
    out[small] = np.log(np.i0(a[small]))
    large = a > _ASYMPTOTIC_FROM
    big = a[large]
    out[large] = big - 0.5 * np.log(2 * math.pi * big) + np.log(_asymptotic_series(big, 0))
    return out


def i1_over_i0(x):
    """I1(x) / I0(x), elementwise in float64 (an odd function, in (-1, 1))."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    out = np.empty_like(a)
    small = a <= _ASYMPTOTIC_FROM
    out[small] = i1(a[small]) / np.i0(a[small])
    big = a[~small]
    out[~small] = _asymptotic_series(big, 1) / _asymptotic_series(big, 0)
    return np.copysign(out, x)


class LogI0(Op):
    """log I0(x); its derivative is I1(x) / I0(x)."""
    node_name = 'LogI0Backward'

    def forward(self, x):
        self.save_for_backward(x)
        return log_i0(x).astype(x.dtype)

    def backward(self, g):
        x, = self.saved_tensors
        return g * BesselRatio.run(x)


class BesselRatio(Op):
    """r(x) = I1(x) / I0(x); r' = 1 - r / x - r^2, which tends to 1/2 at 0."""
    node_name = 'BesselRatioBackward'

    def forward(self, x):
        self.save_for_backward(x)
        return i1_over_i0(x).astype(x.dtype)

    def backward(self, g):
        x, = self.saved_tensors
        zero = fm.unwrap(x) == 0
        safe = fm.where(zero, 1.0, x) if zero.any() else x
        r = BesselRatio.run(safe)
        slope = 1 - r / safe - r * r
        return g * (fm.where(zero, 0.5, slope) if zero.any() else slope)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher (1979): wrapped-Cauchy proposals accepted by the two tests of their
    algorithm; every argument in float64, draws from dynagrad's default generator."""
    x = dg.zeros(shape, dtype=dg.float64)
    done = dg.zeros(shape, dtype=dg.bool)
    while not bool(done.all()):
        u1, u2, u3 = dg.rand((3,) + tuple(shape), dtype=dg.float64).unbind()
        z = dg.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        accept = accept & ~done
        x = dg.where(accept, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    # the angle about loc, wrapped into [-pi, pi)
    return dg.remainder(x + math.pi + loc, 2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution on the circle: density exp(concentration * cos(x - loc))
    / (2 pi I0(concentration)). ``loc`` and values may be any real angle (read modulo
    2 pi); ``mean`` and ``variance`` are the circular ones."""
    arg_constraints = {'loc': constraints.real, 'concentration': constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, dg.Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(VonMises, batch_shape, _instance, ('loc', 'concentration'))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * dg.cos(value - self.loc) - math.log(2 * math.pi)
                - LogI0.apply(self.concentration))

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach().to(dg.float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        # (1 + rho^2) / (2 rho) loses every digit for tiny kappa: its expansion there
        return dg.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape=dg.Size()):
        """Rejection sampling (Best & Fisher, 1979), always in float64 so that tiny
        concentrations cannot stall it; the draws are returned in loc's dtype."""
        shape = self._extended_shape(sample_shape)
        with dg.no_grad():
            loc = self.loc.detach().to(dg.float64)
            kappa = self.concentration.detach().to(dg.float64)
            return _rejection_sample(loc, kappa, self._proposal_r, shape).to(self.loc.dtype)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(concentration) / I0(concentration)."""
        return 1 - BesselRatio.apply(self.concentration)
