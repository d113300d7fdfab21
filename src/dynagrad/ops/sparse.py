"""Sparse COO tensors: construction, conversion, products, elementwise ops, reductions and
softmax, with PyTorch's gradients.

A sparse tensor is a ``Tensor`` whose ``_data`` is a ``dynagrad._coo.COO`` (indices and
values arrays). Each op here is an ``Op`` like any other: its forward takes and returns
``COO`` objects or arrays, so autograd records it as it records dense ops, and gradients
that PyTorch makes sparse (``sparse.mm``'s for its sparse operand, ``to_dense``'s,
``Embedding(sparse=True)``'s) travel through the engine as ``COO`` objects too.

Dense ops that PyTorch also runs on sparse tensors (``mm``, ``matmul``, ``+``, ``*``,
``sum``, ``t``, ``to``, zero-preserving unary functions...) reach the kernels here through
``SPARSE_KERNELS``: a dense forward that meets a ``COO`` raises, and ``Op.apply`` runs the
kernel registered for the op's class instead; an op with no kernel raises PyTorch's
"Could not run 'aten::...' with arguments from the 'SparseCPU' backend".
"""
import numpy as np

from .. import _dtype
from ..backend import xp
from .._coo import (COO, SparseRefused, coalesce as _coalesce, to_dense as _to_dense,
                    from_dense, spmm as _spmm, transpose as _transpose, gather, sparse_mask as
                    _sparse_mask, add as _add, linear_index)
from .._layout import sparse_coo, strided
from ..autograd.custom_function import guard_second_derivative
from ..autograd.function import Op
from ..autograd.sparse_dispatch import SPARSE_KERNELS
from ..autograd.graph import grad_accumulator
from ..tensor import Tensor, method, wrap, size_args

__all__ = ['sparse_coo_tensor', 'spmm', 'smm', 'hspmm', 'hsmm', 'dsmm', 'sspaddmm', 'saddmm',
           'indices_copy', 'values_copy', 'resize_as_sparse_']

_INT64 = np.dtype(np.int64)


def is_sparse(x):
    return isinstance(x, Tensor) and x._data.__class__ is COO


def _plain(g):
    """A gradient as an array or COO (sparse backward formulas are first-order)."""
    return g._data if isinstance(g, Tensor) else g


def _dense(g):
    g = _plain(g)
    return _to_dense(g) if g.__class__ is COO else g


class SparseOp(Op):
    """Base of the sparse ops: no dtype rule of the mechanism (each does its own), and
    backward formulas that run on arrays (under create_graph, on the tensors' arrays)."""
    widens_bfloat16 = False
    takes_sparse_grads = True

    def _run_backward(self, grads, as_tensors):
        result = super()._run_backward(tuple(None if g is None else _plain(g)
                                             for g in grads), False)
        if not as_tensors:
            return result
        # create_graph: the formulas ran on arrays, so their results carry no history; a
        # second derivative through them is refused rather than silently missing terms
        edges = [(g._grad_fn, g._output_nr) if g._grad_fn is not None else
                 (grad_accumulator(g), 0) for g in grads
                 if isinstance(g, Tensor) and g._requires_grad] + list(self.next_functions)
        return guard_second_derivative(
            tuple(None if r is None else wrap(r) for r in result), edges,
            f'{type(self).__name__}: dynagrad differentiates sparse ops once only; a '
            'second derivative through this one is not implemented')


# ---------------------------------------------------------------------------------------
# construction and conversion

class SparseCooNew(SparseOp):
    node_name = 'SparseCooTensorWithDimsAndTensorsBackward0'

    def forward(self, values, indices, shape, coalesced=False):
        self.pattern = COO(indices, None, shape)
        return COO(indices, values, shape, coalesced)

    def backward(self, g):
        return gather(g, self.pattern)


