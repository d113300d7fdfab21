"""PyTorch's module path for ``Module`` (``torch.nn.modules.module``); it lives in
``dynagrad/nn/module.py``."""
from ..module import Module  # noqa: F401

__all__ = ['Module']
