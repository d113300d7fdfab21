"""Adafactor (Shazeer & Stern), as PyTorch defines it: the second moment of a matrix's
gradient is kept factored, as running means over its rows and over its columns, and the
step is relative to the parameter's RMS and clipped by the update's RMS.

``foreach=True`` runs the same single-tensor update (PyTorch's default here too).
"""
import math

import numpy as np

from ..backend import xp
from .optimizer import (Optimizer, _advance, _lerp_, _scalar, _state_tensor,
                        _use_grad_for_differentiable)


class Adafactor(Optimizer):
    _weight_decay_in_step = True     # decoupled, scaled by lr
    _state_matches_param_shapes = False     # the factored row/column means are not

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        from ..tensor import Tensor
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
        if not 0.0 <= lr:
            raise ValueError(f'Learning rate should be >= 0 but is: {lr}')
        if not 0.0 >= beta2_decay:
            raise ValueError(f'beta2_decay should be <= 0 but is: {beta2_decay}')
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f'epsilon1 should be >= 0 but is: {eps[0]}')
        if not 0.0 <= eps[1]:
            raise ValueError(f'epsilon2 should be >= 0 but is: {eps[1]}')
        if not 1.0 <= d:
            raise ValueError(f'Clipping threshold d should be >= 1 but is: {d}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'weight_decay should be >= 0 but is: {weight_decay}')
        super().__init__(params, dict(
            lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize))

    def _init_state(self, state, p):
        """PyTorch's layout: a matrix (or a batch of them) keeps ``row_var`` (..., R, 1)
        and ``col_var`` (..., 1, C); a vector or scalar keeps ``variance``, shaped like it."""
        state['step'] = _state_tensor(xp.zeros((), np.float32))
        shape = p._data.shape
        if len(shape) > 1:
            state['row_var'] = _state_tensor(xp.zeros(shape[:-1] + (1,), p._data.dtype))
            state['col_var'] = _state_tensor(
                xp.zeros(shape[:-2] + (1,) + shape[-1:], p._data.dtype))
        else:
            state['variance'] = _state_tensor(xp.zeros_like(p._data))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            lr, d = _scalar(group['lr']), group['d']
            eps1, eps2 = group['eps']
            if eps1 is None:
                eps1 = float(np.finfo(p._data.dtype).eps)
            if not state:
                self._init_state(state, p)
            step = _advance(state, p)
            beta2 = 1 - step ** group['beta2_decay']
            rho = min(lr, 1 / math.sqrt(step))
            data = p._data
            rms = float(xp.sqrt(xp.mean(data * data))) if data.size else 0.0
            alpha = max(eps2, rms) * rho
            if group['weight_decay'] != 0:
                data *= 1 - lr * group['weight_decay']
            g2 = g * g
            if g.ndim > 1:
                row_var, col_var = state['row_var']._data, state['col_var']._data
                _lerp_(row_var, xp.mean(g2, axis=-1, keepdims=True), 1 - beta2)
                _lerp_(col_var, xp.mean(g2, axis=-2, keepdims=True), 1 - beta2)
                var_estimate = row_var @ col_var
                var_estimate /= xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
            else:
                variance = state['variance']._data
                _lerp_(variance, g2, 1 - beta2)
                var_estimate = variance.copy()
            update = 1 / xp.sqrt(xp.maximum(var_estimate, eps1 * eps1))
            update *= g
            norm = float(xp.sqrt(xp.sum(update * update)))
            denom = max(1.0, norm / (math.sqrt(update.size) * d)) if update.size else 1.0
            data -= (alpha / denom) * update
        return loss
