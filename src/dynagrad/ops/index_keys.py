"""Indexing keys as ``dynagrad.ops.indexing`` takes them: PyTorch's key items (tensors,
lists, bools, Ellipsis) normalised to NumPy's, the split of an advanced key into a basic
view and an advanced read (``TwoStep``), torch's checks and error texts for keys, and the
name of the node torch records for a basic key."""
import warnings

import numpy as np

from .._device import is_any_array
from ..backend import xp

_ndarray = np.ndarray


def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in items)


def _is_tensor(v):
    return hasattr(v, '_data')


_BAD_INDEX = 'tensors used as indices must be long, int, byte or bool tensors'


def _index_array(a):
    """An index array as torch reads it: integer (int64/int32) or a bool mask (uint8 too)."""
    kind = a.dtype.kind
    if kind == 'b':
        return a
    if a.dtype == np.uint8:
        return a.astype(bool)
    if a.dtype in (np.int64, np.int32):
        return a
    raise IndexError(_BAD_INDEX)


def _treat_as_tuple(seq):
    """torch (like old NumPy) reads a short list holding sequences, slices, tensors, None or
    Ellipsis as a tuple of indices (``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``)."""
    if len(seq) >= 32:
        return False
    return any(_is_tensor(k) or isinstance(k, (list, tuple, slice, _ndarray)) or k is None
               or k is Ellipsis for k in seq)


def _list_array(seq):
    def conv(v):
        if _is_tensor(v):
            return v._data
        if isinstance(v, (list, tuple)):
            return [conv(u) for u in v]
        return v
    a = xp.asarray(conv(seq))
    if a.size == 0 and a.dtype.kind in 'fV':
        a = a.astype(np.int64)
    if a.dtype.kind not in 'biu':
        raise IndexError(_BAD_INDEX)
    return _index_array(a)


def _key_item(k):
    if _is_tensor(k):
        a = k._data
        if a.ndim == 0 and a.dtype.kind in 'iu' and a.dtype != np.uint8:
            if a.dtype not in (np.int64, np.int32):
                raise IndexError(_BAD_INDEX)
            return int(a)          # a 0-d integer tensor selects, as an int does
        return _index_array(a)
    if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
        return k
    if isinstance(k, (int, np.integer)):
        return int(k)
    if isinstance(k, slice):
        step = k.step
        if step is not None:
            step = int(step)
            if step == 0:
                raise ValueError('slice step cannot be zero')
            if step < 0:
                raise ValueError('step must be greater than zero')
        if any(_is_tensor(b) for b in (k.start, k.stop, step)):
            k = slice(*(int(b) if b is not None else None for b in (k.start, k.stop, step)))
        return k
    if isinstance(k, (list, tuple)):
        return _list_array(k)
    if isinstance(k, range):       # a sequence of integers, as a list of them is
        return _list_array(list(k)) if len(k) else xp.zeros(0, np.intp)
    if is_any_array(k):
        return _index_array(k)
    if isinstance(k, float):
        raise IndexError('only integers, slices (`:`), ellipsis (`...`), None and long or byte '
                         'Variables are valid indices (got float)')
    raise TypeError(f'invalid index of type {type(k).__name__}: only integers, slices, '
                    'ellipsis, None, lists and integer or bool tensors index a tensor')


def _normalize_key(key):
    """torch's reading of a key, as a tuple NumPy indexes with the same result."""
    if isinstance(key, list) and _treat_as_tuple(key):
        warnings.warn('Using a non-tuple sequence for multidimensional indexing is deprecated '
                      '(as in PyTorch); use x[tuple(seq)] instead of x[seq].', UserWarning,
                      stacklevel=3)
        key = tuple(key)
    if isinstance(key, tuple):
        return tuple(_key_item(k) for k in key)
    return _key_item(key)


