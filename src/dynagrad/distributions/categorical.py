"""PyTorch's module path ``torch.distributions.categorical``."""
from .discrete import Categorical  # noqa: F401

__all__ = ['Categorical']
