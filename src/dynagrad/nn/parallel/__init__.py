"""``dynagrad.nn.parallel``: data parallelism across processes (needs ``dynagrad.distributed``);
``DataParallel`` runs the module as it is (no accelerators to spread over)."""
from ...lazy import lazy_exports

__all__ = ['DistributedDataParallel', 'DataParallel', 'data_parallel']

# loaded on first use: DistributedDataParallel brings in dynagrad.distributed
__getattr__, __dir__ = lazy_exports(__name__, {
    'DistributedDataParallel': 'distributed', 'DataParallel': 'data_parallel',
    'data_parallel': 'data_parallel', 'distributed': 'distributed'})
