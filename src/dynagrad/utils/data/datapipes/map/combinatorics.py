"""Shuffler (``shuffle``): a map-style DataPipe read in a random order, as an iterable."""
from ..datapipe import IterDataPipe, MapDataPipe
from ..iter.combinatorics import SeededShuffle

__all__ = ['ShufflerIterDataPipe']


class ShufflerIterDataPipe(SeededShuffle, IterDataPipe):
    """Yields ``datapipe[i]`` for a new random order of ``indices`` (all of them by
    default) each iteration, from ``set_seed``'s seed or dynagrad's default generator."""

    def __init__(self, datapipe, *, indices=None):
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._start_shuffling()

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
