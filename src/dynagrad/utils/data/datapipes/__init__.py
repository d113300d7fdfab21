"""``torch.utils.data.datapipes``: DataPipes and their steps (``iter``, ``map``)."""
from . import datapipe, iter, map  # noqa: A004 (torch's module names)
from ._decorator import functional_datapipe
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe

__all__ = ['iter', 'map', 'datapipe', 'functional_datapipe', 'DataChunk', 'IterDataPipe',
           'MapDataPipe', 'DFIterDataPipe']
