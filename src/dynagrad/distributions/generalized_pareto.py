"""PyTorch's module path ``torch.distributions.generalized_pareto``."""
from .continuous import GeneralizedPareto  # noqa: F401

__all__ = ['GeneralizedPareto']
