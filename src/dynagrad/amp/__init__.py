"""``dynagrad.amp``: automatic mixed precision, as ``torch.amp``.

``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`` runs the ops of
PyTorch's CPU lists in bfloat16 (or float16) and float32 (``autocast_mode``);
``GradScaler`` scales the loss and unscales gradients, skipping steps that overflow
(``grad_scaler``). ``custom_fwd``/``custom_bwd`` decorate custom autograd Functions.
"""
from . import autocast_mode, grad_scaler  # noqa: F401
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ['autocast', 'custom_bwd', 'custom_fwd', 'is_autocast_available', 'GradScaler']
