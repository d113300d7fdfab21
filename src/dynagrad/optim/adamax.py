"""PyTorch's module path for ``Adamax`` (``torch.optim.adamax``); it lives in ``adam.py`` with
the other Adam variants."""
from .adam import Adamax  # noqa: F401

__all__ = ['Adamax']
