"""PyTorch's module path for ``RAdam`` (``torch.optim.radam``); it lives in ``adam.py`` with
the other Adam variants."""
from .adam import RAdam  # noqa: F401

__all__ = ['RAdam']
