"""Where PyTorch defines LOBPCG (``torch._lobpcg``): the function and its worker class."""
from .ops.linalg_lowrank import LOBPCG, lobpcg  # noqa: F401

__all__ = ['lobpcg']
