"""PyTorch's module path for ``LinearCrossEntropyOptions`` (it lives with its loss)."""
from ..functional.loss import LinearCrossEntropyOptions  # noqa: F401

__all__ = ['LinearCrossEntropyOptions']
