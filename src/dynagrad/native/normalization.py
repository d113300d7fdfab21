"""Layer norm and RMS norm over the trailing values of each row: forward (statistics and
the affine map in one kernel, two or three passes over a row) and backward (input, weight
and bias gradients together, two passes over a row)."""
import math

import numpy as np

from ._math import c_array, kernel, ONE, ZERO
from . import chunks
from .chunks import array_at, by_dtype, entry, float_at, rows_at

# Values (rows times their length) per thread below which splitting did not pay (2-core
# VM, chunks on OpenBLAS's workers): layer norm (192, 128) forward in 15 us on two threads
# against 22 on one, backward (input only) 19 against 16; (384, 128) 26 against 34 and
# 30 against 44; (768, 128), the benchmark GPT's, 42 against 62 both ways.
# The backward splits only when no parameter gradient is wanted: those sum over all rows,
# and per-chunk partial sums would change the summation order (results would depend on
# the thread count); at the sizes measured the parameter sums are most of its time anyway.
MIN_PER_THREAD = 32768


def _row_parts(rows, count):
    return chunks.parts(rows, -(-MIN_PER_THREAD // max(count, 1)))


# Rows are indexed as x[row, j] with range loops throughout: iterating over a row view
# (``for v in x[row]``) compiled 8x slower here, the loops no longer vectorised.
@kernel
def _layer_norm(x, w, b, eps, inv_n, out, mean, rstd):
    # inv_n = 1 / n comes in the data's dtype: ONE / n here would be float64 (n is an int),
    # and a float64 mean turns the float32 row passes into conversions
    rows, n = x.shape
    affine_w, affine_b = w.size > 0, b.size > 0
    for row in range(rows):
        total = ZERO
        for j in range(n):
            total += x[row, j]
        mu = total * inv_n
        sq = ZERO
        for j in range(n):
            d = x[row, j] - mu
            sq += d * d
        r = ONE / math.sqrt(sq * inv_n + eps)
        mean[row], rstd[row] = mu, r
        if affine_w and affine_b:
            for j in range(n):
                out[row, j] = (x[row, j] - mu) * r * w[j] + b[j]
        elif affine_w:
            for j in range(n):
                out[row, j] = (x[row, j] - mu) * r * w[j]
        elif affine_b:
            for j in range(n):
                out[row, j] = (x[row, j] - mu) * r + b[j]
        else:
            for j in range(n):
                out[row, j] = (x[row, j] - mu) * r


@kernel
def _layer_norm_backward(g, x, mean, rstd, w, inv_n, gx, gw, gb, want_x):
    # gx = rstd * (g w - mean(g w) - xhat mean(g w xhat)), xhat = (x - mean) rstd; gw, gb
    # are summed over rows as they go (left empty when not wanted)
    rows, n = x.shape
    has_w, want_w, want_b = w.size > 0, gw.size > 0, gb.size > 0
    for row in range(rows):
        mu, r = mean[row], rstd[row]
        sum_g = ZERO
        sum_gx = ZERO
        for j in range(n):
            xhat = (x[row, j] - mu) * r
            gj = g[row, j]
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
            if has_w:
                for j in range(n):
                    gx[row, j] = (g[row, j] * w[j] - a - (x[row, j] - mu) * r * c) * r
            else:
                for j in range(n):
                    gx[row, j] = (g[row, j] - a - (x[row, j] - mu) * r * c) * r


@kernel
def _rms_norm(x, w, eps, inv_n, out, rstd):
    rows, n = x.shape
    affine = w.size > 0
    for row in range(rows):
        sq = ZERO
        for j in range(n):
            sq += x[row, j] * x[row, j]
        r = ONE / math.sqrt(sq * inv_n + eps)
        rstd[row] = r
        if affine:
            for j in range(n):
                out[row, j] = x[row, j] * r * w[j]
        else:
            for j in range(n):
                out[row, j] = x[row, j] * r


@kernel
def _rms_norm_backward(g, x, rstd, w, inv_n, gx, gw, want_x):
    # gx = r (g w - x r^2 mean(g w x)); gw summed over rows as it goes
    rows, n = x.shape
    has_w, want_w = w.size > 0, gw.size > 0
    for row in range(rows):
        r = rstd[row]
        dot = ZERO
        for j in range(n):
            gj = g[row, j]
            if want_w:
                gw[j] += gj * x[row, j] * r
            if has_w:
                gj *= w[j]
            dot += gj * x[row, j]
        if want_x:
            c = dot * inv_n * r * r
            if has_w:
                for j in range(n):
                    gx[row, j] = (g[row, j] * w[j] - x[row, j] * c) * r
            else:
                for j in range(n):
                    gx[row, j] = (g[row, j] - x[row, j] * c) * r


# Chunk entries (``chunks``): each span unpacks its descriptor and runs the kernel on rows
# lo:hi; the entry picks the dtype. Fields: (rows, n) arrays by address, parameters with
# their sizes, floats as bits.
@kernel
def _layer_norm_span(d, t):
    lo, hi, n = d[0], d[1], d[4]
    _layer_norm(rows_at(d[3], lo, hi, n, t), array_at(d[5], d[6], t), array_at(d[7], d[8], t),
                float_at(d[9], t), float_at(d[10], t), rows_at(d[11], lo, hi, n, t),
                array_at(d[12], hi, t)[lo:], array_at(d[13], hi, t)[lo:])


@entry
def _layer_norm_chunks(d):
    by_dtype(d, _layer_norm_span)


@kernel
def _layer_norm_backward_span(d, t):
    lo, hi, n = d[0], d[1], d[5]
    empty = array_at(d[9], 0, t)
    _layer_norm_backward(rows_at(d[3], lo, hi, n, t), rows_at(d[4], lo, hi, n, t),
                         array_at(d[6], hi, t)[lo:], array_at(d[7], hi, t)[lo:],
                         array_at(d[8], d[10], t), float_at(d[11], t),
                         rows_at(d[12], lo, hi, n, t), empty, empty, True)


@entry
def _layer_norm_backward_chunks(d):
    by_dtype(d, _layer_norm_backward_span)


@kernel
def _rms_norm_span(d, t):
    lo, hi, n = d[0], d[1], d[4]
    _rms_norm(rows_at(d[3], lo, hi, n, t), array_at(d[5], d[6], t), float_at(d[7], t),
              float_at(d[8], t), rows_at(d[9], lo, hi, n, t), array_at(d[10], hi, t)[lo:])


@entry
def _rms_norm_chunks(d):
    by_dtype(d, _rms_norm_span)


@kernel
def _rms_norm_backward_span(d, t):
    lo, hi, n = d[0], d[1], d[5]
    _rms_norm_backward(rows_at(d[3], lo, hi, n, t), rows_at(d[4], lo, hi, n, t),
                       array_at(d[6], hi, t)[lo:], array_at(d[7], d[8], t),
                       float_at(d[9], t), rows_at(d[10], lo, hi, n, t),
                       array_at(d[11], 0, t), True)


@entry
def _rms_norm_backward_chunks(d):
    by_dtype(d, _rms_norm_backward_span)


_EMPTY = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


def layer_norm(x, count, weight, bias, eps):
    """``(out, mean, rstd)`` of ``x`` normalised over its trailing ``count`` values;
    ``mean`` and ``rstd`` have one value per row (shaped by the caller)."""
    x = c_array(x)
    rows = x.size // count
    empty = _EMPTY[x.dtype]
    out = np.empty(x.shape, x.dtype)
    mean, rstd = np.empty(rows, x.dtype), np.empty(rows, x.dtype)
    parts = _row_parts(rows, count)
    if parts == 1:
        _layer_norm(x.reshape(rows, count), _param(weight, empty, x.dtype),
                    _param(bias, empty, x.dtype), x.dtype.type(eps), x.dtype.type(1 / count),
                    out.reshape(rows, count),
                    mean, rstd)
        return out, mean, rstd
    w, b = _param(weight, empty, x.dtype), _param(bias, empty, x.dtype)
    chunks.run(_layer_norm_chunks, rows, parts, x.dtype, x, count, w, w.size, b, b.size,
               float(x.dtype.type(eps)), float(x.dtype.type(1 / count)), out, mean, rstd)
    return out, mean, rstd


def layer_norm_backward(g, x, mean, rstd, weight, count, needs, pshape):
    """``(gx, gw, gb)`` from the output's ``g``, forward's statistics and ``weight``;
    ``needs``: which of the three to compute (the others come back None); ``pshape``: the
    parameters' shape."""
    g2, x2, gx, gx2, (gw, gb) = _backward_arrays(g, x, count, needs)
    dtype, empty = x2.dtype, _EMPTY[x2.dtype]
    parts = 1 if needs[1] or needs[2] or not needs[0] else _row_parts(*x2.shape)
    if parts == 1:
        _layer_norm_backward(g2, x2, _per_row(mean, x2), _per_row(rstd, x2),
                             _param(weight, empty, dtype), dtype.type(1 / count), gx2, gw,
                             gb, bool(needs[0]))
    else:
        w = _param(weight, empty, dtype)
        chunks.run(_layer_norm_backward_chunks, x2.shape[0], parts, dtype, g2, x2, count,
                   _per_row(mean, x2), _per_row(rstd, x2), w, empty, w.size,
                   float(dtype.type(1 / count)), gx2)
    return (gx, gw.reshape(pshape) if needs[1] else None,
            gb.reshape(pshape) if needs[2] else None)


def _backward_arrays(g, x, count, needs):
    """``g`` and ``x`` as C-contiguous (rows, count) arrays; the input's gradient (None when
    not wanted) and its rows (an empty stand-in then); a zeroed buffer for each parameter
    gradient after it, wanted (``needs[1:]``) or empty."""
    x = c_array(x)
    dtype = x.dtype
    rows = x.size // count
    empty = _EMPTY[dtype]
    gx = np.empty(x.shape, dtype) if needs[0] else None
    return (c_array(g, x).reshape(rows, count), x.reshape(rows, count), gx,
            empty.reshape(0, count) if gx is None else gx.reshape(rows, count),
            [np.zeros(count, dtype) if want else empty for want in needs[1:]])


def _per_row(stat, x2):
    return np.asarray(stat, x2.dtype, order='C').reshape(x2.shape[0])


def _param(p, empty, dtype):
    return empty if p is None else np.asarray(p, dtype, order='C').reshape(-1)


def rms_norm(x, count, weight, eps):
    """``(out, rstd)`` of ``x`` normalised by the root mean square of its trailing
    ``count`` values; ``rstd`` has one value per row."""
    x = c_array(x)
    rows = x.size // count
    out = np.empty(x.shape, x.dtype)
    rstd = np.empty(rows, x.dtype)
    parts = _row_parts(rows, count)
    if parts == 1:
        _rms_norm(x.reshape(rows, count), _param(weight, _EMPTY[x.dtype], x.dtype),
                  x.dtype.type(eps), x.dtype.type(1 / count), out.reshape(rows, count), rstd)
        return out, rstd
    w = _param(weight, _EMPTY[x.dtype], x.dtype)
    chunks.run(_rms_norm_chunks, rows, parts, x.dtype, x, count, w, w.size,
               float(x.dtype.type(eps)), float(x.dtype.type(1 / count)), out, rstd)
    return out, rstd


def rms_norm_backward(g, x, rstd, weight, count, needs):
    """``(gx, gw)`` (each None where ``needs`` says it is not wanted)."""
    g2, x2, gx, gx2, (gw,) = _backward_arrays(g, x, count, needs)
    dtype = x2.dtype
    parts = 1 if needs[1] or not needs[0] else _row_parts(*x2.shape)
    if parts == 1:
        _rms_norm_backward(g2, x2, _per_row(rstd, x2), _param(weight, _EMPTY[dtype], dtype),
                           dtype.type(1 / count), gx2, gw, bool(needs[0]))
    else:
        w = _param(weight, _EMPTY[dtype], dtype)
        chunks.run(_rms_norm_backward_chunks, x2.shape[0], parts, dtype, g2, x2, count,
                   _per_row(rstd, x2), w, w.size, float(dtype.type(1 / count)), gx2,
                   _EMPTY[dtype])
    return gx, gw.reshape(weight.shape) if needs[1] else None
