"""Indexing: ``t[key]`` / ``t[key] = v``, gather/scatter, index_* ops, masks, take/put, nonzero.

Every op here that moves values by an index is one of two linear maps and its adjoint:
*reading* values at a key (``x[key]``: ``AdvancedIndex`` and its named variants, whose
backward is a scatter-add) and *scatter-adding* into zeros (``IndexScatter``, whose
backward reads at the key again). Keys are built once, in forward, as NumPy index tuples
(arrays, slices), so both directions are one vectorised NumPy call and double backward
comes from the two ops calling each other through ``Op.run``.
"""
import warnings

import numpy as np

from .._device import DEVICE_ARRAY_TYPES, is_any_array
from .._meta import refuse_masks
from ..autograd.batched import vmap_function
from ..backend import native_kernel, xp
from ..autograd.function import Op, untracked, untracked_view
from ..autograd.inplace import OVERLAP_ERROR, has_internal_overlap
from ..autograd.autocast import autocast_args, autocast_state
from ..tensor import method, wrap
from .. import _dtype
from .formula import sum_to, is_array, where
from ._elementwise import REFUSED, refused
from ._plain_keys import plain_key
from .index_keys import (TwoStep, _BAD_INDEX, _check_key, _get, _index_array,
                         _is_alias_key, _is_basic, _is_tensor, _node_name_for, _normalize_key,
                         _numpy_index_error, _write)

_ndarray = np.ndarray
_op_apply = Op.apply.__func__


# ---------------------------------------------------------------------------------------
# the two linear maps: read at a key, scatter-add into zeros at a key

class BasicIndex(Op):
    """``x[ints, slices, None, ...]``: a view."""
    is_view = True

    @classmethod
    def apply(cls, x, key):
        if cls is BasicIndex:   # the subclass named as torch names the node for this key
            cls = BasicIndex.named(_node_name_for(key, x._data.shape))
        return _op_apply(cls, x, key=key)

    def forward(self, x, key):
        self.in_shape = x.shape
        self.key = key
        return _read_basic(x, key)

    def backward(self, g):
        return IndexScatter.run(g, key=self.key, shape=self.in_shape)


class AdvancedIndex(Op):
    """``x[key]`` for a key with index arrays or masks: a copy."""
    node_name = 'IndexBackward0'

    def forward(self, x, key):
        self.in_shape = x.shape
        self.key = key
        return _get(x, key)

    def backward(self, g):
        return IndexScatter.run(g, key=self.key, shape=self.in_shape)


class IndexSelect(AdvancedIndex):
    """``index_select``: key ``(:, ..., :, index)``."""
    node_name = 'IndexSelectBackward0'


class Gather(AdvancedIndex):
    """``gather`` and ``take_along_dim``: a key of broadcast index arrays, one per dim."""
    node_name = 'GatherBackward0'


class MaskedSelect(Op):
    """``masked_select``: x (broadcast) read at a boolean mask."""

    def forward(self, x, key):
        self.x_shape = x.shape
        self.key = key
        return xp.broadcast_to(x, key.shape)[key]

    def backward(self, g):
        return sum_to(IndexScatter.run(g, key=self.key, shape=self.key.shape), self.x_shape)


class IndexScatter(Op):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""

    def forward(self, g, key, shape):
        self.key = key
        out = xp.zeros(shape, g.dtype)
        _write(out, key, g, add=True)
        return out

    def backward(self, gg):
        return read_at(gg, self.key)


def read_at(g, key):
    """``g[key]`` for an array, recorded (``IndexBackward0``) for a tensor."""
    if is_array(g):
        return _get(g, key)
    if _is_basic(key):
        return BasicIndex.apply(g, key=key)
    if key.__class__ is TwoStep:
        return AdvancedIndex.apply(BasicIndex.apply(g, key=key.basic), key=key.adv)
    return AdvancedIndex.apply(g, key=key)


class MaskOut(Op):
    """``g`` with the positions of ``key`` set to zero (linear and its own adjoint)."""

    def forward(self, g, key):
        self.key = key
        out = g.copy()
        _write(out, key, 0)
        return out

    def backward(self, gg):
        return MaskOut.run(gg, key=self.key)


