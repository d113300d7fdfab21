"""Softmax, log-softmax and cross-entropy over the last axis of a C-contiguous array, seen
as rows: forward in two passes over a row (max, then exponentials and their sum), backward
in two (a dot or a sum, then the gradient), each row staying in cache between them."""
import math

import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from ._math import c_array, kernel, exp_nonpos, ONE, ZERO
from . import chunks
from .chunks import by_dtype, entry, rows_at


@intrinsic
def _max_for_shift(typingctx, a, b):
    """``llvm.maxnum`` flagged nnan and nsz: LLVM vectorises a reduction over it (16 lanes
    here), where ``v if v > m else m`` stayed a scalar chain (the row max was a third of
    softmax's time). The flags let a NaN give any value: harmless, as the max only shifts
    the exponentials, and a NaN in the row makes the row's sum, hence the row, NaN anyway."""
    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic('llvm.maxnum', [t], ir.FunctionType(t, [t, t]))
        return builder.call(fn, args, fastmath=('nnan', 'nsz'))
    return a(a, b), codegen


# Rows are indexed as x[row, j] with range loops throughout: iterating over a row view
# (``for v in x[row]``) compiled several times slower, the loops no longer vectorised.
@kernel
def _row_max(x, row):
    m = x[row, 0]
    for j in range(x.shape[1]):
        m = _max_for_shift(m, x[row, j])
    return m


@kernel
def _softmax_row(x, out, row):
    """``out[row] = softmax(x[row])``; returns the row's max and its sum of exponentials."""
    # _exp_row's loop written again, not called: numba does not inline the call, and
    # softmax over (3072, 64) took 255 us through it against 148 (measured)
    m = _row_max(x, row)
    total = ZERO
    for j in range(x.shape[1]):
        e = exp_nonpos(x[row, j] - m)
        out[row, j] = e
        total += e
    scale = ONE / total
    for j in range(x.shape[1]):
        out[row, j] *= scale
    return m, total


@kernel
def _exp_row(x, exps, row):
    """``exps[row] = e^(x[row] - max)``, unnormalised: returns the row's max and its sum of
    exponentials. The losses' backward scales by ``1 / sum`` as it multiplies anyway, so
    the forward skips softmax's third pass (a tenth of the loss's time on (700, 10000))."""
    m = _row_max(x, row)
    total = ZERO
    for j in range(x.shape[1]):
        e = exp_nonpos(x[row, j] - m)
        exps[row, j] = e
        total += e
    return m, total


@kernel
def _row_exp_sum(x, row):
    """The row's max and its sum of exponentials (nothing stored)."""
    m = _row_max(x, row)
    total = ZERO
    for j in range(x.shape[1]):
        total += exp_nonpos(x[row, j] - m)
    return m, total


@kernel
def _softmax(x, out):
    for row in range(x.shape[0]):
        _softmax_row(x, out, row)


@kernel
def _log_softmax(x, out):
    n = x.shape[1]
    for row in range(x.shape[0]):
        m, total = _row_exp_sum(x, row)
        shift = m + math.log(total)
        for j in range(n):
            out[row, j] = x[row, j] - shift


@kernel
def _softmax_backward(g, y, out, log):
    # softmax: y (g - sum(g y)); log-softmax (y = log p): g - e^y sum(g)
    n = y.shape[1]
    for row in range(y.shape[0]):
        total = ZERO
        for j in range(n):
            total += g[row, j] if log else g[row, j] * y[row, j]
        for j in range(n):
            out[row, j] = (g[row, j] - exp_nonpos(y[row, j]) * total if log
                           else y[row, j] * (g[row, j] - total))


@kernel
def _row_gaps(x, weight, lse, row):
    """``sum_c w[c] (lse - x[c])`` over the row (no weights: an empty ``weight``)."""
    total = ZERO
    if weight.shape[0] > 0:
        for j in range(x.shape[1]):
            total += weight[j] * (lse - x[row, j])
    else:
        for j in range(x.shape[1]):
            total += lse - x[row, j]
    return total


@kernel
def _cross_entropy(x, target, weight, ignore_index, coefs, exps, inv_totals, losses, store):
    """Class indices: per row ``(1 - eps) w[t] (lse - x[t]) + eps / C sum_c w[c] (lse - x[c])``
    (``coefs`` = (1 - eps, eps / C, ...); no weights: an empty ``weight``), 0 where the
    target is ignored. Returns (the losses' sum, the kept rows' weights' sum, the first row
    whose target is out of range or -1); sums in float64. With ``store``, ``exps`` and
    ``inv_totals`` get each row's unnormalised exponentials and 1 / their sum (backward's
    softmax)."""
    n = x.shape[1]
    keep_share, spread = coefs[0], coefs[1]
    weighted = weight.shape[0] > 0
    loss_sum = 0.0
    weight_sum = 0.0
    bad = -1
    for row in range(x.shape[0]):
        t = target[row]
        if store:
            m, total = _exp_row(x, exps, row)
            inv_totals[row] = ONE / total
        else:
            m, total = _row_exp_sum(x, row)
        if t == ignore_index or t < 0 or t >= n:
            if t != ignore_index and bad < 0:
                bad = row
            losses[row] = ZERO
            continue
        lse = m + math.log(total)
        w = weight[t] if weighted else ONE
        loss = w * (lse - x[row, t])
        if spread != 0:
            loss = keep_share * loss + spread * _row_gaps(x, weight, lse, row)
        losses[row] = loss
        loss_sum += loss
        weight_sum += w
    return loss_sum, weight_sum, bad


