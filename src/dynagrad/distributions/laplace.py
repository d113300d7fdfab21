"""PyTorch's module path ``torch.distributions.laplace``."""
from .continuous import Laplace  # noqa: F401

__all__ = ['Laplace']