def _pad_to(g, region, shape):
    """``g`` placed at the basic ``region`` of zeros of ``shape`` (a no-op when it fills it)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return IndexScatter.run(g, key=region, shape=shape)


def _cast(g, np_dtype):
    if is_array(g):
        return g if g.dtype == np_dtype else g.astype(np_dtype)
    return g if g._data.dtype == np_dtype else g.to(_dtype.FROM_NUMPY[np_dtype])


def _sum_all(g):
    return g.sum(tuple(range(g.ndim))) if g.ndim else g


# ---------------------------------------------------------------------------------------
# writes

class IndexPut(Op):
    """``x[key] = values`` and ``index_put``: run in place on ``x`` by the in-place mechanism."""
    overlapping_write = ('index_put_', 'tensor[indices] = tensor')  # torch: deprecated
    node_name = 'IndexPutBackward0'

    def forward(self, x, values, key, accumulate=False, region_shape=None):
        self.key = key
        self.accumulate = accumulate
        self.values_shape = getattr(values, 'shape', None)
        out = x.copy()
        if region_shape is None:
            region_shape = _get(out, key).shape
        self.values_trim = _trim(values, region_shape)
        if accumulate:
            _write(out, key, xp.broadcast_to(xp.asarray(values, x.dtype)
                                             .reshape(_trim(values, region_shape)),
                                             region_shape), add=True)
        else:
            _write(out, key, values)
        return out

    def backward(self, g):
        gx = g if self.accumulate else MaskOut.run(g, key=self.key)
        gv = None
        if self.values_shape is not None and self.needs_input_grad[1]:
            gv = sum_to(read_at(g, self.key), self.values_trim)
            if self.values_trim != self.values_shape:
                gv = gv.reshape(self.values_shape)
        return gx, gv


def _read_basic(a, key):
    # A trailing Ellipsis keeps an all-integer key a 0-d view, not a NumPy scalar copy.
    items = key if key.__class__ is tuple else (key,)
    return a[items if any(k is Ellipsis for k in items) else items + (Ellipsis,)]


def _trim(values, region_shape):
    """``values``' shape without the leading size-1 dims NumPy's assignment drops."""
    shape = xp.shape(values)
    while len(shape) > len(region_shape) and shape[0] == 1:
        shape = shape[1:]
    return shape


@method('__getitem__')
@vmap_function('index_key')
def getitem(x, key):
    plain = plain_key(key if key.__class__ is tuple else (key,), x._data.shape)
    if plain is not None:       # everyday slicing: no normalising (_plain_keys.py)
        if not plain:
            _check_key(x, key)
        if untracked(x):
            return untracked_view(BasicIndex.named(_node_name_for(key, x._data.shape)), x,
                                  _read_basic(x._data, key), {'key': key})
        return BasicIndex.apply(x, key=key)
    key = _normalize_key(key)
    _check_key(x, key)
    if _is_basic(key):
        return BasicIndex.apply(x, key=key)
    if DEVICE_ARRAY_TYPES:
        refuse_masks(*(key if isinstance(key, tuple) else (key,)))
    try:
        return AdvancedIndex.apply(x, key=TwoStep.of(key))
    except IndexError as e:
        raise _numpy_index_error(e) from None


def _plain_int(k):
    return k is None or isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _getitem_captured(x, key):
    """The capture rule of ``x[key]`` (``dynagrad.compile``): a key of ints, slices of ints,
    None and Ellipsis reads no tensor's values, so it is recorded as its one op; other keys
    run as an eager island."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if not (k is Ellipsis or _plain_int(k) or isinstance(k, slice) and all(
                _plain_int(p) for p in (k.start, k.stop, k.step))):
            return None
    key = _normalize_key(key)
    _check_key(x, key)
    return BasicIndex.apply(x, key=key)


getitem._capture_rule = _getitem_captured


def _single_mask(key):
    items = key if isinstance(key, tuple) else (key,)
    return len(items) == 1 and is_any_array(items[0]) and items[0].dtype == bool


@method('__setitem__')
@vmap_function('index_key')
def setitem(x, key, value):
    """Advanced keys record IndexPut; basic ones write through a view, as torch does
    (copy_ or fill_ on ``x[key]``, so the history of ``x`` becomes CopySlices)."""
    key = _normalize_key(key)
    is_tensor = _is_tensor(value)
    if not is_tensor and not isinstance(value, (int, float, bool, np.number)) and not (
            isinstance(value, complex) and x._data.dtype.kind == 'c'):
        raise TypeError(f"can't assign a {type(value).__name__} to a {x.type()}")
    _check_key(x, key)
    if not _is_basic(key):
        if is_tensor and value._data.dtype != x._data.dtype:
            if value._data.ndim == 0 and _single_mask(key):
                value = value.to(x.dtype)
            else:
                raise RuntimeError(
                    'Index put requires the source and destination dtypes match, got '
                    f'{_type_name(x._data.dtype)} for the destination and '
                    f'{_type_name(value._data.dtype)} for the source.')
        # torch takes the basic part as a view first and index_puts into it (so the
        # history of x is CopySlices unless that view is all of x).
        split = TwoStep(key if isinstance(key, tuple) else (key,), views=True)
        if not _is_alias_key(split.basic, x._data.shape):
            _index_put(BasicIndex.apply(x, key=split.basic), split.adv, value, False)
        else:
            _index_put(x, TwoStep.of(key), value, False)
        return
    target = x if _is_alias_key(key, x._data.shape) else BasicIndex.apply(x, key=key)
    if is_tensor:
        target.copy_(value)
    else:
        data = target._data
        if data.__class__ is np.ndarray and not data.flags.writeable \
                and has_internal_overlap(data):
            raise RuntimeError(OVERLAP_ERROR)   # torch copies here, where fill_ would not mind
        target.fill_(value)


def _type_name(np_dtype):
    return _dtype.FROM_NUMPY[np.dtype(np_dtype)].legacy_name[:-6]


def _index_put(x, key, value, accumulate, out_of_place=False):
    region = xp.broadcast_to(xp.empty((), bool), x._data.shape)  # shape check only
    try:
        region_shape = _get(region, key).shape
    except IndexError as e:
        raise _numpy_index_error(e) from None
    vshape = xp.shape(value._data if _is_tensor(value) else value)
    try:
        if xp.broadcast_shapes(_trim(xp.empty(vshape), region_shape), region_shape) \
                != region_shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f'shape mismatch: value tensor of shape {list(vshape)} cannot be '
                           f'broadcast to indexing result of shape {list(region_shape)}') from None
    apply = IndexPut.apply if out_of_place else IndexPut.apply_
    return apply(x, value, key=key, accumulate=accumulate, region_shape=region_shape)


# ---------------------------------------------------------------------------------------
# argument checks shared by the function forms

def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    dim = int(dim)
    if not -n <= dim < n:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, {n - 1}], '
                         f'but got {dim})')
    return dim % n


def _index_data(index, op, dtypes=(np.int64, np.int32), message=None, exc=RuntimeError):
    if not _is_tensor(index):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype not in dtypes:
        raise exc(message or f'{op}(): Expected dtype int32/int64 for index but got: '
                           f'{_type_name(a.dtype)}')
    return a


def _check_range(idx, size, dim, op, exc=RuntimeError, allow_negative=False):
    """Indices outside ``[0, size)`` (``[-size, size)`` when negatives wrap) raise; returns
    the indices with negatives wrapped."""
    if idx.size == 0:
        return idx
    lo, hi = idx.min(), idx.max()
    low = -size if allow_negative else 0
    if lo < low or hi >= size:
        bad = int(lo if lo < low else hi)
        raise exc(f'{op}index {bad} is out of bounds for dimension {dim} with size {size}')
    if allow_negative and lo < 0:
        return xp.where(idx < 0, idx + size, idx)
    return idx


