"""Concater (``concat``) and Zipper (``zip``) for map-style DataPipes."""
from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ['ConcaterMapDataPipe', 'ZipperMapDataPipe']


def _check_pipes(name, datapipes):
    if not datapipes:
        raise ValueError('Expected at least one DataPipe, but got nothing')
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError(f'Expected all inputs to be `MapDataPipe` ({name})')
    return datapipes


@functional_datapipe('concat')
class ConcaterMapDataPipe(MapDataPipe):
    """The items of each DataPipe, indexed one DataPipe after the other."""

    def __init__(self, *datapipes):
        self.datapipes = _check_pipes('concat', datapipes)

    def __getitem__(self, index):
        offset = index
        for dp in self.datapipes:
            if 0 <= offset < len(dp):
                return dp[offset]
            offset -= len(dp)
        raise IndexError(f'Index {index} is out of range.')

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe('zip')
class ZipperMapDataPipe(MapDataPipe):
    """``dp[i]`` is the tuple of every DataPipe's item ``i``."""

    def __init__(self, *datapipes):
        self.datapipes = _check_pipes('zip', datapipes)

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f'Index {index} is out of range.')
        return tuple(dp[index] for dp in self.datapipes)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)
