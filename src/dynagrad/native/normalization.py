"""Layer norm over the trailing values of each row: forward (statistics and the affine map
in one kernel, two passes over a row) and backward (input, weight and bias gradients
together, two passes over a row)."""
import math

import numpy as np

from ._math import c_array, kernel, ONE, ZERO


@kernel
def _layer_norm(x, w, b, eps, out, mean, rstd):
    n = x.shape[1]
    inv_n = ONE / n
    affine_w, affine_b = w.size > 0, b.size > 0
    for row in range(x.shape[0]):
        xr, o = x[row], out[row]
        total = ZERO
        for v in xr:
            total += v
        mu = total * inv_n
        sq = ZERO
        for v in xr:
            sq += (v - mu) * (v - mu)
        r = ONE / math.sqrt(sq * inv_n + eps)
        mean[row], rstd[row] = mu, r
        if affine_w and affine_b:
            for j in range(n):
                o[j] = (xr[j] - mu) * r * w[j] + b[j]
        elif affine_w:
            for j in range(n):
                o[j] = (xr[j] - mu) * r * w[j]
        else:
            for j in range(n):
                o[j] = (xr[j] - mu) * r
            if affine_b:
                for j in range(n):
                    o[j] += b[j]


@kernel
def _layer_norm_backward(g, x, mean, rstd, w, gx, gw, gb, want_x):
    # gx = rstd * (g w - mean(g w) - xhat mean(g w xhat)), xhat = (x - mean) rstd; gw, gb
    # are summed over rows as they go (left empty when not wanted)
    n = x.shape[1]
    inv_n = ONE / n
    has_w, want_w, want_b = w.size > 0, gw.size > 0, gb.size > 0
    for row in range(x.shape[0]):
        gr, xr, mu, r = g[row], x[row], mean[row], rstd[row]
        sum_g = ZERO
        sum_gx = ZERO
        for j in range(n):
            xhat = (xr[j] - mu) * r
            gj = gr[j]
            if want_w:
                gw[j] += gj * xhat
            if want_b:
                gb[j] += gj
            if has_w:
                gj *= w[j]
            sum_g += gj
            sum_gx += gj * xhat
        if want_x:
            a, c = sum_g * inv_n, sum_gx * inv_n
            o = gx[row]
            for j in range(n):
                gj = gr[j] * w[j] if has_w else gr[j]
                o[j] = (gj - a - (xr[j] - mu) * r * c) * r


_EMPTY = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


def layer_norm(x, count, weight, bias, eps):
    """``(out, mean, rstd)`` of ``x`` normalised over its trailing ``count`` values;
    ``mean`` and ``rstd`` have one value per row (shaped by the caller)."""
    x = c_array(x)
    rows = x.size // count
    empty = _EMPTY[x.dtype]
    out = np.empty(x.shape, x.dtype)
    mean, rstd = np.empty(rows, x.dtype), np.empty(rows, x.dtype)
    _layer_norm(x.reshape(rows, count), _param(weight, empty, x.dtype),
                _param(bias, empty, x.dtype), x.dtype.type(eps), out.reshape(rows, count),
                mean, rstd)
    return out, mean, rstd


def layer_norm_backward(g, x, mean, rstd, weight, count, needs, pshape):
    """``(gx, gw, gb)`` from the output's ``g``, forward's statistics and ``weight``;
    ``needs``: which of the three to compute (the others come back None); ``pshape``: the
    parameters' shape."""
    x = c_array(x)
    dtype = x.dtype
    rows = x.size // count
    empty = _EMPTY[dtype]
    g = c_array(g, x)
    gx = np.empty(x.shape, dtype) if needs[0] else empty
    gw = np.zeros(count, dtype) if needs[1] else empty
    gb = np.zeros(count, dtype) if needs[2] else empty
    _layer_norm_backward(g.reshape(rows, count), x.reshape(rows, count),
                         np.asarray(mean, dtype, order='C').reshape(rows),
                         np.asarray(rstd, dtype, order='C').reshape(rows),
                         _param(weight, empty, dtype), gx.reshape(-1, count) if needs[0] else
                         empty.reshape(0, count), gw, gb, bool(needs[0]))
    return (gx if needs[0] else None, gw.reshape(pshape) if needs[1] else None,
            gb.reshape(pshape) if needs[2] else None)


def _param(p, empty, dtype):
    return empty if p is None else np.asarray(p, dtype, order='C').reshape(-1)