def _as_index_array(indices):
    if isinstance(indices, Tensor):
        a = indices._data
        if a.__class__ is COO:
            raise TypeError('indices must be a dense tensor')
    else:
        a = xp.asarray(indices.numpy() if hasattr(indices, 'numpy') and
                       not isinstance(indices, np.ndarray) else indices)
    if a.dtype.kind not in 'iub':
        raise RuntimeError(f'indices must be an int64 tensor (got {a.dtype})')
    return a.astype(_INT64)


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor with ``values`` at ``indices`` (``[sparse_dim, nnz]``); ``size``
    inferred from the indices when not given. Gradients flow into ``values``. Given a size
    alone (``sparse_coo_tensor(size)``), an empty one of that size."""
    from .creation import tensor as _tensor
    if values is None:
        shape = size if size is not None else indices
        if shape is None or isinstance(shape, Tensor) or (size is not None
                                                           and indices is not None):
            raise TypeError('sparse_coo_tensor() received an invalid combination of arguments '
                            '- expected (indices, values[, size]) or (size)')
        from .sparse_inplace import sparse_zeros
        shape = size_args((shape,)) if not isinstance(shape, int) else (shape,)
        return sparse_zeros(shape, len(shape), dtype or _dtype.get_default_dtype(),
                            requires_grad)
    idx = _as_index_array(indices)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    if idx.ndim != 2:
        raise RuntimeError(f'indices must be sparse_dim x nnz, but got: {list(idx.shape)}')
    sparse_dim, nnz = idx.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        raise RuntimeError(f'indices and values must have same nnz, but got nnz from indices: '
                           f'{nnz}, nnz from values: {values.shape[0] if values.ndim else 1}')
    dense_shape = tuple(values.shape[1:])
    if nnz and idx.min() < 0:
        raise RuntimeError(f'found negative index {int(idx.min())} for dim '
                           f'{int(xp.argmax((idx < 0).any(1)))}')
    if size is None:
        sparse_shape = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sparse_dim
        shape = sparse_shape + dense_shape
    else:
        shape = size_args((size,)) if not isinstance(size, int) else (size,)
        if len(shape) != sparse_dim + len(dense_shape):
            raise RuntimeError(f'number of dimensions must be sparse_dim ({sparse_dim}) + '
                               f'dense_dim ({len(dense_shape)}), but got {len(shape)}')
        if nnz:
            high = idx.max(1)
            for d in range(sparse_dim):
                if high[d] >= shape[d]:
                    raise RuntimeError(f'size is inconsistent with indices: for dim {d}, size '
                                       f'is {shape[d]} but found index {int(high[d])}')
        if tuple(shape[sparse_dim:]) != dense_shape:
            raise RuntimeError(f'values has incorrect size, expected '
                               f'{[nnz] + list(shape[sparse_dim:])}, got {list(values.shape)}')
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    out = SparseCooNew.apply(values, indices=idx, shape=tuple(shape), coalesced=coalesced)
    if requires_grad:
        if out._grad_fn is not None:
            raise RuntimeError('sparse_coo_tensor(): values already has a history; use '
                               'requires_grad on the values instead')
        out.requires_grad_(True)
    return out


class ToDense(SparseOp):
    def forward(self, c):
        self.pattern = c
        return _to_dense(c)

    def backward(self, g):
        return _sparse_mask(g, self.pattern)


class ToSparse(SparseOp):
    def forward(self, a, sparse_dim=None):
        return from_dense(a, sparse_dim)

    def backward(self, g):
        return _to_dense(g) if g.__class__ is COO else g


class Coalesce(SparseOp):
    def forward(self, c):
        return _coalesce(c)

    def backward(self, g):
        return g


class Values(SparseOp):
    def forward(self, c):
        self.pattern = c
        return c.values

    def backward(self, g):
        c = self.pattern
        return COO(c.indices, g, c.shape, c.coalesced)


class SparseMask(SparseOp):
    def forward(self, x, mask):
        self.dense = x.__class__ is not COO
        return COO(mask.indices, gather(x, mask), mask.shape, mask.coalesced)

    def backward(self, g):
        return (_dense(g) if self.dense else g), None


@method()
def to_dense(self, dtype=None, *, masked_grad=None):
    """The dense form of a sparse tensor (a dense tensor is its own)."""
    if self._data.__class__ is not COO:
        return self if dtype is None else self.to(dtype)
    out = ToDense.apply(self)
    return out if dtype is None else out.to(dtype)


_COMPRESSED = ('compressed sparse layouts (CSR, CSC, BSR, BSC) are not supported by dynagrad; '
               'it has sparse COO tensors (layout=dynagrad.sparse_coo) only')


@method()
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO form (``sparse_dim`` leading dims sparse, the rest dense)."""
    if layout is not None and layout is not sparse_coo:
        if layout is strided:
            raise RuntimeError('to_sparse: layout must be a sparse layout (got '
                               'dynagrad.strided)')
        raise NotImplementedError(f'to_sparse(layout={layout}): {_COMPRESSED}')
    if self._data.__class__ is COO:
        if sparse_dim is not None and sparse_dim != self._data.sparse_dim:
            raise RuntimeError('to_sparse: conversion from Sparse to Sparse with sparse_dim '
                               'argument !=self.sparse_dim() is not supported')
        return self
    nd = self.ndim
    if dense_dim is not None:
        sparse_dim = nd - dense_dim
    if sparse_dim is not None:
        if not 0 < sparse_dim <= nd:
            raise RuntimeError(f'sparse_dim argument must be in [1,{nd}] but got {sparse_dim}')
        return ToSparse.named('ToSparseBackward0').apply(self, sparse_dim=sparse_dim)
    return ToSparse.named('ToSparseBackward1').apply(self)


@method()
def to_sparse_coo(self):
    return to_sparse(self)


def _layout_error(name, self):
    return RuntimeError(f'{name} expected sparse coordinate tensor layout but got Strided')


def _need_sparse(name, self):
    if self._data.__class__ is not COO:
        if name.startswith('_'):    # the private accessors have no dense kernel at all
            raise NotImplementedError(
                f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This "
                "could be because the operator doesn't exist for this backend (it reads a "
                'sparse tensor\'s storage: the tensor here is dense)')
        raise _layout_error(name, self)
    return self._data


@method()
def coalesce(self):
    c = _need_sparse('coalesce', self)
    if c.coalesced:
        return self
    return Coalesce.apply(self)


@method()
def is_coalesced(self):
    return _need_sparse('is_coalesced', self).coalesced


