"""``dynagrad.overrides``: PyTorch's module path for ``is_tensor_like`` (dynagrad has no
``__torch_function__`` protocol to override, so this is all it holds)."""
from .autograd import is_tensor_like  # noqa: F401

__all__ = ['is_tensor_like']
