"""IterableWrapper: any iterable as the start of a DataPipe chain."""
import copy
import warnings

from ..datapipe import IterDataPipe

__all__ = ['IterableWrapperIterDataPipe', 'no_length']


def no_length(dp):
    return TypeError(f"{type(dp).__name__} instance doesn't have valid length")


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yields ``iterable``'s items; with ``deepcopy=True`` each iteration reads a deep copy,
    so that a program changing the iterable between epochs does not change what was read."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn('The input iterable can not be deepcopied, please be aware of '
                              'in-place modification would affect source data.')
        yield from source

    def __len__(self):
        if hasattr(self.iterable, '__len__'):
            return len(self.iterable)
        raise no_length(self)
