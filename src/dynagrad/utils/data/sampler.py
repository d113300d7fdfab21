"""Samplers: iterables of dataset indices (or, for ``BatchSampler``, of lists of them)."""
from typing import Generic

import numpy as np

from ...tensor import Tensor
from .dataset import T_co

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'SubsetRandomSampler',
           'WeightedRandomSampler', 'BatchSampler']


def _random():
    from ...ops import random
    return random


def _draw_seed(generator=None):
    """A fresh int64 seed from ``generator`` (the default generator when None), drawn as
    PyTorch draws it (``empty((), dtype=int64).random_()``), so that a seeded program
    shuffles its data in PyTorch's order."""
    from ... import _dtype
    from ...ops.creation import empty
    return int(empty((), dtype=_dtype.int64).random_(generator=generator).item())


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` over indices, and ``__len__`` if known."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a permutation (repeated to reach ``num_samples``), or, with
    ``replacement=True``, ``num_samples`` independent uniform draws.

    Without ``generator`` each pass seeds a fresh generator from dynagrad's default one,
    so ``dynagrad.manual_seed`` fixes the sequence of epochs.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f'replacement should be a boolean value, but got '
                            f'replacement={replacement}')
        if not _is_int(self.num_samples) or self.num_samples <= 0:
            raise ValueError(f'num_samples should be a positive integer value, but got '
                             f'num_samples={self.num_samples}')

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        rnd = _random()
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = rnd.Generator().manual_seed(_draw_seed())
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from rnd.randint(n, (32,), generator=generator).tolist()
            yield from rnd.randint(n, (self.num_samples % 32,),
                                   generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rnd.randperm(n, generator=generator).tolist()
            yield from rnd.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new one each pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random().randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in [0, len(weights)), index i with probability proportional
    to ``weights[i]`` (with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_int(num_samples) or num_samples <= 0:
            raise ValueError(f'num_samples should be a positive integer value, but got '
                             f'num_samples={num_samples}')
        if not isinstance(replacement, bool):
            raise ValueError(f'replacement should be a boolean value, but got '
                             f'replacement={replacement}')
        from ...ops.creation import as_tensor
        from ... import _dtype
        w = weights.detach() if isinstance(weights, Tensor) else weights
        w = as_tensor(w, dtype=_dtype.float64)
        if w.dim() != 1:
            raise ValueError(f'weights should be a 1d sequence but given weights have shape '
                             f'{tuple(w.shape)}')
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _random().multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last may be
    shorter unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(f'batch_size should be a positive integer value, but got '
                             f'batch_size={batch_size}')
        if not isinstance(drop_last, bool):
            raise ValueError(f'drop_last should be a boolean value, but got '
                             f'drop_last={drop_last}')
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
