"""PyTorch's module path ``torch.distributions.one_hot_categorical``."""
from .discrete import OneHotCategorical, OneHotCategoricalStraightThrough  # noqa: F401

__all__ = ['OneHotCategorical', 'OneHotCategoricalStraightThrough']
