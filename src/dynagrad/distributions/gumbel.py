"""PyTorch's module path ``torch.distributions.gumbel``."""
from .continuous import Gumbel  # noqa: F401

__all__ = ['Gumbel']
