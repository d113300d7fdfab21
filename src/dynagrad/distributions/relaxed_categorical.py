"""PyTorch's module path ``torch.distributions.relaxed_categorical``."""
from .relaxed import ExpRelaxedCategorical, RelaxedOneHotCategorical  # noqa: F401

__all__ = ['ExpRelaxedCategorical', 'RelaxedOneHotCategorical']
