"""SequenceWrapper: a sequence as the start of a map-style DataPipe chain."""
import copy
import warnings

from ..datapipe import MapDataPipe

__all__ = ['SequenceWrapperMapDataPipe']


class SequenceWrapperMapDataPipe(MapDataPipe):
    """``dp[i]`` is ``sequence[i]`` (of a deep copy taken once, with ``deepcopy=True``)."""

    def __init__(self, sequence, deepcopy=True):
        if deepcopy:
            try:
                sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn('The input sequence can not be deepcopied, please be aware of '
                              'in-place modification would affect source data')
        self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)
