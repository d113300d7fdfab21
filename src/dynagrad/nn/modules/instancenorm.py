"""PyTorch's module path for the instance-norm layers (``torch.nn.modules.instancenorm``);
they live in ``normalization.py``."""
from .normalization import InstanceNorm1d, InstanceNorm2d  # noqa: F401

__all__ = ['InstanceNorm1d', 'InstanceNorm2d']
