"""PyTorch's module path ``torch.distributions.geometric``."""
from .discrete import Geometric  # noqa: F401

__all__ = ['Geometric']
