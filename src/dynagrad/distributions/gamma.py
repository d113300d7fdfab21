"""Gamma, its special cases Chi2 and Exponential, and InverseGamma."""
import math

import dynagrad as dg
from . import constraints
from ._samplers import GammaInc, StandardGamma
from .exp_family import ExponentialFamily
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform
from .utils import broadcast_all

__all__ = ['Gamma', 'Chi2', 'Exponential', 'InverseGamma']


def standard_gamma(concentration):
    """Gamma(concentration, 1) draws with reparameterised gradients."""
    return StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, ('concentration', 'rate'))

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = dg.finfo(value.dtype).tiny
        with dg.no_grad():   # keep draws off 0 without touching their gradient
            value.data.clamp_(min=tiny)
        return value

    def log_prob(self, value):
        value = dg.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (dg.xlogy(self.concentration, self.rate)
                + dg.xlogy(self.concentration - 1, value)
                - self.rate * value - dg.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - dg.log(self.rate) + dg.lgamma(self.concentration)
                + (1.0 - self.concentration) * dg.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return dg.lgamma(x + 1) + (x + 1) * dg.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        concentration, x = broadcast_all(self.concentration, self.rate * value)
        return GammaInc.apply(concentration, x)


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {'df': constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Exponential(ExponentialFamily):
    """Exponential distribution with ``rate`` (mean 1 / rate)."""
    arg_constraints = {'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return dg.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance, ('rate',))

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with dg.no_grad():
            e = dg.empty(shape, dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - dg.exp(-self.rate * value)

    def icdf(self, value):
        return -dg.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - dg.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -dg.log(-x)


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(``concentration``, ``rate``)."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        finite = self.concentration > 1
        c = dg.where(finite, self.concentration, dg.full_like(self.concentration, 2.0))
        return dg.where(finite, self.rate / (c - 1), dg.full_like(self.rate, math.inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        finite = self.concentration > 2
        c = dg.where(finite, self.concentration, dg.full_like(self.concentration, 3.0))
        var = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        return dg.where(finite, var, dg.full_like(var, math.inf))

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
