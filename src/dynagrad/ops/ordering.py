"""Sorting and order statistics: ``sort``, ``argsort``, ``msort``, ``topk``, ``kthvalue``,
``median``, ``nanmedian``, ``mode``, ``unique`` and ``unique_consecutive``.

Each differentiable one is a selection: its backward scatters the gradient to the selected
indices through reduction.py's ``_Select`` (double backward comes from its gather), except
the all-element medians, which share the gradient among ties as ``max()`` does.
"""
import numpy as np

from ..autograd.batched import vmap_function
from ..backend import xp
from ..tensor import method, wrap
from ._elementwise import not_implemented
from .reduction import (_Select, _EvenSplit, _UNSORTABLE, _along, _as1d, _check_int,
                        _check_nonempty_dim, _dim1, _flip, _kept_shape, _refuse_wide_unsigned,
                        return_types)


# -- sorting and order statistics -----------------------------------------------------------------

def _argsort(x, axis, descending):
    """Stable argsort along ``axis`` (NaN is the largest value, as in PyTorch)."""
    if x.dtype.kind == 'V':     # bfloat16: NumPy sorts its NaNs only as float32 (exact)
        x = x.astype(np.float32)
    if not descending:
        return xp.argsort(x, axis=axis, kind='stable')
    n = x.shape[axis]
    p = xp.argsort(xp.flip(x, axis), axis=axis, kind='stable')
    return xp.flip(n - 1 - p, axis)


def _topk_indices(x, k, axis, largest):
    """Indices of the ``k`` largest (smallest) along ``axis``, sorted, equal values by index.

    A partition finds the candidates in linear time; only those ``k`` are then sorted.
    """
    n = x.shape[axis]
    head = (slice(None),) * axis
    if k == 0 or 2 * k > n:
        return _argsort(x, axis, largest)[head + (slice(0, k),)]
    if largest:
        cand = xp.argpartition(x, n - k, axis=axis)[head + (slice(n - k, None),)]
    else:
        cand = xp.argpartition(x, k - 1, axis=axis)[head + (slice(0, k),)]
    cand = xp.sort(cand, axis=axis)                  # index order, so ties sort stably
    order = _argsort(xp.take_along_axis(x, cand, axis), axis, largest)
    return xp.take_along_axis(cand, order, axis)


class Sort(_Select):
    def forward(self, x, axis, descending=False, stable=False, k=None):
        self.axis = axis
        x1 = _as1d(x)
        if k is None:
            idx = _argsort(x1, axis, descending)
        else:
            idx = _topk_indices(x1, k, axis, descending)
        return self._finish(x, xp.take_along_axis(x1, idx, axis), idx, True)


class SortStable(Sort):
    node_name = 'SortBackward1'


class Topk(Sort):
    node_name = 'TopkBackward0'


@method
def sort(input, dim=-1, descending=False, stable=False):
    axis = _dim1(dim, input.ndim, 'sort')
    if input._data.dtype.kind == 'c':
        raise RuntimeError(_UNSORTABLE)
    v, i = (SortStable if stable else Sort).apply(input, axis=axis,
                                                  descending=bool(descending), stable=bool(stable))
    return return_types.sort(v, i)


@method
@vmap_function('reduce_flat')
def argsort(input, dim=-1, descending=False, stable=False):
    axis = _dim1(dim, input.ndim, 'argsort')
    x = input._data
    if x.dtype.kind == 'c':
        raise RuntimeError(_UNSORTABLE)
    idx = _argsort(_as1d(x), axis, descending).astype(np.int64)
    return wrap(idx.reshape(x.shape))


@method
def topk(input, k, dim=-1, largest=True, sorted=True):
    _refuse_wide_unsigned(input, 'topk_cpu')
    if input._data.dtype.kind == 'c':
        raise not_implemented('topk_cpu', input._data)
    k = _check_int(k, 'topk', 'k')
    axis = _dim1(dim, input.ndim, 'topk')
    n = input._data.shape[axis] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f'selected index k out of range (topk: k={k}, dim {axis} has size {n})')
    v, i = Topk.apply(input, axis=axis, descending=bool(largest), stable=False, k=k)
    return return_types.topk(v, i)


class Kthvalue(_Select):
    def forward(self, x, k, axis, keepdim):
        self.axis = axis
        x1 = _as1d(x)
        idx = xp.argsort(x1, axis=axis, kind='stable')[(slice(None),) * axis + (slice(k - 1, k),)]
        return self._finish(x, xp.take_along_axis(x1, idx, axis), idx, keepdim)


@method
def kthvalue(input, k, dim=-1, keepdim=False):
    _refuse_wide_unsigned(input, 'kthvalue_cpu')
    k = _check_int(k, 'kthvalue', 'k')
    axis = _dim1(dim, input.ndim, 'kthvalue')
    _check_nonempty_dim(input, axis, 'kthvalue')
    n = input._data.shape[axis] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f'kthvalue(): selected number k out of range for dimension {axis} '
                           f'(k={k}, size {n})')
    v, i = Kthvalue.apply(input, k=k, axis=axis, keepdim=keepdim)
    return return_types.kthvalue(v, i)


class MedianAll(_EvenSplit):
    """``median()`` / ``nanmedian()`` of all elements: the lower median."""
    node_name = 'MedianBackward0'

    def forward(self, x, ignore_nan=False):
        flat = x.reshape(-1)
        nan = xp.isnan(flat) if flat.dtype.kind in 'fV' else None
        m = flat.size - (int(nan.sum()) if nan is not None else 0)
        if flat.size == 0 or (nan is not None and (m == 0 or (not ignore_nan and m < flat.size))):
            out = xp.asarray(np.nan, dtype=x.dtype)
        else:
            k = (m - 1) // 2
            out = xp.asarray(xp.partition(flat, k)[k])
        return self._save(x, out, None, False)