@kernel
def _cross_entropy_backward(exps, inv_totals, target, weight, ignore_index, coefs, g, per_row,
                            out):
    """``s (A p - eps / C w) - s (1 - eps) w[t] one_hot(t)`` per row, ``A = (1 - eps) w[t]
    + eps / C sum(w)``, ``s`` the row's upstream gradient (``g[row]``, or ``g[0]`` for all:
    a mean's already divided), 0 for ignored rows; ``p`` the forward's ``exps`` times the
    row's ``inv_totals``, that factor folded into ``A``."""
    n = exps.shape[1]
    keep_share, spread = coefs[0], coefs[1]
    weighted = weight.shape[0] > 0
    weight_total = coefs[2]
    for row in range(exps.shape[0]):
        t = target[row]
        s = g[row] if per_row else g[0]
        if t == ignore_index:
            s = ZERO
            t = 0
        w = weight[t] if weighted else ONE
        a = s * (keep_share * w + spread * weight_total) * inv_totals[row]
        if spread != 0 and weighted:
            c = s * spread
            for j in range(n):
                out[row, j] = exps[row, j] * a - c * weight[j]
        else:
            c = s * spread
            for j in range(n):
                out[row, j] = exps[row, j] * a - c
        out[row, t] -= s * keep_share * w


@kernel
def _row_soft_loss(x, q, weight, keep_share, spread, lse, row):
    total = ZERO
    if weight.shape[0] > 0:
        for j in range(x.shape[1]):
            total += weight[j] * (keep_share * q[row, j] + spread) * (lse - x[row, j])
    else:
        for j in range(x.shape[1]):
            total += (keep_share * q[row, j] + spread) * (lse - x[row, j])
    return total


@kernel
def _soft_cross_entropy(x, q, weight, coefs, exps, inv_totals, losses, store):
    """Class probabilities ``q``, smoothed to ``q' = (1 - eps) q + eps / C``: per row
    ``-sum_c w[c] q'[c] (x[c] - lse)``. Returns the losses' sum (float64); ``exps`` and
    ``inv_totals`` as in ``_cross_entropy``."""
    keep_share, spread = coefs[0], coefs[1]
    loss_sum = 0.0
    for row in range(x.shape[0]):
        if store:
            m, total = _exp_row(x, exps, row)
            inv_totals[row] = ONE / total
        else:
            m, total = _row_exp_sum(x, row)
        lse = m + math.log(total)
        loss = _row_soft_loss(x, q, weight, keep_share, spread, lse, row)
        losses[row] = loss
        loss_sum += loss
    return loss_sum


@kernel
def _soft_cross_entropy_backward(exps, inv_totals, q, weight, coefs, g, per_row, out):
    """``s (p sum_c w[c] q'[c] - w q')`` per row, ``s`` and ``p`` as in the indices'
    backward."""
    n = exps.shape[1]
    keep_share, spread = coefs[0], coefs[1]
    weighted = weight.shape[0] > 0
    for row in range(exps.shape[0]):
        s = g[row] if per_row else g[0]
        mass = ZERO
        if weighted:
            for j in range(n):
                mass += weight[j] * (keep_share * q[row, j] + spread)
            a = s * mass * inv_totals[row]
            for j in range(n):
                out[row, j] = exps[row, j] * a - s * weight[j] * (keep_share * q[row, j]
                                                                   + spread)
        else:
            for j in range(n):
                mass += keep_share * q[row, j] + spread
            a = s * mass * inv_totals[row]
            for j in range(n):
                out[row, j] = exps[row, j] * a - s * (keep_share * q[row, j] + spread)


def _rows(a):
    return a.reshape(-1, a.shape[-1])


@kernel
def _forward_span(d, t):
    lo, hi, n = d[0], d[1], d[3]
    x, out = rows_at(d[4], lo, hi, n, t), rows_at(d[5], lo, hi, n, t)
    if d[6]:
        _log_softmax(x, out)
    else:
        _softmax(x, out)


@entry
def _forward_chunks(d):
    by_dtype(d, _forward_span)


@kernel
def _backward_span(d, t):
    lo, hi, n = d[0], d[1], d[3]
    _softmax_backward(rows_at(d[4], lo, hi, n, t), rows_at(d[5], lo, hi, n, t),
                      rows_at(d[6], lo, hi, n, t), d[7] != 0)


@entry
def _backward_chunks(d):
    by_dtype(d, _backward_span)


