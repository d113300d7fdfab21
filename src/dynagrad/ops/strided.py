"""Ops on the memory under a tensor, PyTorch's storage rules made explicit: ``as_strided``
(a view anywhere on the storage), the in-place view ops (the tensor itself becomes the
view), the ``*_scatter`` ops (a copy with a view's region replaced), the ``*_copy`` family
(a view op, then a copy) and ``resize_``/``set_``/``fill_diagonal_``. The plain view ops
they build on are in shape.py."""
import math
import warnings

import numpy as np

from .._coo import COO, SparseRefused
from .._meta import MetaArray, contiguous_strides as _contiguous_strides, storage_bytes
from .._device import DEVICE_ARRAY_TYPES
from ..autograd.batched import vmap_function
from ..backend import xp
from ..autograd.function import Op
from ..autograd.grad_mode import is_inference_mode_enabled
from ..autograd.grad_mode import state as _grad_state  # grad_enabled: whether ops record
from ..tensor import INFERENCE_COUNTER, INFERENCE_WRITE_ERROR, bump_version, method, wrap
from .formula import is_array
from .indexing import BasicIndex, select
from .shape import (  # the view ops these are built from
    Diagonal, Narrow, Squeeze, T, Transpose, Unsqueeze, View, _along, _can_view,
    _diag_dims, _diag_view, _infer_shape, _is_tensor, _no_duplicates, _shape_arg, _wrap,
    diagonal, expand, narrow, permute, split, split_with_sizes, squeeze, t, transpose,
    unbind, unfold, unsqueeze)

_ndarray = np.ndarray


# -- as_strided: a view on the storage -------------------------------------------------------
#
# A tensor's storage is the block of memory its array lives in: the root of the array's
# chain of NumPy bases (the array the tensor was first made with). Offsets and strides
# count elements of that block, as PyTorch's do.


def _address(a):
    """Where ``a``'s first element is (empty arrays too): NumPy's array interface, or a
    device array's pointer (CuPy's ``.data.ptr``)."""
    interface = getattr(a, '__array_interface__', None)
    return interface['data'][0] if interface is not None else a.data.ptr