@method('_coalesced_')
def _coalesced_(self, coalesced):
    _need_sparse('_coalesced_', self).coalesced = bool(coalesced)
    return self


@method()
def sparse_dim(self):
    return self._data.sparse_dim if self._data.__class__ is COO else 0


@method()
def dense_dim(self):
    return self._data.dense_dim if self._data.__class__ is COO else self.ndim


@method('_nnz')
def _nnz(self):
    return _need_sparse('_nnz', self).nnz


@method()
def indices(self):
    c = _need_sparse('indices', self)
    if not c.coalesced:
        raise RuntimeError('Cannot get indices on an uncoalesced tensor, please call '
                           '.coalesce() first')
    return wrap(c.indices)


@method('_indices')
def _indices(self):
    return wrap(_need_sparse('_indices', self).indices)


@method()
def values(self):
    if self._data.__class__ is not COO:
        raise RuntimeError('values expected sparse tensor layout but got Strided')
    c = self._data
    if not c.coalesced:
        raise RuntimeError('Cannot get values on an uncoalesced tensor, please call '
                           '.coalesce() first')
    return Values.apply(self)


@method('_values')
def _values(self):
    return wrap(_need_sparse('_values', self).values)


def indices_copy(input):
    return wrap(indices(input)._data.copy())


def values_copy(input):
    return values(input).clone()


@method()
def sparse_mask(self, mask):
    if mask._data.__class__ is not COO:
        raise RuntimeError('sparse_mask expects mask to be sparse')
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError('sparse_mask(): operands have incompatible sizes; self has size '
                           f'{list(self.shape)} but mask has size {list(mask.shape)}')
    return SparseMask.apply(self, mask.detach())


@method()
def sparse_resize_(self, size, sparse_dim, dense_dim):
    c = _need_sparse('sparse_resize_', self)
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f'number of dimensions must be sparse_dim ({sparse_dim}) + '
                           f'dense_dim ({dense_dim}), but got {len(size)}')
    if c.nnz and (sparse_dim != c.sparse_dim or dense_dim != c.dense_dim or
                  any(s < o for s, o in zip(size[:sparse_dim], c.shape))
                  or size[sparse_dim:] != c.shape[c.sparse_dim:]):
        raise RuntimeError('resize_: shrinking a non-empty sparse tensor, or changing its '
                           'sparse_dim or dense_dim, is not supported')
    if not c.nnz:
        c.indices = xp.zeros((sparse_dim, 0), _INT64)
        c.values = xp.zeros((0,) + size[sparse_dim:], c.dtype)
    c.shape = size
    return self


@method()
def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    c = _need_sparse('sparse_resize_and_clear_', self)
    size = tuple(int(s) for s in size)
    c.indices = xp.zeros((sparse_dim, 0), _INT64)
    c.values = xp.zeros((0,) + size[sparse_dim:], c.dtype)
    c.shape, c.coalesced = size, True
    return self


@method()
def resize_as_sparse_(self, the_template):
    t = _need_sparse('resize_as_sparse_', the_template)
    return sparse_resize_(self, t.shape, t.sparse_dim, t.dense_dim)




# ---------------------------------------------------------------------------------------
# products

def _masked_products(g, d, c, alpha=1):
    """``(g @ d.T)`` at ``c``'s coalesced pattern, as a COO (sparse.mm's sparse gradient)."""
    c = _coalesce(c)
    rows, cols = c.indices[0], c.indices[1]
    g = _dense(g)
    if d.ndim == 1:
        vals = g[rows] * d[cols]
    else:
        vals = xp.einsum('ij,ij->i', g[rows], d[cols])
    if alpha != 1:
        vals = vals * alpha
    return COO(c.indices, vals.astype(c.dtype, copy=False), c.shape, True)


class SparseAddmm(SparseOp):
    """``beta * mat + alpha * (sparse @ dense)``: sparse.mm and sparse.addmm. The sparse
    operand's gradient is masked to its pattern, as PyTorch's."""
    node_name = 'SparseAddmmBackward0'

    def forward(self, mat, c, d, beta=1, alpha=1):
        self.c, self.d, self.beta, self.alpha = c, d, beta, alpha
        out = _spmm(c, d)
        if alpha != 1:
            out *= alpha
        if mat is not None:
            out = out + (mat if beta == 1 else mat * beta)
        return out

    def backward(self, g):
        g = _dense(g)
        need = self.needs_input_grad
        gm = (g if self.beta == 1 else g * self.beta) if need[0] else None
        gc = _masked_products(g, self.d, self.c, self.alpha) if need[1] else None
        gd = None
        if need[2]:
            gd = _spmm(_transpose(self.c), g)
            if self.alpha != 1:
                gd = gd * self.alpha
        return gm, gc, gd


class SparseDenseMm(SparseOp):
    """``sparse @ dense`` through mm/matmul/spmm: the sparse operand gets a dense gradient,
    as PyTorch's MmBackward0 gives it."""
    node_name = 'MmBackward0'

    def forward(self, c, d):
        self.c, self.d = c, d
        if d.ndim == 1:
            return _spmm(c, d[:, None])[:, 0]
        return _spmm(c, d)

    def backward(self, g):
        g = _dense(g)
        need = self.needs_input_grad
        gc = (xp.outer(g, self.d) if self.d.ndim == 1 else g @ self.d.T) if need[0] else None
        gd = None
        if need[1]:
            gd = _spmm(_transpose(self.c), g[:, None] if g.ndim == 1 else g)
            if g.ndim == 1:
                gd = gd[:, 0]
        return gc, gd


