"""Softmax and log-softmax over the last axis of a C-contiguous array, seen as rows:
forward in two passes over a row (max, then exponentials and their sum), backward in two
(a dot or a sum, then the gradient), each row staying in cache between them."""
import math

import numpy as np

from ._math import c_array, kernel, exp_nonpos, ONE, ZERO


# Rows are indexed as x[row, j] with range loops throughout: iterating over a row view
# (``for v in x[row]``) compiled several times slower, the loops no longer vectorised.
@kernel
def _row_max(x, row):
    m = x[row, 0]
    for j in range(x.shape[1]):
        v = x[row, j]
        m = v if v > m else m
    return m


@kernel
def _softmax_row(x, out, row):
    """``out[row] = softmax(x[row])``; returns the row's max and its sum of exponentials."""
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
def _softmax(x, out):
    for row in range(x.shape[0]):
        _softmax_row(x, out, row)


@kernel
def _log_softmax(x, out):
    n = x.shape[1]
    for row in range(x.shape[0]):
        m = _row_max(x, row)
        total = ZERO
        for j in range(n):
            total += exp_nonpos(x[row, j] - m)
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
def _cross_entropy(x, target, probs, losses):
    # log-sum-exp and softmax of each row together; loss = lse - x[target]
    for row in range(x.shape[0]):
        m, total = _softmax_row(x, probs, row)
        losses[row] = math.log(total) + m - x[row, target[row]]


@kernel
def _cross_entropy_backward(probs, target, coef, out):
    for row in range(probs.shape[0]):
        c = coef[row]
        for j in range(probs.shape[1]):
            out[row, j] = probs[row, j] * c
        out[row, target[row]] -= c


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _forward(kernel_, x):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    kernel_(_rows(x), _rows(out))
    return out


def _backward(g, y, log):
    g = c_array(g, y)
    out = np.empty(y.shape, y.dtype)
    _softmax_backward(_rows(g), _rows(c_array(y)), _rows(out), log)
    return out


def softmax(x):
    """Over the last axis; ``x`` has at least one axis and no zero-length one."""
    return _forward(_softmax, x)


def log_softmax(x):
    return _forward(_log_softmax, x)


def softmax_backward(g, y):
    """The input's gradient from the output's ``g`` and the forward's output ``y``."""
    return _backward(g, y, False)


def log_softmax_backward(g, y):
    return _backward(g, y, True)


def cross_entropy(x, target):
    """``(losses, probs)`` of (N, C) logits ``x`` and class indices ``target`` (each in
    range: the op has replaced ignored ones): ``logsumexp(x) - x[target]`` per row, and the
    softmax that backward needs."""
    x = c_array(x)
    probs = np.empty(x.shape, x.dtype)
    losses = np.empty(x.shape[0], x.dtype)
    _cross_entropy(x, np.asarray(target, np.int64, order='C'), probs, losses)
    return losses, probs


def cross_entropy_backward(probs, target, coef):
    """``(probs - one_hot(target)) * coef`` per row."""
    out = np.empty(probs.shape, probs.dtype)
    _cross_entropy_backward(probs, np.asarray(target, np.int64, order='C'),
                            np.asarray(np.broadcast_to(coef, probs.shape[:1]), probs.dtype,
                                       order='C'), out)
    return out
