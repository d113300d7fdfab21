"""Max pooling: forward (each window's max and the flat index of its argmax, PyTorch's
``return_indices``) and backward (the gradient scattered to those indices).

Rows are the leading dimensions of the input flattened; the generic kernel pads spatial
shapes to three (1-d and 2-d pool as 3-d with a trivial outer axis). Window semantics are
PyTorch's: the first in-range tap starts the search, a later one wins if it is larger or
NaN (so a window holding NaN gives NaN and the last NaN's index), and a window of -inf keeps
its first in-range tap.

The 2x2 window at stride 2 without padding has its own kernel with constant sizes, which
LLVM unrolls and vectorises; the generic kernel's search over windows of run-time size stays
a chain of selects and lost to the NumPy path's whole-array passes in measurements, so the
op sends only the 2x2 geometry here (``nn.functional.pooling._native_fits``). The backward
scatter serves every geometry.
"""
import numpy as np

from ._math import c_array, kernel
from . import chunks
from .chunks import array_at, by_dtype, entry

# Input values per thread below which splitting the planes did not pay. Forward (2x2):
# (32, 16, 26, 26) on two threads 1.24x one thread's time, (64, 16, 26, 26) 0.79x,
# (64, 32, 26, 26) 0.69x. Backward (a scatter, lighter): (64, 32, 26, 26) 0.78x,
# (32, 32, 26, 26) 1.07x, (32, 16, 26, 26) 1.42x.
MIN_PER_THREAD = 262144
MIN_PER_THREAD_BACKWARD = 524288


U = np.uint64


# Each window is searched by scalar code: the first in-range tap starts it, a later tap
# takes over if larger or NaN (PyTorch's rule, from a start of -inf: a window of -inf keeps
# its first in-range tap, and the last NaN wins). Flat arrays with unsigned offsets: numba
# tests a signed index for wrapping around on each access.
@kernel
def _max_pool(x, y, idx, shape, ksize, out, stride, pad, dilation):
    # x: (R, D, H, W) flat; y, idx: (R, OD, OH, OW) flat
    R, D, H, W = shape
    KD, KH, KW = ksize
    OD, OH, OW = out
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    o = U(0)
    for r in range(R):
        base = U(r * D * H * W)
        for od in range(OD):
            d0 = od * sd - pd
            kd0, kd1 = _taps(d0, KD, dd, D)
            for oh in range(OH):
                h0 = oh * sh - ph
                kh0, kh1 = _taps(h0, KH, dh, H)
                for ow in range(OW):
                    w0 = ow * sw - pw
                    kw0, kw1 = _taps(w0, KW, dw, W)
                    at = ((d0 + kd0 * dd) * H + h0 + kh0 * dh) * W + w0 + kw0 * dw
                    best = x[base + U(at)]
                    for kd in range(kd0, kd1):
                        for kh in range(kh0, kh1):
                            row = ((d0 + kd * dd) * H + h0 + kh * dh) * W + w0
                            for kw in range(kw0, kw1):
                                q = row + kw * dw
                                v = x[base + U(q)]
                                take = (v > best) | (v != v)
                                best = v if take else best
                                at = q if take else at
                    y[o] = best
                    idx[o] = at
                    o += U(1)


@kernel
def _taps(start, k, dilation, size):
    """The taps ``[lo, hi)`` of a window starting at ``start`` that lie in ``[0, size)``
    (padding is at most half a window and ceil_mode windows start inside: never empty)."""
    lo = 0
    while start + lo * dilation < 0:
        lo += 1
    hi = k
    while start + (hi - 1) * dilation >= size:
        hi -= 1
    return lo, hi


# The 2x2 window at stride 2 without padding (most CNNs' pooling): the same rule with
# every count a constant. Each output row is two passes: the values with the winning tap
# as a 32-bit code (0-3), then the codes turned into int64 flat indices. In one pass the
# int64 index selects, at half the float lanes' width, kept the loop scalar: 3.3x slower
# (0.38 against 0.12 ms on (32, 16, 26, 26), one thread; PyTorch's 1.9). Flat arrays with
# unsigned offsets, never slices: a slice per row costs reference counting in numba.
@kernel
def _max_pool_2x2(x, y, idx, R, H, W, OH, OW):
    code = np.empty(OW, np.int32)
    for r in range(R):
        for oh in range(OH):
            top = U((r * H + 2 * oh) * W)
            bottom = top + U(W)
            o = U((r * OH + oh) * OW)
            for ow in range(OW):
                j = U(2 * ow)
                a, b, c, d = x[top + j], x[top + j + U(1)], x[bottom + j], x[bottom + j + U(1)]
                best, at = a, np.int32(0)
                take = (b > best) | (b != b)
                best, at = (b, np.int32(1)) if take else (best, at)
                take = (c > best) | (c != c)
                best, at = (c, np.int32(2)) if take else (best, at)
                take = (d > best) | (d != d)
                best, at = (d, np.int32(3)) if take else (best, at)
                y[o + U(ow)] = best
                code[ow] = at
            first = 2 * oh * W
            for ow in range(OW):
                at = code[ow]
                idx[o + U(ow)] = first + 2 * ow + (at & 1) + (at >> 1) * W


