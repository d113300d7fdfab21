"""Adadelta (Zeiler).

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` runs the update as
dynagrad ops (PyTorch's, so autograd saves and checks what PyTorch's does), and, as there,
takes no learning rate that requires grad.
"""
from ..backend import xp
from .optimizer import (Optimizer, _DEVICES_NO_XLA, _advance, _capturable_message,
                        _number_arg, _scalar, _use_grad_for_differentiable)
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

    _capturable_errors = (_capturable_message(devices=_DEVICES_NO_XLA),) * 2
    _supports_differentiable = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if group['differentiable']:
                _differentiable_adadelta(group, p, g, state)
                continue
            lr, rho, eps = _scalar(group['lr']), group['rho'], group['eps']
            _advance(state, p, 'square_avg', 'acc_delta')
            sq, acc = state['square_avg']._data, state['acc_delta']._data
            sq *= rho
            sq += (1 - rho) * g * g
            delta = xp.sqrt(acc + eps) / xp.sqrt(sq + eps) * g
            acc *= rho
            acc += (1 - rho) * delta * delta
            p._data -= lr * delta
        return loss


def _differentiable_adadelta(group, p, g, state):
    """Adadelta's update of ``p`` in dynagrad ops, recorded by autograd."""
    lr = _number_arg(group['lr'], 'add_', 'alpha')
    rho, eps = group['rho'], group['eps']
    _advance(state, p, 'square_avg', 'acc_delta')
    square_avg, acc_delta = state['square_avg'], state['acc_delta']
    square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
    std = square_avg.add(eps).sqrt_()
    # a copy: sqrt_ saved its result, which the in-place steps below would change
    delta = acc_delta.add(eps).sqrt_().clone()
    delta.div_(std).mul_(g)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    p.add_(delta, alpha=-lr)
