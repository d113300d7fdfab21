"""The array behind a sparse COO tensor, and the NumPy kernels on it.

A sparse COO tensor is an ordinary ``dynagrad.Tensor`` whose ``_data`` is a ``COO`` in
place of a NumPy array: ``indices`` (int64, ``[sparse_dim, nnz]``), ``values``
(``[nnz, *dense_shape]``), the full ``shape`` and whether it is known to be coalesced
(indices sorted row-major, no duplicates). It answers ``shape``, ``dtype``, ``ndim`` and
``size`` as an array would, so the Tensor's properties need no second path; anything else a
dense op asks of it (NumPy ufuncs and functions, array methods) raises ``SparseRefused``,
PyTorch's "Could not run 'aten::op' with arguments from the 'SparseCPU' backend" error, so
a dense kernel never computes on it by accident. ``Op.apply`` turns that error into the
sparse kernel of the op where ``dynagrad.ops.sparse`` registered one.

This module imports nothing of dynagrad (tensor.py reads ``COO`` from it).
"""
import numpy as np

__all__ = ['COO', 'SparseRefused', 'refused_message']

_INT64 = np.dtype(np.int64)


def refused_message(op=None):
    what = f"'aten::{op}'" if op else 'this operator'
    return (f"Could not run {what} with arguments from the 'SparseCPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            'selective/custom build process (if using custom build). (dynagrad has no sparse '
            'kernel for it: convert with .to_dense() first.)')


class SparseRefused(NotImplementedError, AttributeError):
    """A dense kernel met a sparse tensor. Also an AttributeError, so that ``hasattr`` and
    ``getattr(x, name, default)`` on a ``COO`` answer as for a missing attribute."""

    def __init__(self, op=None):
        super().__init__(refused_message(op))
        self.op = op


class _Flags:
    writeable = True
    c_contiguous = False


