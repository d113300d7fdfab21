"""``x @ weight.T (+ bias)`` for a few rows of ``x``: F.linear's forward at inference's
sizes (batch 1, a short context).

NumPy hands ``x @ weight.T`` to BLAS as a product with a transposed operand, and OpenBLAS
runs that form 2-6x slower than the untransposed one when ``x`` has a handful of rows (its
small-matrix kernels refuse it past a size: 128 -> 384 on 4 rows took 30-40 us against 5
for the same product with the weight stored transposed). Reading ``weight`` as it is, row
by row, makes every output a dot product of two contiguous rows: tiles of 4 rows of ``x``
by 4 rows of ``weight`` keep 16 sums in registers, each vectorised along the shared
dimension, so every value loaded serves four products. Measured on one thread against NumPy's
``x @ w.T + b`` (OpenBLAS 0.3.31, SkylakeX kernels, AMD EPYC), float32 and float64: 1 to 4x
faster from 2 to 64 rows at GPT-small sizes (128 -> 384 on 8 rows 11.5 against 33 us;
4096 -> 4096 on 4 rows 5.0 against 19.6 ms), level at 64 rows, and on one row within 8%
either way (BLAS's matrix-vector product; 7% slower on a 4096 x 4096 weight, read from
memory by both). Past 64 rows BLAS's blocked product wins, so the op asks for this kernel
only up to ``MAX_ROWS``, and only for products up to ``MAX_WORK`` multiply-adds (about
0.2 ms on one core): the kernel is serial, and on a larger product BLAS may split the work
over threads (not measured on the shared two-core machine where this was written).
"""
import numpy as np

from ._math import kernel, ZERO

MAX_ROWS = 64
MAX_WORK = 1 << 23


@kernel
def _linear_rows(x, w, b, out):
    # out[m, j] = sum_k x[m, k] w[j, k] (+ b[j]); b empty: no bias
    rows, inner = x.shape
    cols = w.shape[0]
    has_bias = b.size > 0
    j = 0
    while j + 4 <= cols:
        m = 0
        while m + 4 <= rows:
            a0 = a1 = a2 = a3 = ZERO
            b0 = b1 = b2 = b3 = ZERO
            c0 = c1 = c2 = c3 = ZERO
            d0 = d1 = d2 = d3 = ZERO
            for k in range(inner):
                x0, x1, x2, x3 = x[m, k], x[m + 1, k], x[m + 2, k], x[m + 3, k]
                w0, w1, w2, w3 = w[j, k], w[j + 1, k], w[j + 2, k], w[j + 3, k]
                a0 += x0 * w0
                a1 += x0 * w1
                a2 += x0 * w2
                a3 += x0 * w3
                b0 += x1 * w0
                b1 += x1 * w1
                b2 += x1 * w2
                b3 += x1 * w3
                c0 += x2 * w0
                c1 += x2 * w1
                c2 += x2 * w2
                c3 += x2 * w3
                d0 += x3 * w0
                d1 += x3 * w1
                d2 += x3 * w2
                d3 += x3 * w3
            if has_bias:
                e0, e1, e2, e3 = b[j], b[j + 1], b[j + 2], b[j + 3]
                a0 += e0
                a1 += e1
                a2 += e2
                a3 += e3
                b0 += e0
                b1 += e1
                b2 += e2
                b3 += e3
                c0 += e0
                c1 += e1
                c2 += e2
                c3 += e3
                d0 += e0
                d1 += e1
                d2 += e2
                d3 += e3
            out[m, j], out[m, j + 1], out[m, j + 2], out[m, j + 3] = a0, a1, a2, a3
            out[m + 1, j], out[m + 1, j + 1], out[m + 1, j + 2], out[m + 1, j + 3] = (
                b0, b1, b2, b3)
            out[m + 2, j], out[m + 2, j + 1], out[m + 2, j + 2], out[m + 2, j + 3] = (
                c0, c1, c2, c3)
            out[m + 3, j], out[m + 3, j + 1], out[m + 3, j + 2], out[m + 3, j + 3] = (
                d0, d1, d2, d3)
            m += 4
        while m < rows:     # the last rows, one at a time against the same 4 weight rows
            a0 = a1 = a2 = a3 = ZERO
            for k in range(inner):
                x0 = x[m, k]
                a0 += x0 * w[j, k]
                a1 += x0 * w[j + 1, k]
                a2 += x0 * w[j + 2, k]
                a3 += x0 * w[j + 3, k]
            if has_bias:
                a0 += b[j]
                a1 += b[j + 1]
                a2 += b[j + 2]
                a3 += b[j + 3]
            out[m, j], out[m, j + 1], out[m, j + 2], out[m, j + 3] = a0, a1, a2, a3
            m += 1
        j += 4
    while j < cols:         # the last weight rows, one at a time
        for m in range(rows):
            a0 = ZERO
            for k in range(inner):
                a0 += x[m, k] * w[j, k]
            if has_bias:
                a0 += b[j]
            out[m, j] = a0
        j += 1


_EMPTY = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


def linear(x, weight, bias):
    """``x @ weight.T (+ bias)`` for a C-contiguous (rows, in) ``x`` and (out, in)
    ``weight`` of its dtype; ``bias``: None or an (out,) array of that dtype."""
    out = np.empty((x.shape[0], weight.shape[0]), x.dtype)
    _linear_rows(x, weight, _EMPTY[x.dtype] if bias is None else bias, out)
    return out