class TwoStep:
    """A key mixing integers with index arrays. torch applies the integers first (as
    selects), then the arrays; NumPy would count the integers among the advanced indices,
    which moves dimensions differently (``x[1, :, [0, 3]]``). So: ``a[basic][adv]``."""
    __slots__ = ('basic', 'adv')

    def __init__(self, key, views=False):
        """``views``: None too goes to the first step (as torch's setitem takes it)."""
        basic, adv = [], []
        for k in key:
            if is_any_array(k):
                basic.extend([slice(None)] * (k.ndim if k.dtype == bool else 1))
                adv.append(k)
            elif isinstance(k, int) and not isinstance(k, bool):
                basic.append(k)
            elif isinstance(k, slice):
                basic.append(k)
                adv.append(slice(None))
            elif k is Ellipsis:
                basic.append(k)
                adv.append(k)
            elif k is None and views:
                basic.append(k)
                adv.append(slice(None))
            else:                       # None, True, False: dims the second step adds
                adv.append(k)
        self.basic, self.adv = tuple(basic), tuple(adv)

    def on_device(self, move):
        """This key with its index arrays passed through ``move`` (the op mechanism copies
        host index arrays to the device of the array being indexed)."""
        out = object.__new__(TwoStep)
        out.basic, out.adv = move(self.basic), move(self.adv)
        return out

    @staticmethod
    def of(key):
        """``key``, or its two-step form when it mixes integers and index arrays."""
        if (isinstance(key, tuple) and any(is_any_array(k) for k in key)
                and any(isinstance(k, int) and not isinstance(k, bool) for k in key)):
            return TwoStep(key)
        return key


def _get(a, key):
    if key.__class__ is TwoStep:
        return a[key.basic][key.adv]
    return a[key]


def _write(out, key, v, add=False):
    """``out[key] = v`` (``+= v`` with ``add``, accumulating repeated indices), in place."""
    if key.__class__ is TwoStep:
        out, key = out[key.basic], key.adv
    if not add:
        out[key] = v
    elif _unique_positions(key):
        out[key] += v
    else:
        xp.add.at(out, key, v)


def _is_trivial_slice(k, size):     # as torch skips it: as written (x[-4:] is a slice)
    return isinstance(k, slice) and k.start in (None, 0) and (
        k.stop is None or k.stop >= size) and k.step in (None, 1)


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
    dim = 0
    for k in items:
        if k is Ellipsis:
            dim += len(shape) - (len(items) - 1)
        elif not _is_trivial_slice(k, shape[dim]):
            return False
        else:
            dim += 1
    return True


def _check_key(x, key):
    """Too many indices and out-of-range integers, as torch reports them."""
    items = key if isinstance(key, tuple) else (key,)
    nd = x._data.ndim
    used = 0
    for k in items:
        if is_any_array(k) and k.dtype == bool:
            used += k.ndim
        elif k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)):
            used += 1
    if used > nd:
        raise IndexError(f'too many indices for tensor of dimension {nd}')
    dim = 0
    for k in items:
        if k is Ellipsis:
            dim = nd - (used - dim)
            continue
        if isinstance(k, int) and not isinstance(k, bool):
            size = x._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f'index {k} is out of bounds for dimension {dim} with size '
                                 f'{size}')
        if is_any_array(k) and k.dtype == bool:
            shape = x._data.shape
            if k.shape != shape[dim:dim + k.ndim]:
                raise IndexError(f'The shape of the mask {list(k.shape)} at index {dim} does '
                                 f'not match the shape of the indexed tensor {list(shape)} at '
                                 f'index {dim}')
            dim += k.ndim
        elif k is not None and not isinstance(k, (bool, np.bool_)):
            dim += 1


def _numpy_index_error(e):
    return IndexError(str(e).replace('for axis', 'for dimension').replace('array', 'tensor'))


def _unique_positions(key):
    """Whether no element is addressed twice (slices, ints and masks only)."""
    items = key if isinstance(key, tuple) else (key,)
    return all(not is_any_array(k) or k.dtype == bool for k in items)
