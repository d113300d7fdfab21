"""GELU, forward and backward, both forms, in one pass over the elements each (the normal
CDF and density from ``_math.normal_cdf_pdf``: numba's cache keys on this file, so a change
there needs one here, or the stale kernels' cache files deleted); ReLU, forward and
backward.

NumPy's ``maximum(x, 0)`` runs a NaN-aware loop that does not vectorise: 0.13 ms on the
benchmark CNN's (32, 16, 26, 26) against 0.032 for the select here (PyTorch's 0.032), and
``g * ~(y <= 0)`` makes a mask first (0.099 ms against 0.047). Memory-bound: one thread."""
import math

import numpy as np

from ._math import c_array, kernel, normal_cdf_pdf, tanh, HALF, ONE
from .threads import chunks, parallel_for

# per dtype: sqrt(2/pi) and the tanh form's cubic coefficient. Given
# as an array of the data's dtype so that float32 kernels stay float32 and float64 ones get
# the float64 values (a float literal in numba code is float64).
_CONSTANTS = {np.dtype(t): np.array([math.sqrt(2 / math.pi), 0.044715], t)
              for t in (np.float32, np.float64)}


@kernel
def _gelu(x, out, tanh_form, c):
    k, cubic = c[0], c[1]
    if tanh_form:
        for i in range(x.size):
            v = x[i]
            out[i] = HALF * v * (ONE + tanh(k * (v + cubic * v * v * v)))
    else:
        for i in range(x.size):
            v = x[i]
            out[i] = v * normal_cdf_pdf(v)[0]


@kernel
def _gelu_backward(g, x, out, tanh_form, c):
    k, cubic = c[0], c[1]
    three = cubic + cubic + cubic
    if tanh_form:
        for i in range(x.size):
            v = x[i]
            v2 = v * v
            th = tanh(k * (v + cubic * v2 * v))
            d = HALF * (ONE + th) + HALF * v * (ONE - th * th) * k * (ONE + three * v2)
            out[i] = g[i] * d
    else:
        for i in range(x.size):
            v = x[i]
            cdf, pdf = normal_cdf_pdf(v)
            out[i] = g[i] * (cdf + v * pdf)


# Elements per thread below which splitting did not pay (2-core VM, a thread's wake-up
# 20-40 us): (12, 64, 512) on two threads 0.77-0.83x one thread's time with a core free,
# (12, 64, 384) 1.02x, (12, 64, 256) 1.25x
MIN_PER_THREAD = 196608


def gelu(x, tanh_form):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    parts = chunks(x.size, MIN_PER_THREAD)
    if parts == 1:
        _gelu(x.reshape(-1), out.reshape(-1), tanh_form, _CONSTANTS[x.dtype])
        return out
    xf, of, c = x.reshape(-1), out.reshape(-1), _CONSTANTS[x.dtype]
    parallel_for(x.size, parts, lambda lo, hi: _gelu(xf[lo:hi], of[lo:hi], tanh_form, c))
    return out


def gelu_backward(g, x, tanh_form):
    x = c_array(x)
    g = c_array(g, x)
    out = np.empty(x.shape, x.dtype)
    parts = chunks(x.size, MIN_PER_THREAD)
    if parts == 1:
        _gelu_backward(g.reshape(-1), x.reshape(-1), out.reshape(-1), tanh_form,
                       _CONSTANTS[x.dtype])
        return out
    gf, xf, of, c = g.reshape(-1), x.reshape(-1), out.reshape(-1), _CONSTANTS[x.dtype]
    parallel_for(x.size, parts, lambda lo, hi: _gelu_backward(
        gf[lo:hi], xf[lo:hi], of[lo:hi], tanh_form, c))
    return out


@kernel
def _relu(x, out):
    # PyTorch's clamp_min: x < 0 gives 0, and -0.0 and NaN pass through as they are
    zero = x.dtype.type(0)
    for i in range(x.size):
        v = x[i]
        out[i] = zero if v < zero else v


@kernel
def _relu_backward(g, y, out):
    # PyTorch's threshold_backward: 0 where y <= 0, else g (a NaN output passes g on)
    zero = g.dtype.type(0)
    for i in range(g.size):
        out[i] = zero if y[i] <= zero else g[i]


def relu(x):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    _relu(x.reshape(-1), out.reshape(-1))
    return out


def relu_backward(g, y):
    """The gradient through ReLU's output ``y`` (a gradient of ``y``'s dtype, broadcast to
    its shape where it is an expanded view)."""
    y = c_array(y)
    g = c_array(g, y)
    out = np.empty(y.shape, y.dtype)
    _relu_backward(g.reshape(-1), y.reshape(-1), out.reshape(-1))
    return out
