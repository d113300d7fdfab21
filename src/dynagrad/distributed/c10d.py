"""The classes of ``torch.distributed`` that programs name without running a collective:
stores, their errors, ``Backend``, ``ProcessGroup``.

dynagrad's collectives meet through MPI (``mpirun``), so ``init_process_group`` needs no
store; the stores (stores.py, tcp_store.py) serve programs that share state through them.
"""
from .stores import (DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore,
                     HashStore, PrefixStore, QueueEmptyError, Store)
from .tcp_store import TCPStore

__all__ = ['Store', 'HashStore', 'PrefixStore', 'FileStore', 'TCPStore', 'Backend',
           'ProcessGroup', 'DistError', 'DistStoreError', 'DistNetworkError',
           'DistBackendError', 'QueueEmptyError']


class Backend(str):
    """A backend's name, lower-cased (``Backend('GLOO') == 'gloo'``)."""
    UNDEFINED = 'undefined'
    GLOO = 'gloo'
    NCCL = 'nccl'
    XCCL = 'xccl'
    UCC = 'ucc'
    MPI = 'mpi'
    FAKE = 'fake'
    backend_list = ['undefined', 'gloo', 'nccl', 'xccl', 'ucc', 'mpi', 'fake']

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f'Backend constructor parameter must be string-ish, but got: '
                             f'{type(name)}')
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """A group of ranks (``group.WORLD`` is one: dynagrad has no other)."""

    def rank(self):
        from .process_group import get_rank
        return get_rank(self)

    def size(self):
        from .process_group import get_world_size
        return get_world_size(self)

    def name(self):
        return 'WORLD'
