"""PyTorch's module path ``torch.distributions.multinomial``."""
from .discrete import Multinomial  # noqa: F401

__all__ = ['Multinomial']