def _vector_index(index, op, dtypes=(np.int64, np.int32), message=None, exc=RuntimeError):
    idx = _index_data(index, op, dtypes, message, exc)
    if idx.ndim > 1:
        raise IndexError(f'{op}(): Index is supposed to be a vector, but got dim: {idx.ndim} '
                         f'with type: {_type_name(idx.dtype)} and size: {list(idx.shape)}')
    return idx.reshape(-1)


def _same_dtype(x, src, op):
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f'{op}(): Expected self.dtype to be equal to src.dtype (self is '
                           f'{_type_name(x._data.dtype)}, src is {_type_name(src._data.dtype)})')


def _dim_key(dim, idx):
    return (slice(None),) * dim + (idx,)


# ---------------------------------------------------------------------------------------
# select, index_select, take, take_along_dim, gather

@method
def select(input, dim, index):
    nd = input._data.ndim
    if nd == 0:
        raise IndexError('select() cannot be applied to a 0-dim tensor.')
    dim = _wrap_dim(dim, nd)
    index = int(index)
    size = input._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f'select(): index {index} out of range for tensor of size '
                         f'{list(input._data.shape)} at dimension {dim}')
    return BasicIndex.apply(input, key=_dim_key(dim, index))


@method
@vmap_function('index_select')
def index_select(input, dim, index):
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    idx = _vector_index(index, 'index_select', message='index_select(): Expected dtype int32 '
                        'or int64 for index')
    if nd == 0:
        if idx.size != 1:
            raise RuntimeError('index_select(): Index to scalar can have only 1 value, got '
                               f'{idx.size} value(s)')
        _check_range(idx, 1, 0, 'index_select(): ')
        return IndexSelect.apply(input, key=())
    _check_range(idx, input._data.shape[dim], dim, 'index_select(): ')
    return IndexSelect.apply(input, key=_dim_key(dim, idx))


def _gather_key(index, dim, shape=None):
    """Index arrays addressing ``index``'s positions along every dim but ``dim``."""
    nd = index.ndim
    key = []
    for d in range(nd):
        if d == dim:
            key.append(index)
        else:
            n = index.shape[d]
            r = xp.arange(n) if shape is None or shape[d] == n else xp.zeros(n, np.intp)
            key.append(r.reshape((n,) + (1,) * (nd - d - 1)))
    return tuple(key)


@method
@vmap_function('gather')
def gather(input, dim, index, *, sparse_grad=False):
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    idx = _index_data(index, 'gather', message='gather(): Expected dtype int32/int64 for index')
    if idx.ndim != x.ndim:
        raise RuntimeError('Index tensor must have the same number of dimensions as input tensor')
    if x.ndim == 0:
        _check_range(idx, 1, 0, '')
        return Gather.apply(input, key=())
    for d in range(x.ndim):
        if d != dim and idx.shape[d] > x.shape[d]:
            raise RuntimeError(f'Size does not match at dimension {d} expected index '
                               f'{list(idx.shape)} to be no larger than self {list(x.shape)} '
                               f'apart from dimension {dim}')
    _check_range(idx, x.shape[dim], dim, '')
    return Gather.apply(input, key=_gather_key(idx, dim))


class FlatRead(Op):
    """``x.reshape(-1)[index]`` (``take``; ``take_along_dim`` without ``dim``)."""
    node_name = 'TakeBackward0'

    def forward(self, x, index):
        self.in_shape = x.shape
        self.index = index
        return x.reshape(-1)[index]

    def backward(self, g):
        size = int(xp.prod(self.in_shape))
        return IndexScatter.run(g, key=self.index, shape=(size,)).reshape(self.in_shape)


def _flat_index(idx, numel):
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < -numel or hi >= numel:
            bad = int(lo if lo < -numel else hi)
            raise IndexError(f'out of range: tried to access index {bad} on a tensor of '
                             f'{numel} elements.')
        if lo < 0:
            idx = xp.where(idx < 0, idx + numel, idx)
    return idx


@method
@vmap_function('take')
def take(input, index):
    _index_data(index, 'take', (np.int64,), 'take(): Expected a long tensor for index, but got '
                f'{_type_name(index._data.dtype) if _is_tensor(index) else ""}')
    return FlatRead.apply(input, index=_flat_index(index._data, input._data.size))


@method
@vmap_function('take_along_dim')
def take_along_dim(input, indices, dim=None):
    idx = _index_data(indices, 'take_along_dim', (np.int64,),
                      'torch.take_along_dim(): dtype of indices should be Long but got '
                      f'{_type_name(indices._data.dtype) if _is_tensor(indices) else ""}')
    x = input._data
    if dim is None:
        return FlatRead.named('GatherBackward0').apply(
            input, index=_flat_index(idx.reshape(-1), x.size))
    if x.ndim != idx.ndim:
        raise RuntimeError('torch.take_along_dim(): input and indices should have the same '
                           f'number of dimensions, but got {x.ndim} dimensions for input, and '
                           f'{idx.ndim} dimensions for indices')
    dim = _wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        _check_range(idx, 1, 0, 'take_along_dim(): ', IndexError, True)
        return Gather.apply(input, key=())
    xs = list(x.shape)
    xs[dim] = 1
    js = list(idx.shape)
    js[dim] = 1
    try:
        bshape = xp.broadcast_shapes(tuple(xs), tuple(js))
    except ValueError:
        raise RuntimeError(f'take_along_dim(): shapes {list(x.shape)} (input) and '
                           f'{list(idx.shape)} (indices) cannot be broadcast apart from '
                           f'dimension {dim}') from None
    idx = _check_range(idx, x.shape[dim], dim, 'take_along_dim(): ', IndexError, True)
    out_shape = list(bshape)
    out_shape[dim] = idx.shape[dim]
    idx = xp.broadcast_to(idx, out_shape)
    return Gather.apply(input, key=_gather_key(idx, dim, x.shape))


