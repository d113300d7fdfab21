"""PyTorch's module path ``torch.distributions.fishersnedecor``."""
from .continuous import FisherSnedecor  # noqa: F401

__all__ = ['FisherSnedecor']
