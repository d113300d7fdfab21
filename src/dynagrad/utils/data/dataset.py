"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable-style (``__iter__``)."""
import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

from ...tensor import Tensor

__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'StackDataset', 'ConcatDataset',
           'ChainDataset', 'Subset', 'random_split']

# Generic as torch's classes are, so annotations such as Dataset[int] or DataLoader[Any]
# (kornia's) evaluate
T_co = TypeVar('T_co', covariant=True)
T = TypeVar('T')


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    A subclass may also define ``__getitems__(indices)`` returning a list of samples; the
    DataLoader then fetches a whole batch with one call.
    """

    def __getitem__(self, index):
        raise NotImplementedError('Subclasses of Dataset should implement __getitem__.')

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream of samples: subclasses define ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError('Subclasses of IterableDataset should implement __iter__.')

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are ``tuple(t[i] for t in tensors)``; every tensor has the same first size."""

    def __init__(self, *tensors):
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f'TensorDataset expects tensors, got {type(t).__name__}')
        if tensors and any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError('Size mismatch between tensors')
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset[T_co]):
    """Zips datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {'x': a[i], 'y': b[i]}``."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError('Supported either ``tuple``- (via ``args``) or``dict``- (via '
                             '``kwargs``) like input/output, but both types are given.')
        if not args and not kwargs:
            raise ValueError('At least one dataset should be passed')
        parts = args or list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError('Size mismatch between datasets')
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        return [self[i] for i in indices]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets."""

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError('datasets should not be an empty iterable')
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError('ConcatDataset does not support IterableDataset')
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError('absolute value of index should not exceed dataset length')
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which >= len(self.datasets):
            raise IndexError(f'index {idx} is out of range for a ConcatDataset of length '
                             f'{len(self)}')
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset[T_co]):
    """Iterable datasets one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, '__getitems__', None)
        if callable(getitems):
            return getitems(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1: each
    split gets ``floor(n * fraction)`` items and the remainder goes one by one, round
    robin, to the splits from the first. ``generator`` defaults to dynagrad's default
    generator.
    """
    from ...ops.random import randperm, default_generator
    if generator is None:
        generator = default_generator
    lengths = list(lengths)
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f'Fraction at index {i} is not between 0 and 1')
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f'Length of split at index {i} is 0. This might result in an '
                              f'empty dataset.', stacklevel=2)
    if sum(lengths) != n:
        raise ValueError('Sum of input lengths does not equal the length of the input '
                         'dataset!')
    indices = randperm(sum(lengths), generator=generator).tolist()
    out = []
    for end, length in zip(itertools.accumulate(lengths), lengths):
        out.append(Subset(dataset, indices[end - length:end]))
    return out
