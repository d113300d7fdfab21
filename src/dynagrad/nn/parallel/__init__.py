"""``dynagrad.nn.parallel``: data parallelism across processes (needs ``dynagrad.distributed``)."""
from .distributed import DistributedDataParallel

__all__ = ['DistributedDataParallel']
