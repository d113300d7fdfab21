"""Packed sequences for the recurrent layers: PyTorch's ``nn.utils.rnn``.

A ``PackedSequence`` holds a batch of sequences of different lengths time-major without
padding: ``data`` has the rows of step 0 for every sequence, then those of step 1 for the
sequences that are that long, and so on; ``batch_sizes[t]`` is how many rows step ``t`` has
(non-increasing, the sequences sorted longest first; ``sorted_indices`` says how the
original batch was reordered, ``unsorted_indices`` undoes it). Packing and unpacking are
single differentiable gathers.
"""
from collections import namedtuple

import numpy as np

from ... import _dtype, ops
from ...backend import xp
from ...tensor import Tensor, wrap

__all__ = [
    'PackedSequence',
    'invert_permutation',
    'pack_padded_sequence',
    'pack_sequence',
    'pad_packed_sequence',
    'pad_sequence',
    'unpack_sequence',
    'unpad_sequence',
]


def _long(a):
    return wrap(xp.asarray(a, dtype=np.int64))


def invert_permutation(permutation):
    if permutation is None:
        return None
    p = permutation._data
    inv = xp.empty_like(p)
    inv[p] = xp.arange(p.size, dtype=p.dtype)
    return _long(inv)


_PackedSequenceBase = namedtuple('PackedSequence_',
                                 ['data', 'batch_sizes', 'sorted_indices', 'unsorted_indices'])


class PackedSequence(_PackedSequenceBase):
    """Sequences of different lengths, packed time-major (see the module docstring)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        # PackedSequence(data_and_batch_sizes_tuple) form
        data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self, *args, **kwargs):
        return self

    def cuda(self, *args, **kwargs):
        return self._with_data(self.data.cuda(*args, **kwargs))

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f'{lengths.dim()}D cpu {lengths.type()[:-6].split(".")[-1]} '
                               'tensor')
        return lengths._data.astype(np.int64)
    return xp.asarray([int(n) for n in lengths], dtype=np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) given each length."""
    L = _lengths_array(lengths)
    if enforce_sorted:
        if xp.any(L[:-1] < L[1:]):
            raise RuntimeError(
                '`lengths` array must be sorted in decreasing order when `enforce_sorted` is '
                'True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or '
                'pack_sequence to sidestep this requirement if you do not need ONNX '
                'exportability.')
        sorted_indices = None
    else:
        order = xp.argsort(-L, kind='stable')
        L = L[order]
        sorted_indices = _long(order)
        input = ops.index_select(input, 0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if L.size != B:
        raise RuntimeError(f'Expected `len(lengths)` to be equal to batch_size, but got '
                           f'{L.size} (batch_size={B})')
    if L.size == 0 or L.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if L.max() > T:
        raise RuntimeError(f'pack_padded_sequence: a length ({int(L.max())}) exceeds the '
                           f'padded sequence length ({T})')
    steps = int(L.max())
    mask = xp.arange(steps)[:, None] < L[None, :]          # (steps, B): which rows exist
    batch_sizes = mask.sum(1)
    rows = xp.flatnonzero(mask.ravel())                     # time-major order
    flat = input.reshape((T * B,) + tuple(input.shape[2:]))
    if rows.size == T * B:
        data = flat
    else:
        data = ops.index_select(flat, 0, _long(rows))
    return PackedSequence(data, _long(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: (padded (T, B, *), lengths) in the original batch order."""
    data, batch_sizes_t, _, unsorted_indices = sequence
    bs = batch_sizes_t._data.astype(np.int64)
    steps, B = bs.size, int(bs[0])
    if total_length is not None and total_length < steps:
        raise ValueError('Expected total_length to be at least the length of the longest '
                         f'sequence in input, but got total_length={total_length} and max '
                         f'sequence length being {steps}')
    T = steps if total_length is None else int(total_length)
    mask = xp.zeros((T, B), dtype=bool)
    mask[:steps] = xp.arange(B)[None, :] < bs[:, None]
    N = data.shape[0]
    idx = xp.full(T * B, N, dtype=np.int64)
    idx[mask.ravel()] = xp.arange(N)
    rest = tuple(data.shape[1:])
    if idx.size == N and N:
        padded = data
    else:
        pad = ops.full((1,) + rest, padding_value, dtype=data.dtype)
        padded = ops.index_select(ops.cat([data, pad], 0), 0, _long(idx))
    padded = padded.reshape((T, B) + rest)
    lengths = mask.sum(0)
    if unsorted_indices is not None:
        padded = ops.index_select(padded, 1, unsorted_indices)
        lengths = lengths[unsorted_indices._data]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _long(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right'):
    """Stack tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding them."""
    if padding_side not in ('left', 'right'):
        raise RuntimeError('Expected padding_side to be one of left or right, but got '
                           f'{padding_side}.')
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError('received an empty list of sequences')
    T = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        n = s.shape[0]
        if n < T:
            pad = ops.full((T - n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = ops.cat([s, pad] if padding_side == 'right' else [pad, s], 0)
        padded.append(s)
    return ops.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    L = _lengths_array(lengths)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(L)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shape (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