def _storage(a):
    """(the storage of array ``a`` as a flat array, a's offset and strides in it)."""
    root, base = a, a.base
    if isinstance(a, MetaArray):
        root, base = storage_bytes(a), None     # the bytes under the meta placeholders
    while base is not None:
        if isinstance(base, _ndarray) or base.__class__ in DEVICE_ARRAY_TYPES:
            root = base
        base = getattr(base, 'base', None)
    if root.flags.c_contiguous:
        flat = root.reshape(-1)
    elif root.flags.f_contiguous:
        flat = root.T.reshape(-1)
    else:
        raise RuntimeError('as_strided: the tensor\'s memory is not one dense block (it views '
                           'an array made outside dynagrad); call .contiguous() first')
    if flat.dtype != a.dtype:   # set_ on a storage of other bytes: count in a's elements
        raw = flat.view(np.uint8)
        flat = raw[:raw.size - raw.size % a.itemsize].view(a.dtype)
    size = a.itemsize
    offset = (_address(a) - _address(flat)) // size
    return flat, offset, tuple(s // size for s in a.strides)


def _positions(size, stride, offset):
    """The storage position of every element of the geometry (size, stride, offset)."""
    pos = xp.full((), offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        pos = pos + (xp.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(size) - k - 1))
    return xp.broadcast_to(pos, tuple(size))


def _strided(flat, size, stride, offset):
    item = flat.itemsize
    return xp.lib.stride_tricks.as_strided(flat[offset:], tuple(size),
                                           tuple(s * item for s in stride))


class _StorageMap(Op):
    """The linear maps behind as_strided's gradient, between an input geometry ``inp`` and an
    output geometry ``out`` on one storage (PyTorch's as_strided backward): ``forward`` is the
    gradient of the input from the output's; ``_StorageMapT`` is its adjoint. Storage places
    the input covers more than once share the gradient evenly."""
    node_name = 'AsStridedBackward0'

    def forward(self, g, inp, out):
        self.inp, self.out = inp, out
        i, o, counts, n = self._indices()
        buf = xp.zeros(n, g.dtype)
        xp.add.at(buf, o.reshape(-1), g.reshape(-1))
        res = buf[i]
        if counts is not None:
            res = res / counts[i]
        return res.astype(g.dtype, copy=False)

    def _indices(self):
        i, o = _positions(*self.inp), _positions(*self.out)
        low = min(int(i.min()) if i.size else 0, int(o.min()) if o.size else 0)
        i, o = i - low, o - low
        n = max(int(i.max()) + 1 if i.size else 0, int(o.max()) + 1 if o.size else 0)
        counts = xp.bincount(i.reshape(-1), minlength=n) if i.size else None
        if counts is not None and counts.max() <= 1:
            counts = None
        return i, o, counts, n

    def backward(self, gg):
        return _StorageMapT.run(gg, inp=self.inp, out=self.out)


class _StorageMapT(_StorageMap):
    node_name = 'AsStridedBackwardBackward0'

    def forward(self, h, inp, out):
        self.inp, self.out = inp, out
        i, o, counts, n = self._indices()
        if counts is not None:
            h = h / counts[i]
        buf = xp.zeros(n, h.dtype)
        xp.add.at(buf, i.reshape(-1), h.reshape(-1))
        return buf[o].astype(h.dtype, copy=False)

    def backward(self, g):
        return _StorageMap.run(g, inp=self.inp, out=self.out)


class AsStrided(Op):
    """``x.as_strided(size, stride, storage_offset)``: a view of ``x``'s storage."""
    is_view = True

    def forward(self, x, size, stride, storage_offset):
        flat, offset, strides = _storage(x)
        self.geometry = ((x.shape, strides, offset), (size, stride, storage_offset))
        return _strided(flat, size, stride, storage_offset)

    def backward(self, g):
        inp, out = self.geometry
        return _StorageMap.run(g, inp=inp, out=out)


class AsStridedOfBase(AsStrided):
    """How an as_strided view is taken again from its base (``_view_fn``): from the base
    itself through its storage, or from an array laid out like a contiguous base (the
    gradient CopySlices writes into), with the offset counted from the base's start."""
    node_name = 'AsStridedBackward0'

    def forward(self, x, size, stride, storage_offset, relative_offset):
        if x.flags.c_contiguous and relative_offset is not None:
            self.geometry = ((x.shape, _contiguous_strides(x.shape), 0),
                             (size, stride, relative_offset))
            return _strided(x.reshape(-1), size, stride, relative_offset)
        if x.flags.c_contiguous:
            raise RuntimeError('as_strided: an in-place write through this as_strided view '
                               'cannot be differentiated (its base is not contiguous or the '
                               'view reaches outside it); clone the base first')
        return super().forward(x, size, stride, storage_offset)


def _as_strided_args(input, size, stride, storage_offset, op='as_strided', memory=None):
    """Check the geometry (size, stride, storage_offset) against ``input``'s storage, or
    against ``memory`` (a flat array: a storage object's elements) when given."""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        if op == 'set_':
            raise RuntimeError(f'unequal size length ({len(size)}) and stride length '
                               f'({len(stride)})')
        raise RuntimeError('mismatch in length of strides and shape')
    if any(n < 0 for n in size):
        raise RuntimeError(f'Storage size calculation overflowed with sizes={list(size)} and '
                           f'strides={list(stride)}')
    if any(s < 0 for s in stride):
        raise RuntimeError(f'{op}: Negative strides are not supported at the moment, got '
                           f'strides: {list(stride)}')
    flat, offset, _ = _storage(input._data) if memory is None else (memory, 0, None)
    storage_offset = offset if storage_offset is None else int(storage_offset)
    if storage_offset < 0:
        raise RuntimeError(f'Tensor: invalid storage offset {storage_offset}')
    item = flat.itemsize
    needed = 0 if 0 in size else storage_offset + 1 + sum((n - 1) * s for n, s in
                                                           zip(size, stride))
    if needed > flat.size:
        raise RuntimeError(f'setStorage: sizes {list(size)}, strides {list(stride)}, storage '
                           f'offset {storage_offset}, and itemsize {item} requiring a storage '
                           f'size of {needed * item} are out of bounds for storage of size '
                           f'{flat.size * item}')
    return size, stride, storage_offset


def _replay_as_strided_from_base(out, size, stride, storage_offset):
    """Record ``out`` (an as_strided view) as taken from its base in one step: as_strided
    ignores how its input was viewed, so the chain before it does not matter."""
    base = out._base
    relative = None
    data = base._data
    if data.flags.c_contiguous:
        relative = storage_offset - _storage(data)[1]
        pos = _positions(size, stride, relative)
        if pos.size and (int(pos.min()) < 0 or int(pos.max()) >= data.size):
            relative = None
    out._view_fn = ((AsStridedOfBase, dict(size=size, stride=stride,
                                            storage_offset=storage_offset,
                                            relative_offset=relative), None),)


@method
def as_strided(input, size, stride, storage_offset=None):
    size, stride, storage_offset = _as_strided_args(input, size, stride, storage_offset)
    out = AsStrided.apply(input, size=size, stride=stride, storage_offset=storage_offset)
    _replay_as_strided_from_base(out, size, stride, storage_offset)
    return out


# -- in-place view ops: the tensor itself becomes the view ----------------------------------


def _refuse_inference_write(target):
    # these change the tensor without an op's apply_, so they make its check themselves
    if target._vc_slot is INFERENCE_COUNTER and not is_inference_mode_enabled():
        raise RuntimeError(INFERENCE_WRITE_ERROR)


def _check_inplace_view(target):
    _refuse_inference_write(target)
    if target._requires_grad and _grad_state.grad_enabled:
        if target._grad_fn is None:
            raise RuntimeError('a leaf Variable that requires grad is being used in an in-place '
                               'operation.')
        base = target._base
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError('a view of a leaf Variable that requires grad is being used in '
                               'an in-place operation.')


def _become(target, view, writer):
    """Make ``target`` the view ``view`` of itself (same storage, a new shape and history),
    counted as an in-place write as PyTorch counts it."""
    target._data = view._data
    target._grad_fn = view._grad_fn
    target._output_nr = view._output_nr
    target._requires_grad = view._requires_grad
    if target._base is not None:
        target._view_fn = view._view_fn      # still a view of the same base, one step further
    bump_version(target, writer)
    return target


def _inplace_view(name, node_name, fn):
    def inplace(self, *args, **kwargs):
        _check_inplace_view(self)
        return _become(self, fn(self, node_name, *args, **kwargs), name)
    inplace.__name__ = name
    inplace.__doc__ = f'In-place ``{name[:-1]}``: this tensor becomes the view.'
    return inplace


def _squeeze_as(input, node_name, dim=None):
    nd = input.ndim
    if dim is None:
        return Squeeze.named(node_name[0]).apply(input)
    if isinstance(dim, int):
        return Squeeze.named(node_name[1]).apply(input, dim=_wrap(dim, nd))
    dims = tuple(_wrap(d, nd) for d in dim)
    _no_duplicates(dims)
    return Squeeze.named(node_name[2]).apply(input, dim=dims)


def _unsqueeze_as(input, node_name, dim):
    return Unsqueeze.named(node_name).apply(input, dim=_wrap(dim, input.ndim + 1))


def _transpose_as(input, node_name, dim0, dim1):
    nd = input.ndim
    return Transpose.named(node_name).apply(input, dim0=_wrap(dim0, nd), dim1=_wrap(dim1, nd))


def _t_as(input, node_name):
    nd = input.ndim
    if nd > 2:
        raise RuntimeError(f't_() expects a tensor with <= 2 dimensions, but self is {nd}D')
    return T.named(node_name).apply(input, dim0=0, dim1=1 if nd == 2 else 0)


def _as_strided_as(input, node_name, size, stride, storage_offset=None):
    size, stride, storage_offset = _as_strided_args(input, size, stride, storage_offset,
                                                    'as_strided_')
    out = AsStrided.named(node_name).apply(input, size=size, stride=stride,
                                           storage_offset=storage_offset)
    _replay_as_strided_from_base(out, size, stride, storage_offset)
    return out


squeeze_ = method(_inplace_view('squeeze_', ('SqueezeBackward3', 'SqueezeBackward4',
                                             'SqueezeBackward5'), _squeeze_as))
unsqueeze_ = method(_inplace_view('unsqueeze_', 'UnsqueezeBackward1', _unsqueeze_as))
transpose_ = method('transpose_', 'swapaxes_', 'swapdims_')(
    _inplace_view('transpose_', 'TransposeBackward1', _transpose_as))
t_ = method(_inplace_view('t_', 'TBackward1', _t_as))
as_strided_ = method(_inplace_view('as_strided_', 'AsStridedBackward1', _as_strided_as))


# -- the *_scatter ops: a copy of the input with a view's region replaced -------------------


class _ScatterInto(Op):
    """``x`` with ``src`` written into the region ``region(x)`` of a copy. Gradients: ``x``'s
    is the incoming one with the region zeroed, ``src``'s the region of the incoming one."""

    def forward(self, x, src, **params):
        self.params = params
        out = x.copy()
        self.region(out, **params)[...] = src
        return out

    def backward(self, g):
        if is_array(g):
            gx = g.copy()
            self.region(gx, **self.params)[...] = 0
            return gx, self.region(g, **self.params).copy()
        part = self.region_of(g, **self.params)
        return type(self).apply(g, part * 0, **self.params), part


class DiagonalScatterInto(_ScatterInto):
    node_name = 'DiagonalScatterBackward0'

    @staticmethod
    def region(a, offset, dim1, dim2):
        return _diag_view(a, offset, dim1, dim2)

    @staticmethod
    def region_of(t, offset, dim1, dim2):
        return Diagonal.apply(t, offset=offset, dim1=dim1, dim2=dim2)


class SelectScatter(_ScatterInto):
    @staticmethod
    def region(a, key):
        return a[key + (Ellipsis,)]

    @staticmethod
    def region_of(t, key):
        return BasicIndex.apply(t, key=key)


class SliceScatter(SelectScatter):
    pass


class AsStridedScatter(_ScatterInto):
    """The region is the as_strided view of the (contiguous) copy's own storage."""

    @staticmethod
    def region(a, size, stride, storage_offset):
        flat = a.reshape(-1) if a.flags.c_contiguous else xp.ascontiguousarray(a).reshape(-1)
        return _strided(flat, size, stride, storage_offset)

    @staticmethod
    def region_of(t, size, stride, storage_offset):
        return as_strided(t.clone(), size, stride, storage_offset)


def _scatter_src(input, src, region_shape):
    if not _is_tensor(src):
        raise TypeError(f"argument 'src' must be Tensor, not {type(src).__name__}")
    if tuple(src._data.shape) != tuple(region_shape):
        raise RuntimeError(f'expected src to have a size equal to the slice of self. src size = '
                           f'{list(src._data.shape)}, slice size = {list(region_shape)}')
    return src if src._data.dtype == input._data.dtype else src.to(input.dtype)


@method
@vmap_function('diagonal_scatter')
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    offset = int(offset)
    region = _diag_view(input._data, offset, d1, d2).shape
    src = _scatter_src(input, src, region)
    return DiagonalScatterInto.apply(input, src, offset=offset, dim1=d1, dim2=d2)


@method
@vmap_function('scatter_into')
def select_scatter(input, src, dim, index):
    nd = input.ndim
    if nd == 0:
        raise IndexError('select() cannot be applied to a 0-dim tensor.')
    dim = _wrap(dim, nd)
    index = int(index)
    n = input._data.shape[dim]
    if not -n <= index < n:
        raise IndexError(f'select(): index {index} out of range for tensor of size '
                         f'{list(input._data.shape)} at dimension {dim}')
    key = _along(dim, index % n)
    src = _scatter_src(input, src, input._data[key + (Ellipsis,)].shape)
    return SelectScatter.apply(input, src, key=key)


@method
@vmap_function('scatter_into')
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    nd = input.ndim
    dim = _wrap(dim, nd)
    step = int(step)
    if step <= 0:
        raise RuntimeError('slice step must be positive')
    key = _along(dim, slice(None if start is None else int(start),
                            None if end is None else int(end), step))
    src = _scatter_src(input, src, input._data[key].shape)
    return SliceScatter.apply(input, src, key=key)


@method
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    contiguous = wrap(xp.empty(input._data.shape, input._data.dtype))
    size, stride, storage_offset = _as_strided_args(
        contiguous, size, stride, 0 if storage_offset is None else storage_offset,
        'as_strided_scatter')
    src = _scatter_src(input, src, size)
    return AsStridedScatter.apply(input, src, size=size, stride=stride,
                                  storage_offset=storage_offset)


# -- the *_copy ops: the view op, then a copy (not a view) -----------------------------------


class CopyOfView(Op):
    """The copy that ends each ``*_copy`` op; it records the view's node name + ``_copy``,
    as PyTorch's view-copy ops are named."""

    def forward(self, x):
        return xp.array(x, copy=True)

    def backward(self, g):
        return g


class NotImplementedCopy(CopyOfView):
    """``detach_copy``: PyTorch's output keeps requiring grad, with no derivative."""
    node_name = 'NotImplemented'

    def backward(self, g):
        raise RuntimeError('derivative for aten::detach_copy is not implemented')


def _copied(view, name=None):
    """``view`` (a tensor) copied, its node named after the view's (or ``name``)."""
    if view._grad_fn is None:
        return CopyOfView.apply(view)
    return CopyOfView.named((name or view._grad_fn.name()) + '_copy').apply(view)


def _copy_op(fn_name, view_fn, name=None):
    def copy_fn(input, *args, **kwargs):
        out = view_fn(input, *args, **kwargs)
        if isinstance(out, tuple):
            return tuple(_copied(o, name) for o in out)
        return _copied(out, name)
    copy_fn.__name__ = fn_name
    copy_fn.__doc__ = f'``{view_fn.__name__}``, then a copy: the result shares no memory.'
    return copy_fn


def _view_any(input, *shape):
    if len(shape) == 1 and hasattr(shape[0], 'is_floating_point'):     # a dtype
        return _view_dtype_copy(input, shape[0])
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    # PyTorch's view_copy reshapes what .view() could not (it copies anyway)
    return View.apply(input if _can_view(input._data, shape) else input.contiguous(),
                      shape=shape)


def _view_dtype_copy(input, dtype):
    """``view_copy(x, dtype)``: the bytes read as ``dtype`` (no gradient, as PyTorch)."""
    a = xp.ascontiguousarray(input._data)
    new = dtype.numpy
    if a.dtype.itemsize != new.itemsize and (a.ndim == 0 or (a.shape[-1] * a.dtype.itemsize)
                                             % new.itemsize):
        raise RuntimeError(f'view_copy: cannot view {input.dtype} of shape '
                           f'{list(a.shape)} as {dtype}: the last dim\'s bytes must divide '
                           'into whole elements')
    return wrap(a.view(new).copy())


def _slice_view(input, dim=0, start=None, end=None, step=1):
    nd = input.ndim
    dim = _wrap(dim, nd)
    if int(step) <= 0:
        raise RuntimeError('slice step must be positive')
    key = _along(dim, slice(None if start is None else int(start),
                            None if end is None else int(end), int(step)))
    return Narrow.apply(input, key=key)


def _split_size_view(input, split_size, dim=0):
    if isinstance(split_size, (list, tuple)):
        raise TypeError("split_copy(): argument 'split_size' (position 2) must be int, not "
                        f'{type(split_size).__name__}')
    return split(input, split_size, dim)


def _alias_view(input):
    return BasicIndex.apply(input, key=Ellipsis)


def _detach_view(input):
    if input._requires_grad:
        return NotImplementedCopy.apply(input)
    return CopyOfView.apply(input)


alias_copy = _copy_op('alias_copy', _alias_view)
as_strided_copy = _copy_op('as_strided_copy', as_strided)
diagonal_copy = _copy_op('diagonal_copy', diagonal)
expand_copy = _copy_op('expand_copy', expand)
permute_copy = _copy_op('permute_copy', permute)
select_copy = _copy_op('select_copy', select)
slice_copy = _copy_op('slice_copy', _slice_view)
split_copy = _copy_op('split_copy', _split_size_view)
split_with_sizes_copy = _copy_op('split_with_sizes_copy', split_with_sizes)
squeeze_copy = _copy_op('squeeze_copy', squeeze)
t_copy = _copy_op('t_copy', t)
transpose_copy = _copy_op('transpose_copy', transpose)
unbind_copy = _copy_op('unbind_copy', unbind)
unfold_copy = _copy_op('unfold_copy', unfold)
unsqueeze_copy = _copy_op('unsqueeze_copy', unsqueeze)
view_copy = _copy_op('view_copy', _view_any, 'ViewBackward0')


def detach_copy(input):
    return _detach_view(input)


@method
def narrow_copy(input, dim, start, length):
    out = narrow(input, dim, start, length)
    return CopyOfView.named('NarrowCopyBackward0').apply(out) if out._grad_fn is not None \
        else CopyOfView.apply(out)


# -- resize, set_, fill_diagonal_ -----------------------------------------------------------


@method
def resize_(self, *sizes, memory_format=None):
    """PyTorch's storage semantics: the first elements of the storage from the tensor's
    offset keep their values; a storage too small is replaced by a larger one."""
    _refuse_inference_write(self)
    if self._requires_grad and not is_inference_mode_enabled():  # no autograd check there
        raise RuntimeError('cannot resize variables that require grad')
    shape = _shape_arg(sizes)
    if any(n < 0 for n in shape):
        raise RuntimeError(f'Trying to create tensor with negative dimension '
                           f'{min(shape)}: {list(shape)}')
    flat, offset, _ = _storage(self._data)
    numel = math.prod(shape)
    if offset + numel <= flat.size:
        self._data = flat[offset:offset + numel].reshape(shape)
        if self._base is not None:          # still a view of its base, now this one
            _replay_as_strided_from_base(self, shape, _contiguous_strides(shape), offset)
    else:
        # A new, larger storage: the old values first (the rest is uninitialised in PyTorch;
        # zeros here). Other tensors on the old storage no longer share memory with this one.
        data = xp.zeros(numel, self._data.dtype)
        kept = flat[offset:]
        data[:kept.size] = kept
        self._data = data.reshape(shape)
        self._base = self._view_fn = None
    bump_version(self, 'resize_')
    return self


@method
def resize_as_(input, the_template, memory_format=None):
    if input._data.__class__ is COO:
        from .sparse import resize_as_sparse_
        if the_template._data.__class__ is not COO:
            raise SparseRefused('resize_')
        return resize_as_sparse_(input, the_template)
    return resize_(input, the_template._data.shape)


class Resize(View):
    node_name = 'ResizeBackward'


@method
def resize(self, *sizes):
    warnings.warn('non-inplace resize is deprecated', UserWarning, stacklevel=2)
    shape = _shape_arg(sizes)
    numel = self._data.size
    if math.prod(shape) != numel:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} "
                           f'({math.prod(shape)} elements in total), but the given tensor has a '
                           f"size of {'x'.join(map(str, self._data.shape))} ({numel} elements). "
                           "autograd's resize can only change the shape of a given tensor, "
                           'while preserving the number of elements.')
    source = self if self._data.flags.c_contiguous else self.contiguous()
    return Resize.apply(source, shape=shape)


