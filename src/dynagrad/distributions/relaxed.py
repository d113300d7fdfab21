"""Continuous relaxations of discrete draws (Concrete / Gumbel-softmax): LogitRelaxedBernoulli,
RelaxedBernoulli, ExpRelaxedCategorical, RelaxedOneHotCategorical."""
import dynagrad as dg
from . import constraints
from .discrete import Categorical, _ParamsOfCategorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import (broadcast_all, clamp_probs, expand_probs_or_logits, given_param_shape,
                    lazy_probs_and_logits, store_probs_or_logits)

__all__ = ['LogitRelaxedBernoulli', 'RelaxedBernoulli', 'ExpRelaxedCategorical',
           'RelaxedOneHotCategorical']


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli draw: (logistic noise + logits) / temperature."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.real
    logits, probs = lazy_probs_and_logits(is_binary=True)
    param_shape = given_param_shape

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        store_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_probs_or_logits(self, LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(dg.rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _RelaxedOfBase(TransformedDistribution):
    """A relaxed family pushed from its log-space base: the parameters are the base's."""
    has_rsample = True

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedOfBase):
    """A draw in (0, 1) that approaches Bernoulli(probs) as ``temperature`` goes to 0."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)


class ExpRelaxedCategorical(_ParamsOfCategorical, Distribution):
    """The log of a RelaxedOneHotCategorical draw (Gumbel-softmax in log space)."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ExpRelaxedCategorical, batch_shape, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return new

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        uniforms = clamp_probs(dg.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (dg.full_like(self.temperature, float(K)).lgamma()
                     - self.temperature.log().mul(-(K - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedOfBase):
    """A draw on the simplex that approaches OneHotCategorical as ``temperature`` goes
    to 0."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.independent(constraints.real, 1)}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
