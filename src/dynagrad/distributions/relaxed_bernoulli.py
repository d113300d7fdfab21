"""PyTorch's module path ``torch.distributions.relaxed_bernoulli``."""
from .relaxed import LogitRelaxedBernoulli, RelaxedBernoulli  # noqa: F401

__all__ = ['LogitRelaxedBernoulli', 'RelaxedBernoulli']
