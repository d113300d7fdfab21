"""PyTorch's module path ``torch.distributions.weibull``."""
from .continuous import Weibull  # noqa: F401

__all__ = ['Weibull']
