"""Reductions and scans (sorting and order statistics: ``ordering.py``).

Three kinds of backward appear here:

* smooth reductions (``sum``, ``prod``, ``var``, ``norm``, ``logsumexp``, ...) broadcast the
  gradient back over the reduced dimensions with their own formula;
* ties-aware reductions (``max()``, ``amax``, ``median()``, ``inf`` norms) split the gradient
  evenly among the elements equal to the result, as PyTorch does;
* selections (``max(dim)``, ``sort``, ``topk``, ``kthvalue``, ``median(dim)``, ``mode``,
  ``cummax``) scatter the gradient to the selected indices with ``_PutAlong``, whose own
  backward is a gather (``_TakeAlong``): double backward comes from those two ops.
"""
import builtins
import collections
import warnings

import numpy as np

from ..autograd.batched import vmap_function
from ..backend import xp
from ..autograd.function import Op
from ..tensor import Tensor, method, wrap
from .. import _dtype
from ._elementwise import not_implemented, refused
from .formula import (broadcast_to, unsqueeze_dims, is_array, where, sign, sgn, exp, zeros_like,
                       unwrap as _arr)

_py_max, _py_min, _py_sorted = builtins.max, builtins.min, builtins.sorted


# -- helpers -------------------------------------------------------------------------------

def _check_int(value, op, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _dims(dim, ndim, op):
    """Normalise ``dim`` (int, tuple or None) to a sorted tuple of non-negative axes."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dims = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not "
                        f'{type(dim).__name__}')
    n = _py_max(ndim, 1)
    out = []
    for d in dims:
        d = _check_int(d, op, 'dim')
        if not -n <= d < n:
            raise IndexError(f'{op}(): Dimension out of range (expected to be in range of '
                             f'[{-n}, {n - 1}], but got {d})')
        out.append(d % n)
    if len(set(out)) != len(out):
        repeated = next(d for i, d in enumerate(out) if d in out[:i])
        raise RuntimeError(f'{op}(): dim {repeated} appears multiple times in the list of dims')
    return tuple(_py_sorted(out)) if ndim else ()


def _all_dims(dim, ndim, op):
    """``dim`` for reductions where None, () and [] all mean every dimension."""
    dims = _dims(dim, ndim, op)
    if dims is None or (dims == () and ndim):
        return tuple(range(ndim))
    return dims


def _dim1(dim, ndim, op):
    """One dimension, normalised (0 for a 0-dim tensor, as PyTorch allows dim 0 and -1)."""
    dim = _check_int(dim, op, 'dim')
    n = _py_max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f'{op}(): Dimension out of range (expected to be in range of '
                         f'[{-n}, {n - 1}], but got {dim})')
    return dim % n


def _check_nonempty_dim(input, dim, op):
    shape = input._data.shape
    if shape and shape[dim] == 0:
        raise IndexError(f'{op}(): Expected reduction dim {dim} to have non-zero size. '
                         f'(input shape {list(shape)}; reduce over a non-empty dim instead)')


def _np_dtype(dtype):
    if dtype is None:
        return None
    if dtype.__class__ is not _dtype.dtype:     # torch's parser: a dtype or a Python type
        if dtype not in _PYTHON_TYPES:
            raise TypeError(f"argument 'dtype' must be torch.dtype, not "
                            f'{type(dtype).__name__}')
        dtype = _PYTHON_TYPES[dtype]
    return dtype.numpy


# what torch's argument parser reads a Python type as (float is double there)
_PYTHON_TYPES = {float: _dtype.float64, int: _dtype.int64, bool: _dtype.bool,
                 complex: _dtype.complex128}


def _cast(g, np_dtype):
    """``g`` in the NumPy dtype ``np_dtype`` (array or tensor)."""
    if is_array(g):
        return g if g.dtype == np_dtype else g.astype(np_dtype)
    return g if g._data.dtype == np_dtype else g.to(_dtype.FROM_NUMPY[np_dtype])


def _keep(g, dims, ndim, keepdim):
    """``g`` with the reduced ``dims`` re-inserted (size 1), unless they were kept."""
    if keepdim or dims is None or not ndim:
        return g
    return unsqueeze_dims(g, dims, ndim)


def _count(shape, dims):
    if dims is None:
        return int(xp.prod(shape, dtype=np.int64))
    return int(xp.prod([shape[d] for d in dims], dtype=np.int64))


def _along(n, axis, ndim):
    """``arange(n)`` shaped to broadcast along ``axis`` of an ``ndim``-dim array."""
    shape = [1] * ndim
    shape[axis] = n
    return xp.arange(n).reshape(shape)


def _flip(a, axis):
    """``a`` reversed along ``axis`` (array or tensor)."""
    if is_array(a):
        return xp.flip(a, axis)
    return _Flip.apply(a, axis=axis)


class _Flip(Op):
    node_name = 'FlipBackward0'

    def forward(self, x, axis):
        self.axis = axis
        return xp.flip(x, axis).copy()

    def backward(self, g):
        return _flip(g, self.axis)


def _require_float(input, op, message=None):
    kind = input._data.dtype.kind
    if kind not in 'fcV':
        name = _dtype.FROM_NUMPY[input._data.dtype].legacy_name[:-6]
        raise RuntimeError(message or f'{op}(): expected a floating point or complex tensor as '
                           f'input. Got {name}')


def _refuse_wide_unsigned(input, kernel, dtype=None):
    """torch's kernels for these reductions refuse uint16/32/64 (its "limited support");
    ``dtype`` (an output dtype asked for) is checked in place of the input's when given."""
    data = getattr(input, '_data', None)      # not a tensor: the op's own check says so
    d = dtype if dtype is not None else None if data is None else _dtype.FROM_NUMPY[data.dtype]
    if d in _dtype.WIDE_UNSIGNED:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.type_name(d)}\' '
                                  '(PyTorch supports few ops on uint16/32/64: cast to int64 '
                                  'or a floating dtype first)')


_UNSORTABLE = ' Sort does not support complex dtypes on CPU'