@method
def resize_as(self, tensor):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # resize's own deprecation: this one is named
        out = resize(self, tensor._data.shape)
    warnings.warn('non-inplace resize_as is deprecated', UserWarning, stacklevel=2)
    return out


@method
def storage_offset(self):
    """Where this tensor starts in its storage, in elements."""
    return _storage(self._data)[1]


@method
def is_set_to(self, tensor):
    """Whether both tensors are the same memory: storage, offset, sizes and strides."""
    a, b = self._data, tensor._data
    if a.shape != b.shape or a.dtype != b.dtype or a.strides != b.strides:
        return False
    sa, oa, _ = _storage(a)
    sb, ob, _ = _storage(b)
    return oa == ob and _address(sa) == _address(sb)


class _SetNotDifferentiable(Op):
    node_name = 'NotImplemented'

    def forward(self, x):
        return x

    def backward(self, g):
        raise RuntimeError('derivative for aten::set_ is not implemented')


@method
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Point this tensor at ``source``'s memory, optionally as the view (size, stride,
    storage_offset) of it. ``source`` is a tensor or a storage (``t.untyped_storage()``,
    ``t.storage()``); an untyped storage's bytes are read as this tensor's dtype."""
    memory = None
    if source is not None and not _is_tensor(source):
        # a storage (dynagrad.storage sits above ops, so it is known by its method)
        elements = getattr(source, '_elements', None)
        if elements is None:
            raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                            f'{type(source).__name__}')
        if size is None and storage_offset:
            raise TypeError('set_(): with a storage, pass size (and optionally stride) '
                            'along with storage_offset')
        memory = elements(self.dtype)
    _refuse_inference_write(self)
    if _grad_state.grad_enabled and self._requires_grad and self._grad_fn is None:
        raise RuntimeError('a leaf Variable that requires grad is being used in an in-place '
                           'operation.')
    if source is None:
        data = xp.empty((0,), self._data.dtype)
    elif memory is not None:
        if size is None:
            data = memory
        else:
            size = tuple(int(s) for s in size)
            stride = _contiguous_strides(size) if stride is None else tuple(int(s) for s in
                                                                            stride)
            size, stride, offset = _as_strided_args(None, size, stride, storage_offset,
                                                    'set_', memory)
            data = _strided(memory, size, stride, offset)
    else:
        if source._data.dtype != self._data.dtype:
            from .clamping import _torch_dtype_name
            raise RuntimeError(f'Could not set tensor of type '
                               f'{_torch_dtype_name(source._data.dtype)} to a tensor of type '
                               f'{_torch_dtype_name(self._data.dtype)}')
        if size is None:
            data = source._data
        else:
            size = tuple(int(s) for s in size)
            stride = _contiguous_strides(size) if stride is None else tuple(int(s) for s in
                                                                            stride)
            size, stride, offset = _as_strided_args(source, size, stride, storage_offset,
                                                    'set_')
            data = _strided(_storage(source._data)[0], size, stride, offset)
    self._data = data
    self._base = self._view_fn = None
    if self._requires_grad and _grad_state.grad_enabled:
        alias = _SetNotDifferentiable.apply(self)
        self._grad_fn, self._output_nr = alias._grad_fn, 0
    bump_version(self, 'set_')
    return self


@method
def fill_diagonal_(self, fill_value, wrap=False):
    nd = self.ndim
    if nd < 2:
        raise RuntimeError('dimensions must larger than 1')
    shp = self._data.shape
    if nd > 2 and any(n != shp[0] for n in shp):
        raise RuntimeError('all dimensions of input must be of equal length')
    diag = diagonal(self, 0, 0, 1)
    while diag.ndim > 1:
        diag = diagonal(diag, 0, 0, -1)
    diag.fill_(fill_value)
    h, w = shp[0], shp[1]
    if wrap and nd == 2 and h > w + 1:
        # PyTorch's wrap: after each w rows of diagonal, one row is skipped and it starts over
        for start in range(w + 1, h, w + 1):
            diagonal(self[start:], 0, 0, 1).fill_(fill_value)
    return self


__all__ = ['as_strided', 'as_strided_', 'diagonal_scatter', 'select_scatter', 'slice_scatter',
           'as_strided_scatter', 'alias_copy', 'as_strided_copy', 'detach_copy',
           'diagonal_copy', 'expand_copy', 'narrow_copy', 'permute_copy', 'select_copy',
           'slice_copy', 'split_copy', 'split_with_sizes_copy', 'squeeze_copy', 't_copy',
           'transpose_copy', 'unbind_copy', 'unfold_copy', 'unsqueeze_copy', 'view_copy',
           'resize_as_']
