"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad and maximize."""
import numpy as np

from ..autograd.grad_mode import no_grad
from .optimizer import (Optimizer, _addcdiv_, _advance, _lerp_, _scalar, _state_tensor,
                        _step_tensor, _weight_decay)
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


def _grad(p, maximize):
    g = p.grad._data
    return -g if maximize else g


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_common(lr, eps, betas, weight_decay)
        betas = tuple(_scalar(b) for b in betas)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = _scalar(group['lr']), map(_scalar, group['betas'])
            eps, wd, amsgrad = group['eps'], group['weight_decay'], group['amsgrad']
            decoupled = group.get('decoupled_weight_decay', False)
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                if not state:
                    state['step'] = _step_tensor()
                    state['exp_avg'] = _state_tensor(np.zeros_like(p._data))
                    state['exp_avg_sq'] = _state_tensor(np.zeros_like(p._data))
                    if amsgrad:
                        state['max_exp_avg_sq'] = _state_tensor(np.zeros_like(p._data))
                state['step']._data += 1
                step = float(state['step']._data)
                g = _weight_decay(p, g, lr, wd, decoupled)
                m, v = state['exp_avg']._data, state['exp_avg_sq']._data
                _lerp_(m, g, 1 - beta1)
                v *= beta2
                v += (1 - beta2) * g * g
                step_size = lr / (1 - beta1 ** step)
                bc2_sqrt = (1 - beta2 ** step) ** 0.5
                if amsgrad:
                    vmax = state['max_exp_avg_sq']._data
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax) / bc2_sqrt + eps
                else:
                    denom = np.sqrt(v) / bc2_sqrt + eps
                _addcdiv_(p._data, m, denom, -step_size)
                p._vc.value += 1
        return loss


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

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = _scalar(group['lr']), group['betas']
            eps, wd = group['eps'], group['weight_decay']
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                step = _advance(state, p, 'exp_avg', 'exp_inf')
                if wd != 0:
                    g = g + wd * p._data
                m, u = state['exp_avg']._data, state['exp_inf']._data
                _lerp_(m, g, 1 - beta1)
                u *= beta2
                np.maximum(u, np.abs(g) + eps, out=u)
                clr = lr / (1 - beta1 ** step)
                _addcdiv_(p._data, m, u, -clr)
                p._vc.value += 1
        return loss


class NAdam(Optimizer):
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

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = _scalar(group['lr']), group['betas']
            eps, wd, psi = group['eps'], group['weight_decay'], group['momentum_decay']
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                if not state:
                    state['step'] = _step_tensor()
                    # PyTorch keeps the running product of the momentum schedule in float32
                    state['mu_product'] = _state_tensor(np.ones((), np.float32))
                    state['exp_avg'] = _state_tensor(np.zeros_like(p._data))
                    state['exp_avg_sq'] = _state_tensor(np.zeros_like(p._data))
                state['step']._data += 1
                step = float(state['step']._data)
                bias_correction2 = 1 - beta2 ** step
                g = _weight_decay(p, g, lr, wd, group['decoupled_weight_decay'])
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                mp = state['mu_product']._data
                mp *= np.asarray(mu, mp.dtype)
                mu_product = float(mp)
                m, v = state['exp_avg']._data, state['exp_avg_sq']._data
                _lerp_(m, g, 1 - beta1)
                v *= beta2
                v += (1 - beta2) * g * g
                denom = np.sqrt(v / bias_correction2) + eps
                _addcdiv_(p._data, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                _addcdiv_(p._data, m, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))
                p._vc.value += 1
        return loss


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_common(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2) = _scalar(group['lr']), group['betas']
            eps, wd = group['eps'], group['weight_decay']
            rho_inf = 2 / (1 - beta2) - 1
            for p in group['params']:
                if p.grad is None:
                    continue
                g = _grad(p, group['maximize'])
                state = self.state[p]
                step = _advance(state, p, 'exp_avg', 'exp_avg_sq')
                g = _weight_decay(p, g, lr, wd, group['decoupled_weight_decay'])
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
                    adaptive_lr = bias_correction2 ** 0.5 / (np.sqrt(v) + eps)
                    p._data -= m_hat * lr * adaptive_lr * rect
                else:
                    p._data -= m_hat * lr
                p._vc.value += 1
        return loss
