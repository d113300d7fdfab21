"""Max pooling: forward (each window's max and the flat index of its argmax, PyTorch's
``return_indices``) and backward (the gradient scattered to those indices).

Rows are the leading dimensions of the input flattened, spatial shapes padded to three
(1-d and 2-d pool as 3-d with a trivial outer axis). The NumPy path takes one whole-array
step per kernel offset over a padded copy, several passes for each (compare, maximum,
index update); here every window is read once, and only its in-range taps, so neither a
padded copy nor an offset index per output is made.

Window semantics are PyTorch's: the first in-range tap starts the search, a later one wins
if it is larger or NaN (so a window holding NaN gives NaN and the last NaN's index), and a
window of -inf keeps its first in-range tap.
"""
import numpy as np

from ._math import c_array, kernel


@kernel
def _max_pool(x, y, idx, ksize, stride, pad, dilation):
    # x (R, D, H, W); y, idx (R, OD, OH, OW)
    R, D, H, W = x.shape
    OD, OH, OW = y.shape[1], y.shape[2], y.shape[3]
    KD, KH, KW = ksize
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    for r in range(R):
        for od in range(OD):
            d0 = od * sd - pd
            # the first in-range tap of each axis (padding at most half the window, and
            # ceil_mode windows start inside the input: one always exists)
            kd0 = 0
            while d0 + kd0 * dd < 0:
                kd0 += 1
            for oh in range(OH):
                h0 = oh * sh - ph
                kh0 = 0
                while h0 + kh0 * dh < 0:
                    kh0 += 1
                for ow in range(OW):
                    w0 = ow * sw - pw
                    kw0 = 0
                    while w0 + kw0 * dw < 0:
                        kw0 += 1
                    i, j, k = d0 + kd0 * dd, h0 + kh0 * dh, w0 + kw0 * dw
                    best = x[r, i, j, k]
                    at = (i * H + j) * W + k
                    for kd in range(kd0, KD):
                        i = d0 + kd * dd
                        if i >= D:
                            break
                        for kh in range(kh0, KH):
                            j = h0 + kh * dh
                            if j >= H:
                                break
                            for kw in range(kw0, KW):
                                k = w0 + kw * dw
                                if k >= W:
                                    break
                                v = x[r, i, j, k]
                                if v > best or v != v:
                                    best = v
                                    at = (i * H + j) * W + k
                    y[r, od, oh, ow] = best
                    idx[r, od, oh, ow] = at


@kernel
def _max_pool_backward(g, idx, gx):
    # gx (R, D*H*W) zeroed here; g, idx (R, n_out)
    R, n_in = gx.shape
    n_out = g.shape[1]
    for r in range(R):
        for p in range(n_in):
            gx[r, p] = 0
        for o in range(n_out):
            gx[r, idx[r, o]] += g[r, o]


def _three(values, fill):
    return (fill,) * (3 - len(values)) + tuple(int(v) for v in values)


def max_pool(x, k, s, p, d, out):
    """``(y, indices)`` of max pooling ``x`` over its last ``len(k)`` axes (1 to 3); ``out``:
    the output's spatial size (ceil_mode decided by the caller); indices are int64 flat
    positions in each input plane, as PyTorch's."""
    x = c_array(x)
    n = len(k)
    lead = x.shape[:-n]
    rows = int(np.prod(lead, dtype=np.int64))
    y = np.empty(lead + tuple(out), x.dtype)
    idx = np.empty(y.shape, np.int64)
    if y.size:
        _max_pool(x.reshape((rows,) + _three(x.shape[-n:], 1)),
                  y.reshape((rows,) + _three(out, 1)), idx.reshape((rows,) + _three(out, 1)),
                  _three(k, 1), _three(s, 1), _three(p, 0), _three(d, 1))
    return y, idx


def max_pool_backward(g, idx, in_shape, n):
    """The gradient of an input of ``in_shape`` pooled over its last ``n`` axes, from the
    output's ``g``: each value added at its window's argmax ``idx`` (overlapping windows
    sharing a winner add up)."""
    g = np.asarray(np.broadcast_to(g, idx.shape), order='C')   # (maybe an expanded view)
    gx = np.empty(in_shape, g.dtype)
    if gx.size:
        rows = int(np.prod(in_shape[:-n], dtype=np.int64))
        _max_pool_backward(g.reshape(rows, -1), c_array(idx).reshape(rows, -1),
                           gx.reshape(rows, -1))
    return gx