# Values per thread below which splitting rows did not pay (2-core VM, chunks on OpenBLAS's
# workers): forward (12, 4, 16, 64) in 21 us on two threads against 36 on one; the
# backward, a third of the work, (12, 4, 32, 64) in 20 against 27, half that size 14
# against 15
MIN_PER_THREAD = 24576
MIN_PER_THREAD_BACKWARD = 49152


def _forward(x, log):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    n = x.shape[-1]
    rows = x.size // n
    parts = chunks.parts(rows, -(-MIN_PER_THREAD // n))
    if parts == 1:
        (_log_softmax if log else _softmax)(_rows(x), _rows(out))
    else:
        chunks.run(_forward_chunks, rows, parts, x.dtype, n, x, out, log)
    return out


def _backward(g, y, log):
    y = c_array(y)
    g = c_array(g, y)
    out = np.empty(y.shape, y.dtype)
    n = y.shape[-1]
    rows = y.size // n
    parts = chunks.parts(rows, -(-MIN_PER_THREAD_BACKWARD // n))
    if parts == 1:
        _softmax_backward(_rows(g), _rows(y), _rows(out), log)
    else:
        chunks.run(_backward_chunks, rows, parts, y.dtype, n, g, y, out, log)
    return out


def softmax(x):
    """Over the last axis; ``x`` has at least one axis and no zero-length one."""
    return _forward(x, False)


def log_softmax(x):
    return _forward(x, True)


def softmax_backward(g, y):
    """The input's gradient from the output's ``g`` and the forward's output ``y``."""
    return _backward(g, y, False)


def log_softmax_backward(g, y):
    return _backward(g, y, True)


_NO_WEIGHT = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


def _coefs(dtype, smoothing, n_classes, weight=None):
    # (1 - eps, eps / C, the weights' sum), in the data's dtype
    total = n_classes if weight is None or not smoothing else weight.sum(dtype=np.float64)
    return np.array([1 - smoothing, smoothing / n_classes, total], dtype)


def _softmax_store(x, store):
    """Buffers for the unnormalised exponentials and each row's 1 / sum (1-row dummies
    when nothing is stored)."""
    if store:
        return np.empty(x.shape, x.dtype), np.empty(x.shape[0], x.dtype)
    return x[:1], np.empty(1, x.dtype)


def cross_entropy(x, target, weight, ignore_index, smoothing, store):
    """Cross-entropy of (N, C) logits ``x`` (C-contiguous; N, C > 0) and int64 class
    indices ``target``, optionally class-weighted and label-smoothed. Returns ``(losses,
    softmax, loss_sum, weight_sum, bad)``: per-row losses (0 where ignored), the softmax as
    ``(exps, inv_totals)``, unnormalised (None unless ``store``: backward's), the sums for
    the reductions, and the first row whose target is out of range (-1 if none: the op
    raises torch's IndexError)."""
    exps, inv_totals = _softmax_store(x, store)
    losses = np.empty(x.shape[0], x.dtype)
    w = _NO_WEIGHT[x.dtype] if weight is None else weight
    loss_sum, weight_sum, bad = _cross_entropy(x, target, w, ignore_index,
                                               _coefs(x.dtype, smoothing, x.shape[1]),
                                               exps, inv_totals, losses, store)
    return losses, (exps, inv_totals) if store else None, loss_sum, weight_sum, bad


def cross_entropy_backward(softmax, target, weight, ignore_index, smoothing, g):
    """The logits' gradient from the forward's ``softmax`` pair; ``g`` per row (N,), or
    one value (a sum's, or a mean's already divided by its denominator)."""
    exps, inv_totals = softmax
    out = np.empty(exps.shape, exps.dtype)
    g = np.asarray(g, exps.dtype).reshape(-1)
    _cross_entropy_backward(exps, inv_totals, target, _NO_WEIGHT[exps.dtype] if weight is None
                            else weight, ignore_index,
                            _coefs(exps.dtype, smoothing, exps.shape[1], weight), g,
                            g.size > 1, out)
    return out


def soft_cross_entropy(x, q, weight, smoothing, store):
    """Cross-entropy of (N, C) logits and class probabilities ``q`` (same shape and dtype,
    C-contiguous). Returns ``(losses, softmax, loss_sum)``, ``softmax`` as above."""
    exps, inv_totals = _softmax_store(x, store)
    losses = np.empty(x.shape[0], x.dtype)
    loss_sum = _soft_cross_entropy(x, q, _NO_WEIGHT[x.dtype] if weight is None else weight,
                                   _coefs(x.dtype, smoothing, x.shape[1]), exps, inv_totals,
                                   losses, store)
    return losses, (exps, inv_totals) if store else None, loss_sum


def soft_cross_entropy_backward(softmax, q, weight, smoothing, g):
    exps, inv_totals = softmax
    out = np.empty(exps.shape, exps.dtype)
    g = np.asarray(g, exps.dtype).reshape(-1)
    _soft_cross_entropy_backward(exps, inv_totals, q, _NO_WEIGHT[exps.dtype] if weight is None
                                 else weight, _coefs(exps.dtype, smoothing, exps.shape[1]),
                                 g, g.size > 1, out)
    return out
