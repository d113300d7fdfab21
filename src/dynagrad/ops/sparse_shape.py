"""Shape ops on sparse COO tensors, as PyTorch runs them: ``unsqueeze``, ``cat``, ``stack``
and ``index_select`` (results sparse and uncoalesced, gradients sparse on the inputs'
patterns), and the value maps ``nan_to_num`` and ``div(..., rounding_mode=)``. Each reaches
here through ``SPARSE_KERNELS`` when its dense forward meets a ``COO``."""
import numpy as np

from .._coo import COO, gather
from ..backend import xp
from ..autograd.sparse_dispatch import SPARSE_KERNELS
from . import arithmetic, clamping, indexing, shape
from .sparse import SparseOp, SparseValuesMap, is_sparse, _unary_kernel, _is_number, _number

_INT64 = np.dtype(np.int64)


def _result(indices, values, shape):
    """A result PyTorch does not know to be coalesced (unless it has one entry or none)."""
    return COO(indices, values, tuple(shape), indices.shape[1] <= 1)


class SparseUnsqueeze(SparseOp):
    node_name = 'UnsqueezeBackward0'

    def forward(self, c, dim):
        self.dim, k = dim, c.sparse_dim
        shape = c.shape[:dim] + (1,) + c.shape[dim:]
        if dim <= k:    # a new sparse dim, every entry at index 0 along it
            indices = xp.insert(c.indices, dim, 0, axis=0)
            return _result(indices, c.values, shape)
        return _result(c.indices, xp.expand_dims(c.values, dim - k + 1), shape)

    def backward(self, g):
        dim = self.dim
        if g.__class__ is not COO:
            return g.squeeze(dim)
        shape = g.shape[:dim] + g.shape[dim + 1:]
        if dim < g.sparse_dim:
            return COO(xp.delete(g.indices, dim, axis=0), g.values, shape, False)
        return COO(g.indices, g.values.squeeze(dim - g.sparse_dim + 1), shape, False)


def _check_same_kind(cs):
    k, dk = cs[0].sparse_dim, cs[0].dense_dim
    for i, c in enumerate(cs[1:], 1):
        if (c.sparse_dim, c.dense_dim) != (k, dk):
            raise RuntimeError(f'All tensors must have the same sparse_dim and dense_dim: {k}, '
                               f'{dk}, but tensor at position {i} has {c.sparse_dim}, '
                               f'{c.dense_dim}.')


class SparseCat(SparseOp):
    """``cat`` of sparse tensors: along a sparse dim the entries of each, shifted by the
    sizes before it; along a dense dim each one's values padded with zeros to the full
    size."""
    node_name = 'CatBackward0'

    def forward(self, *cs, dim):
        _check_same_kind(cs)
        self.cs, self.dim = cs, dim
        k = cs[0].sparse_dim
        sizes = [c.shape[dim] for c in cs]
        self.offsets = xp.concatenate(([0], xp.cumsum(sizes)))
        shape = list(cs[0].shape)
        shape[dim] = int(self.offsets[-1])
        dtype = np.result_type(*[c.dtype for c in cs])
        if dim < k:
            parts = []
            for c, off in zip(cs, self.offsets):
                idx = c.indices.copy()
                idx[dim] += off
                parts.append(idx)
            values = xp.concatenate([c.values.astype(dtype, copy=False) for c in cs])
            return _result(xp.concatenate(parts, axis=1), values, shape)
        axis = dim - k + 1
        padded = []
        for c, off, n in zip(cs, self.offsets, sizes):
            v = xp.zeros(c.values.shape[:axis] + (shape[dim],) + c.values.shape[axis + 1:],
                         dtype)
            index = (slice(None),) * axis + (slice(int(off), int(off) + n),)
            v[index] = c.values
            padded.append(v)
        return _result(xp.concatenate([c.indices for c in cs], axis=1), xp.concatenate(padded),
                       shape)

    def backward(self, g):
        out = []
        for c, off in zip(self.cs, self.offsets):
            pattern = COO(c.indices.copy(), None, c.shape)
            if self.dim < c.sparse_dim:
                pattern.indices[self.dim] += off
                pattern.shape = g.shape
                v = gather(g, pattern)
            else:
                whole = COO(c.indices, None, g.shape)
                v = gather(g, whole)
                axis = self.dim - c.sparse_dim + 1
                v = v[(slice(None),) * axis + (slice(int(off), int(off) + c.shape[self.dim]),)]
            out.append(COO(c.indices, v.astype(c.dtype, copy=False), c.shape, c.coalesced))
        return tuple(out)


