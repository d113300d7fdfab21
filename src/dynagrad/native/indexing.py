"""Embedding's backward: the gradient's rows added into a zero table at their indices.

One pass over the rows in their order, each added into its table row, which is what
PyTorch's CPU embedding backward does (``grad_weight[k].add_(grad[i], scale)`` row after
row): the sums round as PyTorch's do, bit for bit, where the NumPy path's sorted
``np.add.reduceat`` (a table no bigger than the batch) sums in another order. A scaled
row (``scale_grad_by_freq``'s 1 / count) is added with a fused multiply-add, as PyTorch's
vectorised ``add`` with alpha is; a row whose factor is 0 (``padding_idx``) is skipped, as
PyTorch skips it.
"""
import numpy as np

from ._math import kernel


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