def _refuse_limited(input, kernel):
    """torch's kernels for these reductions refuse uint16/32/64 and float8 inputs."""
    data = getattr(input, '_data', None)      # not a tensor: the op's own check says so
    if data is not None and data.dtype in _dtype.REFUSED_NUMPY:
        raise refused(kernel, data)


def _refuse_float8(input, kernel):
    """torch's kernels for these reductions refuse float8 inputs (uint16/32/64 they take)
    unless an output dtype is asked for, which the caller checks."""
    data = getattr(input, '_data', None)
    if data is not None and data.dtype in _dtype.FLOAT8_NUMPY:
        raise refused(kernel, data)


def _return_type(name, fields=('values', 'indices')):
    """A named tuple like ``torch.return_types.<name>``, with its repr."""
    cls = collections.namedtuple(name, fields)
    cls.__module__ = 'dynagrad.return_types'

    def __repr__(self):
        body = ',\n'.join(f'{f}={v!r}' for f, v in zip(fields, self))
        return f'dynagrad.return_types.{name}(\n{body})'
    cls.__repr__ = __repr__
    return cls


class return_types:
    """The named-tuple types of ops returning values and indices (``torch.return_types``)."""
    max = _return_type('max')
    min = _return_type('min')
    sort = _return_type('sort')
    topk = _return_type('topk')
    kthvalue = _return_type('kthvalue')
    median = _return_type('median')
    nanmedian = _return_type('nanmedian')
    mode = _return_type('mode')
    cummax = _return_type('cummax')
    cummin = _return_type('cummin')
    aminmax = _return_type('aminmax', ('min', 'max'))
    frexp = _return_type('frexp', ('mantissa', 'exponent'))


# -- gather and scatter along one axis: the backward of every selection ----------------------

def _along_key(idx, axis):
    key = list(xp.ogrid[tuple(slice(n) for n in idx.shape)])
    key[axis] = idx
    return tuple(key)


class _PutAlong(Op):
    """Zeros of ``shape`` with ``g`` put at ``idx`` along ``axis`` (added where idx repeats)."""
    node_name = 'ScatterAddBackward0'

    def forward(self, g, idx, axis, shape, accumulate=False):
        self.idx, self.axis, self.accumulate = idx, axis, accumulate
        out = xp.zeros(shape, g.dtype)
        if accumulate:
            xp.add.at(out, _along_key(idx, axis), g)
        else:
            xp.put_along_axis(out, idx, g, axis)
        return out

    def backward(self, gg):
        return _TakeAlong.run(gg, idx=self.idx, axis=self.axis, accumulate=self.accumulate)


class _TakeAlong(Op):
    """``x`` gathered at ``idx`` along ``axis``."""
    node_name = 'GatherBackward0'

    def forward(self, x, idx, axis, accumulate=False):
        self.idx, self.axis, self.accumulate, self.shape = idx, axis, accumulate, x.shape
        return xp.take_along_axis(x, idx, axis)

    def backward(self, g):
        return _PutAlong.run(g, idx=self.idx, axis=self.axis, shape=self.shape,
                             accumulate=self.accumulate)


class _Select(Op):
    """Base of ops returning (values, indices) selected along ``self.axis``."""
    accumulate = False

    def _finish(self, x, vals, idx, keepdim):
        """Record what backward needs; shape the outputs (``idx`` has ``vals``'s shape)."""
        self.in_shape = x.shape
        self.keepdim = keepdim
        idx = idx.astype(np.int64, copy=False)
        if self.needs_input_grad[0]:
            self.idx = idx
        if x.ndim == 0:
            return vals.reshape(()), idx.reshape(())
        if not keepdim:
            return vals.squeeze(self.axis), idx.squeeze(self.axis)
        return vals, idx

    def backward(self, g, gi=None):
        if not self.in_shape:
            return g
        if not self.keepdim:
            g = unsqueeze_dims(g, (self.axis,), len(self.in_shape))
        return _PutAlong.run(g, idx=self.idx, axis=self.axis, shape=self.in_shape,
                             accumulate=self.accumulate)


def _as1d(x):
    return x.reshape(1) if x.ndim == 0 else x


# -- sum and mean -------------------------------------------------------------------------------

class Sum(Op):
    supports_complex = True
    widens_half = True
    quiet_fp = True

    def forward(self, x, dim=None, keepdim=False, dtype=None):
        self.shape = x.shape
        self.dims = dim
        self.keepdim = keepdim
        self.in_dtype = x.dtype
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        return x.sum(axis=dim, keepdims=keepdim, dtype=dtype)

    def backward(self, g):
        if self.dims is not None and not self.keepdim:
            g = unsqueeze_dims(g, self.dims, len(self.shape))
        return broadcast_to(_cast(g, self.in_dtype), self.shape)


class SumDim(Sum):
    """``sum`` over given dims (PyTorch's second overload)."""
    supports_complex = True
    node_name = 'SumBackward1'


