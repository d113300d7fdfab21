"""Dirichlet and Beta (a two-category Dirichlet)."""
from numbers import Number, Real

import dynagrad as dg
from . import constraints
from ._samplers import DirichletSample
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Dirichlet', 'Beta']


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex with ``concentration`` (last dimension: the
    categories)."""
    arg_constraints = {'concentration': constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError('`concentration` parameter must be at least one-dimensional.')
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, ('concentration',))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        concentration = self.concentration.expand(shape)
        return DirichletSample.apply(concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (dg.xlogy(self.concentration - 1.0, value).sum(-1)
                + dg.lgamma(self.concentration.sum(-1))
                - dg.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # with every concentration below 1 the density peaks at a vertex
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = dg.nn.functional.one_hot(concentrationm1.argmax(-1),
                                          concentrationm1.shape[-1]).to(mode.dtype)
        return dg.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (dg.lgamma(self.concentration).sum(-1) - dg.lgamma(a0)
                - (k - a0) * dg.digamma(a0)
                - ((self.concentration - 1.0) * dg.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - dg.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(``concentration1``, ``concentration0``) on [0, 1]."""
    arg_constraints = {'concentration1': constraints.positive,
                       'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            concentration1_concentration0 = dg.tensor([float(concentration1),
                                                       float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            concentration1_concentration0 = dg.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_concentration0,
                                    validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Beta, batch_shape, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = dg.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        result = self._dirichlet.concentration[..., 0]
        if isinstance(result, Number):
            return dg.tensor([result])
        return result

    @property
    def concentration0(self):
        result = self._dirichlet.concentration[..., 1]
        if isinstance(result, Number):
            return dg.tensor([result])
        return result

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return dg.lgamma(x) + dg.lgamma(y) - dg.lgamma(x + y)
