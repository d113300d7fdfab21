"""PyTorch's module path ``torch.distributions.kumaraswamy``."""
from .continuous import Kumaraswamy  # noqa: F401

__all__ = ['Kumaraswamy']
