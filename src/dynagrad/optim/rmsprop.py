"""RMSprop (Hinton), with PyTorch's centered and momentum variants.

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` runs the update as
dynagrad ops (PyTorch's, so autograd saves and checks what PyTorch's does), and, as there,
takes no learning rate that requires grad.
"""
from ..backend import xp
from .optimizer import (Optimizer, _addcdiv_, _advance, _capturable_message, _lerp_,
                        _number_arg, _scalar, _use_grad_for_differentiable)
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

    _capturable_errors = (_capturable_message(), _capturable_message())
    _supports_differentiable = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if group['differentiable']:
                _differentiable_rmsprop(group, p, g, state)
                continue
            lr, alpha, eps = _scalar(group['lr']), group['alpha'], group['eps']
            momentum, centered = group['momentum'], group['centered']
            _advance(state, p, 'square_avg', *(('momentum_buffer',) if momentum > 0 else ()),
                     *(('grad_avg',) if centered else ()))
            sq = state['square_avg']._data
            sq *= alpha
            sq += (1 - alpha) * g * g
            if centered:
                ga = _lerp_(state['grad_avg']._data, g, 1 - alpha)
                avg = xp.sqrt(sq - ga * ga)
            else:
                avg = xp.sqrt(sq)
            avg += eps
            if momentum > 0:
                buf = state['momentum_buffer']._data
                buf *= momentum
                buf += g / avg
                p._data -= lr * buf
            else:
                _addcdiv_(p._data, g, avg, -lr)
        return loss


def _differentiable_rmsprop(group, p, g, state):
    """RMSprop's update of ``p`` in dynagrad ops, recorded by autograd."""
    alpha, eps = group['alpha'], group['eps']
    momentum, centered = group['momentum'], group['centered']
    lr = _number_arg(group['lr'], *(('add_', 'alpha') if momentum > 0 else
                                    ('addcdiv_', 'value')))
    _advance(state, p, 'square_avg', *(('momentum_buffer',) if momentum > 0 else ()),
             *(('grad_avg',) if centered else ()))
    square_avg = state['square_avg']
    square_avg.mul_(alpha).addcmul_(g, g, value=1 - alpha)
    if centered:
        grad_avg = state['grad_avg']
        grad_avg.lerp_(g, 1 - alpha)
        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
    else:
        avg = square_avg.sqrt()
    avg = avg.add(eps)
    if momentum > 0:
        buf = state['momentum_buffer']
        buf.mul_(momentum).addcdiv_(g, avg)
        p.add_(buf, alpha=-lr)
    else:
        p.addcdiv_(g, avg, value=-lr)
