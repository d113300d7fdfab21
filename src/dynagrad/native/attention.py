"""Scaled dot-product attention's softmax, forward and backward, fused around NumPy's
matrix products.

The products (Q K^T, P V and the backward's four) stay NumPy's batched matmul (BLAS);
the kernels replace the passes between them. Forward: scale, the additive or causal mask,
the row max, the exponentials, their sum and the normalisation, in place on the scores,
one row at a time in cache (the NumPy path makes six passes over the (L, S) scores and two
temporaries). Backward: ``dS = P (dP - rowsum(dP P))``, dropout's keep mask and the scale
in the same pass.

Why not blocked (flash attention): measured on one thread at the shapes that matter here
((8, 128, 64) and the benchmark GPT's (12, 4, 64, 32)), a numba kernel over key blocks
with an online softmax and ``np.dot`` on the blocks ran the forward in 0.57 and 0.65 ms
against 0.60 and 0.56 ms for this one: no gain, while its backward must recompute P (one
more Q K^T product, 0.2 ms here) and ``np.dot`` inside numba needs SciPy, which the
``fast`` extra does not install. At these lengths a head's (L, S) block is 16-64 KB and
stays in cache anyway.
"""
import numpy as np

from ._math import c_array, kernel, exp_nonpos, ONE, ZERO
from . import chunks
from .chunks import array_at, blocks_at, by_dtype, entry, float_at, rows_at

# Scores per thread below which splitting the (batch * head) blocks (forward) or the rows
# (backward) did not pay. Forward: (48, 64, 64) on two threads 0.75x one thread's time,
# (8, 128, 128) 1.00x. The backward is one light pass (0.2 ns a score): (128, 128, 128)
# 0.73x, (64, 128, 128) 0.94x, (32, 128, 128) 1.17x.
MIN_PER_THREAD = 98304
MIN_PER_THREAD_BACKWARD = 524288

NEG_INF = np.float32(-np.inf)   # float32: in a float64 kernel it widens, exactly


@kernel
def _masked_softmax(s, scale, add, add_batch, causal, row_max):
    """``s`` (NB, L, S) scores -> probabilities, in place. ``add`` (MB, L, S) is the
    additive mask (MB = 0: none), ``add_batch[n]`` the mask batch that batch ``n`` reads.
    Causal: row i keeps keys 0..i (the rest is 0 without being looked at). Rows with no
    finite score (all masked) give zeros; ``row_max`` records -inf for them."""
    nb, L, S = s.shape
    has_add = add.shape[0] > 0
    for n in range(nb):
        a = add_batch[n] if has_add else 0
        for i in range(L):
            end = min(i + 1, S) if causal else S
            m = NEG_INF
            if has_add:
                for j in range(end):
                    x = s[n, i, j] * scale + add[a, i, j]
                    s[n, i, j] = x
                    m = x if x > m else m
            else:
                for j in range(end):
                    x = s[n, i, j] * scale
                    s[n, i, j] = x
                    m = x if x > m else m
            if m == NEG_INF:
                # every visible score -inf (a hidden row: zeros), unless some are NaN (max
                # skips NaN): then NaN, as the NumPy path
                for j in range(end):
                    if s[n, i, j] != s[n, i, j]:
                        m = s[n, i, j]
                end = 0 if m == NEG_INF else end
            row_max[n, i] = m
            total = ZERO
            for j in range(end):
                e = exp_nonpos(s[n, i, j] - m)
                s[n, i, j] = e
                total += e
            inv = ONE / total
            for j in range(end):
                s[n, i, j] *= inv
            for j in range(end, S):
                s[n, i, j] = ZERO


@kernel
def _softmax_grad(dp, p, keep, scale):
    """``dp`` (R, S) -> ``P (dP' - rowsum(dP' P)) * scale`` in place, dP' = dP * keep
    (``keep`` (R, S), or empty: no dropout)."""
    rows, n = dp.shape
    has_keep = keep.shape[0] > 0
    for r in range(rows):
        total = ZERO
        if has_keep:
            for j in range(n):
                d = dp[r, j] * keep[r, j]
                dp[r, j] = d
                total += d * p[r, j]
        else:
            for j in range(n):
                total += dp[r, j] * p[r, j]
        for j in range(n):
            dp[r, j] = p[r, j] * (dp[r, j] - total) * scale


