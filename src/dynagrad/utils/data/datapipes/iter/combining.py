"""Concater (``concat``), Zipper (``zip``), Multiplexer (``mux``)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import no_length

__all__ = ['ConcaterIterDataPipe', 'ZipperIterDataPipe', 'MultiplexerIterDataPipe']


def _check_pipes(name, datapipes):
    if not datapipes:
        raise ValueError('Expected at least one DataPipe, but got nothing')
    if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
        raise TypeError(f'Expected all inputs to be `IterDataPipe` ({name})')
    return datapipes


def _lengths(dp, datapipes):
    if all(hasattr(d, '__len__') for d in datapipes):
        return [len(d) for d in datapipes]
    raise no_length(dp)


@functional_datapipe('concat')
class ConcaterIterDataPipe(IterDataPipe):
    """The items of each DataPipe, one DataPipe after the other."""

    def __init__(self, *datapipes):
        self.datapipes = _check_pipes('concat', datapipes)

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return sum(_lengths(self, self.datapipes))


@functional_datapipe('zip')
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of one item from each DataPipe, until the shortest ends."""

    def __init__(self, *datapipes):
        self.datapipes = _check_pipes('zip', datapipes)

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        return min(_lengths(self, self.datapipes))


@functional_datapipe('mux')
class MultiplexerIterDataPipe(IterDataPipe):
    """One item from each DataPipe in turn, in whole rounds, until the shortest ends."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            round_ = []
            for it in iterators:
                try:
                    round_.append(next(it))
                except StopIteration:
                    return
            yield from round_

    def __len__(self):
        return min(_lengths(self, self.datapipes)) * len(self.datapipes)
