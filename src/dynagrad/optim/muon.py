"""Muon (Jordan et al.): SGD momentum whose update matrix is orthogonalized by a few
Newton-Schulz iterations, for the 2-D weights of hidden layers (PyTorch's ``torch.optim.Muon``
takes no ``foreach``/``fused``/``differentiable``/``capturable`` flags, nor does this)."""
import math
import operator

import numpy as np

from ..backend import xp
from .optimizer import Optimizer, _lerp_, _scalar, _state_tensor, _use_grad_for_differentiable

_ADJUST_LR_FNS = ('original', 'match_rms_adamw')


def _bfloat16(x):
    """``x`` rounded to bfloat16 (to nearest, ties to even), held in float32."""
    bits = xp.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + (((bits >> 16) & 1) + 0x7FFF)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def _orthogonalize(update, coefficients, steps, eps):
    """``steps`` Newton-Schulz iterations of the quintic ``a X + b (X X^T) X + c (X X^T)^2 X``
    from ``update / (||update|| + eps)``, on the wide orientation of the matrix.

    PyTorch runs them in bfloat16: each product and sum is rounded to bfloat16 here too
    (sums accumulated exactly, then rounded), which gives PyTorch's values on small
    matrices; on large ones its blocked bfloat16 kernels round differently, by bfloat16
    rounding errors.
    """
    a, b, c = coefficients
    x = _bfloat16(update)
    norm = _bfloat16(xp.sqrt(xp.sum(x.astype(np.float64) ** 2)))
    x = _bfloat16(x / _bfloat16(norm + np.float32(eps))).astype(np.float64)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    for _ in range(steps):
        gram = _bfloat16(x @ x.T).astype(np.float64)
        poly = _bfloat16(b * gram + c * (gram @ gram)).astype(np.float64)
        x = _bfloat16(a * x + poly @ x).astype(np.float64)
    return x.T if tall else x


def _check_newton_schulz(coefficients, steps):
    """The checks PyTorch makes of these options at step (not at construction)."""
    if len(coefficients) != 3:
        raise ValueError('Coefficients must be a tuple of exactly 3 values')
    if steps >= 100:
        raise ValueError('Number of steps must be less than 100 for computational efficiency')
    operator.index(steps)     # a non-integer count: PyTorch's TypeError


def _adjusted_lr(lr, fn, shape):
    rows, cols = shape[:2]
    if fn is None or fn == 'original':
        return lr * math.sqrt(max(1, rows / cols))
    return 0.2 * lr * math.sqrt(max(rows, cols))


class Muon(Optimizer):
    _weight_decay_in_step = True     # decoupled, scaled by lr

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None):
        from ..tensor import Tensor
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
        if not 0.0 <= lr:
            raise ValueError(f'Learning rate should be >= 0 but is: {lr}')
        if not 0.0 <= momentum:
            raise ValueError(f'momentum should be >= 0 but is: {momentum}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'weight decay should be >= 0 but is: {weight_decay}')
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f'Adjust learning rate function {adjust_lr_fn} is not supported')
        super().__init__(params, dict(
            lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
            ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group['params']:
                if p.ndim != 2:
                    raise ValueError('Muon only supports 2D parameters whereas we found a '
                                     f'parameter with size: {p.size()}')

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:     # before any parameter changes
            _check_newton_schulz(group['ns_coefficients'], group['ns_steps'])
        for group, p, g, state in self._params_with_grad():
            lr, wd = _scalar(group['lr']), group['weight_decay']
            momentum = group['momentum']
            buf = state.get('momentum_buffer')
            if buf is None:
                buf = state['momentum_buffer'] = _state_tensor(xp.zeros_like(g))
            buf = _lerp_(buf._data, g, 1 - momentum)
            update = _lerp_(g.copy(), buf, momentum) if group['nesterov'] else buf
            update = _orthogonalize(update, group['ns_coefficients'], group['ns_steps'],
                                    group['eps'])
            p._data *= 1 - lr * wd
            update = update.astype(p._data.dtype, copy=False)
            p._data -= _adjusted_lr(lr, group['adjust_lr_fn'], p.shape) * update
        return loss
