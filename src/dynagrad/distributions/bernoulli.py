"""PyTorch's module path ``torch.distributions.bernoulli``."""
from .discrete import Bernoulli  # noqa: F401

__all__ = ['Bernoulli']
