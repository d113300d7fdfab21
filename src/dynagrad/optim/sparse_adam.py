"""SparseAdam: Adam for sparse gradients, PyTorch's lazy variant: only the rows (entries) a
sparse gradient holds have their moments and values updated, as ``nn.Embedding(
sparse=True)`` needs. A dense gradient is refused, as PyTorch refuses it."""
import math

import numpy as np

from ..backend import xp

from .._coo import COO, coalesce
from ..tensor import bump_version, wrap
from .optimizer import Optimizer, _scalar
from .sgd import _check_lr


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        if not 0.0 < eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f'Invalid beta parameter at index {i}: {beta}')
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group['params']):
                if p.is_sparse:
                    sparse_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f'Sparse params at indices {sparse_params}: SparseAdam requires '
                             'dense parameter tensors')

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None and p.grad._data.__class__ is not COO:
                    raise RuntimeError('SparseAdam does not support dense gradients, please '
                                       'consider Adam instead')
        for group in self.param_groups:
            beta1, beta2 = (_scalar(b) for b in group['betas'])
            lr, eps = _scalar(group['lr']), group['eps']
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = wrap(xp.zeros_like(p._data))
                    state['exp_avg_sq'] = wrap(xp.zeros_like(p._data))
                state['step'] += 1
                g = p.grad._data
                if group['maximize']:
                    g = COO(g.indices, -g.values, g.shape, g.coalesced)
                _update(p, coalesce(g), state, lr, beta1, beta2, eps)
        return loss


def _update(p, g, state, lr, beta1, beta2, eps):
    """PyTorch's sparse_adam for one parameter: the moments move toward the gradient at its
    entries only; the parameter moves there by the bias-corrected ratio."""
    if g.nnz == 0:
        return
    index = tuple(g.indices)
    values = g.values.astype(p._data.dtype, copy=False)
    m, v = state['exp_avg']._data, state['exp_avg_sq']._data
    old_m = m[index]
    update_m = (values - old_m) * (1 - beta1)
    m[index] += update_m
    old_v = v[index]
    update_v = (values * values - old_v) * (1 - beta2)
    v[index] += update_v
    numer = update_m + old_m
    denom = xp.sqrt(update_v + old_v) + eps
    step = state['step']
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p._data[index] += (-step_size * (numer / denom)).astype(p._data.dtype, copy=False)
    for t in (p, state['exp_avg'], state['exp_avg_sq']):
        bump_version(t, 'optimizer.step')