class Mean(Op):
    supports_complex = True
    widens_half = True
    quiet_fp = True
    def forward(self, x, dim=None, keepdim=False, dtype=None):
        if x.dtype.kind not in 'fcV' and dtype is None:
            name = _dtype.type_name(_dtype.FROM_NUMPY[x.dtype])
            raise RuntimeError('mean(): could not infer output dtype. Input dtype must be '
                               f'either a floating point or complex dtype. Got: {name}')
        self.shape = x.shape
        self.dims = dim
        self.keepdim = keepdim
        self.in_dtype = x.dtype
        if x.size:
            out = x.mean(axis=dim, keepdims=keepdim, dtype=dtype)
        else:                                   # NaN, as torch gives, without NumPy's warning
            out = x.sum(axis=dim, keepdims=keepdim, dtype=dtype) * xp.nan
        self.count = _py_max(x.size // _py_max(out.size, 1), 1)
        return out

    def backward(self, g):
        if self.dims is not None and not self.keepdim:
            g = unsqueeze_dims(g, self.dims, len(self.shape))
        return broadcast_to(_cast(g, self.in_dtype) / self.count, self.shape)


class MeanDim(Mean):
    """``mean`` over given dims (PyTorch's second overload)."""
    supports_complex = True
    node_name = 'MeanBackward1'


class Nansum(Op):
    widens_half = True
    def forward(self, x, dim=None, keepdim=False, dtype=None):
        self.dims, self.keepdim, self.in_dtype = dim, keepdim, x.dtype
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        if x.dtype.kind in 'fV' and self.needs_input_grad[0]:
            self.save_for_backward(x)
        return xp.nansum(x, axis=dim, keepdims=keepdim, dtype=dtype)

    def backward(self, g):
        x, = self.saved_tensors
        xa = _arr(x)
        g = _cast(_keep(g, self.dims, xa.ndim, self.keepdim), self.in_dtype)
        return where(xp.isnan(xa), 0.0, broadcast_to(g, xa.shape))


@method
def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        _refuse_wide_unsigned(input, 'sum_cpu', dtype)
    elif input._data.dtype in _dtype.FLOAT8_NUMPY:      # torch sums no float8 (uint32 it does)
        raise NotImplementedError(f'"sum_cpu" not implemented for '
                                  f'\'{_dtype.type_name(input.dtype)}\' (cast to a floating '
                                  'dtype first)')
    dims = _dims(dim, input.ndim, 'sum')
    if dims == () and dim is not None:
        dims = tuple(range(input.ndim))     # dim=() sums everything (still SumBackward1)
    op = Sum if dims is None else SumDim
    return op.apply(input, dim=dims, keepdim=keepdim, dtype=_np_dtype(dtype))


@method
def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is None:
        _refuse_float8(input, 'sum_cpu')
    dims = _dims(dim, input.ndim, 'mean')
    op = Mean if dims is None else MeanDim
    return op.apply(input, dim=dims, keepdim=keepdim, dtype=_np_dtype(dtype))


@method
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    dims = _dims(dim, input.ndim, 'nansum')
    if dims == () and dim is not None:
        dims = tuple(range(input.ndim))
    return Nansum.apply(input, dim=dims, keepdim=keepdim, dtype=_np_dtype(dtype))


@method
@vmap_function('reduce_all')
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``nansum / (number of non-NaN elements)``, recorded as a division, as in PyTorch."""
    if input._data.dtype.kind not in 'fcV' and dtype is None:
        name = _dtype.FROM_NUMPY[input._data.dtype].legacy_name[:-6]
        raise RuntimeError('nanmean(): expected input to have floating point or complex dtype '
                           f'but got {name}')
    dims = _dims(dim, input.ndim, 'nanmean')
    if dims == () and dim is not None:
        dims = tuple(range(input.ndim))
    count = (~xp.isnan(input._data)).sum(axis=dims, keepdims=keepdim)
    return nansum(input, dims, keepdim, dtype=dtype) / wrap(xp.asarray(count, dtype=np.int64))


# -- prod and cumulative ops -----------------------------------------------------------------------

def _cumsum_any(a, axis):
    if is_array(a):
        return xp.cumsum(a, axis)
    return Cumsum.apply(a, axis=axis, dtype=None)


def _cumprod_any(a, axis):
    if is_array(a):
        return xp.cumprod(a, axis)
    return Cumprod.apply(a, axis=axis, dtype=None)


def _revcumsum(a, axis):
    """``r[i] = sum(a[i:])`` along ``axis``."""
    return _flip(_cumsum_any(_flip(a, axis), axis), axis)


def _prod_others(x, axis, cumulative=False):
    """Products of all other elements along ``axis``, exact with zeros (array or tensor).

    Row ``k`` of ``Y`` is ``x`` with element ``k`` replaced by 1, so ``Y.prod`` gives
    ``prod_{j != k} x[j]`` and ``Y.cumprod`` gives ``prod_{j <= i, j != k} x[j]`` in column
    ``i``: no division, so zeros need no special case and the result differentiates
    again exactly. It costs ``n`` times the input: used only when ``x`` has zeros.
    """
    nd = _arr(x).ndim
    last = nd - 1
    if axis != last:
        x = x.swapaxes(axis, last)
    n = _arr(x).shape[last]
    y = where(xp.eye(n, dtype=bool), 1.0, x[..., None, :])
    return y.cumprod(nd) if cumulative else y.prod(nd)


def _cumprod_grad(x, g, axis, out=None):
    """Gradient of ``cumprod(x, axis)`` for upstream ``g``, exact with zeros in ``x``.

    With no zero, ``revcumsum(g * out) / x``; otherwise
    ``gx[k] = sum_{i >= k} g[i] * prod_{j <= i, j != k} x[j]`` from ``_prod_others``.
    """
    xa = _arr(x)
    if not (xa == 0).any():
        if out is None:
            out = _cumprod_any(x, axis)
        return _revcumsum(g * out, axis) / x
    nd = xa.ndim
    last = nd - 1
    c = _prod_others(x, axis, cumulative=True)          # [..., k, i]
    gs = g if axis == last else g.swapaxes(axis, last)
    n = xa.shape[axis]
    upper = xp.triu(xp.ones((n, n), dtype=bool))      # i >= k
    gx = where(upper, gs[..., None, :] * c, 0.0).sum((nd,))
    return gx if axis == last else gx.swapaxes(axis, last)


class Prod(Op):
    supports_complex = True
    autocast = 'fp32'
    widens_half = True
    quiet_fp = True
    def forward(self, x, dim=None, keepdim=False, dtype=None):
        self.in_dtype = x.dtype
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        self.dim, self.keepdim = dim, keepdim
        out = xp.prod(x, axis=dim, keepdims=keepdim, dtype=dtype)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        xa = _arr(x)
        g = _cast(g, self.in_dtype)
        out = _cast(out, self.in_dtype)
        axis = self.dim
        if axis is None:
            if (xa == 0).any():
                return g * _prod_others(x.reshape((xa.size,)), 0).reshape(xa.shape)
            return g * out / x
        if xa.ndim == 0:
            return g
        if not self.keepdim:
            g = unsqueeze_dims(g, (axis,), xa.ndim)
            out = unsqueeze_dims(out, (axis,), xa.ndim)
        if (xa == 0).any():
            others = _prod_others(x, axis)
            return g * (others if axis == xa.ndim - 1 else others.swapaxes(axis, xa.ndim - 1))
        return g * out / x


class ProdDim(Prod):
    """``prod`` along one dim (PyTorch's second overload)."""
    supports_complex = True
    node_name = 'ProdBackward1'


class Cumsum(Op):
    supports_complex = True
    widens_half = True
    def forward(self, x, axis, dtype=None):
        self.axis, self.in_dtype, self.ndim = axis, x.dtype, x.ndim
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        return xp.cumsum(_as1d(x), axis, dtype=dtype).reshape(x.shape)

    def backward(self, g):
        g = _cast(g, self.in_dtype)
        return g if self.ndim == 0 else _revcumsum(g, self.axis)


class Cumprod(Op):
    supports_complex = True
    widens_half = True
    quiet_fp = True
    def forward(self, x, axis, dtype=None):
        self.axis, self.in_dtype = axis, x.dtype
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        out = xp.cumprod(_as1d(x), axis, dtype=dtype).reshape(x.shape)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        g = _cast(g, self.in_dtype)
        if _arr(x).ndim == 0:
            return g
        return _cumprod_grad(x, g, self.axis, _cast(out, self.in_dtype))


@method
def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is None:
        _refuse_float8(input, 'prod_out_cpu')
    if dim is not None:
        dim = _dim1(dim, input.ndim, 'prod')
    op = Prod if dim is None else ProdDim
    return op.apply(input, dim=dim, keepdim=keepdim, dtype=_np_dtype(dtype))


def _inplace_scan(op_cls, name):
    """The in-place ``<name>_(dim)`` of a scan (its dtype, if given, is the tensor's own)."""
    def fn(self, dim, *, dtype=None):
        if dtype is not None and dtype.numpy != self._data.dtype:
            raise RuntimeError(f'Bad in-place call: input tensor dtype {self.dtype} and output '
                               f'tensor dtype {dtype} should match ({name}_)')
        return op_cls.apply_(self, axis=_dim1(dim, self.ndim, name), dtype=_np_dtype(dtype))
    fn.__name__ = name + '_'
    return fn


@method
def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        _refuse_wide_unsigned(input, 'cumsum_out_cpu', dtype)
    else:
        _refuse_float8(input, 'cumsum_out_cpu')
    return Cumsum.apply(input, axis=_dim1(dim, input.ndim, 'cumsum'), dtype=_np_dtype(dtype))


cumsum_ = method(_inplace_scan(Cumsum, 'cumsum'))


@method
def cumprod(input, dim, *, dtype=None):
    if dtype is None:
        _refuse_float8(input, 'cumprod_out_cpu')
    return Cumprod.apply(input, axis=_dim1(dim, input.ndim, 'cumprod'), dtype=_np_dtype(dtype))


cumprod_ = method(_inplace_scan(Cumprod, 'cumprod'))


class Cummax(_Select):
    accumulate = True

    def forward(self, x, axis, largest=True):
        self.axis = axis
        x1 = _as1d(x)
        acc = xp.maximum.accumulate if largest else xp.minimum.accumulate
        vals = acc(x1, axis) if x1.size else x1.copy()
        new = x1 == vals                         # ties move the index on, as in PyTorch
        if x1.dtype.kind in 'fV':
            new |= xp.isnan(x1)
        pos = xp.where(new, _along(x1.shape[axis], axis, x1.ndim), 0)
        idx = xp.maximum.accumulate(pos, axis) if x1.size else pos
        return self._finish(x, vals, idx, True)


class Cummin(Cummax):
    node_name = 'CumminBackward0'


@method
def cummax(input, dim):
    _refuse_wide_unsigned(input, 'cummax_cpu')
    v, i = Cummax.apply(input, axis=_dim1(dim, input.ndim, 'cummax'), largest=True)
    return return_types.cummax(v, i)


@method
def cummin(input, dim):
    _refuse_wide_unsigned(input, 'cummin_cpu')
    v, i = Cummin.apply(input, axis=_dim1(dim, input.ndim, 'cummin'), largest=False)
    return return_types.cummin(v, i)


# -- max, min and friends -----------------------------------------------------------------------

class _EvenSplit(Op):
    """Reductions whose gradient is split evenly among the elements equal to the result.

    NaN results: ``max()``, ``min()`` and ``median()`` send the gradient to the NaNs;
    ``amax``/``amin`` give NaN gradients over the slice, as PyTorch does.
    """
    nan_aware = True

    def _save(self, x, out, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        xa, oa = _arr(x), _arr(out)
        if not self.keepdim and self.dims is not None:
            oa = oa.reshape(_kept_shape(xa.shape, self.dims))
            g = unsqueeze_dims(g, self.dims, xa.ndim)
        mask = xa == oa
        if xa.dtype.kind in 'fV' and self.nan_aware:
            mask |= xp.isnan(xa) & xp.isnan(oa)
        count = mask.sum(axis=self.dims, keepdims=True)
        return g * (mask / count).astype(xa.dtype)


def _kept_shape(shape, dims):
    return tuple(1 if d in dims else n for d, n in enumerate(shape))


class Amax(_EvenSplit):
    """``amax`` (and, through the subclasses below, amin, ``max()`` and ``min()``)."""
    nan_aware = False

    def forward(self, x, dims, keepdim, largest=True):
        out = xp.asarray((xp.max if largest else xp.min)(x, axis=dims, keepdims=keepdim))
        return self._save(x, out, dims, keepdim)


class Amin(Amax):
    node_name = 'AminBackward0'


class MaxAll(Amax):
    """``max()``: ties share the gradient, NaN results send it to the NaNs."""
    node_name = 'MaxBackward1'
    nan_aware = True


class MinAll(MaxAll):
    node_name = 'MinBackward1'


class MaxDim(_Select):
    node_name = 'MaxBackward0'

    def forward(self, x, axis, keepdim, largest=True):
        self.axis = axis
        x1 = _as1d(x)
        idx = (xp.argmax if largest else xp.argmin)(x1, axis=axis, keepdims=True)
        return self._finish(x, xp.take_along_axis(x1, idx, axis), idx, keepdim)


class MinDim(MaxDim):
    node_name = 'MinBackward0'


def _reduce_all_check(input, op):
    if input._data.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")


def _max_min(input, dim, keepdim, largest, other=None):
    op = 'max' if largest else 'min'
    if other is not None or isinstance(dim, Tensor):
        other = dim if other is None else other
        from . import pointwise
        fn = getattr(pointwise, 'maximum' if largest else 'minimum', None)
        if fn is None:
            raise NotImplementedError(f'{op}(input, other): the elementwise form needs '
                                      f"{'maximum' if largest else 'minimum'}, not yet available")
        return fn(input, other)
    if input._data.dtype.kind == 'c':
        raise not_implemented('max_all' if largest else 'min_all', input._data)
    if dim is None:
        if keepdim:
            raise TypeError(f'{op}() received an invalid combination of arguments: keepdim '
                            'needs dim (use amax/amin for a full reduction with keepdim)')
        _refuse_limited(input, op + '_all')
        _reduce_all_check(input, op)
        return (MaxAll if largest else MinAll).apply(input, dims=None, keepdim=False,
                                                     largest=largest)
    _refuse_limited(input, op + '_cpu')
    axis = _dim1(dim, input.ndim, op)
    _check_nonempty_dim(input, axis, op)
    v, i = (MaxDim if largest else MinDim).apply(input, axis=axis, keepdim=keepdim,
                                                 largest=largest)
    return (return_types.max if largest else return_types.min)(v, i)


@method
def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, True, other)


@method
def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, False, other)


def _amax_amin(input, dim, keepdim, largest):
    op = 'amax' if largest else 'amin'
    _refuse_limited(input, 'max_values_cpu' if largest else 'min_values_cpu')
    if input._data.dtype.kind == 'c':
        raise not_implemented('max_values_cpu' if largest else 'min_values_cpu', input._data)
    dims = _all_dims(dim, input.ndim, op)
    shape = input._data.shape
    if input._data.size == 0:
        if len(dims) == input.ndim and shape:
            _reduce_all_check(input, op)
        for d in dims:
            _check_nonempty_dim(input, d, op)
    return (Amax if largest else Amin).apply(input, dims=dims, keepdim=keepdim, largest=largest)


@method
def amax(input, dim=(), keepdim=False):
    return _amax_amin(input, dim, keepdim, True)


@method
def amin(input, dim=(), keepdim=False):
    return _amax_amin(input, dim, keepdim, False)


def _argmax_argmin(input, dim, keepdim, largest):
    op = 'argmax' if largest else 'argmin'
    x = input._data
    if x.dtype == np.bool_:
        raise RuntimeError(f'{op}(): does not support bool input (convert it with .long() or '
                           '.float() first)')
    _refuse_limited(input, op + '_cpu')
    if x.dtype.kind == 'c':
        raise RuntimeError(f'{op}(): does not support complex input')
    fn = xp.argmax if largest else xp.argmin
    if dim is None:
        if x.size == 0:
            raise IndexError(f'{op}(): Expected reduction dim to be specified for input.numel() '
                             '== 0.')
        out = xp.asarray(fn(x.reshape(-1)), dtype=np.int64)
        if keepdim:
            out = out.reshape((1,) * x.ndim)
        return wrap(out)
    axis = _dim1(dim, x.ndim, op)
    _check_nonempty_dim(input, axis, op)
    out = fn(_as1d(x), axis=axis, keepdims=keepdim).astype(np.int64)
    return wrap(xp.asarray(out.reshape(()) if x.ndim == 0 else out))


@method
@vmap_function('reduce_flat')
def argmax(input, dim=None, keepdim=False):
    return _argmax_argmin(input, dim, keepdim, True)


@method
@vmap_function('reduce_flat')
def argmin(input, dim=None, keepdim=False):
    return _argmax_argmin(input, dim, keepdim, False)


# -- logsumexp ------------------------------------------------------------------------------------

class Logsumexp(Op):
    widens_half = True
    quiet_fp = True
    float_result = True
    supports_complex = True

    def forward(self, x, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        # the shift keeps exp from overflowing: the largest real part, for complex x too
        m = xp.max(x.real, axis=dims, keepdims=True, initial=-np.inf)
        m = xp.where(xp.isfinite(m), m, 0).astype(x.dtype, copy=False)
        out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        nd = _arr(x).ndim
        g = _keep(g, self.dims, nd, self.keepdim)
        out = _keep(out, self.dims, nd, self.keepdim)
        return g * exp(x - out)


@method
def logsumexp(input, dim, keepdim=False):
    dims = _dims(dim, input.ndim, 'logsumexp')
    if dims == () and input.ndim:
        raise RuntimeError('logsumexp(): dim=() is not supported; pass the dims to reduce')
    return Logsumexp.apply(input, dims=dims, keepdim=keepdim)


# -- var and std ----------------------------------------------------------------------------------

def _mean_keep(x, dims, n):
    """Mean of ``x`` over ``dims`` keeping them (array or tensor)."""
    nd = _arr(x).ndim
    if not nd:
        return x
    return unsqueeze_dims(x.sum(dims), dims, nd) / n


class VarStd(Op):
    """``var`` / ``std`` (one output) or ``var_mean`` / ``std_mean`` (two outputs)."""
    supports_complex = True
    widens_half = True
    quiet_fp = True
    node_name = 'VarBackward0'

    def forward(self, x, dims, correction, keepdim, take_sqrt, with_mean):
        self.dims, self.keepdim, self.sqrt = dims, keepdim, take_sqrt
        n = self.n = _count(x.shape, dims)
        self.dof = _py_max(n - correction, 0)
        mean = x.sum(axis=dims, keepdims=True) / x.dtype.type(n)
        d = x - mean
        # |d|^2: a complex tensor's variance is real
        squares = d * d if d.dtype.kind != 'c' else d.real * d.real + d.imag * d.imag
        out = xp.asarray(xp.sum(squares, axis=dims, keepdims=keepdim)
                         / squares.dtype.type(self.dof))
        if take_sqrt:
            out = xp.sqrt(out)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out if take_sqrt else None)
        if with_mean:
            return out, (mean if keepdim else mean.reshape(out.shape))
        return out

    def backward(self, g, gmean=None):
        x, out = self.saved_tensors
        xa = _arr(x)
        dims = self.dims if self.dims is not None else tuple(range(xa.ndim))
        g = _keep(g, dims, xa.ndim, self.keepdim)
        d = x - _mean_keep(x, dims, self.n)
        if self.sqrt:
            out = _keep(out, dims, xa.ndim, self.keepdim)
            zero = _arr(out) == 0
            gx = where(zero, 0.0, g / (where(zero, 1.0, out) * float(self.dof))) * d
        else:
            gx = g * (2.0 / self.dof if self.dof else np.inf) * d
        if gmean is not None:
            gx = gx + _keep(gmean, dims, xa.ndim, self.keepdim) / float(_py_max(self.n, 1))
        return gx


def _var_args(op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):               # var(x, True): the legacy unbiased flag
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f'{op}() received an invalid combination of arguments: pass either '
                        'unbiased or correction, not both')
    _require_float(input, op, 'std and var only support floating point and complex dtypes')
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _dims(dim, input.ndim, op)
    if dims == () and input.ndim:
        dims = None
    if dims is not None and len(dims) == input.ndim:
        dims = None if not keepdim else dims
    return dims, correction


