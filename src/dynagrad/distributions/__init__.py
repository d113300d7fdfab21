"""``dynagrad.distributions``: probability distributions with PyTorch's API."""

__all__ = []
