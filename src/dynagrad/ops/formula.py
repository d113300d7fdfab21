"""Helpers for backward formulas that work on NumPy arrays and on dynagrad tensors alike.

A backward formula runs on arrays when the graph of the backward pass is not needed
(the fast path) and on tensors under ``create_graph=True`` (so it records itself).
Operators, ``.shape``, ``.ndim``, ``.reshape``, ``.sum(axes)``, ``.mT`` and indexing are
shared by both already; the few functions below fill the gaps, dispatching on type.
"""
import numpy as np

from ..backend import xp
from ..autograd.function import is_array  # noqa: F401  (the formulas' basics)
from ..autograd.outputs import sum_to  # noqa: F401

_ndarray = np.ndarray


def unwrap(x):
    """The array behind ``x``: a tensor's data, an array (or number) as it is. Saved values
    are tensors under ``create_graph=True`` and arrays otherwise."""
    return x._data if hasattr(x, '_data') else x


def broadcast_to(g, shape):
    if is_array(g):
        return xp.broadcast_to(g, shape)
    return g.expand(shape)


def unsqueeze_dims(g, dims, ndim):
    """Re-insert reduced dimensions ``dims`` (non-negative, of a tensor with ``ndim`` dims)."""
    shape = list(g.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return g.reshape(tuple(shape))


def dual(array_fn, method):
    def fn(x, *args):
        if is_array(x):
            return array_fn(x, *args)
        return getattr(x, method)(*args)
    fn.__name__ = method
    return fn


exp = dual(xp.exp, 'exp')
log = dual(xp.log, 'log')
sign = dual(xp.sign, 'sign')
sqrt = dual(xp.sqrt, 'sqrt')
tanh = dual(xp.tanh, 'tanh')
cos = dual(xp.cos, 'cos')
sin = dual(xp.sin, 'sin')
# sign for real values, z / |z| for complex ones (NumPy's sign is that already)
sgn = dual(xp.sign, 'sgn')


def where(cond, a, b):
    """``cond``: a boolean array (never differentiated); ``a``, ``b``: arrays, tensors, numbers."""
    if is_array(a) and is_array(b):
        return xp.where(cond, a, b)
    from .pointwise import where as where_t
    from ..tensor import wrap
    return where_t(wrap(xp.asarray(cond)), a, b)


def zeros_like(x):
    if is_array(x):
        return xp.zeros_like(x)
    from .creation import zeros_like as z
    return z(x)


# ``flip(g, dims)`` (dims: an int or a tuple of non-negative ints): a reversed view of an
# array, or the recorded ``Tensor.flip`` (FlipBackward0), whose backward is flip again.
flip = dual(xp.flip, 'flip')
