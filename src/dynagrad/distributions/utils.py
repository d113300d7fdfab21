"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy
attributes and the triangular-matrix <-> vector maps."""
from functools import update_wrapper
from numbers import Number

import numpy as np

import dynagrad as dg
from ..tensor import Tensor

__all__ = ['broadcast_all', 'logits_to_probs', 'clamp_probs', 'probs_to_logits',
           'lazy_property', 'tril_matrix_to_vec', 'vec_to_tril_matrix']

euler_constant = 0.57721566490153286060


def broadcast_shape(*shapes):
    try:
        return dg.Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise RuntimeError(f'shape mismatch: objects cannot be broadcast to a single shape '
                           f'(got shapes {[tuple(s) for s in shapes]})') from None


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype, else the default dtype) and
    everything is expanded to the common broadcast shape."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError('Input arguments must all be instances of numbers.Number, '
                         'dynagrad.Tensor or objects implementing __torch_function__.')
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)),
                     dg.get_default_dtype())
        values = [v if isinstance(v, Tensor) else dg.tensor(v, dtype=dtype) for v in values]
    shape = broadcast_shape(*[v.shape for v in values])
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def standard_normal(shape, dtype, device=None):
    return dg.randn(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


# torch's private spellings, which libraries import (pyro: _sum_rightmost, _standard_normal)
_standard_normal = standard_normal
_sum_rightmost = sum_rightmost


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return dg.sigmoid(logits)
    return dg.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keep probabilities inside (0, 1) by the dtype's eps, so their logs stay finite."""
    eps = dg.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return dg.log(ps_clamped) - dg.log1p(-ps_clamped)
    return dg.log(ps_clamped)


class lazy_property:
    """A method computed on first access and then stored on the instance (so ``probs`` and
    ``logits`` convert lazily, each from the other). Grad mode is on while it runs, so the
    stored value keeps its history even when first read under ``no_grad``."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with dg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class sees: both a lazy_property and a property (for documentation)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (offset ``diag``) of the last two dimensions, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f'diag ({diag}) provided is outside [{-n}, {n - 1}].')
    rows, cols = np.tril_indices(n, k=diag, m=n)
    flat = dg.tensor((rows * n + cols).astype(np.int64))
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., flat]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of ``tril_matrix_to_vec``: a square matrix with zeros above diagonal ``diag``."""
    m = vec.shape[-1]
    n = 1    # the smallest side whose triangle (offset diag) holds m entries
    while len(np.tril_indices(n, k=diag, m=n)[0]) < m:
        n += 1
    rows, cols = np.tril_indices(n, k=diag, m=n)
    if len(rows) != m:
        raise ValueError(f'The size of last dimension is {m} which cannot be expressed as the '
                         'lower triangular part of a square D x D matrix.')
    out = dg.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype)
    index = dg.tensor((rows * n + cols).astype(np.int64)).expand(tuple(vec.shape[:-1]) + (m,))
    out = out.scatter(-1, index, vec)
    return out.reshape(tuple(vec.shape[:-1]) + (n, n))


def broadcast_tensors(*tensors):
    shape = broadcast_shape(*[t.shape for t in tensors])
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def clamp_by_zero(x):
    """(clamp(x, min=0) + x - clamp(x, max=0)) / 2: max(x, 0) with gradient 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def check_one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError('Either `probs` or `logits` must be specified, but not both.')



def store_probs_or_logits(dist, probs, logits, *others):
    """The start of a family given by exactly one of ``probs`` or ``logits``: the given one
    is broadcast with ``others`` (leading parameters such as total_count), stored under its
    name and as ``_param``; returns ``others`` broadcast. The other one is derived lazily
    (``lazy_probs_and_logits``)."""
    check_one_of(probs, logits)
    name, given = ('probs', probs) if probs is not None else ('logits', logits)
    *others, dist._param = broadcast_all(*others, given)
    setattr(dist, name, dist._param)
    return others


def expand_probs_or_logits(dist, cls, batch_shape, _instance, others=()):
    """``expand`` for those families: whichever of probs / logits ``dist`` holds (both, once
    the other was derived) travels with ``others``, and ``_param`` with them."""
    new = dist._expanded(cls, batch_shape, _instance, tuple(others) + ('probs', 'logits'))
    new._param = new.probs if 'probs' in dist.__dict__ else new.logits
    return new


def lazy_probs_and_logits(is_binary):
    """The class attributes ``logits, probs`` of those families, each derived from the other
    on first access: by logit / sigmoid for one success probability (``is_binary``), by log /
    softmax along the last dimension for categories."""
    def logits(self):
        return probs_to_logits(self.probs, is_binary=is_binary)

    def probs(self):
        return logits_to_probs(self.logits, is_binary=is_binary)

    return lazy_property(logits), lazy_property(probs)


# ``param_shape = given_param_shape`` in the families PyTorch gives one (Geometric has none)
given_param_shape = property(lambda self: self._param.size(),
                             doc='The shape of the given parameter (probs or logits).')
