"""Indexing: ``t[key]`` for reading (basic keys give views) and ``t[key] = v`` for writing."""
import numpy as np

from ..autograd.function import Op
from ._formula import sum_to, is_array


def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in items)


def _array_key(key):
    """Replace tensors inside a key by their arrays (NumPy then does the indexing)."""
    if isinstance(key, tuple):
        return tuple(_array_key(k) for k in key)
    if hasattr(key, '_data'):
        return key._data
    if isinstance(key, list):
        return np.asarray([k._data if hasattr(k, '_data') else k for k in key])
    return key


def _is_trivial_slice(k, size):
    return isinstance(k, slice) and k.indices(size) == (0, size, 1)


def _node_name_for(key, shape):
    """torch's node for a basic key: the last op it applies, items taken in order.

    A lone slice is always applied; inside a tuple, slices spanning the whole dim are
    skipped, and a key applying nothing gives an alias.
    """
    if not isinstance(key, tuple):
        if key is Ellipsis:
            return 'AliasBackward0'
        key = (key,)
        if isinstance(key[0], slice):
            return 'SliceBackward0'
    name = 'AliasBackward0'
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - sum(1 for j in key if j is not None and j is not Ellipsis)
        elif k is None:
            name = 'UnsqueezeBackward0'
        else:
            if not _is_trivial_slice(k, shape[dim]):
                name = 'SliceBackward0' if isinstance(k, slice) else 'SelectBackward0'
            dim += 1
    return name


def _is_alias_key(key, shape):
    """Whether ``x[key] = v`` writes all of ``x`` directly (torch then records no CopySlices)."""
    items = key if isinstance(key, tuple) else (key,)
    if any(k is not Ellipsis and not isinstance(k, slice) for k in items):
        return False
    dims = iter(range(len(shape)))
    for k in items:
        if k is Ellipsis:
            return len(items) == 1
        if not _is_trivial_slice(k, shape[next(dims)]):
            return False
    return True


class BasicIndex(Op):
    """``x[ints, slices, None, ...]``: a view."""
    is_view = True

    def forward(self, x, key):
        self.in_shape = x.shape
        self.key = key
        self._node_name = _node_name_for(key, x.shape)
        # A trailing Ellipsis keeps an all-integer key a 0-d view, not a NumPy scalar copy.
        items = key if isinstance(key, tuple) else (key,)
        return x[items if any(k is Ellipsis for k in items) else items + (Ellipsis,)]

    def backward(self, g):
        return IndexScatter.apply_any(g, self.key, self.in_shape)


class AdvancedIndex(Op):
    """``x[int tensors, bool masks, ...]``: a copy."""
    node_name = 'IndexBackward0'

    def forward(self, x, key):
        self.in_shape = x.shape
        self.key = key
        return x[key]

    def backward(self, g):
        return IndexScatter.apply_any(g, self.key, self.in_shape)


class IndexScatter(Op):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""

    def forward(self, g, key, shape):
        self.key = key
        out = np.zeros(shape, g.dtype)
        if _is_basic(key):
            out[key] = g
        else:
            np.add.at(out, key, g)
        return out

    def backward(self, gg):
        return gg[self.key] if is_array(gg) else getitem(gg, self.key)

    @classmethod
    def apply_any(cls, g, key, shape):
        if is_array(g):
            return Op.__new__(cls).forward(g, key, shape)
        return cls.apply(g, key=key, shape=shape)


class IndexPut(Op):
    """``x[key] = values``, run in place on ``x`` by the in-place mechanism."""
    node_name = 'IndexPutBackward0'

    def forward(self, x, values, key):
        self.key = key
        self.values_shape = getattr(values, 'shape', None)
        out = x.copy()
        out[key] = values
        return out

    def backward(self, g):
        gx = MaskOut.apply_any(g, self.key)
        gv = None
        if self.values_shape is not None and self.needs_input_grad[1]:
            region = g[self.key] if is_array(g) else getitem(g, self.key)
            gv = sum_to(region, self.values_shape)
        return gx, gv


class MaskOut(Op):
    """``g`` with the positions of ``key`` set to zero (linear and its own adjoint)."""

    def forward(self, g, key):
        self.key = key
        out = g.copy()
        out[key] = 0
        return out

    def backward(self, gg):
        return MaskOut.apply_any(gg, self.key)

    @classmethod
    def apply_any(cls, g, key):
        if is_array(g):
            return Op.__new__(cls).forward(g, key)
        return cls.apply(g, key=key)


def _check_key(x, key):
    items = key if isinstance(key, tuple) else (key,)
    nd = x._data.ndim
    used = sum(1 for k in items if k is not None and k is not Ellipsis
               and not (isinstance(k, np.ndarray) and k.dtype == bool))
    used += sum(k.ndim for k in items if isinstance(k, np.ndarray) and k.dtype == bool)
    if used > nd:
        raise IndexError(f'too many indices for tensor of dimension {nd}')
    dim = 0
    for k in items:
        if k is Ellipsis:
            dim = nd - (used - dim)
            continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            size = x._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f'index {k} is out of bounds for dimension {dim} with size '
                                 f'{size}')
        if k is not None:
            dim += 1


def getitem(x, key):
    key = _array_key(key)
    if _is_basic(key):
        _check_key(x, key)
        return BasicIndex.apply(x, key=key)
    return AdvancedIndex.apply(x, key=key)


def setitem(x, key, value):
    """Advanced keys record IndexPut; basic ones write through a view, as torch does
    (copy_ or fill_ on ``x[key]``, so the history of ``x`` becomes CopySlices)."""
    key = _array_key(key)
    is_tensor = hasattr(value, '_data')
    if not _is_basic(key) or not (is_tensor or isinstance(value, (int, float, np.number))):
        IndexPut.apply_(x, value, key=key)
        return
    _check_key(x, key)
    target = x if _is_alias_key(key, x._data.shape) else BasicIndex.apply(x, key=key)
    if is_tensor:
        target.copy_(value)
    else:
        target.fill_(value)


def nonzero(input, *, as_tuple=False):
    from ..tensor import Tensor
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64), False, None, 0, None, Tensor) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64), False, None, 0, None, Tensor)


__all__ = ['nonzero']
METHODS = {name: globals()[name] for name in __all__}