class NanmedianAll(MedianAll):
    node_name = 'NanmedianBackward0'


class MedianDim(_Select):
    node_name = 'MedianBackward1'

    def forward(self, x, axis, keepdim, ignore_nan=False):
        self.axis = axis
        x1 = _as1d(x)
        n = x1.shape[axis]
        perm = xp.argsort(x1, axis=axis, kind='stable')
        shape = _kept_shape(x1.shape, (axis,))
        if x1.dtype.kind in 'fV':
            nans = xp.isnan(x1).sum(axis=axis, keepdims=True)
            if ignore_nan:
                pos = xp.where(nans == n, 0, (n - nans - 1) // 2)
            else:                                # a NaN makes the median NaN (the first one)
                pos = xp.where(nans > 0, n - nans, (n - 1) // 2)
        else:
            pos = xp.full(shape, (n - 1) // 2)
        idx = xp.take_along_axis(perm, pos, axis)
        return self._finish(x, xp.take_along_axis(x1, idx, axis), idx, keepdim)


class NanmedianDim(MedianDim):
    node_name = 'NanmedianBackward1'


def _median(input, dim, keepdim, ignore_nan):
    op = 'nanmedian' if ignore_nan else 'median'
    _refuse_wide_unsigned(input, 'median_cpu' if dim is None else 'median_out')
    if dim is None:
        if keepdim:
            raise TypeError(f'{op}() missing 1 required positional arguments: "dim"')
        return (NanmedianAll if ignore_nan else MedianAll).apply(input, ignore_nan=ignore_nan)
    axis = _dim1(dim, input.ndim, op)
    _check_nonempty_dim(input, axis, op)
    v, i = (NanmedianDim if ignore_nan else MedianDim).apply(input, axis=axis, keepdim=keepdim,
                                                             ignore_nan=ignore_nan)
    return (return_types.nanmedian if ignore_nan else return_types.median)(v, i)


@method
def median(input, dim=None, keepdim=False):
    return _median(input, dim, keepdim, False)


@method
def nanmedian(input, dim=None, keepdim=False):
    return _median(input, dim, keepdim, True)


class Mode(_Select):
    """Most frequent value (the smallest among equally frequent ones), its last index."""

    def forward(self, x, axis, keepdim):
        self.axis = axis
        x1 = _as1d(x)
        n = x1.shape[axis]
        perm = xp.argsort(x1, axis=axis, kind='stable')
        s = xp.take_along_axis(x1, perm, axis)
        pos = _along(n, axis, x1.ndim)
        head = (slice(None),) * axis
        change = s[head + (slice(1, None),)] != s[head + (slice(None, -1),)]
        starts = xp.ones(s.shape, bool)
        starts[head + (slice(1, None),)] = change
        ends = xp.ones(s.shape, bool)
        ends[head + (slice(None, -1),)] = change
        start = xp.maximum.accumulate(xp.where(starts, pos, 0), axis)
        end = _flip(xp.minimum.accumulate(_flip(xp.where(ends, pos, n), axis), axis), axis)
        best = xp.argmax(end - start, axis=axis, keepdims=True)   # first: the smallest value
        idx = xp.take_along_axis(perm, xp.take_along_axis(end, best, axis), axis)
        return self._finish(x, xp.take_along_axis(x1, idx, axis), idx, keepdim)


@method
def mode(input, dim=-1, keepdim=False):
    _refuse_wide_unsigned(input, 'mode_cpu')
    axis = _dim1(dim, input.ndim, 'mode')
    _check_nonempty_dim(input, axis, 'mode')
    v, i = Mode.apply(input, axis=axis, keepdim=keepdim)
    return return_types.mode(v, i)


@method
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Unique values (always sorted, as PyTorch on CPU); not differentiable."""
    x = input._data
    if dim is None:
        vals, inv, counts = xp.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        axis = _dim1(dim, x.ndim, 'unique')
        vals, inv, counts = xp.unique(x, return_inverse=True, return_counts=True, axis=axis)
        inv = inv.reshape(-1)
    out = [wrap(vals)]
    if return_inverse:
        out.append(wrap(inv.astype(np.int64)))
    if return_counts:
        out.append(wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@method
def msort(input):
    """``sort(input, dim=0).values``."""
    return sort(input, 0).values


@method
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Drops each element (or slice along ``dim``) equal to the one before it."""
    x = input._data
    if dim is None:
        flat = x.reshape(-1)
        change = xp.ones(flat.shape, bool)
        if flat.size:
            change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (xp.cumsum(change) - 1).reshape(x.shape)
    else:
        axis = _dim1(dim, x.ndim, 'unique_consecutive')
        moved = xp.moveaxis(_as1d(x), axis, 0)
        n = moved.shape[0]
        rows = moved.reshape(n, -1)
        change = xp.ones(n, bool)
        if n:
            change[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        vals = xp.moveaxis(moved[change], 0, axis)
        inv = xp.cumsum(change) - 1
    starts = xp.flatnonzero(change)
    counts = xp.diff(xp.append(starts, change.size))
    out = [wrap(xp.ascontiguousarray(vals))]
    if return_inverse:
        out.append(wrap(inv.astype(np.int64)))
    if return_counts:
        out.append(wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ['sort', 'argsort', 'msort', 'topk', 'kthvalue', 'median', 'nanmedian', 'mode',
           'unique', 'unique_consecutive']
