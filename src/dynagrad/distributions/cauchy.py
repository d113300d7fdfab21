"""PyTorch's module path ``torch.distributions.cauchy``."""
from .continuous import Cauchy  # noqa: F401

__all__ = ['Cauchy']
