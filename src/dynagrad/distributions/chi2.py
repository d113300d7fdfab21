"""PyTorch's module path ``torch.distributions.chi2``."""
from .gamma import Chi2  # noqa: F401

__all__ = ['Chi2']
