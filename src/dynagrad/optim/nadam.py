"""PyTorch's module path for ``NAdam`` (``torch.optim.nadam``); it lives in ``adam.py`` with
the other Adam variants."""
from .adam import NAdam  # noqa: F401

__all__ = ['NAdam']
