"""PyTorch's module path ``torch.distributions.uniform``."""
from .continuous import Uniform  # noqa: F401

__all__ = ['Uniform']
