"""PyTorch's module path ``torch.distributions.exponential``."""
from .gamma import Exponential  # noqa: F401

__all__ = ['Exponential']