class SparseIndexSelect(SparseOp):
    """``index_select`` of a sparse tensor: along a sparse dim the entries at each selected
    position (in the order asked, repeats repeated), along a dense dim the values'."""
    node_name = 'IndexSelectBackward0'

    def forward(self, c, dim, index):
        self.c, self.dim, self.index = c, dim, index
        k = c.sparse_dim
        shape = list(c.shape)
        shape[dim] = len(index)
        if dim >= k:
            self.source = None
            return _result(c.indices, xp.take(c.values, index, axis=dim - k + 1), shape)
        position = c.indices[dim]
        order = xp.argsort(position, kind='stable')
        lo = xp.searchsorted(position[order], index, 'left')
        hi = xp.searchsorted(position[order], index, 'right')
        source = xp.concatenate([order[a:b] for a, b in zip(lo, hi)] +
                                [xp.zeros(0, np.intp)])
        indices = c.indices[:, source]
        indices[dim] = xp.repeat(xp.arange(len(index)), hi - lo)
        self.source, self.out_indices = source, indices
        return _result(indices, c.values[source], shape)

    def backward(self, g):
        c = self.c
        out = xp.zeros(c.values.shape, g.dtype)
        if self.source is None:     # each value's slices, summed back where index repeats
            axis = self.dim - c.sparse_dim + 1
            gv = gather(g, COO(c.indices, None, g.shape))
            xp.add.at(xp.moveaxis(out, axis, 0), self.index, xp.moveaxis(gv, axis, 0))
        else:
            xp.add.at(out, self.source, gather(g, COO(self.out_indices, None, g.shape)))
        return COO(c.indices, out.astype(c.dtype, copy=False), c.shape, c.coalesced)


def _all_sparse(tensors):
    for i, t in enumerate(tensors):
        if not is_sparse(t):
            raise RuntimeError('Concatenating sparse tensors, but a dense tensor was found at '
                               f'position {i}.')


def _cat_kernel(cls, *tensors, dim):
    _all_sparse(tensors)
    return SparseCat.apply(*tensors, dim=dim)


def _stack_kernel(cls, *tensors, dim):
    _all_sparse(tensors)
    return SparseCat.named('StackBackward0').apply(
        *[SparseUnsqueeze.apply(t, dim=dim) for t in tensors], dim=dim)


def _index_select_kernel(cls, x, key):
    dim = next(i for i, k in enumerate(key) if not isinstance(k, slice))
    index = xp.asarray(key[dim]).reshape(-1).astype(_INT64)
    return SparseIndexSelect.apply(x, dim=dim, index=index)


def _div_mode_kernel(cls, a, b, rounding_mode):
    if not is_sparse(a) or not _is_number(b):
        raise RuntimeError('Sparse division requires a scalar or zero-dim dense tensor divisor '
                           f'(got shape {list(getattr(b, "shape", []))} for divisor)')
    return SparseValuesMap.named('DivBackward2').apply(
        a, op=cls, params={'b': _number(b), 'rounding_mode': rounding_mode})


SPARSE_KERNELS[shape.Unsqueeze] = lambda cls, x, dim: SparseUnsqueeze.apply(x, dim=dim)
SPARSE_KERNELS[shape.Cat] = _cat_kernel
SPARSE_KERNELS[shape.Stack] = _stack_kernel
SPARSE_KERNELS[indexing.IndexSelect] = _index_select_kernel
SPARSE_KERNELS[clamping.NanToNum] = _unary_kernel
SPARSE_KERNELS[arithmetic.DivMode] = _div_mode_kernel
