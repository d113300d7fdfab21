"""Mapper (``map``) for map-style DataPipes."""
from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ['MapperMapDataPipe']


@functional_datapipe('map')
class MapperMapDataPipe(MapDataPipe):
    """``dp[i]`` is ``fn(datapipe[i])``."""

    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)
