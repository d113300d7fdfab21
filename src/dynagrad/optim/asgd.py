"""Averaged stochastic gradient descent (Polyak & Juditsky), as PyTorch runs it: SGD with a
decaying step size ``eta`` and a running average ``ax`` of the parameters that starts after
``t0`` steps.

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` is refused at step (not
yet written in dynagrad ops).
"""
import numpy as np

from .optimizer import (Optimizer, _DEVICES_NO_XLA, _add_scaled_, _advance, _capturable_message,
                        _scalar, _use_grad_for_differentiable)
from .sgd import _check_lr


class ASGD(Optimizer):
    _capturable_errors = (_capturable_message('params, mus, etas, and state_steps'),
                          _capturable_message('params, mus, etas, and state_steps',
                                              _DEVICES_NO_XLA))

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        super().__init__(params, dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize, differentiable=differentiable,
            capturable=capturable))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            lr, lambd = _scalar(group['lr']), group['lambd']
            # eta (the step size) and mu (the averaging weight) live in float32 0-dim
            # tensors, as PyTorch keeps them; the update reads their float32 values
            step = _advance(state, p, 'ax', eta=lr, mu=1.0)
            eta, mu = state['eta']._data, state['mu']._data
            eta_value = float(eta)
            p._data *= 1 - lambd * eta_value
            _add_scaled_(p._data, g, -eta_value)
            ax = state['ax']._data
            if float(mu) != 1:
                ax += (p._data - ax) * float(mu)
            else:
                ax[...] = p._data
            # the new values are float32 numbers in PyTorch, even once a loaded state dict
            # has made the tensors holding them float64
            eta[...] = np.float32(lr / (1 + lambd * lr * step) ** group['alpha'])
            mu[...] = np.float32(1 / max(1, step - group['t0']))
        return loss
