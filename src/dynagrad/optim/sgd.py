"""Stochastic gradient descent, with PyTorch's momentum, dampening and Nesterov rules.

``foreach`` and ``fused`` are accepted as PyTorch accepts them on CPU (with its checks) and
run the same single-tensor update (with the native kernels on, one ``sgd_step`` call per
float32 or float64 parameter, whatever the flags say: the same arithmetic, to the bit);
``differentiable=True`` runs the update as dynagrad ops, so autograd records it (into the
initial parameters, the gradients, a tensor ``lr``).
"""
import numpy as np

from ..backend import native_kernel, xp

from .._coo import COO, add as _coo_add
from ..tensor import Tensor, wrap
from .optimizer import (Optimizer, _add_scaled_, _check_fused, _native_ready, _scalar,
                        _state_tensor, _use_grad_for_differentiable)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f'Invalid momentum value: {momentum}')
        if weight_decay < 0.0:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        _check_fused(fused, foreach, differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    _takes_sparse_grads = True     # PyTorch's SGD updates with sparse gradients too
    _foreach_refuses_differentiable = False    # PyTorch's SGD then loops per tensor
    _supports_differentiable = True

    def _keeps_state(self, group):
        return group['momentum'] != 0     # the momentum buffer is SGD's only state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        native = _NativeSGD()
        for group, p, d_p, state in self._params_with_grad(native.take):
            if group['differentiable']:
                _differentiable_update(group, p, d_p, state)
                continue
            lr, momentum = _scalar(group['lr']), group['momentum']
            if d_p.__class__ is COO:
                _sparse_update(group, p, d_p, state, lr, momentum)
                continue
            if momentum != 0:
                buf = state.get('momentum_buffer')
                if buf is None:
                    # (asarray: a 0-d parameter's gradient with maximize or weight decay
                    # is a NumPy scalar, whose copy could not be updated in place)
                    state['momentum_buffer'] = _state_tensor(xp.asarray(d_p).copy())
                    buf = state['momentum_buffer']._data
                else:
                    buf = buf._data
                    buf *= momentum
                    buf += (1 - group['dampening']) * d_p
                d_p = d_p + momentum * buf if group['nesterov'] else buf
            _add_scaled_(p._data, d_p, -lr)
        return loss


class _NativeSGD:
    """SGD's update by the native ``sgd_step``, one call per parameter as the step offers
    it (``Optimizer._params_with_grad``, which bumps each taken parameter's version); the
    kernel and the group's flags looked up once per group and dtype."""
    __slots__ = ('kernel', 'group', 'dtype', 'flags')

    def __init__(self):
        self.group = None

    def take(self, group, p, g, state, lr, weight_decay, decoupled, maximize):
        """True when ``p`` was updated by the kernel, False (nothing changed) where there is
        no kernel for its array or the arrays do not suit one."""
        data = p._data
        same_run = (group is self.group and data.dtype is self.dtype
                    and data.__class__ is np.ndarray)
        kernel = self.kernel if same_run else native_kernel('sgd_step', data)
        if kernel is None:
            return False
        momentum = group['momentum']
        buf = state.get('momentum_buffer') if momentum != 0 else None
        if not _native_ready(data, g, () if buf is None else (buf._data,)):
            return False
        if not same_run:
            self.kernel, self.group, self.dtype = kernel, group, data.dtype
            self.flags = (bool(maximize), weight_decay != 0, momentum != 0,
                          bool(group['nesterov']), float(lr), float(momentum),
                          float(group['dampening']), float(weight_decay))
        if not g.flags.c_contiguous:
            g = xp.ascontiguousarray(g)
        first = momentum != 0 and buf is None
        if first:
            # the kernel writes it whole: the gradient as the update uses it, as PyTorch's
            buf = state['momentum_buffer'] = _state_tensor(xp.empty(data.shape, data.dtype))
        kernel(data, g, data if buf is None else buf._data, first, *self.flags)
        return True


def _scaled(c, s):
    return c if s == 1 else COO(c.indices, c.values * s, c.shape, c.coalesced)


def _sparse_update(group, p, g, state, lr, momentum):
    """SGD's step with a sparse gradient (a COO), as PyTorch's: the momentum buffer is
    sparse too, and only the rows the gradient holds are written."""
    if momentum != 0:
        buf = state.get('momentum_buffer')
        if buf is None:
            buf = g.copy()
        else:
            buf = _coo_add(_scaled(buf._data, momentum), _scaled(g, 1 - group['dampening']))
        state['momentum_buffer'] = wrap(buf)
        g = _coo_add(g, _scaled(buf, momentum)) if group['nesterov'] else buf
    if g.nnz:
        data = p._data
        xp.add.at(data, tuple(g.indices), (g.values * -lr).astype(data.dtype, copy=False))


def _differentiable_update(group, p, d_p, state):
    """SGD's update of ``p`` in dynagrad ops (``d_p`` a tensor), recorded by autograd."""
    lr, momentum = group['lr'], group['momentum']
    if momentum != 0:
        buf = state.get('momentum_buffer')
        if buf is None:
            # as PyTorch: the first buffer is a detached copy of the gradient
            buf = state['momentum_buffer'] = d_p.detach().clone()
        else:
            buf.mul_(momentum).add_(d_p, alpha=1 - group['dampening'])
        d_p = d_p.add(buf, alpha=momentum) if group['nesterov'] else buf
    if isinstance(lr, Tensor):
        p.sub_(d_p * lr)
    else:
        p.add_(d_p, alpha=-lr)


def _check_lr(lr):
    """PyTorch's checks of a learning rate (a number, or a 1-element tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError('Tensor lr must be 1-element')
    if not 0.0 <= lr:
        raise ValueError(f'Invalid learning rate: {lr}')
