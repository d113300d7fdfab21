"""ContinuousBernoulli: the density on [0, 1] proportional to p^x (1 - p)^(1 - x)."""
import math
from numbers import Number

import dynagrad as dg
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (broadcast_all, check_one_of, clamp_probs, logits_to_probs,
                    probs_to_logits, lazy_property)

__all__ = ['ContinuousBernoulli']


def _bce_with_logits(logits, target):
    return dg.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction='none')


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution (Loaiza-Ganem & Cunningham, 2019) given by
    ``probs`` in (0, 1) or real ``logits`` (not both). Unlike Bernoulli's, ``probs`` is not
    a probability and ``logits`` not log-odds.

    Its normaliser, mean and variance are 0/0 at probs = 1/2, so inside the band
    ``lims[0] < probs <= lims[1]`` they are the Taylor expansions about 1/2 (and the exact
    formulas are evaluated at ``lims[0]``, keeping their gradients finite)."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        check_one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            self.probs, = broadcast_all(probs)
            # checked before the clamp (the clamped values would always pass), but only
            # when validate_args is given explicitly, as PyTorch does
            if validate_args is not None:
                if not bool(self.arg_constraints['probs'].check(self.probs).all()):
                    raise ValueError('The parameter probs has invalid values')
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            self.logits, = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = dg.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance, ('probs', 'logits'))
        new._lims = self._lims
        new._param = new.logits if 'logits' in self.__dict__ else new.probs
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with those inside the band moved to lims[0] (where the exact formulas
        are still well conditioned)."""
        return dg.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * dg.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(probs), C = 2 atanh(1 - 2 p) / (1 - 2 p)."""
        cut = self._cut_probs()
        below_half = cut <= 0.5
        # each branch sees a harmless value where it is not taken (no nan in the gradient)
        cut_below = dg.where(below_half, cut, dg.zeros_like(cut))
        cut_above = dg.where(cut >= 0.5, cut, dg.ones_like(cut))
        log_norm = (dg.log(dg.abs(dg.log1p(-cut) - dg.log(cut)))
                    - dg.where(below_half, dg.log1p(-2.0 * cut_below),
                               dg.log(2.0 * cut_above - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return dg.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        exact = cut / (2.0 * cut - 1.0) + 1.0 / (dg.log1p(-cut) - dg.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return dg.where(self._outside_unstable_region(), exact, taylor)

    @property
    def stddev(self):
        return dg.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        exact = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                 + 1.0 / (dg.log1p(-cut) - dg.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return dg.where(self._outside_unstable_region(), exact, taylor)

    def sample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = dg.rand(shape, dtype=self.probs.dtype)
        with dg.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = dg.rand(shape, dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = dg.where(self._outside_unstable_region(), cdfs, value)
        return dg.where(value <= 0.0, dg.zeros_like(value),
                        dg.where(value >= 1.0, dg.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        exact = ((dg.log1p(-cut + value * (2.0 * cut - 1.0)) - dg.log1p(-cut))
                 / (dg.log(cut) - dg.log1p(-cut)))
        return dg.where(self._outside_unstable_region(), exact, value)

    def entropy(self):
        log_probs0 = dg.log1p(-self.probs)
        log_probs1 = dg.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logit); the band is the
        same numbers as ``lims`` shifted by -1/2, as PyTorch defines it."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = dg.where(outside, x, (self._lims[0] - 0.5) * dg.ones_like(x))
        log_norm = dg.log(dg.abs(dg.expm1(cut))) - dg.log(dg.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return dg.where(outside, log_norm, taylor)
