"""Batcher (``batch``) and UnBatcher (``unbatch``)."""
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe
from .utils import no_length

__all__ = ['BatcherIterDataPipe', 'UnBatcherIterDataPipe']


@functional_datapipe('batch')
class BatcherIterDataPipe(IterDataPipe):
    """Groups consecutive items into ``wrapper_class`` lists of ``batch_size``; the last,
    shorter one is dropped with ``drop_last=True``."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError('Batch size is required to be larger than 0!')
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        if not hasattr(self.datapipe, '__len__'):
            raise no_length(self)
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe('unbatch')
class UnBatcherIterDataPipe(IterDataPipe):
    """Splits batches back into items: ``unbatch_level`` levels deep (-1: all)."""

    def __init__(self, datapipe, unbatch_level=1):
        if unbatch_level < -1:
            raise ValueError('unbatch_level must be -1 or >= 0')
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, level - 1 if level > 0 else -1)
        elif level == -1:
            yield element
        else:
            raise IndexError(f'unbatch_level {self.unbatch_level} exceeds the depth of the '
                             'DataPipe')
