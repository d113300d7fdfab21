"""Datasets, samplers and the DataLoader, with ``torch.utils.data``'s API.

Loading runs in the main process (``num_workers=0``) or in worker processes, which send
their batches through shared memory (see ``DataLoader``). Shuffling and random splits
draw from a ``dynagrad.Generator`` (``generator=``) or dynagrad's default generator, so
``dynagrad.manual_seed`` makes epochs repeat; the orders differ from PyTorch's (another
bit generator), by design.
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                      ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler
from .datapipes import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe, functional_datapipe
from . import graph, graph_settings  # noqa: F401  (torch.utils.data's submodules)
from ._utils import collate as _collate  # noqa: F401  (torch.utils.data._utils.collate's place)

__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'StackDataset', 'ConcatDataset',
           'ChainDataset', 'Subset', 'random_split', 'Sampler', 'SequentialSampler',
           'RandomSampler', 'SubsetRandomSampler', 'WeightedRandomSampler', 'BatchSampler',
           'default_collate', 'default_convert', 'DataLoader', 'get_worker_info',
           'DistributedSampler', 'IterDataPipe', 'MapDataPipe', 'DataChunk',
           'DFIterDataPipe', 'functional_datapipe']
