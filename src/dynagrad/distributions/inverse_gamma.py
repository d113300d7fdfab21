"""PyTorch's module path ``torch.distributions.inverse_gamma``."""
from .gamma import InverseGamma  # noqa: F401

__all__ = ['InverseGamma']
