"""im2col and col2im, the array halves of a convolution around its matrix products, and
the whole convolution image by image over threads (``conv_forward``, ``conv_backward``:
the last section).

``im2col`` gathers the windows of ``x`` (N, C, *S) into columns (N, C*prod(K), prod(out)),
zero where a window reaches into the padding; ``col2im`` is its adjoint, summing columns
back into an image. One source serves 1, 2 and 3 spatial dimensions: shapes are padded to
three (size 1, kernel 1, stride 1, no padding) before the call, so 1-d and 2-d run the 3-d
loops with a trivial outer axis. Groups do not reach im2col and col2im: the columns of
all channels are the same whatever the grouping, which only the GEMM that follows sees
(``conv_forward`` and ``conv_backward`` take one group only).

The NumPy path builds the columns from a strided window view of a zero-padded copy (one
``copyto`` with eight-dimensional strides, whose inner runs are a few elements long), and
col2im as one strided slice-add per kernel offset over a padded buffer. Here each column
row is written with its valid run found once (no test per element, a plain copy for
stride 1, vectorised), and col2im accumulates one image plane at a time while it stays in
cache.
"""
import numpy as np

from ._math import c_array, kernel
from .threads import chunks, parallel_for

# Column values per thread below which splitting the images did not pay (the kernels are
# copies and adds: little work per value): im2col (32, 16, 13, 13) 3x3 on two threads
# 0.87x one thread's time with a core free, col2im 0.84-0.91x; im2col (64, 1, 28, 28) 1.30x
MIN_PER_THREAD = 262144


U = np.uint64


@kernel
def _valid_run(out, size, stride, shift):
    """Outputs ``o`` in ``[lo, hi)`` whose tap ``o * stride + shift`` lies in ``[0, size)``."""
    lo = 0
    while lo < out and lo * stride + shift < 0:
        lo += 1
    hi = out
    while hi > lo and (hi - 1) * stride + shift >= size:
        hi -= 1
    return lo, hi


# Flat arrays indexed by unsigned offsets: numba wraps a negative signed index around (a
# test and an add per access), which kept these loops scalar (im2col 4-7x slower); an
# unsigned index has no such test and the copies vectorise. (Unsigned and signed integers
# mixed in numba's arithmetic give float64, so every conversion is explicit.)
@kernel
def _im2col(x, cols, shape, ksize, out, stride, pad, dilation):
    # x: (N, C, D, H, W) flat; cols: (N, C, KD, KH, KW, OD, OH, OW) flat. For each kernel
    # offset the outputs whose tap lies inside the input form a box: the block is zeroed
    # first where the box does not cover it, then the box's rows are copied with no test
    # per row or element (10-40% faster than testing each row)
    N, C, D, H, W = shape
    KD, KH, KW = ksize
    OD, OH, OW = out
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    step = U(sw)
    block = U(OD * OH * OW)
    dst = U(0)
    for plane in range(N * C):
        base = plane * D * H * W
        for kd in range(KD):
            d_lo, d_hi = _valid_run(OD, D, sd, kd * dd - pd)
            for kh in range(KH):
                h_lo, h_hi = _valid_run(OH, H, sh, kh * dh - ph)
                for kw in range(KW):
                    shift = kw * dw - pw
                    lo, hi = _valid_run(OW, W, sw, shift)
                    count = U(hi - lo)
                    if d_lo > 0 or d_hi < OD or h_lo > 0 or h_hi < OH or lo > 0 or hi < OW:
                        for q in range(block):
                            cols[dst + q] = 0
                    for od in range(d_lo, d_hi):
                        i = od * sd - pd + kd * dd
                        for oh in range(h_lo, h_hi):
                            j = oh * sh - ph + kh * dh
                            src = U(base + (i * H + j) * W + lo * sw + shift)
                            run = dst + U((od * OH + oh) * OW + lo)
                            if sw == 1:
                                for q in range(count):
                                    cols[run + q] = x[src + q]
                            else:
                                for q in range(count):
                                    cols[run + q] = x[src + q * step]
                    dst += block


@kernel
def _col2im(cols, gx, shape, ksize, out, stride, pad, dilation):
    # the adjoint of _im2col: gx (N, C, D, H, W) flat, the columns summed at their taps
    N, C, D, H, W = shape
    KD, KH, KW = ksize
    OD, OH, OW = out
    sd, sh, sw = stride
    pd, ph, pw = pad
    dd, dh, dw = dilation
    step = U(sw)
    size = U(D * H * W)
    block = U(OD * OH * OW)
    src = U(0)
    for plane in range(N * C):
        base = U(plane) * size
        # one (n, c) plane at a time: every kernel offset adds into it while it is in
        # cache, and it is zeroed here rather than by a separate pass over the whole
        for q in range(size):
            gx[base + q] = 0
        for kd in range(KD):
            d_lo, d_hi = _valid_run(OD, D, sd, kd * dd - pd)
            for kh in range(KH):
                h_lo, h_hi = _valid_run(OH, H, sh, kh * dh - ph)
                for kw in range(KW):
                    shift = kw * dw - pw
                    lo, hi = _valid_run(OW, W, sw, shift)
                    count = U(hi - lo)
                    for od in range(d_lo, d_hi):
                        i = od * sd - pd + kd * dd
                        for oh in range(h_lo, h_hi):
                            j = oh * sh - ph + kh * dh
                            dst = base + U((i * H + j) * W + lo * sw + shift)
                            run = src + U((od * OH + oh) * OW + lo)
                            if sw == 1:
                                for q in range(count):
                                    gx[dst + q] += cols[run + q]
                            else:
                                for q in range(count):
                                    gx[dst + q * step] += cols[run + q]
                    src += block