class COO:
    __slots__ = ('indices', 'values', 'shape', 'coalesced', '_rows')
    base = None         # what the engine asks of a gradient before handing it out
    flags = _Flags()

    def __init__(self, indices, values, shape, coalesced=False):
        self.indices = indices
        self.values = values
        self.shape = tuple(int(n) for n in shape)
        self.coalesced = bool(coalesced)
        self._rows = None

    # -- what an array answers -----------------------------------------------------------
    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def nbytes(self):
        return self.values.nbytes + self.indices.nbytes

    @property
    def nnz(self):
        return self.indices.shape[1]

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    def copy(self):
        return COO(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def astype(self, dtype, copy=True):
        return COO(self.indices, self.values.astype(dtype), self.shape, self.coalesced)

    # -- what it refuses -------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise SparseRefused()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise SparseRefused(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise SparseRefused(func.__name__)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        raise SparseRefused()

    def __getitem__(self, index):
        raise SparseRefused('index')

    def _refuse_operator(self, *other):
        raise SparseRefused()

    # operators too: a dense forward's ``a * 2`` meets them (NumPy's ufuncs meet the above)
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse_operator
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = _refuse_operator
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = _refuse_operator
    __abs__ = __invert__ = __and__ = __or__ = __xor__ = _refuse_operator
    __lt__ = __le__ = __gt__ = __ge__ = _refuse_operator

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f'COO(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})'


# ---------------------------------------------------------------------------------------
# kernels

def linear_index(indices, shape):
    """Each column of ``indices`` as one row-major number over the sparse dims."""
    k = indices.shape[0]
    if k == 0:
        return np.zeros(indices.shape[1], _INT64)
    if k == 1:
        return indices[0]
    return np.ravel_multi_index(tuple(indices), shape[:k], mode='wrap') if indices.shape[1] \
        else np.zeros(0, _INT64)


def coalesce(c):
    """Indices sorted row-major, duplicates summed (values of the same index added)."""
    if c.coalesced:
        return c
    nnz = c.indices.shape[1]
    if nnz <= 1:
        return COO(c.indices, c.values, c.shape, True)
    lin = linear_index(c.indices, c.shape)
    order = np.argsort(lin, kind='stable')
    lin_sorted = lin[order]
    starts = np.concatenate(([0], np.flatnonzero(lin_sorted[1:] != lin_sorted[:-1]) + 1))
    values = c.values[order]
    if len(starts) != nnz:
        if values.dtype == np.bool_:
            values = np.logical_or.reduceat(values, starts, axis=0)
        else:
            values = np.add.reduceat(values, starts, axis=0).astype(values.dtype, copy=False)
    indices = c.indices[:, order[starts]]
    return COO(np.ascontiguousarray(indices), values, c.shape, True)


def to_dense(c):
    out = np.zeros(c.shape, c.dtype)
    if c.nnz:
        index = tuple(c.indices)
        if c.coalesced:
            out[index] = c.values
        elif c.dtype == np.bool_:
            np.logical_or.at(out, index, c.values)
        else:
            np.add.at(out, index, c.values)
    return out


def from_dense(a, sparse_dim=None):
    """The coalesced COO of a dense array: its nonzero entries (nonzero slices over the
    first ``sparse_dim`` dims, the rest kept dense in the values)."""
    k = a.ndim if sparse_dim is None else sparse_dim
    if k == a.ndim:
        mask = a != 0
    else:
        mask = (a != 0).reshape(a.shape[:k] + (-1,)).any(-1)
    if k == 0:
        indices = np.zeros((0, 1), _INT64)
        return COO(indices, a[None].copy(), a.shape, True)
    indices = np.array(np.nonzero(mask), dtype=_INT64).reshape(k, -1)
    values = a[tuple(indices)]
    return COO(indices, np.ascontiguousarray(values), a.shape, True)


def row_structure(c):
    """For a coalesced 2-D (or more) COO: (the distinct first indices, where each run
    starts), cached on the COO."""
    rows = c._rows
    if rows is None:
        r = c.indices[0]
        if r.size:
            starts = np.concatenate(([0], np.flatnonzero(r[1:] != r[:-1]) + 1))
        else:
            starts = np.zeros(0, np.intp)
        rows = c._rows = (r[starts], starts)
    return rows


def spmm(c, d):
    """A 2-D COO (``[n, k]``) times a dense ``[k, ...]`` array: a dense ``[n, ...]``."""
    c = coalesce(c)
    out = np.zeros((c.shape[0],) + d.shape[1:], np.result_type(c.dtype, d.dtype))
    if c.nnz == 0:
        return out
    vals = c.values.reshape((-1,) + (1,) * (d.ndim - 1))
    products = vals * d[c.indices[1]]
    rows, starts = row_structure(c)
    out[rows] = np.add.reduceat(products, starts, axis=0)
    return out


def transpose(c, d0=0, d1=1):
    indices = c.indices.copy()
    indices[[d0, d1]] = indices[[d1, d0]]
    shape = list(c.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return COO(indices, c.values, shape, False)


def gather(g, pattern):
    """The entries of ``g`` (a dense array or a COO of the same shape) at ``pattern``'s
    indices, one per column of them (duplicates each get the full entry): the values of
    ``g`` masked to the pattern."""
    index = pattern.indices
    if g.__class__ is not COO:
        if index.shape[0] == 0:
            return np.broadcast_to(g, (index.shape[1],) + g.shape).copy()
        return g[tuple(index)]
    g = coalesce(g)
    out = np.zeros((index.shape[1],) + g.values.shape[1:], g.dtype)
    if g.nnz == 0 or index.shape[1] == 0:
        return out
    lin_g = linear_index(g.indices, g.shape)
    lin_p = linear_index(index, pattern.shape)
    pos = np.searchsorted(lin_g, lin_p)
    pos_c = np.minimum(pos, len(lin_g) - 1)
    hit = lin_g[pos_c] == lin_p
    out[hit] = g.values[pos_c[hit]]
    return out


def sparse_mask(g, pattern):
    """``g`` restricted to ``pattern``'s coalesced indices: a COO with those indices."""
    pattern = coalesce(pattern)
    return COO(pattern.indices, gather(g, pattern), pattern.shape, True)


def add(a, b, alpha=1):
    """COO + COO: the entries of both (concatenated; coalesced when both were, as PyTorch)."""
    vb = b.values if alpha == 1 else b.values * alpha
    dtype = np.result_type(a.dtype, vb.dtype)
    out = COO(np.concatenate([a.indices, b.indices], axis=1),
              np.concatenate([a.values.astype(dtype, copy=False), vb.astype(dtype, copy=False)]),
              a.shape, False)
    if a.coalesced and b.coalesced:
        out = coalesce(out)
    return out


def add_grads(a, b):
    """What the engine's gradient buffers do with a sparse gradient: dense + sparse is
    dense, sparse + sparse is sparse."""
    if a.__class__ is COO and b.__class__ is COO:
        return add(a, b)
    if a.__class__ is COO:
        a, b = b, a
    out = np.array(a, copy=True)
    if b.nnz:
        np.add.at(out, tuple(b.indices), b.values.astype(out.dtype, copy=False))
    return out
