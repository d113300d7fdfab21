"""Parameter initialisation, in place and without recording, with PyTorch's formulas.

The fillers draw from the generator as PyTorch's do, so after the same ``manual_seed`` a
model starts from PyTorch's weights bit for bit (``orthogonal_`` aside: the same Gaussian
matrix, but its QR factorisation comes from NumPy's LAPACK, equal to PyTorch's only to
rounding)."""
import math
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..backend import xp
from ..tensor import bump_version

__all__ = ['calculate_gain', 'uniform_', 'normal_', 'trunc_normal_', 'constant_', 'ones_',
           'zeros_', 'eye_', 'dirac_', 'xavier_uniform_', 'xavier_normal_', 'kaiming_uniform_',
           'kaiming_normal_', 'orthogonal_', 'sparse_', 'uniform', 'normal', 'constant', 'eye',
           'dirac', 'xavier_uniform', 'xavier_normal', 'kaiming_uniform', 'kaiming_normal',
           'orthogonal', 'sparse']

_LINEAR_FNS = ('linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
               'conv_transpose3d')


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == 'sigmoid':
        return 1
    if nonlinearity == 'tanh':
        return 5.0 / 3
    if nonlinearity == 'relu':
        return math.sqrt(2.0)
    if nonlinearity == 'leaky_relu':
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f'negative_slope {param} not a valid number')
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == 'selu':
        return 3.0 / 4
    raise ValueError(f'Unsupported nonlinearity {nonlinearity}')


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError('Fan in and fan out can not be computed for tensor with fewer than 2 '
                         'dimensions')
    receptive = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ('fan_in', 'fan_out'):
        raise ValueError(f'Mode {mode} not supported, please use one of fan_in, fan_out')
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == 'fan_in' else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) restricted to [a, b], by rejection as PyTorch draws it: when the
    interval holds more than 0.3 of the mass, normal samples with the ones outside redrawn
    (a full tensor of fresh samples per round); otherwise uniform proposals on [a, b]
    accepted where ``log u`` is below the log density relative to its peak."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn('mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The '
                      'distribution of values may be incorrect.', stacklevel=2)

    if tensor.is_complex():     # torch's redraw compares values, which complex ones refuse
        raise NotImplementedError(f'"lt_cpu" not implemented for '
                                  f'\'{tensor.dtype.legacy_name[:-6]}\'')

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            _trunc_by_redraw(tensor, mean, std, a, b, generator)
        else:
            _trunc_by_proposal(tensor, mean, std, a, b, generator)
        bump_version(tensor, 'nn.init.trunc_normal_')
    return tensor


def _trunc_by_redraw(tensor, mean, std, a, b, generator):
    t = tensor._data.dtype.type
    lo, hi = t(a), t(b)   # the bounds as the tensor holds them
    result = tensor.normal_(mean, std, generator=generator)._data.copy()
    fresh = tensor.detach().clone()
    while True:
        outside = (result < lo) | (result > hi)
        if not outside.any():
            break
        redraw = fresh.normal_(mean, std, generator=generator)._data
        result = xp.where(outside, redraw, result)
    tensor._data[...] = result


def _trunc_by_proposal(tensor, mean, std, a, b, generator):
    t = tensor._data.dtype.type
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    scratch = tensor.detach().clone()

    def log_ratio(x):   # log density at x minus at the peak, in the tensor's dtype
        z = (x - t(mean)) / t(std)
        return z * z * t(-0.5) - t(log_peak)

    def rejected(candidates):
        u = scratch.uniform_(generator=generator)._data
        with xp.errstate(divide='ignore'):
            return xp.log(u) > log_ratio(candidates)

    result = tensor.uniform_(a, b, generator=generator)._data.copy()
    pending = rejected(result)
    proposal = tensor.detach().clone()
    while pending.any():
        candidates = proposal.uniform_(a, b, generator=generator)._data.copy()
        result = xp.where(pending, candidates, result)
        pending = xp.where(pending, rejected(candidates), pending)
    tensor._data[...] = result


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    with no_grad():
        tensor.zero_()
        n = min(tensor.shape)
        tensor._data[xp.arange(n), xp.arange(n)] = 1
        bump_version(tensor, 'nn.init.eye_')
    return tensor


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError('Only tensors with 3, 4, or 5 dimensions are supported')
    out_per_group = tensor.shape[0] // groups
    n = min(out_per_group, tensor.shape[1])
    with no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in tensor.shape[2:])
        for g in range(groups):
            idx = xp.arange(n)
            tensor._data[(g * out_per_group + idx, idx) + centre] = 1
        bump_version(tensor, 'nn.init.dirac_')
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if 0 in tensor.shape:
        warnings.warn('Initializing zero-element tensors is a no-op', stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if 0 in tensor.shape:
        warnings.warn('Initializing zero-element tensors is a no-op', stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix: QR of a Gaussian matrix, with R's diagonal signs folded in."""
    if tensor.dim() < 2:
        raise ValueError('Only tensors with 2 or more dimensions are supported')
    if tensor.numel() == 0:
        return tensor
    if tensor.is_complex():     # torch folds R's diagonal in with sign(), real only
        raise NotImplementedError('Unlike NumPy, torch.sign is not intended to support complex '
                                  'numbers. Please use torch.sgn instead.')
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    from ..ops.random import randn
    # PyTorch's draw: a (rows, cols) normal fill in the tensor's dtype
    flat = randn(rows, cols, generator=generator, dtype=tensor.dtype)._data.astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q *= xp.sign(xp.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor._data[...] = (gain * q).reshape(tensor.shape)
        bump_version(tensor, 'nn.init.orthogonal_')
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    rows, cols = tensor.shape
    zeros_per_col = int(math.ceil(sparsity * rows))
    from ..ops.random import randperm
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            idx = randperm(rows, generator=generator)._data[:zeros_per_col]
            tensor._data[idx, col] = 0
        bump_version(tensor, 'nn.init.sparse_')
    return tensor


def _deprecated(new):
    old = new.__name__[:-1]

    def alias(*args, **kwargs):
        warnings.warn(f'`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.',
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f'Deprecated alias of ``{new.__name__}`` (warns ``FutureWarning``).'
    return alias


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