def _three(values, fill):
    """Per-dimension ``values`` (1 to 3 of them) padded in front to three with ``fill``."""
    return (fill,) * (3 - len(values)) + tuple(int(v) for v in values)


def _geometry(K, stride, pads, dilation):
    return (_three(K, 1), _three(stride, 1), _three([lo for lo, _ in pads], 0),
            _three(dilation, 1))


def im2col(x, K, stride, pads, dilation, out, cols=None):
    """The columns (N, C*prod(K), prod(out)) of ``x`` (N, C, *S) under a kernel of size
    ``K`` (``pads``: (lo, hi) per spatial dim; only lo matters, ``out`` says where the
    windows stop), written into ``cols`` when given (any C-contiguous array of that size)."""
    x = c_array(x)
    N, C = x.shape[:2]
    L = int(np.prod(out, dtype=np.int64))
    ck = C * int(np.prod(K, dtype=np.int64))
    if cols is None:
        cols = np.empty((N, ck, L), x.dtype)
    if cols.size:
        k, s, p, d = _geometry(K, stride, pads, dilation)
        parts = chunks(N, -(-MIN_PER_THREAD // (ck * L)))
        if parts == 1:
            _im2col(x.reshape(-1), cols.reshape(-1), (N, C) + _three(x.shape[2:], 1), k,
                    _three(out, 1), s, p, d)
        else:
            x2, c2, spatial, o = x.reshape(N, -1), cols.reshape(N, -1), \
                _three(x.shape[2:], 1), _three(out, 1)
            parallel_for(N, parts, lambda lo, hi: _im2col(
                x2[lo:hi].reshape(-1), c2[lo:hi].reshape(-1), (hi - lo, C) + spatial, k, o,
                s, p, d))
    return cols.reshape(N, ck, L)


def col2im(cols, size, K, stride, pads, dilation):
    """The adjoint of ``im2col``: ``cols`` (N, C, *K, *out) summed into a new (N, C, *size)."""
    cols = c_array(cols)
    N, C = cols.shape[:2]
    gx = np.empty((N, C) + tuple(size), cols.dtype)
    if gx.size:
        k, s, p, d = _geometry(K, stride, pads, dilation)
        parts = chunks(N, -(-MIN_PER_THREAD // max(cols.size // N, 1)))
        if parts == 1:
            _col2im(cols.reshape(-1), gx.reshape(-1), (N, C) + _three(size, 1), k,
                    _three(cols.shape[2 + len(K):], 1), s, p, d)
        else:
            c2, g2, spatial, o = cols.reshape(N, -1), gx.reshape(N, -1), _three(size, 1), \
                _three(cols.shape[2 + len(K):], 1)
            parallel_for(N, parts, lambda lo, hi: _col2im(
                c2[lo:hi].reshape(-1), g2[lo:hi].reshape(-1), (hi - lo, C) + spatial, k, o,
                s, p, d))
    return gx


# -- a whole convolution, image by image -------------------------------------------------
#
# A convolution's GEMMs are one small product per image (NumPy's stacked matmul calls the
# BLAS once per matrix), too small for the BLAS's own threads to pay: on two threads
# OpenBLAS ran (32, 144) @ (144, 121) x 32 images in 350 us, as on one, where two Python
# threads each taking half the images took 225. So with threads the images are split here,
# and each chunk runs its columns and its products together (one hand-off, the columns
# still in cache). Each image's product is the same BLAS call as in one batched call.
#
# No product here may start OpenBLAS's own threads: two at once wait on each other inside
# OpenBLAS, and after one its threads spin for a while, taking the cores from the pool's
# (the weight gradient's products threaded by OpenBLAS, then the input gradient's split
# here: 0.85-0.91 ms in turn against 0.32 + 0.37 apart; the CNN step's median 4.09 ->
# 3.62 ms on two threads once they were not). OpenBLAS threads a product of more than
# 65536 * 4 multiply-adds (its SMP_THRESHOLD_MIN times GEMM_MULTITHREAD_THRESHOLD). The
# forward's and the input gradient's products it ran on one thread at the sizes measured;
# the weight gradient's per-image (C*K, L) @ (L, O) it threads, so those are cut into
# blocks of WEIGHT_ROWS rows below that size, on one thread as on several (bit-identical
# results; the blocks also ran 3-38% faster than whole products on one thread: 0.45 against
# 0.46 ms for 32 x (144, 121) @ (121, 32), 0.22 against 0.36 for 16 x (72, 400) @ (400, 24)).
# Above MAX_MACS_PER_IMAGE nothing is split or cut: each product is then large enough for
# OpenBLAS's threads (8 x 128^3 products 0.92x split, 4 x 256^3 0.97x).

# Multiply-adds per thread below which splitting the images did not pay (the hand-off is
# 20-40 us): conv 16->32 3x3 on (32, 16, 13, 13), 17.8M in the forward products, took
# 0.63x one thread's time on two threads; (32, 1, 28, 28) 1->16, 3.1M, 1.1x.
MIN_MACS_PER_THREAD = 4_000_000
MAX_MACS_PER_IMAGE = 2_000_000
BLAS_THREADED_MACS = 65536 * 4
WEIGHT_ROWS = 32


def _image_chunks(N, per_image):
    if per_image > MAX_MACS_PER_IMAGE:
        return 1
    return chunks(N, -(-MIN_MACS_PER_THREAD // max(per_image, 1)))


def conv_forward(x, w, K, stride, pads, dilation, out, cols=None):
    """``w`` (O, C*prod(K)) times the columns of ``x`` (N, C, *S) (one group): returns the
    output (N, O, prod(out)) and the columns (N, C*prod(K), prod(out)), written into
    ``cols`` when given. Images split over the pool above ``MIN_MACS_PER_THREAD``."""
    x = c_array(x)
    N, C = x.shape[:2]
    O, ck = w.shape
    L = int(np.prod(out, dtype=np.int64))
    parts = _image_chunks(N, O * ck * L)
    if parts == 1:
        cols = im2col(x, K, stride, pads, dilation, out, cols)
        return np.matmul(w, cols), cols
    if cols is None:
        cols = np.empty((N, ck, L), x.dtype)
    cols = cols.reshape(N, ck, L)
    y = np.empty((N, O, L), np.result_type(w, cols))
    k, s, p, d = _geometry(K, stride, pads, dilation)
    spatial, o = _three(x.shape[2:], 1), _three(out, 1)
    x2 = x.reshape(N, -1)

    def images(lo, hi):
        _im2col(x2[lo:hi].reshape(-1), cols[lo:hi].reshape(-1), (hi - lo, C) + spatial, k, o,
                s, p, d)
        np.matmul(w, cols[lo:hi], out=y[lo:hi])
    parallel_for(N, parts, images)
    return y, cols


def _weight_rows(ck, L, O):
    """The row blocks the weight gradient's per-image products are cut into, or None where
    they stay whole: small enough that OpenBLAS keeps them on one thread, or too large to
    cut (then left to OpenBLAS's threads, and the images not split)."""
    if ck * L * O <= BLAS_THREADED_MACS or ck * L * O > MAX_MACS_PER_IMAGE \
            or WEIGHT_ROWS * L * O > BLAS_THREADED_MACS:
        return None
    return WEIGHT_ROWS


def conv_backward(gy, w, cols, size, K, stride, pads, dilation):
    """The gradients of ``conv_forward`` from ``gy`` (N, O, *out), each None where not
    computed here: the input's (N, C, *size) from the weight ``w`` (O, C*prod(K)), when
    given and the images are split over the pool; the weight's (O, C*prod(K)) from the
    forward's columns ``cols`` (N, C*prod(K), L), when given and its products are cut into
    row blocks (``_weight_rows``) or the images split: the per-image products summed in
    order after the threads. The caller computes what is left, on one thread."""
    N, O = gy.shape[:2]
    out = gy.shape[2:]
    ck = w.shape[1] if w is not None else cols.shape[1]
    L = int(np.prod(out, dtype=np.int64))
    parts = _image_chunks(N, O * ck * L)
    rows = None if cols is None else _weight_rows(ck, L, O)
    if parts == 1:
        w = None
        if rows is None:
            cols = None
    elif cols is not None and rows is None and ck * L * O > BLAS_THREADED_MACS:
        cols = None
    if w is None and cols is None:
        return None, None
    gy = c_array(gy).reshape(N, O, L)
    gx = partials = None
    if w is not None:
        C = ck // int(np.prod(K, dtype=np.int64))
        gx = np.empty((N, C) + tuple(size), np.result_type(w, gy))
        k, s, p, d = _geometry(K, stride, pads, dilation)
        spatial, o = _three(size, 1), _three(out, 1)
        wt, g2 = w.T, gx.reshape(N, -1)
    if cols is not None:
        partials = np.empty((N, ck, O), np.result_type(cols, gy))
        gyt = gy.swapaxes(1, 2)
        rows = rows or ck

    def images(lo, hi):
        if gx is not None:
            back = np.matmul(wt, gy[lo:hi])
            _col2im(back.reshape(-1), g2[lo:hi].reshape(-1), (hi - lo, C) + spatial, k, o,
                    s, p, d)
        if partials is not None:
            for r in range(0, ck, rows):
                np.matmul(cols[lo:hi, r:r + rows], gyt[lo:hi], out=partials[lo:hi, r:r + rows])
    if parts == 1:
        images(0, N)
    else:
        parallel_for(N, parts, images)
    return gx, None if partials is None else np.ascontiguousarray(partials.sum(0).T)
