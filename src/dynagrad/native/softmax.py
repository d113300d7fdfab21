"""Softmax and log-softmax over the last axis of a C-contiguous array, seen as rows:
forward in two passes over a row (max, then exponentials and their sum), backward in two
(a dot or a sum, then the gradient), each row staying in cache between them."""
import math

import numpy as np

from ._math import c_array, kernel, exp_nonpos, ONE, ZERO


@kernel
def _softmax_row(xr, o):
    """``o = softmax(xr)``; returns the row's max and the sum of ``exp(xr - max)``."""
    m = xr[0]
    for v in xr:
        m = v if v > m else m
    total = ZERO
    for j in range(xr.size):
        e = exp_nonpos(xr[j] - m)
        o[j] = e
        total += e
    scale = ONE / total
    for j in range(o.size):
        o[j] *= scale
    return m, total


@kernel
def _softmax(x, out):
    for row in range(x.shape[0]):
        _softmax_row(x[row], out[row])


@kernel
def _log_softmax(x, out):
    for row in range(x.shape[0]):
        xr, o = x[row], out[row]
        m = xr[0]
        for v in xr:
            m = v if v > m else m
        total = ZERO
        for j in range(xr.size):
            total += exp_nonpos(xr[j] - m)
        shift = m + math.log(total)
        for j in range(o.size):
            o[j] = xr[j] - shift


@kernel
def _softmax_backward(g, y, out):
    for row in range(y.shape[0]):
        gr, yr, o = g[row], y[row], out[row]
        dot = ZERO
        for j in range(yr.size):
            dot += gr[j] * yr[j]
        for j in range(yr.size):
            o[j] = yr[j] * (gr[j] - dot)


@kernel
def _log_softmax_backward(g, y, out):
    for row in range(y.shape[0]):
        gr, yr, o = g[row], y[row], out[row]
        total = ZERO
        for v in gr:
            total += v
        for j in range(yr.size):
            o[j] = gr[j] - exp_nonpos(yr[j]) * total


@kernel
def _cross_entropy(x, target, probs, losses):
    # log-sum-exp and softmax of each row together; loss = lse - x[target]
    for row in range(x.shape[0]):
        m, total = _softmax_row(x[row], probs[row])
        losses[row] = math.log(total) + m - x[row, target[row]]


@kernel
def _cross_entropy_backward(probs, target, coef, out):
    for row in range(probs.shape[0]):
        c, p, o = coef[row], probs[row], out[row]
        for j in range(p.size):
            o[j] = p[j] * c
        o[target[row]] -= c


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _forward(kernel_, x):
    x = c_array(x)
    out = np.empty(x.shape, x.dtype)
    kernel_(_rows(x), _rows(out))
    return out


def _backward(kernel_, g, y):
    g = c_array(g, y)
    out = np.empty(y.shape, y.dtype)
    kernel_(_rows(g), _rows(c_array(y)), _rows(out))
    return out


def softmax(x):
    """Over the last axis; ``x`` has at least one axis and no zero-length one."""
    return _forward(_softmax, x)


def log_softmax(x):
    return _forward(_log_softmax, x)


def softmax_backward(g, y):
    """The input's gradient from the output's ``g`` and the forward's output ``y``."""
    return _backward(_softmax_backward, g, y)


def log_softmax_backward(g, y):
    return _backward(_log_softmax_backward, g, y)


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
