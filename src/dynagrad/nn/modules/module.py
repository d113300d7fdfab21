"""PyTorch's module path for ``Module`` (``torch.nn.modules.module``); it lives in
``dynagrad/nn/module.py``."""
from ..module import Module, _EXTRA_STATE_KEY_SUFFIX  # noqa: F401

__all__ = ['Module']