class DenseSparseMm(SparseOp):
    node_name = 'MmBackward0'

    def forward(self, d, c):
        self.c, self.d = c, d
        if d.ndim == 1:
            return _spmm(_transpose(c), d[:, None])[:, 0]
        return _spmm(_transpose(c), d.T).T.copy()

    def backward(self, g):
        g = _dense(g)
        need = self.needs_input_grad
        gd = gc = None
        if need[0]:
            gd = (_spmm(self.c, g[:, None])[:, 0] if g.ndim == 1
                  else _spmm(self.c, g.T).T.copy())
        if need[1]:
            gc = xp.outer(self.d, g) if self.d.ndim == 1 else self.d.T @ g
        return gd, gc


class SparseSparseMm(SparseOp):
    node_name = 'SparseAddmmBackward0'

    def forward(self, a, b):
        self.a, self.b = a, b
        return from_dense(_spmm(a, _to_dense(b)))

    def backward(self, g):
        g = _dense(g)
        need = self.needs_input_grad
        ga = _sparse_mask(g @ _to_dense(self.b).T, self.a) if need[0] else None
        gb = _sparse_mask(_spmm(_transpose(self.a), g), self.b) if need[1] else None
        return ga, gb


def _check_mm(name, a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f'{name}: expected 2D matrices, got {a.ndim}D and {b.ndim}D tensors')
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x'
                           f'{a.shape[1]} and {b.shape[0]}x{b.shape[1]})')
    if a.dtype is not b.dtype:
        raise RuntimeError(f'expected mat1 and mat2 to have the same dtype, but got: '
                           f'{a.dtype.name} != {b.dtype.name}')


def _matmul_kernel(cls, a, b):
    """mm / matmul / spmm with a sparse operand: dense result (sparse @ sparse: sparse)."""
    sa, sb = is_sparse(a), is_sparse(b)
    if sa and a.ndim != 2 or sb and b.ndim != 2:
        raise RuntimeError('matmul: a sparse operand must be a 2-D matrix (got '
                           f'{a.ndim}D and {b.ndim}D)')
    if a.dtype is not b.dtype:
        raise RuntimeError(f'expected mat1 and mat2 to have the same dtype, but got: '
                           f'{a.dtype.name} != {b.dtype.name}')
    if sa and sb:
        _check_mm('mm', a, b)
        return SparseSparseMm.apply(a, b)
    if sa:
        if b.ndim == 1:
            return SparseDenseMm.named('MvBackward0').apply(a, b)
        if b.ndim != 2:
            raise RuntimeError(f'matmul: a sparse matrix times a {b.ndim}-D dense tensor is not '
                               'supported')
        _check_mm('mm', a, b)
        return SparseDenseMm.apply(a, b)
    if a.ndim not in (1, 2):
        raise RuntimeError(f'matmul: a {a.ndim}-D dense tensor times a sparse matrix is not '
                           'supported')
    if a.ndim == 2:
        _check_mm('mm', a, b)
    return DenseSparseMm.apply(a, b)


def spmm(input, mat2):
    """``torch.spmm``: a sparse (or dense) matrix times a dense one, dense result."""
    from .linalg_products import mm
    return mm(input, mat2)


dsmm = spmm


def smm(input, mat):
    """A sparse matrix times a dense one, as a sparse result (PyTorch's ``smm``)."""
    return spmm(input, mat).to_sparse()


def hspmm(mat1, mat2):
    """A sparse matrix times a dense one: a hybrid sparse result, its nonzero rows kept as
    dense rows (sparse_dim 1, dense_dim 1)."""
    if not is_sparse(mat1):
        raise RuntimeError('hspmm: Argument #2 (mat1): Expected a sparse tensor')
    return spmm(mat1, mat2).to_sparse(1)


