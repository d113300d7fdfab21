"""PyTorch's module path ``torch.distributions.pareto``."""
from .continuous import Pareto  # noqa: F401

__all__ = ['Pareto']
