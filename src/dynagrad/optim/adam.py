"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad and maximize."""
from ..autograd.grad_mode import no_grad
from ..backend import xp
from .optimizer import Optimizer, _addcdiv_, _advance, _lerp_, _scalar
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
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group, p, g, state in self._params_with_grad():
            lr, (beta1, beta2) = _scalar(group['lr']), map(_scalar, group['betas'])
            eps, amsgrad = group['eps'], group['amsgrad']
            step = _advance(state, p, 'exp_avg', 'exp_avg_sq',
                            *(('max_exp_avg_sq',) if amsgrad else ()))
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
        for group, p, g, state in self._params_with_grad():
            lr, (beta1, beta2), eps = _scalar(group['lr']), group['betas'], group['eps']
            step = _advance(state, p, 'exp_avg', 'exp_inf')
            m, u = state['exp_avg']._data, state['exp_inf']._data
            _lerp_(m, g, 1 - beta1)
            u *= beta2
            xp.maximum(u, xp.abs(g) + eps, out=u)
            clr = lr / (1 - beta1 ** step)
            _addcdiv_(p._data, m, u, -clr)
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
        for group, p, g, state in self._params_with_grad():
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
        for group, p, g, state in self._params_with_grad():
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
