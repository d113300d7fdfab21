"""PyTorch's module path ``torch.distributions.log_normal``."""
from .normal import LogNormal  # noqa: F401

__all__ = ['LogNormal']
