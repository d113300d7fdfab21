"""PyTorch's module path ``torch.distributions.half_cauchy``."""
from .continuous import HalfCauchy  # noqa: F401

__all__ = ['HalfCauchy']
