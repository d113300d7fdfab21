"""Resilient backpropagation (Riedmiller & Braun): each weight has its own step size, grown
while its gradient keeps its sign and shrunk (with that step skipped) when the sign flips.

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` runs the update as
dynagrad ops (PyTorch's, so autograd saves and checks what PyTorch's does). As in PyTorch,
a learning rate that requires grad is refused when the step sizes are first filled.
"""
from ..backend import xp
from ..tensor import Tensor
from .optimizer import (Optimizer, _capturable_message, _number_arg, _state_tensor,
                        _step_tensor, _use_grad_for_differentiable)
from .sgd import _check_lr


class Rprop(Optimizer):
    _capturable_errors = (_capturable_message(), _capturable_message())
    _supports_differentiable = True

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f'Invalid eta values: {etas[0]}, {etas[1]}')
        super().__init__(params, dict(
            lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if not state:
                _init_state(group, p, g, state)
            if group['differentiable']:
                _differentiable_rprop(group, p, g, state)
                continue
            etaminus, etaplus = group['etas']
            step_size_min, step_size_max = group['step_sizes']
            state['step']._data += 1
            prev, step_size = state['prev']._data, state['step_size']._data
            # the sign of the product (not of each factor): an underflow to 0 keeps the size
            agreement = g * prev
            factor = xp.where(agreement > 0, etaplus, xp.where(agreement < 0, etaminus, 1.0))
            step_size *= factor.astype(step_size.dtype, copy=False)
            xp.clip(step_size, step_size_min, step_size_max, out=step_size)
            g = xp.where(agreement < 0, 0, g).astype(g.dtype, copy=False)  # skip a flip
            p._data -= xp.sign(g) * step_size
            prev[...] = g
        return loss


def _init_state(group, p, g, state):
    """Rprop's state, with every step size at lr (PyTorch's full_like takes a number)."""
    lr = _number_arg(group['lr'], 'full_like', 'fill_value', ' (position 2)')
    g = g._data if isinstance(g, Tensor) else g
    step_size = _state_tensor(xp.full_like(g, lr))   # made before anything is stored
    state['step'] = _step_tensor()
    state['prev'] = _state_tensor(xp.zeros_like(p._data))
    state['step_size'] = step_size


def _differentiable_rprop(group, p, g, state):
    """Rprop's update of ``p`` in dynagrad ops, recorded by autograd."""
    etaminus, etaplus = group['etas']
    step_size_min, step_size_max = group['step_sizes']
    state['step'].add_(1)
    prev, step_size = state['prev'], state['step_size']
    # the factor is written over the sign in place, with masks, as PyTorch writes it
    factor = g.mul(prev.clone()).sign()
    factor[factor.gt(0)] = etaplus
    factor[factor.lt(0)] = etaminus
    factor[factor.eq(0)] = 1
    step_size.mul_(factor).clamp_(step_size_min, step_size_max)
    g = g.clone()
    g[factor.eq(etaminus)] = 0      # a flipped sign skips this step
    p.addcmul_(g.sign(), step_size, value=-1)
    prev.copy_(g)
