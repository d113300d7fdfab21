"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad and maximize, and the
Adam variants Adamax, NAdam and RAdam.

``foreach`` (and, for Adam and AdamW, ``fused``) are accepted as PyTorch accepts them on CPU,
with its checks, and run the same single-tensor update. With the native kernels on, Adam's
and AdamW's update of a float32 or float64 parameter is one kernel call (``adam_step``,
one pass over the elements) whatever ``foreach`` and ``fused`` say: the same arithmetic,
to the bit, with PyTorch's fused update's memory traffic. ``capturable=True`` is refused at
step as PyTorch refuses it for CPU parameters. Adam and AdamW with ``differentiable=True``
run the update as dynagrad ops, so autograd records it; so do Adamax, NAdam and RAdam, each
with the ops PyTorch's differentiable path uses (``_differentiable_*`` below), so the graph,
what it saves and the in-place checks at backward are the same as PyTorch's.
"""
import numpy as np

from ..backend import native_kernel, xp
from ..ops.pointwise import maximum
from ..ops.shape import cat
from ..tensor import Tensor
from .optimizer import (Optimizer, _DEVICES_NO_XLA, _addcdiv_, _advance, _capturable_message,
                        _check_fused, _lerp_, _native_ready, _new_state, _number_arg,
                        _scalar, _use_grad_for_differentiable)
from .sgd import _check_lr


def _check_common(lr, eps, betas, weight_decay):
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f'Invalid epsilon value: {eps}')
    if betas is not None:
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 0: {betas[0]}')
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 1: {betas[1]}')
    if not 0.0 <= weight_decay:
        raise ValueError(f'Invalid weight_decay value: {weight_decay}')


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_common(lr, eps, betas, weight_decay)
        betas = tuple(_scalar(b) for b in betas)
        _check_fused(fused, foreach, differentiable)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay))

    _supports_differentiable = True
    _capturable_checked_first = True

    def _sparse_grad(self, p, g, maximize, wd):
        raise RuntimeError('Adam does not support sparse gradients, please consider SparseAdam '
                           'instead')

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad(_native_adam):
            if group['differentiable']:
                _differentiable_adam(group, p, g, state)
                continue
            lr, (beta1, beta2) = _scalar(group['lr']), map(_scalar, group['betas'])
            eps, amsgrad = group['eps'], group['amsgrad']
            step = _advance(state, p, *_adam_buffers(amsgrad))
            m, v = state['exp_avg']._data, state['exp_avg_sq']._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            step_size = lr / (1 - beta1 ** step)
            bc2_sqrt = (1 - beta2 ** step) ** 0.5
            if amsgrad:
                vmax = state['max_exp_avg_sq']._data
                xp.maximum(vmax, v, out=vmax)
                denom = xp.sqrt(vmax) / bc2_sqrt + eps
            else:
                denom = xp.sqrt(v) / bc2_sqrt + eps
            _addcdiv_(p._data, m, denom, -step_size)
        return loss


def _adam_buffers(amsgrad):
    return ('exp_avg', 'exp_avg_sq', 'max_exp_avg_sq') if amsgrad else ('exp_avg', 'exp_avg_sq')


def _native_adam(group, p, g, state, lr, weight_decay, decoupled, maximize):
    """Adam's whole update of ``p`` as the native ``adam_step`` (see
    ``Optimizer._params_with_grad``): True when it ran, False (nothing changed) where
    there is no kernel for the parameter's array or the arrays do not suit one."""
    data = p._data
    kernel = native_kernel('adam_step', data)
    if kernel is None:
        return False
    amsgrad = group['amsgrad']
    names = _adam_buffers(amsgrad)
    if state:
        # a state made earlier (or loaded) must hold every buffer, fit for the kernel; a
        # missing one (amsgrad switched on later) fails in the NumPy update as it always has
        if 'step' not in state or not all(name in state for name in names):
            return False
        if not _native_ready(data, g, [state[name]._data for name in names],
                             state['step']._data):
            return False
    elif not _native_ready(data, g, ()):
        return False
    else:
        _new_state(state, p, *names)
    beta1, beta2 = group['betas']
    kernel(data, g, state['exp_avg']._data, state['exp_avg_sq']._data,
           state['max_exp_avg_sq']._data if amsgrad else None, state['step']._data, lr=lr,
           beta1=_scalar(beta1), beta2=_scalar(beta2), eps=group['eps'],
           weight_decay=weight_decay, decoupled=decoupled, maximize=maximize)
    return True