hsmm = hspmm


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for a sparse ``input`` and ``mat1``: sparse."""
    if not (is_sparse(input) and is_sparse(mat1)):
        raise RuntimeError('sspaddmm: input and mat1 must be sparse tensors')
    _check_mm('sspaddmm', mat1, mat2)
    if tuple(input.shape) != (mat1.shape[0], mat2.shape[1]):
        raise RuntimeError(f'sspaddmm: Argument #1: Expected dim 0 size {mat1.shape[0]}, got '
                           f'{input.shape[0]}' if input.shape[0] != mat1.shape[0] else
                           f'sspaddmm: Argument #1: Expected dim 1 size {mat2.shape[1]}, got '
                           f'{input.shape[1]}')
    product = smm(mat1, mat2)
    return _scale(input, beta) + _scale(product, alpha)


saddmm = sspaddmm


def _scale(x, s):
    return x if s == 1 else x * s


method('smm')(smm)
method('sspaddmm')(sspaddmm)
method('hspmm')(hspmm)


# ---------------------------------------------------------------------------------------
# elementwise

def _promoted(*operands):
    return _dtype.result_type(*operands).numpy


class SparseScale(SparseOp):
    """Values times (or divided by) a number: the pattern is kept."""
    node_name = 'MulBackward0'

    def forward(self, c, s, divide=False, dtype=None):
        self.s, self.divide, self.in_dtype = s, divide, c.dtype
        v = c.values.astype(dtype, copy=False) if dtype is not None else c.values
        v = v / s if divide else v * s
        if dtype is not None:
            v = v.astype(dtype, copy=False)
        return COO(c.indices, v, c.shape, c.coalesced)

    def backward(self, g):
        s = xp.asarray(self.s).item() if not isinstance(self.s, (int, float)) else self.s
        if g.__class__ is COO:
            v = g.values / s if self.divide else g.values * s
            out = COO(g.indices, v.astype(self.in_dtype, copy=False), g.shape, g.coalesced)
        else:
            out = (g / s if self.divide else g * s).astype(self.in_dtype, copy=False)
        return out, None


class SparseMulDense(SparseOp):
    """sparse * dense (same shape): sparse, on the sparse operand's pattern."""
    node_name = 'MulBackward0'

    def forward(self, c, d, dtype=None):
        self.c, self.d = c, d
        picked = d[tuple(c.indices)]
        v = c.values.astype(dtype, copy=False) * picked.astype(dtype, copy=False)
        return COO(c.indices, v, c.shape, c.coalesced)

    def backward(self, g):
        need = self.needs_input_grad
        c, d = self.c, self.d
        gc = gd = None
        if need[0]:
            if g.__class__ is COO:
                gc = COO(g.indices, (g.values * d[tuple(g.indices)]).astype(c.dtype, copy=False),
                         g.shape, g.coalesced)
            else:
                gc = (g * d).astype(c.dtype, copy=False)
        if need[1]:
            gd = COO(c.indices, (gather(g, c) * c.values).astype(d.dtype, copy=False),
                     c.shape, c.coalesced)
        return gc, gd


def _intersect(a, b):
    a, b = _coalesce(a), _coalesce(b)
    la, lb = linear_index(a.indices, a.shape), linear_index(b.indices, b.shape)
    _, ia, ib = xp.intersect1d(la, lb, assume_unique=True, return_indices=True)
    return a, b, ia, ib


class SparseMulSparse(SparseOp):
    node_name = 'MulBackward0'

    def forward(self, a, b, dtype=None):
        self.a, self.b = a, b
        a, b, ia, ib = _intersect(a, b)
        v = a.values[ia].astype(dtype, copy=False) * b.values[ib].astype(dtype, copy=False)
        return COO(a.indices[:, ia], v, a.shape, True)

    def _times(self, g, other):
        if g.__class__ is not COO:
            return COO(other.indices, gather(g, other) * other.values, other.shape,
                       other.coalesced)
        x, y, ix, iy = _intersect(g, other)
        return COO(x.indices[:, ix], x.values[ix] * y.values[iy], x.shape, True)

    def backward(self, g):
        need = self.needs_input_grad
        ga = self._times(g, self.b).astype(self.a.dtype) if need[0] else None
        gb = self._times(g, self.a).astype(self.b.dtype) if need[1] else None
        return ga, gb


def _is_number(x):
    return isinstance(x, (int, float, bool, np.number)) or (
        isinstance(x, Tensor) and x._data.__class__ is not COO and x.ndim == 0)


def _number(x):
    return x._data if isinstance(x, Tensor) else x


def _mul_kernel(cls, a, b):
    sa, sb = is_sparse(a), is_sparse(b)
    dtype = _promoted(a, b)
    if sa and sb:
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f'mul: expected sparse operands of the same size, but got '
                               f'{list(a.shape)} and {list(b.shape)}')
        return SparseMulSparse.apply(a, b, dtype=dtype)
    s, other = (a, b) if sa else (b, a)
    if _is_number(other):
        if isinstance(other, Tensor) and other._requires_grad:
            return SparseMulDense.apply(s, other.expand(s.shape), dtype=dtype)
        return SparseScale.apply(s, _number(other), dtype=dtype)
    if tuple(other.shape) != tuple(s.shape):
        other = other.expand(_broadcast_to_sparse('mul', s.shape, other.shape))
    return SparseMulDense.apply(s, other, dtype=dtype)


def _broadcast_to_sparse(op, sparse_shape, dense_shape):
    """The sparse operand's shape, which a dense operand is broadcast to (PyTorch's error
    where the shapes do not broadcast)."""
    sparse_shape, dense_shape = tuple(sparse_shape), tuple(dense_shape)
    for k, (x, y) in enumerate(zip(sparse_shape[::-1], dense_shape[::-1]), 1):
        if x != y and y != 1:
            raise RuntimeError(f'The size of tensor a ({y}) must match the size of tensor b '
                               f'({x}) at non-singleton dimension {len(dense_shape) - k}')
    if len(dense_shape) > len(sparse_shape):
        raise RuntimeError(f'{op}(sparse, dense): dynagrad broadcasts the dense operand to the '
                           f'sparse one\'s shape only; got {list(sparse_shape)} and '
                           f'{list(dense_shape)} (expand the sparse operand first)')
    return sparse_shape


