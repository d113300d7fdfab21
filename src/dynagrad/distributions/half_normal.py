"""PyTorch's module path ``torch.distributions.half_normal``."""
from .normal import HalfNormal  # noqa: F401

__all__ = ['HalfNormal']