@kernel
def _masked_softmax_span(d, t):
    lo, hi, L, S = d[0], d[1], d[4], d[5]
    _masked_softmax(blocks_at(d[3], lo, hi, L, S, t), float_at(d[6], t),
                    blocks_at(d[7], 0, d[8], L, S, t), array_at(d[9], d[12], np.int64)[lo:hi],
                    d[10] != 0, rows_at(d[11], lo, hi, L, t))


@entry
def _masked_softmax_chunks(d):
    by_dtype(d, _masked_softmax_span)


@kernel
def _softmax_grad_span(d, t):
    lo, hi, n, keep_rows = d[0], d[1], d[3], d[7]
    keep = rows_at(d[6], 0, keep_rows, n, t)
    if keep_rows != 0:
        keep = keep[lo:hi]
    _softmax_grad(rows_at(d[4], lo, hi, n, t), rows_at(d[5], lo, hi, n, t), keep,
                  float_at(d[8], t))


@entry
def _softmax_grad_chunks(d):
    by_dtype(d, _softmax_grad_span)


def attention_probs(s, scale, add, causal):
    """``softmax(s * scale + add)`` over the last axis, in place on the fresh C-contiguous
    scores ``s`` (..., L, S); ``add`` None or an additive mask whose broadcast with ``s``
    is ``s``'s shape; ``causal``: keys after the query's position are hidden instead.
    Returns ``(s, hidden)``: hidden the (..., L, 1) rows with no visible key, or None."""
    L, S = s.shape[-2:]
    scores = s.reshape(-1, L, S)
    if add is None:
        add3 = np.empty((0, 1, 1), s.dtype)
        add_batch = np.empty(0, np.int64)
    else:
        add = np.asarray(add)
        batch_shape = add.shape[:-2] if add.ndim > 2 else ()
        add3 = np.asarray(np.broadcast_to(add, batch_shape + (L, S)), s.dtype,
                          order='C').reshape(-1, L, S)
        add_batch = np.ascontiguousarray(np.broadcast_to(
            np.arange(add3.shape[0]).reshape(batch_shape), s.shape[:-2]).reshape(-1))
    row_max = np.empty(scores.shape[:2], s.dtype)
    nb = scores.shape[0]
    parts = chunks.parts(nb, -(-MIN_PER_THREAD // max(L * S, 1)))
    if parts == 1:
        _masked_softmax(scores, s.dtype.type(scale), add3, add_batch, causal, row_max)
    else:
        chunks.run(_masked_softmax_chunks, nb, parts, s.dtype, scores, L, S,
                   float(s.dtype.type(scale)), add3, add3.shape[0], add_batch, causal,
                   row_max, add_batch.size)
    hidden = None
    if add is not None:
        hidden = row_max == -np.inf
        hidden = hidden.reshape(s.shape[:-1] + (1,)) if hidden.any() else None
    return s, hidden


def attention_probs_backward(dp, p, keep, scale):
    """The scores' gradient from the probabilities' ``dp`` (a fresh C-contiguous array of
    ``p``'s shape, overwritten and returned), times ``scale``; ``keep`` None or dropout's
    scaled keep mask of the same shape."""
    n = p.shape[-1]
    keep2 = (np.empty((0, n), p.dtype) if keep is None
             else c_array(keep, p).reshape(-1, n))
    rows = p.size // n if n else 0
    parts = chunks.parts(rows, -(-MIN_PER_THREAD_BACKWARD // max(n, 1)))
    if parts == 1:
        _softmax_grad(dp.reshape(-1, n), c_array(p).reshape(-1, n), keep2,
                      p.dtype.type(scale))
        return dp
    chunks.run(_softmax_grad_chunks, rows, parts, p.dtype, n, dp, c_array(p), keep2,
               keep2.shape[0], float(p.dtype.type(scale)))
    return dp
