"""LKJCholesky: the LKJ distribution over correlation matrices, on their lower Cholesky
factors (Lewandowski, Kurowicka & Joe, 2009)."""
import math

import dynagrad as dg
from . import constraints
from .dirichlet import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['LKJCholesky']


class LKJCholesky(Distribution):
    """Lower Cholesky factors ``L`` of ``dim`` x ``dim`` correlation matrices ``L L^T``
    with density proportional to det(L L^T) ** (concentration - 1)."""
    arg_constraints = {'concentration': constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f'Expected dim to be an integer greater than or equal to 2. '
                             f'Found dim={dim}.')
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        self._beta = self._onion_beta(self.concentration, dim)
        super().__init__(self.concentration.size(), dg.Size((dim, dim)),
                         validate_args=validate_args)

    @staticmethod
    def _onion_beta(concentration, dim):
        """The Beta laws of the onion method's squared row norms, all rows at once: row k
        (k >= 1, k off-diagonal entries) of L has squared off-diagonal norm
        ~ Beta(k / 2, c + (dim - 1 - k) / 2), c the concentration. Row 0 has no
        off-diagonal part; its entry only keeps the shapes regular and is not used.

        (PyTorch 2.13 takes Beta(k - 1/2, ...) for the first parameter, which agrees for
        k = 1 only: from dim 3 on, its draws' correlations are too spread out, e.g.
        variance 0.248 instead of 1 / (2 (c - 1 + dim / 2) + 1) = 0.2 at dim 4, c = 1,
        and so do not follow its own log_prob. These follow the LKJ law.)"""
        offset = dg.cat([dg.zeros((1,), dtype=concentration.dtype),
                         dg.arange(dim - 1, dtype=concentration.dtype)])
        marginal = concentration + 0.5 * (dim - 2)
        return Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LKJCholesky, batch_shape, _instance, ('concentration',))
        new.dim = self.dim
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=dg.Size()):
        """The onion method, vectorised over rows: each row's off-diagonal part is a
        uniform direction (a normalised Gaussian) scaled by the square root of its Beta
        draw, and the diagonal entry completes the row to unit norm."""
        with dg.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = dg.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype).tril(-1)
            # row 0 is all zeros: it stays zeros instead of becoming 0 / 0
            norm = u.norm(dim=-1, keepdim=True).clamp(min=dg.finfo(y.dtype).tiny)
            w = y.sqrt() * (u / norm)
            tiny = dg.finfo(w.dtype).tiny
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + dg.diag_embed(diag)

    def log_prob(self, value):
        # det(L L^T)^(c - 1) = prod L_ii^(2 (c - 1)), and the map from L to L L^T has
        # Jacobian prod L_ii^(dim - i) (i counted from 1): so the density of L is
        # prod L_ii^(2 (c - 1) + dim - i)
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = dg.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        # the normaliser (Lewandowski et al., p. 1999) by the multivariate log gamma, whose
        # own pi term is (dim - 1)(dim - 2) / 4 log(pi): (dim - 1) / 2 log(pi) completes it
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = (0.5 * dm1 * math.log(math.pi) + dg.mvlgamma(alpha - 0.5, dm1)
                     - dg.lgamma(alpha) * dm1)
        return unnormalized - normalize
