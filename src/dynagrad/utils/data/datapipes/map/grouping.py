"""Batcher (``batch``) for map-style DataPipes."""
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, MapDataPipe

__all__ = ['BatcherMapDataPipe']


@functional_datapipe('batch')
class BatcherMapDataPipe(MapDataPipe):
    """``dp[i]`` is the ``i``-th batch of ``batch_size`` consecutive items."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError('Batch size is required to be larger than 0!')
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f'Index {index} is out of bound.')
        start = index * self.batch_size
        stop = min(start + self.batch_size, len(self.datapipe))
        return self.wrapper_class([self.datapipe[i] for i in range(start, stop)])

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
