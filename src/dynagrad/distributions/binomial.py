"""PyTorch's module path ``torch.distributions.binomial``."""
from .discrete import Binomial  # noqa: F401

__all__ = ['Binomial']