@kernel
def _max_pool_backward(g, idx, gx, rows, n_in, n_out):
    # gx: (rows, n_in) flat, zeroed here; g, idx: (rows, n_out) flat
    for r in range(rows):
        base = U(r * n_in)
        for p in range(U(n_in)):
            gx[base + p] = 0
        at = U(r * n_out)
        for o in range(U(n_out)):
            gx[base + U(idx[at + o])] += g[at + o]


def _three(values, fill):
    return (fill,) * (3 - len(values)) + tuple(int(v) for v in values)


@kernel
def _max_pool_span(d, t):
    # fields: x, y, indices, values a plane in and out, 2x2 or not, then the geometry
    lo, hi, n_in, n_out = d[0], d[1], d[6], d[7]
    x = array_at(d[3], hi * n_in, t)[lo * n_in:]
    y = array_at(d[4], hi * n_out, t)[lo * n_out:]
    idx = array_at(d[5], hi * n_out, np.int64)[lo * n_out:]
    if d[8]:
        _max_pool_2x2(x, y, idx, hi - lo, d[10], d[11], d[16], d[17])
    else:
        _max_pool(x, y, idx, (hi - lo, d[9], d[10], d[11]), (d[12], d[13], d[14]),
                  (d[15], d[16], d[17]), (d[18], d[19], d[20]), (d[21], d[22], d[23]),
                  (d[24], d[25], d[26]))


@entry
def _max_pool_chunks(d):
    by_dtype(d, _max_pool_span)


@kernel
def _max_pool_backward_span(d, t):
    lo, hi, n_in, n_out = d[0], d[1], d[6], d[7]
    _max_pool_backward(array_at(d[3], hi * n_out, t)[lo * n_out:],
                       array_at(d[4], hi * n_out, np.int64)[lo * n_out:],
                       array_at(d[5], hi * n_in, t)[lo * n_in:], hi - lo, n_in, n_out)


@entry
def _max_pool_backward_chunks(d):
    by_dtype(d, _max_pool_backward_span)


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
    if not y.size:
        return y, idx
    two_by_two = n == 2 and tuple(k) == (2, 2) == tuple(s) and not any(p) \
        and tuple(d) == (1, 1) and 2 * out[0] <= x.shape[-2] and 2 * out[1] <= x.shape[-1]
    parts = chunks.parts(rows, -(-MIN_PER_THREAD // max(x.size // rows, 1)))
    if parts == 1:
        if two_by_two:
            _max_pool_2x2(x.reshape(-1), y.reshape(-1), idx.reshape(-1), rows,
                          *x.shape[-2:], *out)
        else:
            _max_pool(x.reshape(-1), y.reshape(-1), idx.reshape(-1),
                      (rows,) + _three(x.shape[-n:], 1), _three(k, 1), _three(out, 1),
                      _three(s, 1), _three(p, 0), _three(d, 1))
        return y, idx
    geometry = (_three(x.shape[-n:], 1) + _three(k, 1) + _three(out, 1) + _three(s, 1)
                + _three(p, 0) + _three(d, 1))
    chunks.run(_max_pool_chunks, rows, parts, x.dtype, x, y, idx, x.size // rows,
               y.size // rows, two_by_two, *geometry)
    return y, idx


def max_pool_backward(g, idx, in_shape, n):
    """The gradient of an input of ``in_shape`` pooled over its last ``n`` axes, from the
    output's ``g``: each value added at its window's argmax ``idx`` (overlapping windows
    sharing a winner add up)."""
    g = np.asarray(np.broadcast_to(g, idx.shape), order='C')   # (maybe an expanded view)
    gx = np.empty(in_shape, g.dtype)
    if gx.size:
        rows = int(np.prod(in_shape[:-n], dtype=np.int64))
        n_in, n_out = gx.size // rows, g.size // rows
        parts = chunks.parts(rows, -(-MIN_PER_THREAD_BACKWARD // max(n_in, 1)))
        if parts == 1:
            _max_pool_backward(g.reshape(-1), c_array(idx).reshape(-1), gx.reshape(-1), rows,
                               n_in, n_out)
        else:
            chunks.run(_max_pool_backward_chunks, rows, parts, g.dtype, g, c_array(idx), gx,
                       n_in, n_out)
    return gx