# ---------------------------------------------------------------------------------------
# scatter, scatter_add, scatter_reduce

class Scatter(Op):
    """``x`` with ``src`` (its leading ``region``) written at ``key``; ``src`` may be a scalar."""

    def forward(self, x, src, key, region):
        self.key, self.region = key, region
        out = x.copy()
        if is_any_array(src):
            self.src_shape = src.shape
            out[key] = src[region]
        else:
            self.src_shape = None
            out[key] = src
        return out

    def backward(self, g):
        gsrc = None
        if self.src_shape is not None and self.needs_input_grad[1]:
            gsrc = _pad_to(read_at(g, self.key), self.region, self.src_shape)
        return MaskOut.run(g, key=self.key), gsrc


class ScatterValue(Scatter):
    """``scatter`` with a number for ``value``."""
    node_name = 'ScatterBackward1'


class ScatterLegacyReduce(Op):
    """``scatter(..., reduce='add'|'multiply')``: torch defines no derivative for it."""
    node_name = 'NotImplemented'

    def forward(self, x, src, key, region, reduce):
        out = x.copy()
        ufunc = xp.add if reduce == 'add' else xp.multiply
        ufunc.at(out, key, src[region] if is_any_array(src) else src)
        return out

    def backward(self, g):
        raise RuntimeError('derivative for aten::scatter is not implemented')


class ScatterAdd(Op):
    def forward(self, x, src, key, region):
        self.key, self.region, self.src_shape = key, region, src.shape
        out = x.copy()
        xp.add.at(out, key, src[region])
        return out

    def backward(self, g):
        gsrc = None
        if self.needs_input_grad[1]:
            gsrc = _pad_to(read_at(g, self.key), self.region, self.src_shape)
        return g, gsrc


_REDUCES = ('sum', 'prod', 'mean', 'amax', 'amin')


def _identity(reduce, dtype):
    if reduce in ('sum', 'mean'):
        return 0
    if reduce == 'prod':
        return 1
    if dtype.kind in 'fV':
        return -np.inf if reduce == 'amax' else np.inf
    if dtype.kind == 'b':
        return reduce != 'amax'
    info = np.iinfo(dtype)
    return info.min if reduce == 'amax' else info.max


class ScatterReduce(Op):
    """``scatter_reduce``: each position of ``x`` reduces itself (if ``include_self``) and
    the ``src`` values scattered to it; untouched positions keep ``x``.

    Gradients (float): sum passes ``g``; mean divides by the count; amax/amin share ``g``
    evenly among the values equal to the result; prod is the product of the others.
    """

    def forward(self, x, src, key, region, reduce, include_self):
        self.key, self.region, self.src_shape = key, region, src.shape
        self.reduce, self.include_self = reduce, include_self
        s = src[region]
        out = x.copy()
        if not include_self:
            out[key] = _identity(reduce, x.dtype)
        if reduce in ('sum', 'mean'):
            xp.add.at(out, key, s)
        elif reduce == 'prod':
            xp.multiply.at(out, key, s)
        elif reduce == 'amax':
            xp.maximum.at(out, key, s)
        else:
            xp.minimum.at(out, key, s)
        touched = None
        if not include_self or reduce != 'sum':
            touched = xp.zeros(x.shape, bool)
            touched[key] = True
        self.touched = touched
        if reduce == 'mean':
            count = xp.zeros(x.shape, np.int64)
            xp.add.at(count, key, 1)
            count += include_self
            count[count == 0] = 1
            out = out / count if x.dtype.kind in 'fV' else out // count
            out = out.astype(x.dtype, copy=False)
            self.count = count.astype(x.dtype) if x.dtype.kind in 'fV' else count
        if x.dtype.kind in 'fV' and reduce in ('amax', 'amin', 'prod'):
            self._prepare(x, src, s, out)
        return out

    def _prepare(self, x, src, s, out):
        key = self.key
        self_in = xp.ones(x.shape, bool) if self.include_self else ~self.touched
        if self.reduce == 'prod':
            # d out / d e is out / e, except where a group holds zeros: then it is the
            # product of the non-zero values, for a lone zero only.
            zeros_x = (x == 0) & self_in
            zeros_s = s == 0
            if (x == 0).any() or zeros_s.any():
                nz = xp.where(self_in, xp.where(zeros_x, 1, x), 1).astype(x.dtype)
                xp.multiply.at(nz, key, xp.where(zeros_s, 1, s))
                nzeros = zeros_x.astype(np.int64)
                xp.add.at(nzeros, key, zeros_s)
                dx = xp.where(x == 0, nz * (nzeros == 1),
                              xp.where(nzeros == 0, nz, 0) / xp.where(x == 0, 1, x))
                ds = xp.where(zeros_s, (nz * (nzeros == 1))[key],
                              xp.where(nzeros == 0, nz, 0)[key] / xp.where(zeros_s, 1, s))
                self.dx, self.ds = xp.where(self_in, dx, 0), ds
                self.save_for_backward()
            else:
                self.dx = None
                self.save_for_backward(x, src, out)
            return
        hit_x = (x == out) & self_in
        hit_s = s == out[key]
        # torch counts ties with self even when include_self=False (they get no gradient)
        n = (x == out).astype(x.dtype)
        xp.add.at(n, key, hit_s)
        n[n == 0] = 1
        self.hit_x, self.hit_s, self.n = hit_x, hit_s, n

    def backward(self, g):
        key, reduce = self.key, self.reduce
        if reduce in ('sum', 'mean'):
            if reduce == 'mean':
                g = g / self.count
            gx = g if self.include_self else MaskOut.run(g, key=key)
            gs = read_at(g, key)
        elif reduce == 'prod':
            if self.dx is not None:
                gx, gs = g * self.dx, read_at(g, key) * self.ds
            else:
                x, src, out = self.saved_tensors
                gx = g * out / x
                if not self.include_self:
                    gx = MaskOut.run(gx, key=key)
                gs = read_at(g * out, key) / read_at(src, self.region)
        else:
            gn = g / self.n
            gx = where(self.hit_x, gn, 0.0)
            gs = where(self.hit_s, read_at(gn, key), 0.0)
        gsrc = _pad_to(gs, self.region, self.src_shape) if self.needs_input_grad[1] else None
        return gx, gsrc


