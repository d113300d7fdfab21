"""Averaged stochastic gradient descent (Polyak & Juditsky), as PyTorch runs it: SGD with a
decaying step size ``eta`` and a running average ``ax`` of the parameters that starts after
``t0`` steps.

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` runs the update as
dynagrad ops (PyTorch's: the step size is read from the ``eta`` state as a number, so a
tensor learning rate gets no gradient there either).
"""
import numpy as np

from ..backend import xp
from ..tensor import Tensor
from .optimizer import (Optimizer, _DEVICES_NO_XLA, _add_scaled_, _advance, _capturable_message,
                        _scalar, _state_tensor, _use_grad_for_differentiable)
from .sgd import _check_lr


class ASGD(Optimizer):
    _capturable_errors = (_capturable_message('params, mus, etas, and state_steps'),
                          _capturable_message('params, mus, etas, and state_steps',
                                              _DEVICES_NO_XLA))

    _supports_differentiable = True

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
            if group['differentiable']:
                _differentiable_asgd(group, p, g, state)
                continue
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


def _differentiable_asgd(group, p, g, state):
    """ASGD's update of ``p`` in dynagrad ops, recorded by autograd."""
    lr, lambd = group['lr'], group['lambd']
    step = _advance(state, p, 'ax', eta=_scalar(lr), mu=1.0)
    eta, mu, ax = state['eta'], state['mu'], state['ax']
    eta_value = float(eta)
    p.mul_(1 - lambd * eta_value)
    p.add_(g, alpha=-eta_value)
    if float(mu) != 1:
        ax.add_(p.sub(ax).mul_(mu))
    else:
        ax.copy_(p)
    # a tensor lr gives a tensor eta (recorded, though the next step reads it as a number);
    # a number becomes a float32 tensor, as PyTorch's as_tensor makes it
    new_eta = lr / (1 + lambd * lr * step) ** group['alpha']
    eta.copy_(new_eta if isinstance(new_eta, Tensor) else _float32(new_eta))
    mu.copy_(_float32(1 / max(1, step - group['t0'])))


def _float32(value):
    return _state_tensor(xp.asarray(value, np.float32))
