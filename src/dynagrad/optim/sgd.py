"""Stochastic gradient descent, with PyTorch's momentum, dampening and Nesterov rules."""
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False):
        if lr < 0:
            raise ValueError(f'Invalid learning rate: {lr}')
        if momentum < 0:
            raise ValueError(f'Invalid momentum value: {momentum}')
        if weight_decay < 0:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, momentum, dampening = group['lr'], group['momentum'], group['dampening']
            wd, nesterov, maximize = group['weight_decay'], group['nesterov'], group['maximize']
            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad._data
                if maximize:
                    d_p = -d_p
                if wd:
                    d_p = d_p + wd * p._data
                if momentum:
                    state = self.state.setdefault(p, {})
                    buf = state.get('momentum_buffer')
                    if buf is None:
                        buf = state['momentum_buffer'] = d_p.copy()
                    else:
                        buf *= momentum
                        buf += (1 - dampening) * d_p
                    d_p = d_p + momentum * buf if nesterov else buf
                p._data -= lr * d_p
                p._vc.value += 1
        return loss
