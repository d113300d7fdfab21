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
from . import chunks
from .chunks import array_at, by_dtype, entry

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


@kernel
def _gelu_span(d, t):
    lo, hi = d[0], d[1]
    _gelu(array_at(d[3], hi, t)[lo:], array_at(d[4], hi, t)[lo:], d[5] != 0,
          array_at(d[6], 2, t))


@entry
def _gelu_chunks(d):
    by_dtype(d, _gelu_span)


@kernel
def _gelu_backward_span(d, t):
    lo, hi = d[0], d[1]
    _gelu_backward(array_at(d[3], hi, t)[lo:], array_at(d[4], hi, t)[lo:],
                   array_at(d[5], hi, t)[lo:], d[6] != 0, array_at(d[7], 2, t))


@entry
def _gelu_backward_chunks(d):
    by_dtype(d, _gelu_backward_span)


# Elements per thread below which splitting did not pay (2-core VM, chunks on OpenBLAS's
# workers): GELU over 32768 float32 in 24 us on two threads against 22 on one, 65536 in
# 29 against 41, (12, 64, 512) in 74 against 132
MIN_PER_THREAD = 32768


def gelu(x, tanh_form):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    parts = chunks.parts(x.size, MIN_PER_THREAD)
    c = _CONSTANTS[x.dtype]
    if parts == 1:
        _gelu(x.reshape(-1), out.reshape(-1), tanh_form, c)
    else:
        chunks.run(_gelu_chunks, x.size, parts, x.dtype, x, out, tanh_form, c)
    return out


def gelu_backward(g, x, tanh_form):
    x = c_array(x)
    g = c_array(g, x)
    out = np.empty(x.shape, x.dtype)
    parts = chunks.parts(x.size, MIN_PER_THREAD)
    c = _CONSTANTS[x.dtype]
    if parts == 1:
        _gelu_backward(g.reshape(-1), x.reshape(-1), out.reshape(-1), tanh_form, c)
    else:
        chunks.run(_gelu_backward_chunks, x.size, parts, x.dtype, g, x, out, tanh_form, c)
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
