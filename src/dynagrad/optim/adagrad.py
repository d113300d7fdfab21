"""Adagrad (Duchi et al.), with PyTorch's lr_decay and initial_accumulator_value.

``foreach`` and ``fused`` are accepted as PyTorch accepts them on CPU, with its checks, and
run the same single-tensor update. ``differentiable=True`` runs the update as dynagrad ops
(PyTorch's, so autograd saves and checks what PyTorch's does), and, as there, takes no
learning rate that requires grad.
"""
from ..backend import xp
from .._coo import COO, coalesce
from .optimizer import (Optimizer, _addcdiv_, _advance, _check_fused, _number_arg, _scalar,
                        _state_tensor, _step_tensor, _use_grad_for_differentiable)
from .sgd import _check_lr


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f'Invalid lr_decay value: {lr_decay}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        if not 0.0 <= initial_accumulator_value:
            raise ValueError('Invalid initial_accumulator_value value: '
                             f'{initial_accumulator_value}')
        if not 0.0 <= eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        _check_fused(fused, foreach, differentiable)
        super().__init__(params, dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach,
            maximize=maximize, differentiable=differentiable, fused=fused))
        # PyTorch fills Adagrad's state when it is built, not at the first step
        for group in self.param_groups:
            for p in group['params']:
                self._init_state(p, group['initial_accumulator_value'])

    _supports_differentiable = True
    _takes_sparse_grads = True     # PyTorch's Adagrad updates with sparse gradients too

    def _sparse_grad(self, p, g, maximize, wd):
        if wd != 0:
            raise RuntimeError('weight_decay option is not compatible with sparse gradients')
        return super()._sparse_grad(p, g, maximize, wd)

    def _init_state(self, p, init):
        state = self.state[p]
        state['step'] = _step_tensor()
        state['sum'] = _state_tensor(xp.full_like(p._data, init))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if not state:   # a parameter added to the optimizer after it was built
                self._init_state(p, self.defaults['initial_accumulator_value'])
            if group['differentiable']:
                _differentiable_adagrad(group, p, g, state)
                continue
            lr, lr_decay, eps = _scalar(group['lr']), group['lr_decay'], group['eps']
            step = _advance(state, p)
            clr = lr / (1 + (step - 1) * lr_decay)
            s = state['sum']._data
            if g.__class__ is COO:
                _sparse_update(p, coalesce(g), s, clr, eps)
                continue
            s += g * g
            _addcdiv_(p._data, g, xp.sqrt(s) + eps, -clr)
        return loss


def _sparse_update(p, g, s, clr, eps):
    """PyTorch's Adagrad step with a sparse gradient: the (dense) sum of squares grows at
    the gradient's entries, and only those entries of the parameter move."""
    if g.nnz == 0:
        return
    index = tuple(g.indices)
    values = g.values.astype(p._data.dtype, copy=False)
    s[index] += values * values
    p._data[index] += -clr * values / (xp.sqrt(s[index]) + eps)


def _differentiable_adagrad(group, p, g, state):
    """Adagrad's update of ``p`` in dynagrad ops, recorded by autograd."""
    lr = _number_arg(group['lr'], 'addcdiv_', 'value')
    step = _advance(state, p)
    clr = lr / (1 + (step - 1) * group['lr_decay'])
    state_sum = state['sum']
    state_sum.addcmul_(g, g, value=1)
    std = state_sum.sqrt() + group['eps']
    p.addcdiv_(g, std, value=-clr)
