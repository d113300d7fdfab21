"""PyTorch's module path ``torch.distributions.logistic_normal``."""
from .continuous import LogisticNormal  # noqa: F401

__all__ = ['LogisticNormal']
