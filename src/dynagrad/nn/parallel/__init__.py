"""``dynagrad.nn.parallel``: data parallelism across processes (needs ``dynagrad.distributed``);
``DataParallel`` runs the module as it is (no accelerators to spread over)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from ...lazy import lazy_exports

__all__ = ['DistributedDataParallel', 'DataParallel', 'data_parallel']

# loaded on first use: DistributedDataParallel brings in dynagrad.distributed
__getattr__, __dir__ = lazy_exports(__name__, {'DistributedDataParallel': 'distributed'})
