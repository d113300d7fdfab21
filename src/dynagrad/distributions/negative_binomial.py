"""PyTorch's module path ``torch.distributions.negative_binomial``."""
from .discrete import NegativeBinomial  # noqa: F401

__all__ = ['NegativeBinomial']
