"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical (and its straight-
through variant), Binomial, Multinomial, Poisson, Geometric, NegativeBinomial."""
import math

import dynagrad as dg
from ..tensor import wrap
from . import constraints
from ._samplers import binomial_array
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (broadcast_all, broadcast_tensors, check_one_of, clamp_by_zero,
                    expand_probs_or_logits, given_param_shape, lazy_probs_and_logits,
                    store_probs_or_logits)

__all__ = ['Bernoulli', 'Categorical', 'OneHotCategorical', 'OneHotCategoricalStraightThrough',
           'Binomial', 'Multinomial', 'Poisson', 'Geometric', 'NegativeBinomial']


def _bce_with_logits(logits, target):
    return dg.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction='none')


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs`` (or sigmoid(``logits``)), else 0."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    logits, probs = lazy_probs_and_logits(is_binary=True)
    param_shape = given_param_shape

    def __init__(self, probs=None, logits=None, validate_args=None):
        store_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return dg.where(self.probs == 0.5, dg.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=dg.Size()):
        shape = self._extended_shape(sample_shape)
        with dg.no_grad():
            return dg.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value.to(logits.dtype))

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = dg.arange(2, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (dg.logit(self.probs),)

    def _log_normalizer(self, x):
        return dg.log1p(dg.exp(x))


class Categorical(Distribution):
    """One of ``K`` categories with probabilities ``probs`` (normalised along the last
    dimension) or ``logits`` (unnormalised log-probabilities)."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    logits, probs = lazy_probs_and_logits(is_binary=False)
    param_shape = given_param_shape

    def __init__(self, probs=None, logits=None, validate_args=None):
        check_one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError('`probs` parameter must be at least one-dimensional.')
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError('`logits` parameter must be at least one-dimensional.')
            # normalised, so that log_prob reads them directly
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else dg.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_probs_or_logits(self, Categorical, batch_shape, _instance)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return dg.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return dg.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=dg.Size()):
        if not isinstance(sample_shape, dg.Size):
            sample_shape = dg.Size(sample_shape)
        with dg.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = dg.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = dg.finfo(self.logits.dtype).min
        logits = dg.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = dg.arange(self._num_events, dtype=dg.long)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _ParamsOfCategorical:
    """For families built on a ``_categorical``: its parameters are theirs."""

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class OneHotCategorical(_ParamsOfCategorical, Distribution):
    """A Categorical draw as a one-hot vector of length ``K``."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(OneHotCategorical, batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return dg.nn.functional.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=dg.Size()):
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return dg.nn.functional.one_hot(indices, num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = dg.eye(n, dtype=self._param.dtype)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values

    def __repr__(self):
        return Distribution.__repr__(self)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes gradients straight through to ``probs``."""
    has_rsample = True

    def rsample(self, sample_shape=dg.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Binomial(Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials."""
    arg_constraints = {'total_count': constraints.nonnegative_integer,
                       'probs': constraints.unit_interval, 'logits': constraints.real}
    has_enumerate_support = True

    logits, probs = lazy_probs_and_logits(is_binary=True)
    param_shape = given_param_shape

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = store_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, Binomial, batch_shape, _instance,
                                      ('total_count',))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with dg.no_grad():
            n = self.total_count.expand(shape).detach()
            p = self.probs.expand(shape).detach()
            return wrap(binomial_array(n.numpy(), p.numpy()))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = dg.lgamma(self.total_count + 1)
        log_factorial_k = dg.lgamma(value + 1)
        log_factorial_nmk = dg.lgamma(self.total_count - value + 1)
        # n * log(1 + exp(logits)) computed stably for logits of either sign
        normalize_term = (self.total_count * clamp_by_zero(self.logits)
                          + self.total_count * dg.log1p(dg.exp(-dg.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError('Inhomogeneous total count not supported by `entropy`.')
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(dg.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                'Inhomogeneous total count not supported by `enumerate_support`.')
        values = dg.arange(1 + total_count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class Multinomial(_ParamsOfCategorical, Distribution):
    """Counts of ``total_count`` Categorical(``probs``) draws over ``K`` categories."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.independent(constraints.real, 1)}
    total_count: int

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError('inhomogeneous total_count is not supported')
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)


    def sample(self, sample_shape=dg.Size()):
        sample_shape = dg.Size(sample_shape)
        with dg.no_grad():
            samples = self._categorical.sample(dg.Size((self.total_count,)) + sample_shape)
            counts = dg.nn.functional.one_hot(samples, self._categorical._num_events).sum(0)
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = dg.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - dg.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = dg.exp(self._binomial.log_prob(support))
        weights = dg.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = dg.lgamma(value.sum(-1) + 1)
        log_factorial_xs = dg.lgamma(value + 1).sum(-1)
        # a category of probability 0 observed 0 times adds 0 (not 0 * -inf)
        logits = dg.where((value == 0) & (logits == -math.inf), dg.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class Poisson(ExponentialFamily):
    """Counts with mean ``rate``."""
    arg_constraints = {'rate': constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, ('rate',))

    def sample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with dg.no_grad():
            return dg.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - dg.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (dg.log(self.rate),)

    def _log_normalizer(self, x):
        return dg.exp(x)


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer
    logits, probs = lazy_probs_and_logits(is_binary=True)

    def __init__(self, probs=None, logits=None, validate_args=None):
        store_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # unit_interval allows 0, for which there is no success ever
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.detach()[~valid]
                raise ValueError('Expected parameter probs '
                                 f'({type(value).__name__} of shape {tuple(value.shape)}) '
                                 f'of distribution {self!r} '
                                 f'to be positive but found invalid values:\n{invalid_value}')

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return dg.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = dg.finfo(self.probs.dtype).tiny
        with dg.no_grad():
            u = dg.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(1 - 1) is 0 here (a certain first success)
        probs = dg.where((probs == 1) & (value == 0), dg.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures of Bernoulli(``probs``)."""
    arg_constraints = {'total_count': constraints.greater_than_eq(0),
                       'probs': constraints.half_open_interval(0.0, 1.0),
                       'logits': constraints.real}
    support = constraints.nonnegative_integer

    logits, probs = lazy_probs_and_logits(is_binary=True)
    param_shape = given_param_shape

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,) = store_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, NegativeBinomial, batch_shape, _instance,
                                      ('total_count',))

    @property
    def mean(self):
        return self.total_count * dg.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / dg.sigmoid(-self.logits)

    def sample(self, sample_shape=dg.Size()):
        # a Gamma-Poisson mixture
        from .gamma import Gamma
        with dg.no_grad():
            rate = Gamma(concentration=self.total_count, rate=dg.exp(-self.logits),
                         validate_args=False).sample(sample_shape)
            return dg.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * dg.nn.functional.logsigmoid(-self.logits)
                                 + value * dg.nn.functional.logsigmoid(self.logits))
        log_normalization = (-dg.lgamma(self.total_count + value) + dg.lgamma(1.0 + value)
                             + dg.lgamma(self.total_count))
        # NegativeBinomial(0, p) is the point mass at 0
        log_normalization = dg.where(self.total_count + value == 0.0,
                                     dg.zeros_like(log_normalization), log_normalization)
        return log_unnormalized_prob - log_normalization
