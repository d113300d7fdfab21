"""Shuffler (``shuffle``): a map-style DataPipe read in a random order, as an iterable."""
import random

from ..datapipe import IterDataPipe, MapDataPipe
from ..iter.combinatorics import draw_seed

__all__ = ['ShufflerIterDataPipe']


class ShufflerIterDataPipe(IterDataPipe):
    """Yields ``datapipe[i]`` for a new random order of ``indices`` (all of them by
    default) each iteration, from ``set_seed``'s seed or dynagrad's default generator."""

    def __init__(self, datapipe, *, indices=None):
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._shuffle_enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._shuffle_enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def reset(self):
        self._rng.seed(draw_seed() if self._seed is None else self._seed)
        self._seed = None

    def __iter__(self):
        order = list(self.indices)
        if self._shuffle_enabled:
            self.reset()
            self._rng.shuffle(order)
        for i in order:
            yield self.datapipe[i]

    def __len__(self):
        return len(self.indices)


MapDataPipe.register_datapipe_as_function('shuffle', ShufflerIterDataPipe)