def _scatter_args(op, input, dim, index, src):
    """Validate a scatter-like call; return (dim, key, region)."""
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    idx = _index_data(index, op, message=f'{op}(): Expected dtype int32/int64 for index')
    if idx.ndim != x.ndim and not (idx.ndim <= 1 and x.ndim <= 1):
        raise RuntimeError('Index tensor must have the same number of dimensions as self tensor')
    src_shape = None
    if _is_tensor(src):
        src_shape = src._data.shape
        if len(src_shape) != idx.ndim and not (idx.ndim <= 1 and len(src_shape) <= 1):
            raise RuntimeError('Index tensor must have the same number of dimensions as src '
                               'tensor')
        _same_dtype(input, src, op)
    elif not isinstance(src, (int, float, bool)):
        raise TypeError(f"{op}(): argument 'src' must be Tensor or a number, not "
                        f'{type(src).__name__}')
    if x.ndim == 0 or idx.ndim == 0:
        if idx.size != 1 or (src_shape is not None and int(xp.prod(src_shape)) < 1):
            raise RuntimeError(f'{op}(): index and src must have one element for a 0-dim '
                               'tensor')
        _check_range(idx, max(x.size, 1) if x.ndim == 0 else x.shape[0], 0, '')
        return dim, (idx.reshape(x.shape[:1] and (1,)) if x.ndim else ()), \
            (() if src_shape is None or not src_shape else (slice(0, 1),))
    for d in range(x.ndim):
        if (d != dim and idx.shape[d] > x.shape[d]) or (
                src_shape is not None and idx.shape[d] > src_shape[d]):
            src_part = f' and to be no larger size than src {list(src_shape)}' \
                if src_shape is not None else ''
            raise RuntimeError(f'Expected index {list(idx.shape)} to be no larger than self '
                               f'{list(x.shape)} apart from dimension {dim}{src_part}')
    _check_range(idx, x.shape[dim], dim, '')
    region = tuple(slice(0, n) for n in idx.shape)
    return dim, _gather_key(idx, dim), region


def _scatter(input, dim, index, src, value, reduce, inplace):
    if src is None:
        src = value
    if src is None:
        raise TypeError('scatter() missing required argument: src or value')
    dim, key, region = _scatter_args('scatter', input, dim, index, src)
    op = Scatter if _is_tensor(src) else ScatterValue
    apply = op.apply_ if inplace else op.apply
    if reduce is not None:
        if reduce not in ('add', 'multiply'):
            raise RuntimeError('reduce argument must be either add or multiply.')
        if _is_tensor(src):
            warnings.warn('The reduce argument of scatter with Tensor src is deprecated and will '
                          'be removed in a future PyTorch release. Use scatter_reduce instead '
                          'for more reduction options.', UserWarning, stacklevel=3)
        apply = ScatterLegacyReduce.apply_ if inplace else ScatterLegacyReduce.apply
        return apply(input, src, key=key, region=region, reduce=reduce)
    return apply(input, src, key=key, region=region)


@method
@vmap_function('scatter')
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(input, dim, index, src, value, reduce, False)


@method
def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(input, dim, index, src, value, reduce, True)


def _scatter_add(input, dim, index, src, inplace):
    if not _is_tensor(src):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    dim, key, region = _scatter_args('scatter_add', input, dim, index, src)
    return (ScatterAdd.apply_ if inplace else ScatterAdd.apply)(input, src, key=key,
                                                                region=region)


@method
@vmap_function('scatter')
def scatter_add(input, dim, index, src):
    return _scatter_add(input, dim, index, src, False)


@method
def scatter_add_(input, dim, index, src):
    return _scatter_add(input, dim, index, src, True)


def _scatter_reduce(input, dim, index, src, reduce, include_self, inplace):
    if reduce not in _REDUCES:
        raise RuntimeError('reduce argument must be either sum, prod, mean, amax or amin, got '
                           f'{reduce}')
    if not _is_tensor(src):
        raise TypeError("scatter_reduce(): argument 'src' must be Tensor, not "
                        f'{type(src).__name__}')
    dim, key, region = _scatter_args('scatter_reduce', input, dim, index, src)
    apply = ScatterReduce.apply_ if inplace else ScatterReduce.apply
    return apply(input, src, key=key, region=region, reduce=reduce,
                 include_self=bool(include_self))


@method
@vmap_function('scatter')
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


@method
def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce(input, dim, index, src, reduce, include_self, True)


# ---------------------------------------------------------------------------------------
# index_add, index_copy, index_fill, index_put

class IndexAdd(Op):
    def forward(self, x, source, key, alpha=1):
        self.key, self.alpha = key, alpha
        out = x.copy()
        xp.add.at(out, key, source if alpha == 1 else source * alpha)
        return out

    def backward(self, g):
        gs = None
        if self.needs_input_grad[1]:
            gs = read_at(g, self.key)
            if self.alpha != 1:
                gs = gs * self.alpha
        return g, gs


class IndexCopy(Op):
    def forward(self, x, source, key):
        self.key = key
        out = x.copy()
        out[key] = source
        return out

    def backward(self, g):
        gs = read_at(g, self.key) if self.needs_input_grad[1] else None
        return MaskOut.run(g, key=self.key), gs


