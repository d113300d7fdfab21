"""PyTorch's module path ``torch.distributions.lowrank_multivariate_normal``."""
from .multivariate_normal import LowRankMultivariateNormal  # noqa: F401

__all__ = ['LowRankMultivariateNormal']