def _div_kernel(cls, a, b, **params):
    if is_sparse(a) and _is_number(b) and not params:
        dtype = _promoted(a, b)
        if dtype.kind != 'f':
            dtype = _dtype.get_default_dtype().numpy
        return SparseScale.named('DivBackward0').apply(a, _number(b), divide=True, dtype=dtype)
    if params:
        raise SparseRefused('div')
    raise RuntimeError('Sparse division requires a scalar or zero-dim dense tensor divisor (got '
                       f'shape {list(b.shape) if hasattr(b, "shape") else []} for divisor)')


class SparseAddSparse(SparseOp):
    node_name = 'AddBackward0'

    def forward(self, a, b, alpha=1, dtype=None):
        self.alpha = alpha
        self.dtypes = (a.dtype, b.dtype)
        out = _add(a.astype(dtype), b.astype(dtype), alpha)
        return out

    def backward(self, g):
        gb = g
        if self.alpha != 1:
            gb = (COO(g.indices, g.values * self.alpha, g.shape, g.coalesced)
                  if g.__class__ is COO else g * self.alpha)
        return g.astype(self.dtypes[0]), gb.astype(self.dtypes[1])


class DenseAddSparse(SparseOp):
    node_name = 'AddBackward0'

    def forward(self, d, c, alpha=1, dtype=None):
        self.alpha = alpha
        self.dtypes = (d.dtype, c.dtype)
        out = xp.array(d, dtype=dtype, copy=True)
        if c.nnz:
            v = c.values.astype(dtype, copy=False)
            xp.add.at(out, tuple(c.indices), v if alpha == 1 else v * alpha)
        return out

    def backward(self, g):
        g = _dense(g)
        gc = g if self.alpha == 1 else g * self.alpha
        return g.astype(self.dtypes[0], copy=False), gc.astype(self.dtypes[1], copy=False)


def _add_kernel(cls, a, b, alpha=1):
    sub = cls.__name__.startswith('Sub')
    if sub:
        alpha = -alpha
    sa, sb = is_sparse(a), is_sparse(b)
    if sa and not sb:   # (PyTorch says add for sub too)
        raise RuntimeError('add(sparse, dense) is not supported. Use add(dense, sparse) '
                           'instead.')
    if sa and tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f'{list(a.shape)} != {list(b.shape)}')
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f'add: expected \'self\' and \'other\' to have same size, but self '
                           f'has size {list(a.shape)} while other has size {list(b.shape)} '
                           '(dynagrad does not broadcast sparse operands)')
    dtype = _promoted(a, b)
    name = 'SubBackward0' if sub else 'AddBackward0'
    if sa:
        return SparseAddSparse.named(name).apply(a, b, alpha=alpha, dtype=dtype)
    return DenseAddSparse.named(name).apply(a, b, alpha=alpha, dtype=dtype)


class SparseValuesMap(SparseOp):
    """A zero-preserving unary op on the values (after coalescing, for nonlinear ones)."""

    def forward(self, c, op=None, params=None):
        if not op.linear:
            c = _coalesce(c)
        self.c = c
        self.inner = op
        self.params = params or {}
        v = c.values
        node = object.__new__(op)
        node._saved = ()
        node.next_functions = ((object(), 0),)  # every input needs grad: save what backward needs
        self.node = node
        out = node.forward(v, **self.params)
        self.out = out
        return COO(c.indices, out, c.shape, c.coalesced)

    def backward(self, g):
        c = self.c
        gv = gather(g, c)
        node = self.node
        saved = node._saved
        node._saved = tuple(s for s in saved) if saved else ()
        node._as_tensors = False
        r = node.backward(gv)
        r = r[0] if r.__class__ is tuple else r
        return COO(c.indices, xp.asarray(r).astype(c.dtype, copy=False), c.shape, c.coalesced)


def _unary_kernel(cls, x, **params):
    if not is_sparse(x):
        raise SparseRefused(_aten(cls))
    if cls.__name__.startswith('Neg'):
        return SparseScale.named('NegBackward0').apply(x, -1)
    return SparseValuesMap.named(cls._node_name).apply(x, op=cls, params=params)


def _pow_kernel(cls, x, exponent):
    if not is_sparse(x):
        raise SparseRefused('pow')
    if exponent == 0:
        raise RuntimeError('pow: cannot raise to zeroth power on sparse tensor; it would make '
                           'the result tensor dense')
    return SparseValuesMap.named('PowBackward0').apply(x, op=cls, params={'exponent': exponent})


def _aten(cls):
    from ..autograd.sparse_dispatch import aten_name
    return aten_name(cls)


class SparseTranspose(SparseOp):
    def forward(self, c, dim0, dim1):
        self.dims = (dim0, dim1)
        if dim0 >= c.sparse_dim or dim1 >= c.sparse_dim:
            raise RuntimeError('transpose: dynagrad transposes the sparse dims of a sparse '
                               'tensor only')
        if dim0 == dim1:
            return c
        return _transpose(c, dim0, dim1)

    def backward(self, g):
        d0, d1 = self.dims
        if d0 == d1:
            return g
        if g.__class__ is COO:
            return _transpose(g, d0, d1)
        return g.swapaxes(d0, d1)