def _var_std(op, input, dim, unbiased, keepdim, correction, take_sqrt, with_mean):
    dims, corr = _var_args(op, input, dim, unbiased, keepdim, correction)
    if keepdim and dims is None:
        dims = tuple(range(input.ndim))
    # PyTorch's reduction factor is numel / output numel: 0 for any empty input
    factor = _count(input._data.shape, dims) if input._data.size else 0
    if factor - corr <= 0:
        warnings.warn(f'{op}(): degrees of freedom is <= 0. Correction should be strictly less '
                      'than the reduction factor (input numel divided by output numel).',
                      UserWarning, stacklevel=3)
    name = ('Std' if take_sqrt else 'Var') + ('Mean' if with_mean else '') + 'Backward0'
    return VarStd.named(name).apply(input, dims=dims, correction=corr, keepdim=keepdim,
                                     take_sqrt=take_sqrt, with_mean=with_mean)


@method
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std('var', input, dim, unbiased, keepdim, correction, False, False)


@method
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std('std', input, dim, unbiased, keepdim, correction, True, False)


# var_mean and std_mean are functions only: PyTorch's Tensor has no such methods.
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std('var_mean', input, dim, unbiased, keepdim, correction, False, True)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std('std_mean', input, dim, unbiased, keepdim, correction, True, True)


