"""Where PyTorch defines the functions it removed in 1.9 (``torch._linalg_utils``): each
raises PyTorch's message naming its replacement."""
from .ops.linalg_solvers import eig, lstsq, matrix_rank, solve, symeig  # noqa: F401

__all__ = ['eig', 'lstsq', 'matrix_rank', 'solve', 'symeig']
