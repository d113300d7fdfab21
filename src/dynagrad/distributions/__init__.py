"""``dynagrad.distributions``: probability distributions with PyTorch's API.

Parameters and values are dynagrad tensors, and everything (log_prob, entropy, rsample,
kl_divergence) is computed with dynagrad ops, so gradients flow to the parameters. Draws
come from dynagrad's default generator (``dynagrad.manual_seed`` repeats them); the values
differ from PyTorch's draws, the distributions do not.
"""
from . import constraints, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .continuous import (Cauchy, FisherSnedecor, GeneralizedPareto, Gumbel, HalfCauchy,
                         Kumaraswamy, Laplace, LogisticNormal, Pareto, StudentT, Uniform,
                         Weibull)
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli,
                      RelaxedOneHotCategorical)
from .dirichlet import Beta, Dirichlet
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial,
                       NegativeBinomial, OneHotCategorical, OneHotCategoricalStraightThrough,
                       Poisson)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Chi2, Exponential, Gamma, InverseGamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .mixture_same_family import MixtureSameFamily
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import HalfNormal, LogNormal, Normal
from .transformed_distribution import TransformedDistribution
from .von_mises import VonMises
from .wishart import Wishart
from .transforms import *  # noqa: F401,F403
from . import transforms as _transforms

__all__ = ['Bernoulli', 'Beta', 'Binomial', 'Categorical', 'Cauchy', 'Chi2',
           'ContinuousBernoulli', 'Dirichlet', 'Distribution', 'ExpRelaxedCategorical',
           'Exponential', 'ExponentialFamily', 'FisherSnedecor', 'Gamma',
           'GeneralizedPareto', 'Geometric', 'Gumbel', 'HalfCauchy', 'HalfNormal',
           'Independent', 'InverseGamma', 'Kumaraswamy', 'LKJCholesky', 'Laplace',
           'LogNormal', 'LogisticNormal', 'LogitRelaxedBernoulli',
           'LowRankMultivariateNormal', 'MixtureSameFamily', 'Multinomial',
           'MultivariateNormal', 'NegativeBinomial', 'Normal', 'OneHotCategorical',
           'OneHotCategoricalStraightThrough', 'Pareto', 'Poisson', 'RelaxedBernoulli',
           'RelaxedOneHotCategorical', 'StudentT', 'TransformedDistribution', 'Uniform',
           'VonMises', 'Weibull', 'Wishart', 'biject_to', 'kl_divergence', 'register_kl',
           'transform_to']
__all__.extend(_transforms.__all__)
