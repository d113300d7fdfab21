"""PyTorch's module path ``torch.distributions.beta``."""
from .dirichlet import Beta  # noqa: F401

__all__ = ['Beta']
