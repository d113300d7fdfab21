"""RMSprop (Hinton), with PyTorch's centered and momentum variants."""
import numpy as np

from ..autograd.grad_mode import no_grad
from .adam import _grad
from .optimizer import (Optimizer, _addcdiv_, _lerp_, _scalar, _state_tensor,
                        _step_tensor)
from .sgd import _check_lr


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        if not 0.0 <= momentum:
            raise ValueError(f'Invalid momentum value: {momentum}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        if not 0.0 <= alpha:
            raise ValueError(f'Invalid alpha value: {alpha}')
        super().__init__(params, dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
            weight_decay=weight_decay, capturable=capturable, foreach=foreach,
            maximize=maximize, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps = _scalar(group['lr']), group['alpha'], group['eps']
            wd, momentum, centered = group['weight_decay'], group['momentum'], group['centered']
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                if not state:
                    state['step'] = _step_tensor()
                    state['square_avg'] = _state_tensor(np.zeros_like(p._data))
                    if momentum > 0:
                        state['momentum_buffer'] = _state_tensor(np.zeros_like(p._data))
                    if centered:
                        state['grad_avg'] = _state_tensor(np.zeros_like(p._data))
                state['step']._data += 1
                if wd != 0:
                    g = g + wd * p._data
                sq = state['square_avg']._data
                sq *= alpha
                sq += (1 - alpha) * g * g
                if centered:
                    ga = _lerp_(state['grad_avg']._data, g, 1 - alpha)
                    avg = np.sqrt(sq - ga * ga)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state['momentum_buffer']._data
                    buf *= momentum
                    buf += g / avg
                    p._data -= lr * buf
                else:
                    _addcdiv_(p._data, g, avg, -lr)
                p._vc.value += 1
        return loss