# -- norms ----------------------------------------------------------------------------------------

class VectorNorm(Op):
    """``linalg.vector_norm`` (and ``torch.norm``, ``linalg.norm``, the Frobenius
    ``matrix_norm``): ``dim`` is None or a sorted tuple of non-negative axes."""
    supports_complex = True
    widens_half = True
    quiet_fp = True
    node_name = 'LinalgVectorNormBackward0'

    def forward(self, x, ord=2, dim=None, keepdim=False):
        self.ord, self.dims, self.keepdim = ord, dim, keepdim
        dims = dim
        a = xp.abs(x)
        if ord == 2:
            out = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
        elif ord == 1:
            out = xp.sum(a, axis=dims, keepdims=keepdim)
        elif ord == np.inf:
            out = xp.max(a, axis=dims, keepdims=keepdim)
        elif ord == -np.inf:
            out = xp.min(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
        else:
            out = xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        out = xp.asarray(out, dtype=a.dtype)    # real, for complex x too
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        p = self.ord
        sign = sgn                              # z / |z| for complex z
        if p == 0:                              # piecewise constant: zero, as torch's
            return zeros_like(x)
        xa = _arr(x)
        g = _cast(_keep(g, self.dims, xa.ndim, self.keepdim), xa.dtype)
        out = _keep(out, self.dims, xa.ndim, self.keepdim)
        oa = _arr(out)
        if p == 1:
            gx = g * sign(x)
        elif p == 2:
            gx = g * x / where(oa == 0, 1.0, out)
        elif p in (np.inf, -np.inf):
            mask = xp.abs(xa) == oa
            w = mask / xp.maximum(mask.sum(axis=self.dims, keepdims=True), 1)
            gx = g * sign(x) * w.astype(xa.dtype)
        else:
            zero = xa == 0
            ax = where(zero, 1.0, abs(x))
            ratio = (ax / where(oa == 0, 1.0, out)) ** (p - 1)
            gx = where(zero | (oa == 0), 0.0, g * sign(x) * ratio)
        return gx


def _vector_norm(input, ord, dims, keepdim, dtype):
    x = input._data
    if x.dtype.kind not in 'fcV' and dtype is None:
        name = _dtype.FROM_NUMPY[x.dtype].legacy_name[:-6]
        raise RuntimeError('linalg.vector_norm: Expected a floating point or complex tensor '
                           f'as input. Got {name}')
    if ord in (np.inf, -np.inf) and x.size == 0:
        reduced = range(x.ndim) if dims is None else dims
        for d in reduced:
            if x.shape[d] == 0:
                raise RuntimeError(f'linalg.vector_norm cannot compute the {ord} norm on the '
                                   f'dimension {d} because this dimension is empty and the '
                                   'operation does not have an identity')
        if not x.ndim:
            raise RuntimeError(f'linalg.vector_norm cannot compute the {ord} norm on an empty '
                               'tensor because the operation does not have an identity')
    if dtype is not None and dtype.numpy != x.dtype:
        input = input.to(dtype)                 # recorded, so double backward sees the cast
    return VectorNorm.apply(input, ord=ord, dim=dims, keepdim=keepdim)


@method
def norm(input, p='fro', dim=None, keepdim=False, dtype=None):
    dims = _dims(dim, input.ndim, 'norm')
    if dims == () and input.ndim:
        dims = None
    if isinstance(p, str):
        if p == 'fro':
            if dims is not None and len(dims) > 2:
                raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got '
                                   f"{' '.join(map(str, dims))}")
            p = 2
        elif p == 'nuc':        # the sum of the singular values
            from .linalg_norms import matrix_norm   # (linalg sits beside reduction)
            if input.ndim < 2:
                raise RuntimeError('linalg.matrix_norm: The input tensor A must have at least '
                                   '2 dimensions.')
            if dims is None and input.ndim != 2 or dims is not None and len(dims) != 2:
                shown = ' '.join(map(str, dims if dims is not None else range(input.ndim)))
                raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got {shown}')
            return matrix_norm(input, 'nuc', dims if dims is not None else (-2, -1), keepdim,
                               dtype=dtype)
        else:
            raise RuntimeError(f'linalg.matrix_norm: Order {p} not supported.')
    if keepdim and dims is None:
        dims = tuple(range(input.ndim))
    if dims is None and input.is_sparse and float(p) > 0:
        # torch's sparse norm kernel: the absent elements are zeros, which add nothing to a
        # p > 0 norm of the whole tensor, so it is the stored values' norm
        return _vector_norm(input.coalesce().values(), float(p), None, False, dtype)
    return _vector_norm(input, float(p), dims, keepdim, dtype)


