"""Embedding's backward: the gradient's rows added into a zero table at their indices;
``masked_fill`` with a mask repeated over leading axes (attention's causal mask).

One pass over the rows in their order, each added into its table row, which is what
PyTorch's CPU embedding backward does (``grad_weight[k].add_(grad[i], scale)`` row after
row): the sums round as PyTorch's do, bit for bit, where the NumPy path's sorted
``np.add.reduceat`` (a table no bigger than the batch) sums in another order. A scaled
row (``scale_grad_by_freq``'s 1 / count) is added with a fused multiply-add, as PyTorch's
vectorised ``add`` with alpha is; a row whose factor is 0 (``padding_idx``) is skipped, as
PyTorch skips it.
"""
import math

import numpy as np

from ._math import c_array, kernel
from . import chunks
from .chunks import array_at, by_dtype, entry, float_at, rows_at


@kernel
def _scatter_rows(rows, idx, out):
    for i in range(idx.shape[0]):
        k = idx[i]
        for j in range(rows.shape[1]):
            out[k, j] += rows[i, j]


@kernel
def _scatter_scaled_rows(rows, idx, factor, out):
    for i in range(idx.shape[0]):
        k = idx[i]
        f = factor[i]
        if f != 0:
            for j in range(rows.shape[1]):
                out[k, j] += rows[i, j] * f


def embedding_backward(rows, idx, factor, num):
    """The (num, D) weight gradient from the (N, D) gradient ``rows`` of the N looked-up
    rows, their indices ``idx`` (N, each in [0, num)) and each row's ``factor`` (N, 0 at
    padding) or None."""
    out = np.zeros((num, rows.shape[1]), rows.dtype)
    if factor is None:
        _scatter_rows(rows, idx, out)
    else:
        _scatter_scaled_rows(rows, idx, np.asarray(factor, rows.dtype).reshape(-1), out)
    return out


@kernel
def _masked_fill(x, mask, value, out):
    # mask: one row for every row of x, or one row repeated (mask.shape[0] == 1)
    repeated = mask.shape[0] == 1
    for row in range(x.shape[0]):
        m = 0 if repeated else row
        for j in range(x.shape[1]):
            out[row, j] = value if mask[m, j] else x[row, j]


@kernel
def _masked_fill_span(d, t):
    lo, hi, n = d[0], d[1], d[3]
    mask_rows = d[6]
    mask = rows_at(d[5], 0, mask_rows, n, np.bool_)
    if mask_rows != 1:
        mask = mask[lo:hi]
    _masked_fill(rows_at(d[4], lo, hi, n, t), mask, float_at(d[7], t),
                 rows_at(d[8], lo, hi, n, t))


@entry
def _masked_fill_chunks(d):
    by_dtype(d, _masked_fill_span)


# Values per thread below which splitting rows did not pay (2-core VM, chunks on OpenBLAS's
# workers): (6, 4, 64, 64) under a causal mask in 16 us on two threads against 21 on one,
# half that size 10.5 against 9.7 (NumPy's where: 63 and 33)
MIN_PER_THREAD = 49152


def masked_fill(x, mask, value):
    """``value`` where the bool ``mask`` is True, else ``x``, as a new array of ``x``'s
    shape and dtype; None (the NumPy path then) unless ``mask`` is ``x``'s shape or that of
    its trailing axes, with leading axes of size 1 or absent (broadcast over them)."""
    if mask.ndim > x.ndim or mask.dtype != np.bool_ or x.ndim == 0:
        return None
    shape = (1,) * (x.ndim - mask.ndim) + mask.shape
    lead = next((k for k in range(x.ndim + 1) if shape[k:] == x.shape[k:]), None)
    if lead is None or any(size != 1 for size in shape[:lead]) or x.size == 0:
        return None
    x = c_array(x)
    # a row: the block the mask repeats over (or the last axis when it repeats nothing)
    n = x.shape[-1] if lead == x.ndim or lead == 0 else math.prod(x.shape[lead:])
    if lead == x.ndim:          # one value of the mask for everything
        mask = np.broadcast_to(mask.reshape(1, 1), (1, n))
    mask2 = c_array(mask).reshape(-1, n)
    out = np.empty(x.shape, x.dtype)
    rows = x.size // n
    fill = x.dtype.type(value)
    parts = chunks.parts(rows, -(-MIN_PER_THREAD // n))
    if parts == 1:
        _masked_fill(x.reshape(rows, n), mask2, fill, out.reshape(rows, n))
    else:
        chunks.run(_masked_fill_chunks, rows, parts, x.dtype, n, x, mask2, mask2.shape[0],
                   float(fill), out)
    return out
