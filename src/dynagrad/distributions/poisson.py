"""PyTorch's module path ``torch.distributions.poisson``."""
from .discrete import Poisson  # noqa: F401

__all__ = ['Poisson']