def _transpose_kernel(cls, x, dim0, dim1):
    return SparseTranspose.named(cls._node_name).apply(x, dim0=dim0, dim1=dim1)


class SparseCast(SparseOp):
    node_name = 'ToCopyBackward0'

    def forward(self, c, dtype):
        self.in_dtype = c.dtype
        return COO(c.indices, _dtype.cast(c.values, dtype), c.shape, c.coalesced)

    def backward(self, g):
        return g.astype(self.in_dtype)


class SparseClone(SparseOp):
    node_name = 'CloneBackward0'

    def forward(self, c, **params):
        return c.copy()

    def backward(self, g):
        return g


# ---------------------------------------------------------------------------------------
# reductions and softmax

class SparseSumAll(SparseOp):
    node_name = 'SumBackward0'

    def forward(self, c, dim=None, keepdim=False, dtype=None):
        self.c = c
        if dtype is None and c.dtype.kind in 'biu':
            dtype = _INT64
        return xp.asarray(c.values.sum(dtype=dtype))

    def backward(self, g):
        return xp.broadcast_to(xp.asarray(g).astype(self.c.dtype), self.c.shape)


class SparseSum(SparseOp):
    """Sum over ``dims``: sparse while sparse dims remain, dense when all are summed."""
    node_name = 'SparseSumBackward0'

    def forward(self, c, dims, dtype=None):
        self.c = c = _coalesce(c)
        k = c.sparse_dim
        sdims = [d for d in dims if d < k]
        ddims = tuple(d - k + 1 for d in dims if d >= k)
        self.sdims, self.ddims = sdims, ddims
        v = c.values
        if dtype is None and v.dtype.kind in 'biu':
            dtype = _INT64
        if dtype is not None:
            v = v.astype(dtype)
        if ddims:
            v = v.sum(axis=ddims)
        keep = [d for d in range(k) if d not in sdims]
        self.keep = keep
        dense_shape = tuple(n for i, n in enumerate(c.shape[k:]) if i + 1 not in ddims)
        if not keep:
            return xp.asarray(v.sum(axis=0))
        shape = tuple(c.shape[d] for d in keep) + dense_shape
        return _coalesce(COO(c.indices[keep], v, shape, False))

    def backward(self, g):
        c = self.c
        if self.keep:
            pattern = COO(c.indices[self.keep], None,
                          tuple(c.shape[d] for d in self.keep) + g.shape[len(self.keep):])
            gv = gather(g, pattern)
        else:
            gv = xp.broadcast_to(g, (c.nnz,) + xp.shape(g))
        for axis in sorted(self.ddims):
            gv = xp.expand_dims(gv, axis)
        gv = xp.broadcast_to(gv, c.values.shape).astype(c.dtype)
        return COO(c.indices, gv, c.shape, True)


