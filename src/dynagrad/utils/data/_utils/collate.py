"""``default_collate`` / ``default_convert`` where PyTorch also defines them."""
from ..collate import default_collate, default_convert  # noqa: F401

__all__ = ['default_collate', 'default_convert']