class IndexFill(Op):
    overlapping_write = ('index_fill_', 'tensor[mask] = scalar')  # torch: deprecated
    def forward(self, x, value, key):
        self.key = key
        out = x.copy()
        if is_any_array(value):
            self.value_dtype = value.dtype
            value = value.astype(x.dtype)
            if self.needs_input_grad[1]:
                self.filled = xp.zeros(x.shape, bool)
                self.filled[key] = True
        else:
            self.value_dtype = None
        out[key] = value
        return out

    def backward(self, g):
        gv = None
        if self.value_dtype is not None and self.needs_input_grad[1]:
            # each filled position once, however often the index names it
            gv = _cast(_sum_all(where(self.filled, g, 0.0)), self.value_dtype)
        return MaskOut.run(g, key=self.key), gv


class IndexFillTensor(IndexFill):
    """``index_fill`` with a 0-dim tensor for ``value``."""
    node_name = 'IndexFillBackward1'


def _index_dim_args(op, input, dim, index, source=None, dtypes=(np.int64, np.int32),
                    dtype_msg=None, exc=RuntimeError, dtype_exc=RuntimeError,
                    allow_negative=False):
    """Validate ``index_add/copy/fill``; return the key ``(:, ..., index)``."""
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    idx = _vector_index(index, op, dtypes, dtype_msg, dtype_exc)
    if x.ndim == 0:
        _check_range(idx, 1, 0, f'{op}(): ' if exc is IndexError else '', exc)
        key = (xp.zeros(0, np.intp),) if idx.size == 0 else ()
        if source is not None and source._data.size != 1:
            raise RuntimeError(f'{op}(): source of a 0-dim tensor must have one element')
        return key
    if source is not None:
        if source._data.dtype != x.dtype:
            raise RuntimeError(f'{op}(): self ({_type_name(x.dtype)}) and source '
                               f'({_type_name(source._data.dtype)}) must have the same scalar '
                               'type')
        s = source._data.shape
        expected = x.shape[:dim] + (idx.size,) + x.shape[dim + 1:]
        if s != expected and not (len(s) == 0 and idx.size == 1 and x.ndim == 1):
            if len(s) == x.ndim and s[dim] != idx.size:
                raise exc(f'{op}(): Number of indices ({idx.size}) should be equal to '
                          f'source.size(dim) ({s[dim]}), for dim: {dim}')
            raise exc(f'{op}(): Expected source of shape {list(expected)} (self with dim {dim} '
                      f'of size {idx.size}), but got {list(s)}')
    idx = _check_range(idx, x.shape[dim], dim, f'{op}(): ' if exc is IndexError else '', exc,
                       allow_negative)
    return _dim_key(dim, idx)


def _check_source(source, op):
    if not _is_tensor(source):
        raise TypeError(f"{op}(): argument 'source' must be Tensor, not {type(source).__name__}")


def _index_add(input, dim, index, source, alpha, inplace):
    _check_source(source, 'index_add_')
    key = _index_dim_args('index_add_', input, dim, index, source)
    if input._data.ndim and source._data.ndim == 0:
        source = source.reshape(1)
    apply = IndexAdd.apply_ if inplace else IndexAdd.apply
    return apply(input, source, key=key) if alpha == 1 else apply(input, source, key=key,
                                                                   alpha=alpha)


@method
@vmap_function('index_update')
def index_add(input, dim, index, source, *, alpha=1):
    return _index_add(input, dim, index, source, alpha, False)


@method
def index_add_(input, dim, index, source, *, alpha=1):
    return _index_add(input, dim, index, source, alpha, True)


def _index_copy(input, dim, index, source, inplace):
    _check_source(source, 'index_copy_')
    if _is_tensor(index) and index._data.dtype != np.int64:
        raise RuntimeError('index_copy_(): Expected a long tensor for index, but got '
                           f'{_type_name(index._data.dtype)}')
    if source._data.dtype != input._data.dtype:
        raise RuntimeError('index_copy_(): self and source expected to have the same dtype, '
                           f'but got (self) {_type_name(input._data.dtype)} and (source) '
                           f'{_type_name(source._data.dtype)}')
    key = _index_dim_args('index_copy_', input, dim, index, source, (np.int64,),
                          exc=IndexError)
    if input._data.ndim and source._data.ndim == 0:
        source = source.reshape(1)
    return (IndexCopy.apply_ if inplace else IndexCopy.apply)(input, source, key=key)


@method
@vmap_function('index_update')
def index_copy(input, dim, index, source):
    if autocast_state.active:   # autocast's 'promote' op: the widest floating dtype
        input, source = autocast_args('promote', input, source)
    return _index_copy(input, dim, index, source, False)


@method
def index_copy_(input, dim, index, source):
    return _index_copy(input, dim, index, source, True)


def _index_fill(input, dim, index, value, inplace):
    if _is_tensor(value):
        if value._data.ndim:
            raise RuntimeError('index_fill_ only supports a 0-dimensional value tensor, but '
                               f'got tensor with {value._data.ndim} dimension(s).')
    elif not isinstance(value, (int, float, bool, complex)):
        raise TypeError(f"index_fill(): argument 'value' must be Number or Tensor, not "
                        f'{type(value).__name__}')
    key = _index_dim_args('index_fill_', input, dim, index, None, (np.int64,),
                          'index_fill_(): Expected dtype int64 for index.', IndexError,
                          IndexError, allow_negative=True)
    op = IndexFillTensor if _is_tensor(value) else IndexFill
    return (op.apply_ if inplace else op.apply)(input, value, key=key)


@method
@vmap_function('index_fill')
def index_fill(input, dim, index, value):
    return _index_fill(input, dim, index, value, False)


@method
def index_fill_(input, dim, index, value):
    return _index_fill(input, dim, index, value, True)