# -- all, any, count_nonzero ----------------------------------------------------------------------

def _logical(input, dim, keepdim, fn, op):
    x = input._data
    dims = _all_dims(dim, x.ndim, op) if dim is not None else None
    out = fn(x, axis=dims, keepdims=keepdim)
    return wrap(xp.asarray(out, dtype=np.uint8 if x.dtype == np.uint8 else np.bool_))


@method
@vmap_function('reduce_flat')
def all(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, xp.all, 'all')


@method
@vmap_function('reduce_flat')
def any(input, dim=None, keepdim=False):
    return _logical(input, dim, keepdim, xp.any, 'any')


@method
@vmap_function('reduce_flat')
def count_nonzero(input, dim=None):
    _refuse_limited(input, 'nonzero_count_cpu')
    x = input._data
    dims = _all_dims(dim, x.ndim, 'count_nonzero') if dim is not None else None
    return wrap(xp.asarray(xp.count_nonzero(x, axis=dims), dtype=np.int64))


# -- hash_tensor -----------------------------------------------------------------------------------

def _hash_bits(x):
    """Each element as torch's hash_tensor reads it: floats widened to float64 and signed
    integers to int64 (sign-extended), then the 64 bits taken as uint64."""
    if _dtype.is_floating(x.dtype):
        return x.astype(np.float64).view(np.uint64)
    if x.dtype.kind == 'i':
        return x.astype(np.int64).view(np.uint64)
    return x.astype(np.uint64)                  # bool and uint8: zero-extended


