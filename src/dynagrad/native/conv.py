"""im2col and col2im, the array halves of a convolution around its matrix products.

``im2col`` gathers the windows of ``x`` (N, C, *S) into columns (N, C*prod(K), prod(out)),
zero where a window reaches into the padding; ``col2im`` is its adjoint, summing columns
back into an image. One source serves 1, 2 and 3 spatial dimensions: shapes are padded to
three (size 1, kernel 1, stride 1, no padding) before the call, so 1-d and 2-d run the 3-d
loops with a trivial outer axis. Groups do not reach here: the columns of all channels
are the same whatever the grouping, which only the GEMM that follows sees.

The NumPy path builds the columns from a strided window view of a zero-padded copy (one
``copyto`` with eight-dimensional strides, whose inner runs are a few elements long), and
col2im as one strided slice-add per kernel offset over a padded buffer. Here each column
row is written with its valid run found once (no test per element, a plain copy for
stride 1, vectorised), and col2im accumulates one image plane at a time while it stays in
cache.
"""
import numpy as np

from ._math import c_array, kernel


@kernel
def _ceil_div(a, b):
    return -((-a) // b)


@kernel
def _valid_run(out, size, stride, pad, k, dilation):
    """Outputs ``o`` in ``[lo, hi)`` whose tap ``o * stride - pad + k * dilation`` lies inside
    ``[0, size)``."""
    shift = k * dilation - pad
    lo = max(0, _ceil_div(-shift, stride))
    hi = min(out, _ceil_div(size - shift, stride))
    return lo, max(lo, hi)


@kernel
def _im2col(x, cols, ksize, stride, pad, dilation):
    # x (N, C, D, H, W); cols (N, C*KD*KH*KW, OD, OH, OW)
    N, C, D, H, W = x.shape
    OD, OH, OW = cols.shape[2], cols.shape[3], cols.shape[4]
    KD, KH, KW = ksize
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    for n in range(N):
        r = 0
        for c in range(C):
            for kd in range(KD):
                for kh in range(KH):
                    for kw in range(KW):
                        lo, hi = _valid_run(OW, W, sw, pw, kw, dw)
                        shift = kw * dw - pw
                        for od in range(OD):
                            i = od * sd - pd + kd * dd
                            inside_d = 0 <= i < D
                            for oh in range(OH):
                                j = oh * sh - ph + kh * dh
                                if inside_d and 0 <= j < H:
                                    for ow in range(lo):
                                        cols[n, r, od, oh, ow] = 0
                                    if sw == 1:
                                        for ow in range(lo, hi):
                                            cols[n, r, od, oh, ow] = x[n, c, i, j, ow + shift]
                                    else:
                                        for ow in range(lo, hi):
                                            cols[n, r, od, oh, ow] = x[n, c, i, j,
                                                                       ow * sw + shift]
                                    for ow in range(hi, OW):
                                        cols[n, r, od, oh, ow] = 0
                                else:
                                    for ow in range(OW):
                                        cols[n, r, od, oh, ow] = 0
                        r += 1


@kernel
def _col2im(cols, gx, ksize, stride, pad, dilation):
    # the adjoint of _im2col: gx (N, C, D, H, W) = sum of the columns at their taps
    N, C, D, H, W = gx.shape
    OD, OH, OW = cols.shape[2], cols.shape[3], cols.shape[4]
    KD, KH, KW = ksize
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    for n in range(N):
        r = 0
        for c in range(C):
            # one (n, c) plane at a time: every kernel offset adds into it while it is in
            # cache, and it is zeroed here rather than by a separate pass over the whole
            for i in range(D):
                for j in range(H):
                    for w in range(W):
                        gx[n, c, i, j, w] = 0
            for kd in range(KD):
                for kh in range(KH):
                    for kw in range(KW):
                        lo, hi = _valid_run(OW, W, sw, pw, kw, dw)
                        shift = kw * dw - pw
                        for od in range(OD):
                            i = od * sd - pd + kd * dd
                            if not 0 <= i < D:
                                continue
                            for oh in range(OH):
                                j = oh * sh - ph + kh * dh
                                if not 0 <= j < H:
                                    continue
                                if sw == 1:
                                    for ow in range(lo, hi):
                                        gx[n, c, i, j, ow + shift] += cols[n, r, od, oh, ow]
                                else:
                                    for ow in range(lo, hi):
                                        gx[n, c, i, j, ow * sw + shift] += cols[n, r, od, oh,
                                                                                 ow]
                        r += 1


def _three(values, fill):
    """Per-dimension ``values`` (1 to 3 of them) padded in front to three with ``fill``."""
    return (fill,) * (3 - len(values)) + tuple(int(v) for v in values)


def im2col(x, K, stride, pads, dilation, out, cols=None):
    """The columns (N, C*prod(K), prod(out)) of ``x`` (N, C, *S) under a kernel of size
    ``K`` (``pads``: (lo, hi) per spatial dim; only lo matters, ``out`` says where the
    windows stop), written into ``cols`` when given (any C-contiguous array of that size)."""
    x = c_array(x)
    N, C = x.shape[:2]
    S = x.shape[2:]
    L = int(np.prod(out, dtype=np.int64))
    ck = C * int(np.prod(K, dtype=np.int64))
    if cols is None:
        cols = np.empty((N, ck, L), x.dtype)
    _im2col(x.reshape((N, C) + _three(S, 1)), cols.reshape((N, ck) + _three(out, 1)),
            _three(K, 1), _three(stride, 1), _three([lo for lo, _ in pads], 0),
            _three(dilation, 1))
    return cols.reshape(N, ck, L)


def col2im(cols, size, K, stride, pads, dilation):
    """The adjoint of ``im2col``: ``cols`` (N, C, *K, *out) summed into a new (N, C, *size)."""
    cols = c_array(cols)
    N, C = cols.shape[:2]
    out = cols.shape[2 + len(K):]
    ck = C * int(np.prod(K, dtype=np.int64))
    gx = np.empty((N, C) + tuple(size), cols.dtype)
    if gx.size:
        _col2im(cols.reshape((N, ck) + _three(out, 1)), gx.reshape((N, C) + _three(size, 1)),
                _three(K, 1), _three(stride, 1), _three([lo for lo, _ in pads], 0),
                _three(dilation, 1))
    return gx
