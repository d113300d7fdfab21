"""PyTorch's module path for ``AdamW`` (``torch.optim.adamw``); it lives in ``adam.py`` with
the other Adam variants."""
from .adam import AdamW  # noqa: F401

__all__ = ['AdamW']