@method
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor of the elements' 64-bit patterns (``mode=0``, the only mode), as uint64:
    over everything, or over ``dim`` (an int or a tuple of ints) keeping it if ``keepdim``."""
    if not isinstance(input, Tensor):
        raise TypeError("hash_tensor(): argument 'input' (position 1) must be Tensor, not "
                        f'{type(input).__name__}')
    if mode != 0:
        raise RuntimeError(f'Unknown hash_tensor mode: {mode} (only mode=0, the xor '
                           'reduction, exists)')
    if not (dim is None or isinstance(dim, (int, np.integer, tuple, list))) \
            or isinstance(dim, bool):
        raise TypeError("hash_tensor(): argument 'dim' must be tuple of ints, not "
                        f'{type(dim).__name__}')
    x = input._data
    d = _dtype.FROM_NUMPY[x.dtype]
    if d in _dtype.WIDE_UNSIGNED:
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for \'{_dtype.type_name(d)}\' '
                                  '(hash_tensor of uint16/32/64 is refused, as in torch; '
                                  'cast to int64 first)')
    every_dim = dim is None or (isinstance(dim, (tuple, list)) and not dim)
    dims = _all_dims(dim, x.ndim, 'hash_tensor')
    if x.size == 0:
        if every_dim:
            raise RuntimeError('hash_tensor: Expected reduction dim to be specified for '
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f'argument. (input shape {list(x.shape)})')
        for axis in dims:
            if x.shape[axis] == 0:
                raise IndexError(f'hash_tensor: Expected reduction dim {axis} to have non-zero '
                                 f'size. (input shape {list(x.shape)})')
    bits = _hash_bits(x)
    if not x.ndim:
        return wrap(bits.copy())
    out = xp.bitwise_xor.reduce(bits, axis=dims, keepdims=keepdim)
    return wrap(xp.asarray(out, dtype=np.uint64))


# -- aminmax, logcumsumexp, renorm, dist ----------------------------------------------------

def _split_evenly(x, out, g, dims, keepdim):
    """``g`` shared evenly among the elements of ``x`` equal to ``out`` (array or tensor)."""
    xa, oa = _arr(x), _arr(out)
    if not keepdim and dims:
        oa = oa.reshape(_kept_shape(xa.shape, dims))
        g = unsqueeze_dims(g, dims, xa.ndim)
    mask = xa == oa
    count = mask.sum(axis=dims, keepdims=True)
    return g * (mask / count).astype(xa.dtype)


class Aminmax(Op):
    """``(amin, amax)`` in one pass; each gradient is split among the tied elements."""

    def forward(self, x, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        lo = xp.asarray(xp.min(x, axis=dims, keepdims=keepdim))
        hi = xp.asarray(xp.max(x, axis=dims, keepdims=keepdim))
        if self.needs_input_grad[0]:
            self.save_for_backward(x, lo, hi)
        return lo, hi

    def backward(self, glo, ghi):
        x, lo, hi = self.saved_tensors
        gx = None
        for g, out in ((glo, lo), (ghi, hi)):
            if g is not None:
                part = _split_evenly(x, out, g, self.dims, self.keepdim)
                gx = part if gx is None else gx + part
        return gx


@method
def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` over ``dim`` (an int) or everything."""
    _refuse_wide_unsigned(input, 'aminmax_cpu')
    if dim is not None:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        axis = _dim1(dim, input.ndim, 'aminmax')
        _check_nonempty_dim(input, axis, 'aminmax')
        dims = (axis,) if input.ndim else ()
    else:
        if input._data.size == 0:
            raise RuntimeError('aminmax(): cannot compute aminmax over an empty dimension as the '
                               'operation has no identity (the input is empty; pass a non-empty '
                               'dim)')
        dims = tuple(range(input.ndim))
    lo, hi = Aminmax.apply(input, dims=dims, keepdim=keepdim)
    return return_types.aminmax(lo, hi)


