"""Optimizer updates: Adam/AdamW and SGD, each one pass over a parameter's elements that
reads the gradient and the state once and writes the parameter and the state in place
(the NumPy update makes five to ten passes and as many temporaries).

The arithmetic is the NumPy update's, operation for operation and in the parameter's
dtype (its numbers rounded to that dtype as NumPy rounds a Python float against an
array), and compiled without fast-math flags: nothing is reassociated or fused into a
multiply-add, so the result is the NumPy update's to the bit (and PyTorch's portable
kernels', which tests/optim/test_update_arithmetic.py holds to one ulp). The options
(maximize, L2 or decoupled weight decay, the side of lerp's formula) are selects on
loop-invariant flags, which LLVM vectorises; only amsgrad, which writes one more array,
has a loop of its own.
"""
import math

import numpy as np
from numba import types
from numba.extending import overload


def _exact_kernel(fn):
    """numba's compilation as ``_math.kernel`` but with no fast-math flag: elementwise
    loops vectorise without them, and the rounding stays IEEE's, step for step."""
    from numba import njit
    return njit(cache=True, nogil=True, error_model='numpy')(fn)


def _in_dtype_of(a, x):
    """The float64 ``x`` rounded to the dtype of the array ``a`` (as NumPy rounds a
    Python float that meets an array): float32 loops then stay float32."""
    return x


@overload(_in_dtype_of, inline='always')
def _in_dtype_of_impl(a, x):
    if a.dtype == types.float32:
        return lambda a, x: np.float32(x)
    return lambda a, x: np.float64(x)


@_exact_kernel
def _adam(p, g, m, v, vmax, step, amsgrad, maximize, l2, decoupled, lr, beta1, beta2, eps,
          wd, decay):
    # the step count: a float32 0-d array counted in float32, as the NumPy update counts
    # it; the bias corrections come from it in float64, as there (Python floats)
    count = step[()] + np.float32(1)
    step[()] = count
    t = np.float64(count)
    step_size = lr / (1.0 - beta1 ** t)
    w64 = 1.0 - beta1
    lerp_small = w64 < 0.5
    wd_, decay_, w, w_rest = (_in_dtype_of(p, wd), _in_dtype_of(p, decay),
                              _in_dtype_of(p, w64), _in_dtype_of(p, 1.0 - w64))
    beta2_, c2 = _in_dtype_of(p, beta2), _in_dtype_of(p, 1.0 - beta2)
    neg_step = _in_dtype_of(p, -step_size)
    bc2_sqrt = _in_dtype_of(p, (1.0 - beta2 ** t) ** 0.5)
    eps_ = _in_dtype_of(p, eps)
    if amsgrad:
        for i in range(p.size):
            gi = -g[i] if maximize else g[i]
            pi = p[i]
            gi = gi + wd_ * pi if l2 else gi
            pi = pi * decay_ if decoupled else pi
            d = gi - m[i]
            mi = m[i] + w * d if lerp_small else gi - d * w_rest
            m[i] = mi
            vi = v[i] * beta2_ + c2 * gi * gi
            v[i] = vi
            top = vmax[i]
            # np.maximum's NaN rule: a NaN on either side wins
            top = vi if (vi >= top or vi != vi) else top
            vmax[i] = top
            p[i] = pi + neg_step * mi / (math.sqrt(top) / bc2_sqrt + eps_)
    else:
        for i in range(p.size):
            gi = -g[i] if maximize else g[i]
            pi = p[i]
            gi = gi + wd_ * pi if l2 else gi
            pi = pi * decay_ if decoupled else pi
            d = gi - m[i]
            mi = m[i] + w * d if lerp_small else gi - d * w_rest
            m[i] = mi
            vi = v[i] * beta2_ + c2 * gi * gi
            v[i] = vi
            p[i] = pi + neg_step * mi / (math.sqrt(vi) / bc2_sqrt + eps_)


@_exact_kernel
def _sgd(p, g, buf, maximize, l2, has_momentum, first, nesterov, lr, momentum, dampening,
         wd):
    wd_, neg_lr = _in_dtype_of(p, wd), _in_dtype_of(p, -lr)
    momentum_, damp = _in_dtype_of(p, momentum), _in_dtype_of(p, 1.0 - dampening)
    if not has_momentum:
        for i in range(p.size):
            gi = -g[i] if maximize else g[i]
            gi = gi + wd_ * p[i] if l2 else gi
            p[i] = p[i] + neg_lr * gi
    else:
        for i in range(p.size):
            gi = -g[i] if maximize else g[i]
            gi = gi + wd_ * p[i] if l2 else gi
            b = gi if first else buf[i] * momentum_ + damp * gi
            buf[i] = b
            d = gi + momentum_ * b if nesterov else b
            p[i] = p[i] + neg_lr * d


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, lr, beta1, beta2,
              eps, weight_decay, decoupled, maximize):
    """One Adam (AdamW with ``decoupled``) update of ``param`` in place, with its state
    (``max_exp_avg_sq`` None without amsgrad), counting it in ``step`` (a float32 0-d
    array). ``param`` and the state are C-contiguous and writable, of one float dtype;
    ``grad`` of that dtype and shape, any layout (read through a C-ordered copy where it
    is not one: the kernels are compiled for contiguous arrays only)."""
    m = exp_avg.reshape(-1)
    amsgrad = max_exp_avg_sq is not None
    wd = float(weight_decay)
    _adam(param.reshape(-1), grad.ravel(), m, exp_avg_sq.reshape(-1),
          max_exp_avg_sq.reshape(-1) if amsgrad else m, step, amsgrad, bool(maximize),
          wd != 0 and not decoupled, wd != 0 and decoupled, float(lr), float(beta1),
          float(beta2), float(eps), wd, 1 - lr * wd)


@_exact_kernel
def sgd_step(param, grad, buf, first, maximize, l2, has_momentum, nesterov, lr, momentum,
             dampening, wd):
    """One SGD update of ``param`` in place from ``grad`` (C-contiguous, of one float dtype
    and shape, any number of dimensions: seen flat inside). ``buf``: the momentum buffer
    when ``has_momentum`` (written whole where ``first``: the gradient as the update uses
    it), else any array of that dtype (``param``), not read.

    One compiled call per parameter, the arrays passed as they are: numba's dispatch then
    costs less than reshaping them in Python or gathering a group into tuples (the GPT's
    53 parameters: 192-200 us a step against 203-205 in calls of eight, 213-217 reshaped;
    one array of all 818,176 values, 164)."""
    _sgd(param.reshape(param.size), grad.reshape(grad.size), buf.reshape(buf.size), maximize,
         l2, has_momentum, first, nesterov, lr, momentum, dampening, wd)
