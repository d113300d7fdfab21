"""The classes of ``torch.distributed`` that programs name without running a collective:
stores, ``Backend``, ``ProcessGroup``.

dynagrad's processes meet through MPI (``mpirun``), so no rendezvous store is needed:
``HashStore`` and ``PrefixStore`` work (in one process, as PyTorch's do), while
``TCPStore`` and ``FileStore``, which exist to let processes find each other, say so when
constructed. They are here so that ``isinstance`` checks and imports succeed.
"""
import datetime

__all__ = ['Store', 'HashStore', 'PrefixStore', 'FileStore', 'TCPStore', 'Backend',
           'ProcessGroup', 'DistStoreError']


class DistStoreError(RuntimeError):
    """A key that did not arrive in time (PyTorch's ``torch.distributed.DistStoreError``)."""


class Store:
    """A key-value store shared by the processes of a job (the base class)."""

    def __init__(self):
        self.timeout = datetime.timedelta(seconds=300)

    def set_timeout(self, timeout):
        self.timeout = timeout


class HashStore(Store):
    """An in-memory store: values are bytes, ``add`` keeps integer counters."""

    def __init__(self):
        super().__init__()
        self._data = {}

    def set(self, key, value):
        self._data[key] = value.encode() if isinstance(value, str) else bytes(value)

    def get(self, key):
        if key not in self._data:
            # one process: no other can set it while we wait
            raise DistStoreError('Wait timeout')
        return self._data[key]

    def add(self, key, amount):
        value = int(self._data.get(key, b'0')) + amount
        self._data[key] = str(value).encode()
        return value

    def compare_set(self, key, expected, desired):
        expected = expected.encode() if isinstance(expected, str) else bytes(expected)
        current = self._data.get(key)
        if (current is None and expected == b'') or current == expected:
            self.set(key, desired)
        return self._data.get(key, expected)

    def check(self, keys):
        return all(k in self._data for k in keys)

    def wait(self, keys, timeout=None):
        missing = [k for k in keys if k not in self._data]
        if missing:
            raise DistStoreError('Wait timeout')

    def delete_key(self, key):
        return self._data.pop(key, None) is not None

    def num_keys(self):
        return len(self._data)


class PrefixStore(Store):
    """``store`` with every key prefixed by ``prefix + '/'``."""

    def __init__(self, prefix, store):
        super().__init__()
        self.prefix, self.underlying_store = prefix, store

    def _k(self, key):
        return f'{self.prefix}/{key}'

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))


class _RendezvousStore(Store):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f'dynagrad.distributed has no {type(self).__name__}: its processes '
                           'meet through MPI (python -m dynagrad.distributed.run or mpirun), '
                           'so init_process_group needs no store')


class TCPStore(_RendezvousStore):
    pass


class FileStore(_RendezvousStore):
    pass


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
