"""Adadelta (Zeiler)."""
import numpy as np

from ..autograd.grad_mode import no_grad
from .adam import _grad
from .optimizer import Optimizer, _advance, _scalar
from .sgd import _check_lr


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f'Invalid rho value: {rho}')
        if not 0.0 <= eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        super().__init__(params, dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, rho = _scalar(group['lr']), group['rho']
            eps, wd = group['eps'], group['weight_decay']
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                _advance(state, p, 'square_avg', 'acc_delta')
                if wd != 0:
                    g = g + wd * p._data
                sq, acc = state['square_avg']._data, state['acc_delta']._data
                sq *= rho
                sq += (1 - rho) * g * g
                delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
                acc *= rho
                acc += (1 - rho) * delta * delta
                p._data -= lr * delta
                p._vc.value += 1
        return loss