def _dims_of(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [{-ndim}, '
                             f'{ndim - 1}], but got {d})')
        out.append(d % ndim)
    return tuple(sorted(set(out)))


def _sum_kernel(cls, x, dim=None, keepdim=False, dtype=None):
    if dim is None:
        return SparseSumAll.apply(x, dtype=dtype)
    if keepdim:
        raise RuntimeError('sum: keepdim=True is not supported for sparse tensors')
    return SparseSum.named('SumBackward1').apply(x, dims=_dims_of(dim, x.ndim), dtype=dtype)


def sparse_sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: all elements (a dense 0-d tensor), or over ``dim``."""
    np_dtype = dtype.numpy if dtype is not None else None
    if not is_sparse(input):
        from .reduction import sum as _sum
        return _sum(input, dim, dtype=dtype) if dim is not None else _sum(input, dtype=dtype)
    if dim is None:     # recorded as SumBackward0, with a sparse gradient (as PyTorch)
        return SparseSum.named('SumBackward0').apply(input, dims=tuple(range(input.ndim)),
                                                     dtype=np_dtype)
    return SparseSum.apply(input, dims=_dims_of(dim, input.ndim), dtype=np_dtype)


def _groups(c, dim):
    """For softmax over ``dim`` (a sparse dim): the group of each entry (entries sharing
    every other index) and the number of groups."""
    others = [d for d in range(c.sparse_dim) if d != dim]
    if not others:
        return xp.zeros(c.nnz, np.intp), 1
    lin = linear_index(c.indices[others], tuple(c.shape[d] for d in others))
    uniq, inv = xp.unique(lin, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _group_sum(values, groups, n):
    out = xp.zeros((n,) + values.shape[1:], values.dtype)
    xp.add.at(out, groups, values)
    return out


class SparseSoftmax(SparseOp):
    node_name = 'SparseSoftmaxBackward0'
    log = False

    def forward(self, c, dim, dtype=None):
        c = _coalesce(c)
        self.c, self.dim = c, dim
        v = c.values if dtype is None else c.values.astype(dtype)
        if v.dtype.kind != 'f':
            raise RuntimeError('softmax: expected a floating point sparse tensor')
        if dim >= c.sparse_dim:
            axis = dim - c.sparse_dim + 1
            m = v.max(axis=axis, keepdims=True) if v.size else v
            e = xp.exp(v - m)
            s = e.sum(axis=axis, keepdims=True)
            y = (v - m - xp.log(s)) if self.log else e / s
            self.axis = axis
        else:
            self.axis = None
            groups, n = _groups(c, dim)
            self.groups, self.n = groups, n
            m = xp.full((n,) + v.shape[1:], -np.inf, v.dtype)
            xp.maximum.at(m, groups, v)
            shifted = v - m[groups]
            e = xp.exp(shifted)
            s = _group_sum(e, groups, n)
            y = shifted - xp.log(s)[groups] if self.log else e / s[groups]
        self.y = y
        return COO(c.indices, y, c.shape, True)

    def backward(self, g):
        c, y = self.c, self.y
        gv = gather(g, c).astype(y.dtype, copy=False)
        if self.axis is not None:
            if self.log:
                gx = gv - xp.exp(y) * gv.sum(axis=self.axis, keepdims=True)
            else:
                gx = y * (gv - (gv * y).sum(axis=self.axis, keepdims=True))
        elif self.log:
            gx = gv - xp.exp(y) * _group_sum(gv, self.groups, self.n)[self.groups]
        else:
            gx = y * (gv - _group_sum(gv * y, self.groups, self.n)[self.groups])
        return COO(c.indices, gx.astype(c.dtype, copy=False), c.shape, True)


class SparseLogSoftmax(SparseSoftmax):
    node_name = 'SparseLogSoftmaxBackward0'
    log = True


def _softmax(op, input, dim, dtype):
    if not is_sparse(input):
        raise RuntimeError(f'{op.__name__}: expected a sparse tensor, got a dense one (use '
                           'dynagrad.softmax for dense tensors)')
    nd = input.ndim
    if not -nd <= dim < nd:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-nd}, '
                         f'{nd - 1}], but got {dim})')
    return op.apply(input, dim=dim % nd, dtype=dtype.numpy if dtype is not None else None)


def sparse_softmax(input, dim, *, dtype=None):
    return _softmax(SparseSoftmax, input, dim, dtype)


def sparse_log_softmax(input, dim, *, dtype=None):
    return _softmax(SparseLogSoftmax, input, dim, dtype)


# ---------------------------------------------------------------------------------------
# sparse.mm / sparse.addmm

def sparse_mm(mat1, mat2, reduce='sum'):
    """``torch.sparse.mm``: sparse @ dense is dense, sparse @ sparse sparse; the sparse
    operand's gradient is masked to its pattern."""
    if reduce != 'sum':
        raise NotImplementedError(f"sparse.mm(reduce={reduce!r}): dynagrad implements "
                                  "reduce='sum' only")
    if is_sparse(mat1) and not is_sparse(mat2):
        _check_mm('sparse.mm', mat1, mat2)
        return SparseAddmm.apply(None, mat1, mat2)
    if is_sparse(mat1) or is_sparse(mat2):
        return _matmul_kernel(None, mat1, mat2)
    from .linalg_products import mm
    return mm(mat1, mat2)


def sparse_addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1``."""
    if not is_sparse(mat1):
        from .linalg_products import addmm
        return addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
    _check_mm('sparse.addmm', mat1, mat2)
    if is_sparse(mat) or tuple(mat.shape) != (mat1.shape[0], mat2.shape[1]):
        mat = mat.to_dense().expand(mat1.shape[0], mat2.shape[1])
    return SparseAddmm.apply(mat, mat1, mat2, beta=beta, alpha=alpha)


# ---------------------------------------------------------------------------------------
# the kernels dense ops run on sparse inputs

def _register():
    from . import arithmetic, unary, reduction, shape, linalg_products, clamping
    K = SPARSE_KERNELS
    K[linalg_products.Matmul] = lambda cls, a, b, **p: _matmul_kernel(cls, a, b)
    K[arithmetic.Mul] = lambda cls, a, b: _mul_kernel(cls, a, b)
    K[arithmetic.Div] = _div_kernel
    K[arithmetic.Add] = _add_kernel
    K[arithmetic.Sub] = _add_kernel
    K[arithmetic.Pow] = _pow_kernel
    K[reduction.Sum] = _sum_kernel
    K[shape.Transpose] = _transpose_kernel
    K[clamping.Cast] = lambda cls, x, dtype: SparseCast.apply(x, dtype=dtype)
    K[clamping.Clone] = lambda cls, x, **p: SparseClone.apply(x)
    for name in ('Neg', 'Abs', 'Sqrt', 'Sin', 'Tan', 'Asin', 'Atan', 'Sinh', 'Tanh', 'Asinh',
                 'Atanh', 'Expm1', 'Log1p', 'Relu', 'Sign', 'Sgn', 'Floor', 'Ceil', 'Trunc',
                 'Round', 'Frac', 'Rad2Deg', 'Deg2Rad'):
        cls = getattr(unary, name, None)
        if cls is not None:
            K[cls] = _unary_kernel


_register()

from . import sparse_inplace, sparse_shape  # noqa: E402,F401  (they register their kernels)