def _index_put_args(input, indices, values):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors, not "
                        f'{type(indices).__name__}')
    for i, t in enumerate(indices):
        if not _is_tensor(t):
            raise TypeError(f'expected Tensor as element {i} in argument 1, but got '
                            f'{type(t).__name__}')
    if not _is_tensor(values):
        raise TypeError("index_put(): argument 'values' must be Tensor, not "
                        f'{type(values).__name__}')
    if values._data.dtype != input._data.dtype:
        raise RuntimeError('Index put requires the source and destination dtypes match, got '
                           f'{_type_name(input._data.dtype)} for the destination and '
                           f'{_type_name(values._data.dtype)} for the source.')
    key = tuple(_index_array(t._data) if t._data.dtype.kind in 'biu' else _bad_index()
                for t in indices)
    _check_key(input, key)
    return key


def _bad_index():
    raise IndexError(_BAD_INDEX)


@method
def index_put(input, indices, values, accumulate=False):
    key = _index_put_args(input, indices, values)
    return _index_put(input, key, values, bool(accumulate), out_of_place=True)


@method
def index_put_(input, indices, values, accumulate=False):
    key = _index_put_args(input, indices, values)
    _index_put(input, key, values, bool(accumulate))
    return input


# ---------------------------------------------------------------------------------------
# masks

class MaskedFill(Op):
    overlapping_write = ('masked_fill_', 'tensor[mask] = scalar')  # torch: deprecated
    def forward(self, x, mask, value):
        self.mask = mask
        if is_any_array(value):
            self.value_dtype = value.dtype
        else:
            self.value_dtype = None
        native = native_kernel('masked_fill', x)
        if native is not None and mask.__class__ is np.ndarray and (
                self.value_dtype is None or self.value_dtype.kind in 'biuf'):
            out = native(x, mask, value)
            if out is not None:
                return out
        return xp.where(mask, xp.asarray(value).astype(x.dtype), x)

    def backward(self, g):
        gv = None
        if self.value_dtype is not None and self.needs_input_grad[2]:
            gv = _cast(_sum_all(where(self.mask, g, 0.0)), self.value_dtype)
        return where(self.mask, 0.0, g), None, gv


class MaskedFillTensor(MaskedFill):
    """``masked_fill`` with a 0-dim tensor for ``value``."""
    node_name = 'MaskedFillBackward1'


class MaskedScatter(Op):
    def forward(self, x, mask, source):
        shape = xp.broadcast_shapes(x.shape, mask.shape)
        m = xp.broadcast_to(mask, shape)
        self.mask, self.source_shape = m, source.shape
        self.n = n = int(xp.count_nonzero(m))
        if n > source.size:
            raise RuntimeError('Number of elements of source < number of ones in mask')
        out = xp.array(xp.broadcast_to(x, shape))
        out[m] = source.reshape(-1)[:n]
        return out

    def backward(self, g):
        gs = None
        if self.needs_input_grad[2]:
            size = int(xp.prod(self.source_shape))
            gs = _pad_to(read_at(g, self.mask), (slice(0, self.n),), (size,)) \
                .reshape(self.source_shape)
        return where(self.mask, 0.0, g), None, gs


def _mask_data(mask, op, message):
    if not _is_tensor(mask):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype != bool:
        raise RuntimeError(message.format(_type_name(m.dtype)))
    return m


def _broadcast_mask(x, m, inplace, op):
    try:
        shape = xp.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        a, b = x.shape, m.shape
        for k in range(1, min(len(a), len(b)) + 1):
            if a[-k] != b[-k] and 1 not in (a[-k], b[-k]):
                raise RuntimeError(f'The size of tensor a ({a[-k]}) must match the size of '
                                   f'tensor b ({b[-k]}) at non-singleton dimension '
                                   f'{max(len(a), len(b)) - k} ({op}: input {list(a)}, mask '
                                   f'{list(b)})') from None
        raise
    if inplace and shape != x.shape:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape "
                           f'{list(shape)}')
    return shape


def _masked_fill(input, mask, value, inplace):
    m = _mask_data(mask, 'masked_fill', 'masked_fill_ only supports boolean masks, but got mask '
                   'with dtype {}')
    if _is_tensor(value):
        if value._data.ndim:
            raise RuntimeError('masked_fill_ only supports a 0-dimensional value tensor, but '
                               f'got tensor with {value._data.ndim} dimension(s).')
    elif not isinstance(value, (int, float, bool, complex)):
        raise TypeError("masked_fill(): argument 'value' must be Number or Tensor, not "
                        f'{type(value).__name__}')
    elif isinstance(value, complex) and input._data.dtype.kind != 'c':
        # torch converts a complex number to a real dtype only without an imaginary part
        if value.imag:
            from .clamping import _torch_dtype_name
            try:
                name = _torch_dtype_name(input._data.dtype)
            except KeyError:        # (the C++ names of the dtypes torch's message shows)
                name = _type_name(input._data.dtype)
            raise RuntimeError(f'value cannot be converted to type {name} without overflow')
        value = value.real
    _broadcast_mask(input._data, m, inplace, 'masked_fill')
    if input._data.dtype in REFUSED:
        raise refused('masked_fill', input._data)
    op = MaskedFillTensor if _is_tensor(value) else MaskedFill
    return (op.apply_ if inplace else op.apply)(input, mask, value)


@method
def masked_fill(input, mask, value):
    return _masked_fill(input, mask, value, False)


@method
def masked_fill_(input, mask, value):
    return _masked_fill(input, mask, value, True)


def _masked_scatter(input, mask, source, inplace):
    m = _mask_data(mask, 'masked_scatter', 'masked_scatter_ only supports boolean masks, but '
                   'got mask with dtype {}')
    if not _is_tensor(source):
        raise TypeError("masked_scatter(): argument 'source' must be Tensor, not "
                        f'{type(source).__name__}')
    if source._data.dtype != input._data.dtype:
        raise RuntimeError('masked_scatter: expected self and source to have same dtypes but got '
                           f'{_type_name(input._data.dtype)} and '
                           f'{_type_name(source._data.dtype)}')
    _broadcast_mask(input._data, m, inplace, 'masked_scatter')
    return (MaskedScatter.apply_ if inplace else MaskedScatter.apply)(input, mask, source)


