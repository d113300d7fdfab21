"""PyTorch's module path for the batch-norm layers (``torch.nn.modules.batchnorm``); they
live in ``normalization.py`` with the other normalization layers."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d']