class Logcumsumexp(Op):
    """``log(cumsum(exp(x)))`` along an axis, computed with running log-add-exp."""
    widens_half = True
    quiet_fp = True

    def forward(self, x, axis):
        self.axis = axis
        x1 = _as1d(x)
        out = xp.logaddexp.accumulate(x1, axis=axis) if x1.size else x1.copy()
        out = out.reshape(x.shape)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, g):
        # gx[i] = sum_{j >= i} g[j] exp(x[i] - out[j]); shifting by the first output of
        # each slice (the smallest, as out never decreases) keeps exp(shift - out) <= 1.
        x, out = self.saved_tensors
        xa = _arr(x)
        if xa.ndim == 0:
            return g
        axis = self.axis
        oa = _arr(out)
        shift = xp.take(oa, [0], axis=axis) if oa.shape[axis] else oa
        shift = xp.where(xp.isfinite(shift), shift, 0).astype(oa.dtype)
        scaled = where(xp.isneginf(oa), 0.0, g * exp(shift - out))
        gx = where(xp.isneginf(xa), 0.0, _revcumsum(scaled, axis) * exp(x - shift))
        # PyTorch's gradient is NaN where the running sum is still exp(-inf) = 0
        return where(xp.isneginf(xa) & xp.isneginf(oa), np.nan, gx)


@method
def logcumsumexp(input, dim):
    if input._data.dtype.kind not in 'fV':
        raise NotImplementedError('"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_dtype.FROM_NUMPY[input._data.dtype].legacy_name[:-6]}'")
    return Logcumsumexp.apply(input, axis=_dim1(dim, input.ndim, 'logcumsumexp'))


class Renorm(Op):
    """Each slice along ``axis`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it
    (by ``maxnorm / (norm + 1e-7)``, as PyTorch); the gradient goes through the norm too."""
    widens_half = True
    quiet_fp = True

    def forward(self, x, p, axis, maxnorm):
        self.p, self.maxnorm = p, maxnorm
        self.others = tuple(d for d in range(x.ndim) if d != axis)
        norms = VectorNorm.run(x, ord=p, dim=self.others, keepdim=True)
        factor = xp.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).astype(x.dtype)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return x * factor

    def backward(self, g):
        x, = self.saved_tensors
        xa = _arr(x)
        others, p, maxnorm = self.others, self.p, self.maxnorm
        n = VectorNorm.run(x, ord=p, dim=others, keepdim=True)
        na = _arr(n)
        big = na > maxnorm
        safe_n = where(big, n, 1.0)
        gx = g * where(big, maxnorm / (safe_n + 1e-7), 1.0)
        if not big.any():
            return gx
        s = unsqueeze_dims((g * x).sum(others), others, xa.ndim)
        df = where(big, -maxnorm / ((safe_n + 1e-7) * (safe_n + 1e-7)), 0.0)
        if p == np.inf:
            mask = xp.abs(xa) == na
            dn = sign(x) * (mask / xp.maximum(mask.sum(axis=others, keepdims=True), 1)
                            ).astype(xa.dtype)
        elif p == 1:
            dn = sign(x)
        else:
            dn = sign(x) * (x * sign(x) / safe_n) ** (p - 1)
        return gx + s * df * dn


def _renorm_args(input, p, dim, maxnorm, op):
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
        raise TypeError(f"{op}(): argument 'p' must be Number, not {type(p).__name__}")
    if input._data.dtype.kind not in 'fcV':
        raise RuntimeError(f'{op}: expected a floating point or complex tensor as input, got '
                           f'{_dtype.FROM_NUMPY[input._data.dtype].legacy_name[:-6]}')
    if p <= 0:
        raise RuntimeError(f'renorm: non-positive-norm not supported (p={p})')
    if maxnorm < 0:
        raise RuntimeError(f'renorm: expected maxnorm to be >= 0 but got {maxnorm}')
    if input.ndim <= 1:
        raise RuntimeError(f'renorm: input needs at least 2 dimensions, got {input.ndim} '
                           'dimensions')
    return dict(p=float(p), axis=_dim1(dim, input.ndim, op), maxnorm=float(maxnorm))


@method
def renorm(input, p, dim, maxnorm):
    return Renorm.apply(input, **_renorm_args(input, p, dim, maxnorm, 'renorm'))


@method
def renorm_(input, p, dim, maxnorm):
    return Renorm.apply_(input, **_renorm_args(input, p, dim, maxnorm, 'renorm_'))


@method
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast)."""
    for t in (input, other):
        if t._data.dtype.kind not in 'fcV':
            raise RuntimeError('norm(): input dtype should be either floating point or complex. '
                               f'Got {_dtype.FROM_NUMPY[t._data.dtype].legacy_name[:-6]} '
                               'instead.')
    return VectorNorm.named('DistBackward0').apply(input - other, ord=float(p), dim=None,
                                                   keepdim=False)


def frobenius_norm(input, dim, keepdim=False):
    """Deprecated form of ``linalg.vector_norm(input, 2, dim, keepdim)``."""
    warnings.warn('at::frobenius_norm is deprecated and it is just left for JIT compatibility. '
                  'It will be removed in a future PyTorch release. Please use '
                  '`linalg.vector_norm(A, 2., dim, keepdim)` instead', UserWarning, stacklevel=2)
    dims = _dims(dim, input.ndim, 'frobenius_norm')
    if dims is not None and len(dims) > 2:
        raise RuntimeError(f'Expected at most 2 dimensions, but got {len(dims)} dimensions '
                           'instead.')
    return _vector_norm(input, 2.0, dims if dims else None, keepdim, None)


__all__ = ['sum', 'mean', 'nansum', 'nanmean', 'prod', 'cumsum', 'cumprod', 'cummax', 'cummin',
           'max', 'min', 'amax', 'amin', 'argmax', 'argmin', 'logsumexp', 'var', 'std',
           'var_mean', 'std_mean', 'norm', 'all', 'any', 'count_nonzero', 'return_types',
           'aminmax', 'logcumsumexp', 'renorm', 'dist',
           'frobenius_norm', 'hash_tensor']