@method
def masked_scatter(input, mask, source):
    return _masked_scatter(input, mask, source, False)


@method
def masked_scatter_(input, mask, source):
    return _masked_scatter(input, mask, source, True)


@method
@vmap_function('loop')
def masked_select(input, mask):
    m = _mask_data(mask, 'masked_select', 'masked_select: expected BoolTensor for mask')
    refuse_masks(m)
    shape = _broadcast_mask(input._data, m, False, 'masked_select')
    return MaskedSelect.apply(input, key=xp.broadcast_to(m, shape))


# ---------------------------------------------------------------------------------------
# put, nonzero

class Put(Op):
    def forward(self, x, source, index, accumulate=False):
        self.index, self.accumulate = index, accumulate
        self.shape, self.source_shape = x.shape, source.shape
        out = x.copy()
        flat = out.reshape(-1)
        if accumulate:
            xp.add.at(flat, index, source.reshape(-1))
        else:
            flat[index] = source.reshape(-1)
        return out

    def backward(self, g):
        flat = g.reshape((-1,))
        gx = g if self.accumulate else MaskOut.run(flat, key=self.index).reshape(self.shape)
        gs = None
        if self.needs_input_grad[1]:
            gs = read_at(flat, self.index).reshape(self.source_shape)
        return gx, gs


def _put(input, index, source, accumulate, inplace):
    _index_data(index, 'put_', (np.int64,), 'put_(): Expected a long tensor for index, but got '
                f'{_type_name(index._data.dtype) if _is_tensor(index) else ""}')
    _check_source(source, 'put_')
    if source._data.dtype != input._data.dtype:
        raise RuntimeError('put_(): self and source expected to have the same dtype, but got '
                           f'self.dtype = {_type_name(input._data.dtype)} and source.dtype = '
                           f'{_type_name(source._data.dtype)}')
    if source._data.size != index._data.size:
        raise IndexError('put_(): Expected source and index to have the same number of '
                         f'elements, but got source.numel() = {source._data.size}, '
                         f'index.numel() = {index._data.size}')
    idx = _flat_index(index._data.reshape(-1), input._data.size)
    apply = Put.apply_ if inplace else Put.apply
    return apply(input, source, index=idx, accumulate=bool(accumulate))


@method
@vmap_function('loop')
def put(input, index, source, accumulate=False):
    return _put(input, index, source, accumulate, False)


@method
def put_(input, index, source, accumulate=False):
    return _put(input, index, source, accumulate, True)


def _int_tensor(a):
    return wrap(xp.ascontiguousarray(a, dtype=np.int64))


@method
@vmap_function('loop')
def nonzero(input, *, as_tuple=False):
    a = input._data
    if a.dtype in REFUSED:
        raise refused('nonzero_count_cpu', a)
    if as_tuple:
        return tuple(_int_tensor(i) for i in xp.nonzero(a.reshape(-1) if a.ndim == 0 else a))
    if a.ndim == 0:
        return _int_tensor(xp.zeros((1 if a else 0, 0)))
    return _int_tensor(xp.argwhere(a))


@method
def argwhere(input):
    return nonzero(input)


# ---------------------------------------------------------------------------------------
# index_reduce, nonzero_static

_INDEX_REDUCES = ('prod', 'mean', 'amax', 'amin')


class _BetaWarning:
    """PyTorch warns once per process that index_reduce is in beta (TORCH_WARN_ONCE)."""
    given = False


def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    if not _BetaWarning.given:
        _BetaWarning.given = True
        warnings.warn('index_reduce() is in beta and the API may change at any time.',
                      UserWarning, stacklevel=3)
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError('index_reduce(): Expected reduce to be one of prod, mean, amax or '
                           f'amin but got {reduce}.')
    _check_source(source, 'index_reduce_')
    x = input._data
    idx = _vector_index(index, 'index_reduce_')
    dim = _wrap_dim(dim, x.ndim)
    if idx.size and (idx.min() < 0 or idx.max() >= (x.shape[dim] if x.ndim else 1)):
        raise IndexError(f'index out of range in self (index_reduce_: indices must lie in '
                         f'[0, {x.shape[dim] if x.ndim else 1}) along dim {dim}, got '
                         f'{int(idx.min())} to {int(idx.max())})')
    key = _index_dim_args('index_reduce_', input, dim, index, source)
    src = source
    if x.ndim and source._data.ndim == 0:
        src = source.reshape(1)
    apply = IndexReduce.apply_ if inplace else IndexReduce.apply
    return apply(input, src, key=key, region=(), reduce=reduce,
                 include_self=bool(include_self))


class IndexReduce(ScatterReduce):
    """``index_reduce``: ``scatter_reduce`` with whole slices of ``source`` along ``dim``."""


@method
@vmap_function('index_update')
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(input, dim, index, source, reduce, include_self, False)


@method
def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(input, dim, index, source, reduce, include_self, True)


@method
def nonzero_static(input, *, size, fill_value=-1):
    size = int(size)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    a = input._data
    found = xp.argwhere(a) if a.ndim else xp.zeros((1 if a else 0, 0), np.int64)
    out = xp.full((size, a.ndim), fill_value, dtype=np.int64)
    n = min(size, found.shape[0])
    out[:n] = found[:n]
    return wrap(out)


__all__ = ['select', 'index_select', 'gather', 'take', 'take_along_dim', 'scatter',
           'scatter_add', 'scatter_reduce', 'index_add', 'index_copy', 'index_fill',
           'index_put', 'masked_fill', 'masked_scatter', 'masked_select', 'put', 'nonzero',
           'argwhere', 'index_put_', 'index_reduce', 'nonzero_static']
