"""Default collation: a list of samples -> one batch, as ``torch.utils.data.default_collate``.

Per element type of the samples: tensors are stacked; NumPy arrays become tensors and are
stacked (string and object arrays raise); NumPy scalars, Python ints (int64 - or bool for
bools) and floats (float64) become a 1-d tensor; strings and bytes stay a list; dicts and
other mappings are collated key by key; named tuples field by field; tuples become a list
of collated fields and lists a list (other sequences keep their type when they can).
"""
import collections.abc
import copy

import numpy as np

from ... import _dtype
from ...multiprocessing import reductions
from ...tensor import Tensor, wrap
from ._utils.worker import get_worker_info

__all__ = ['default_collate', 'default_convert']

_ERR = ('default_collate: batch must contain tensors, numpy arrays, numbers, dicts or '
        'lists; found {}')


def _ops():
    from ... import ops
    return ops


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, '_fields')


def _numeric_array(a):
    return a.dtype.kind not in 'SaUOV'


def _stack_in_shared_memory(batch):
    """In a DataLoader worker, a large batch is stacked straight into shared memory, which
    the main process then maps: the batch's bytes are written once and never copied again.
    None where that does not apply (small, mixed, or recording autograd history)."""
    first = batch[0]._data
    if (not isinstance(first, np.ndarray)
            or first.nbytes * len(batch) < reductions.SHARE_THRESHOLD):
        return None
    for t in batch:
        if not isinstance(t, Tensor) or t._requires_grad:
            return None
        a = t._data
        if not isinstance(a, np.ndarray) or a.dtype != first.dtype or a.shape != first.shape:
            return None
    out = reductions.new_shared_array((len(batch),) + first.shape, first.dtype)
    np.stack([t._data for t in batch], out=out)
    return wrap(out)


def default_collate(batch):
    """Collate a list of samples into a batch (see the module docstring)."""
    elem = batch[0]
    ops = _ops()
    if isinstance(elem, Tensor):
        if get_worker_info() is not None:
            shared = _stack_in_shared_memory(batch)
            if shared is not None:
                return shared
        return ops.stack(batch, 0)
    if isinstance(elem, np.ndarray) and type(elem).__name__ in ('ndarray', 'memmap'):
        if not _numeric_array(elem):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([ops.as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return ops.as_tensor(np.array(batch))
    if isinstance(elem, np.generic) and type(elem).__name__ not in ('str_', 'bytes_'):
        raise TypeError(_ERR.format(type(elem)))
    if isinstance(elem, float):
        return ops.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return ops.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            out = copy.copy(elem)
            out.update(collated)
            return out
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError('each element in list of batch should be of equal size')
        fields = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        if isinstance(elem, collections.abc.MutableSequence):
            out = copy.copy(elem)
            for i, f in enumerate(fields):
                out[i] = f
            return out
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Convert one sample without batching (``batch_size=None``): NumPy arrays and scalars
    become tensors, containers are converted element by element, the rest is unchanged."""
    ops = _ops()
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and type(data).__name__ in ('ndarray', 'memmap'):
        return ops.as_tensor(data) if _numeric_array(data) else data
    if isinstance(data, (np.bool_, np.number)):
        return ops.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        if isinstance(data, collections.abc.MutableMapping):
            out = copy.copy(data)
            out.update(converted)
            return out
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        if isinstance(data, collections.abc.MutableSequence):
            out = copy.copy(data)
            for i, c in enumerate(converted):
                out[i] = c
            return out
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data
