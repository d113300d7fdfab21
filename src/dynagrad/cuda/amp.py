"""``dynagrad.cuda.amp``: PyTorch's deprecated CUDA spellings of autocast and GradScaler.

Each warns as PyTorch does (FutureWarning: use ``dynagrad.amp`` with ``'cuda'``), then
behaves as ``dynagrad.amp``'s on a machine without CUDA: the autocast region and the
scaler warn again and disable themselves, so a program written for a GPU runs unchanged,
in float32, without loss scaling.
"""
import warnings

from .. import _dtype
from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler

__all__ = ['autocast', 'GradScaler', 'custom_fwd', 'custom_bwd']


def _deprecated(what, replacement):
    warnings.warn(f'`dynagrad.cuda.amp.{what}(args...)` is deprecated. Please use '
                  f'`{replacement}` instead.', FutureWarning, stacklevel=3)


class autocast(_autocast_mode.autocast):
    """``dynagrad.amp.autocast('cuda', ...)``: disabled here (no CUDA)."""

    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        _deprecated('autocast', "dynagrad.amp.autocast('cuda', args...)")
        super().__init__('cuda', enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``dynagrad.amp.GradScaler('cuda', ...)``: disabled here (no CUDA)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated('GradScaler', "dynagrad.amp.GradScaler('cuda', args...)")
        super().__init__('cuda', init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _deprecated('custom_fwd', "dynagrad.amp.custom_fwd(args..., device_type='cuda')")
    return _autocast_mode.custom_fwd(fwd, device_type='cuda', cast_inputs=cast_inputs)


def custom_bwd(bwd):
    _deprecated('custom_bwd', "dynagrad.amp.custom_bwd(args..., device_type='cuda')")
    return _autocast_mode.custom_bwd(bwd, device_type='cuda')

