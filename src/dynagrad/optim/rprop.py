"""Resilient backpropagation (Riedmiller & Braun): each weight has its own step size, grown
while its gradient keeps its sign and shrunk (with that step skipped) when the sign flips.

``foreach=True`` runs the same single-tensor update; ``capturable=True`` is refused at step
as PyTorch refuses it for CPU parameters; ``differentiable=True`` is refused at step (not
yet written in dynagrad ops).
"""
from ..backend import xp
from .optimizer import (Optimizer, _capturable_message, _scalar, _state_tensor, _step_tensor,
                        _use_grad_for_differentiable)
from .sgd import _check_lr


class Rprop(Optimizer):
    _capturable_errors = (_capturable_message(), _capturable_message())

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
            etaminus, etaplus = group['etas']
            step_size_min, step_size_max = group['step_sizes']
            if not state:
                state['step'] = _step_tensor()
                state['prev'] = _state_tensor(xp.zeros_like(p._data))
                state['step_size'] = _state_tensor(
                    xp.full_like(g, _scalar(group['lr'])))
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