def _differentiable_adam(group, p, g, state):
    """Adam's update of ``p`` in dynagrad ops (``g`` a tensor), recorded by autograd."""
    lr, (beta1, beta2) = group['lr'], map(_scalar, group['betas'])
    eps, amsgrad = group['eps'], group['amsgrad']
    step = _advance(state, p, 'exp_avg', 'exp_avg_sq',
                    *(('max_exp_avg_sq',) if amsgrad else ()))
    m, v = state['exp_avg'], state['exp_avg_sq']
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    # PyTorch's differentiable Adam computes the bias corrections from the float32 step
    # tensor, so in float32
    f32 = np.float32
    bias_correction1 = f32(1) - f32(beta1) ** f32(step)
    bc2_sqrt = float(xp.sqrt(f32(1) - f32(beta2) ** f32(step)))
    if isinstance(lr, Tensor):
        step_size = lr / float(bias_correction1)
    else:
        step_size = float(f32(lr) / bias_correction1)
    if amsgrad:
        # a new tensor each step: the old maximum may be saved for backward
        state['max_exp_avg_sq'] = vmax = maximum(state['max_exp_avg_sq'], v)
        denom = (vmax.sqrt() / bc2_sqrt).add_(eps)
    else:
        denom = (v.sqrt() / bc2_sqrt).add_(eps)
    m = m.clone()    # the state buffer changes in place next step; backward needs this one
    if isinstance(step_size, Tensor):
        p.sub_(m / denom * step_size)
    else:
        p.addcdiv_(m, denom, value=-step_size)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_common(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    _supports_differentiable = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if group['differentiable']:
                _differentiable_adamax(group, p, g, state)
                continue
            lr, (beta1, beta2), eps = _scalar(group['lr']), group['betas'], group['eps']
            step = _advance(state, p, 'exp_avg', 'exp_inf')
            m, u = state['exp_avg']._data, state['exp_inf']._data
            _lerp_(m, g, 1 - beta1)
            u *= beta2
            xp.maximum(u, xp.abs(g) + eps, out=u)
            clr = lr / (1 - beta1 ** step)
            _addcdiv_(p._data, m, u, -clr)
        return loss


def _differentiable_adamax(group, p, g, state):
    """Adamax's update of ``p`` in dynagrad ops, recorded by autograd. As in PyTorch the
    step size is a number (a learning rate that requires grad is refused), and the running
    maximum is the amax of the two candidates stacked, written back into the state."""
    lr = _number_arg(group['lr'], 'addcdiv_', 'value')
    (beta1, beta2), eps = group['betas'], group['eps']
    step = _advance(state, p, 'exp_avg', 'exp_inf')
    m, u = state['exp_avg'], state['exp_inf']
    m.lerp_(g, 1 - beta1)
    candidates = cat([u.mul_(beta2).unsqueeze(0), g.abs().add_(eps).unsqueeze_(0)], 0)
    u.copy_(candidates.amax(0))
    p.addcdiv_(m, u, value=-(lr / (1 - beta1 ** step)))


class NAdam(Optimizer):
    _capturable_errors = (_capturable_message('params, mu_products and state_steps'),
                          _capturable_message('params, mu_products, and state_steps',
                                              _DEVICES_NO_XLA))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_common(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f'Invalid momentum_decay value: {momentum_decay}')
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    _supports_differentiable = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if group['differentiable']:
                _differentiable_nadam(group, p, g, state)
                continue
            lr, (beta1, beta2) = _scalar(group['lr']), group['betas']
            eps, psi = group['eps'], group['momentum_decay']
            # PyTorch keeps the running product of the momentum schedule in float32
            step = _advance(state, p, 'exp_avg', 'exp_avg_sq', mu_product=1.0)
            bias_correction2 = 1 - beta2 ** step
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
            mp = state['mu_product']._data
            mp *= xp.asarray(mu, mp.dtype)
            mu_product = float(mp)
            m, v = state['exp_avg']._data, state['exp_avg_sq']._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            denom = xp.sqrt(v / bias_correction2) + eps
            _addcdiv_(p._data, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
            _addcdiv_(p._data, m, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))
        return loss


def _differentiable_nadam(group, p, g, state):
    """NAdam's update of ``p`` in dynagrad ops, recorded by autograd. As in PyTorch, the two
    step sizes are multiplied into the gradient and the momentum (not passed as addcdiv's
    number), computed with the float32 ``mu_product`` tensor, so they are float32 values
    (and carry a tensor learning rate's gradient)."""
    lr, (beta1, beta2) = group['lr'], group['betas']
    eps, psi = group['eps'], group['momentum_decay']
    step = _advance(state, p, 'exp_avg', 'exp_avg_sq', mu_product=1.0)
    bias_correction2 = 1 - beta2 ** step
    mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
    mu_product = state['mu_product']
    mu_product.mul_(mu)
    m, v = state['exp_avg'], state['exp_avg_sq']
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    # divided through a copy: dynagrad's div by a number keeps its input for backward,
    # PyTorch's does not, and the state buffer changes in place next step
    denom = v.clone().div(bias_correction2).sqrt().add(eps)
    mu_product_next = mu_product * mu_next
    g = g * _over(-lr * (1.0 - mu), 1.0 - mu_product)
    m = m * _over(-lr * mu_next, 1.0 - mu_product_next)
    p.addcdiv_(g, denom)
    p.addcdiv_(m, denom)


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_common(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    _supports_differentiable = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            if group['differentiable']:
                _differentiable_radam(group, p, g, state)
                continue
            lr, (beta1, beta2), eps = _scalar(group['lr']), group['betas'], group['eps']
            rho_inf = 2 / (1 - beta2) - 1
            step = _advance(state, p, 'exp_avg', 'exp_avg_sq')
            m, v = state['exp_avg']._data, state['exp_avg_sq']._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            m_hat = m / bias_correction1
            # length of the approximated simple moving average: rectify once it is > 5
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive_lr = bias_correction2 ** 0.5 / (xp.sqrt(v) + eps)
                p._data -= m_hat * lr * adaptive_lr * rect
            else:
                p._data -= m_hat * lr
        return loss


def _over(numerator, denominator):
    """``numerator / denominator`` (a float32 0-dim tensor) rounded as PyTorch rounds it: a
    number over a tensor is ``denominator.reciprocal() * numerator`` there."""
    if isinstance(numerator, Tensor):
        return numerator / denominator
    return denominator.reciprocal() * numerator


def _differentiable_radam(group, p, g, state):
    """RAdam's update of ``p`` in dynagrad ops, recorded by autograd (a tensor learning rate
    included, as in PyTorch)."""
    lr, (beta1, beta2), eps = group['lr'], group['betas'], group['eps']
    rho_inf = 2 / (1 - beta2) - 1
    step = _advance(state, p, 'exp_avg', 'exp_avg_sq')
    m, v = state['exp_avg'], state['exp_avg_sq']
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    m_hat = m.clone() / bias_correction1     # through a copy: see _differentiable_nadam
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = bias_correction2 ** 0.5 / v.sqrt().add(eps)
        p.add_(m_hat * lr * adaptive_lr * rect, alpha=-1.0)
    else:
        p.add_(m_hat * lr, alpha=-1.0)
