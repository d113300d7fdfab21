"""``dynagrad.cpu.amp``: PyTorch's deprecated CPU spellings of autocast and GradScaler.

Each warns as PyTorch does (FutureWarning: use ``dynagrad.amp`` with ``'cpu'``) and then
is ``dynagrad.amp``'s, on the CPU.
"""
import warnings

from .. import _dtype
from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler

__all__ = ['autocast', 'GradScaler']


class autocast(_autocast_mode.autocast):
    """``dynagrad.amp.autocast('cpu', ...)``."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        warnings.warn("`dynagrad.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`dynagrad.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__('cpu', enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``dynagrad.amp.GradScaler('cpu', ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`dynagrad.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`dynagrad.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__('cpu', init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
