"""``ExponentialFamily``: distributions p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)),
whose entropy and mutual KL divergences follow from the log normaliser F by autograd."""
import dynagrad as dg
from .distribution import Distribution

__all__ = ['ExponentialFamily']


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``;
    ``entropy`` then comes from the Bregman divergence of the log normaliser."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with dg.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = dg.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
