"""PyTorch's module path ``torch.distributions.studentT``."""
from .continuous import StudentT  # noqa: F401

__all__ = ['StudentT']
