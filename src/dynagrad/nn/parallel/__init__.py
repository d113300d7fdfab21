"""``dynagrad.nn.parallel``: data parallelism across processes (needs ``dynagrad.distributed``);
``DataParallel`` runs the module as it is (no accelerators to spread over)."""
from .distributed import DistributedDataParallel
from .data_parallel import DataParallel, data_parallel

__all__ = ['DistributedDataParallel', 'DataParallel', 'data_parallel']
