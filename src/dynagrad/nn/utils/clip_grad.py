"""Gradient clipping, in place on the parameters' ``.grad``."""
import math

import numpy as np

from ...backend import xp
from ...tensor import Tensor, bump_version, wrap

__all__ = ['clip_grad_norm_', 'clip_grad_value_', 'get_total_norm', 'clip_grads_with_norm_']


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all the tensors' values taken together, as one vector."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return wrap(xp.array(0.0, np.float32))
    total = None
    if norm_type == math.inf:
        total = max(float(xp.abs(t._data).max()) if t._data.size else 0.0 for t in tensors)
    elif norm_type == 2.0 and all(t._data.dtype.char in 'fd' for t in tensors):
        # one BLAS dot per tensor, no temporaries: a pass over each gradient instead of four
        # (PyTorch's foreach norm also sums in float32); float64 below if a square overflows
        with xp.errstate(over='ignore', invalid='ignore'):
            total = math.sqrt(sum(float(xp.dot(d, d)) for d in (
                t._data.reshape(-1) for t in tensors)))
        if not math.isfinite(total):
            total = None
    if total is None:
        total = sum(float((xp.abs(t._data.astype(np.float64)) ** norm_type).sum())
                    for t in tensors) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f'The total norm of order {norm_type} for gradients from '
                           '`parameters` is non-finite, so it cannot be clipped. To disable '
                           'this error and scale the gradients by the non-finite norm anyway, '
                           'set `error_if_nonfinite=False`')
    return wrap(xp.array(total, tensors[0]._data.dtype))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    total = float(total_norm)
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    for g in grads:
        if coef != 1.0:     # x * 1.0 == x exactly: the pass is skipped, the write still counts
            g._data *= coef
        bump_version(g, 'clip_grads_with_norm_')


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so their total norm is at most ``max_norm``.

    Returns the total norm before clipping, as PyTorch does.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        xp.clip(g._data, -clip_value, clip_value, out=g._data)
        bump_version(g, 'clip_grad_value_')


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_` (warns)."""
    import warnings
    warnings.warn('`dynagrad.nn.utils.clip_grad_norm` is now deprecated in favor of '
                  '`dynagrad.nn.utils.clip_grad_norm_`.', FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


__all__ += ['clip_grad_norm']
