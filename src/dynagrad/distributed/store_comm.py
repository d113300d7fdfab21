"""A communicator over a key-value store: what ``init_process_group('gloo', store=...)``
(or ``init_method='env://' | 'tcp://...' | 'file://...'``) runs on, where no MPI job exists:
processes started by ``torch.multiprocessing.spawn``, ``torchrun``-style environments, tests.

It offers the part of mpi4py's ``Comm`` that the collectives and point-to-point modules
call, so those modules run unchanged on either. Every collective is an exchange through the
store: each rank sets its bytes under the collective's sequence number, reads the others',
and the last reader deletes them. That is slow beside MPI (every byte passes through the
store's server) but needs nothing beyond the standard library: it is for small jobs and for
programs that must run as they do on PyTorch's gloo backend.

Operations finish before their non-blocking forms return (receives run when waited on), so
``async_op=True`` hands back a ``Work`` that is already complete.
"""
import functools
import pickle
import time

import numpy as np

from ..backend import xp

__all__ = ['StoreComm', 'StoreMPI']


class _InPlace:
    def __repr__(self):
        return 'IN_PLACE'


class _Done:
    """A request that completed when it was made."""

    def run(self):
        pass


class _Deferred:
    """A receive: it runs when the program waits on it, when the message may be there."""

    def __init__(self, fn):
        self.fn = fn

    def run(self):
        if self.fn is not None:
            fn, self.fn = self.fn, None
            fn()


class _Request:
    @staticmethod
    def Waitall(requests):
        for r in requests:
            r.run()

    @staticmethod
    def Testall(requests):
        _Request.Waitall(requests)
        return True


class StoreMPI:
    """The names of mpi4py's ``MPI`` module the collectives use, for a store communicator."""
    IN_PLACE = _InPlace()
    ANY_SOURCE = -1
    SUM = functools.partial(np.sum, axis=0)
    PROD = functools.partial(np.prod, axis=0)
    MIN = functools.partial(np.min, axis=0)
    MAX = functools.partial(np.max, axis=0)
    BAND = functools.partial(np.bitwise_and.reduce, axis=0)
    BOR = functools.partial(np.bitwise_or.reduce, axis=0)
    BXOR = functools.partial(np.bitwise_xor.reduce, axis=0)
    Request = _Request


def _nonblocking(blocking):
    """``Ixxx``: run ``Xxx`` now and return a completed request."""
    def start(self, *args, **kwargs):
        blocking(self, *args, **kwargs)
        return _Done()
    return start


class StoreComm:
    """Ranks ``0..size-1`` meeting through ``store`` (a PrefixStore of their own)."""

    POLL = 0.002

    def __init__(self, store, rank, size, name='world'):
        from .stores import PrefixStore
        self.store = PrefixStore(f'dynagrad/{name}', store)
        self.rank, self.size, self.name = rank, size, name
        self.seq = 0
        self.sent, self.received = {}, {}
        self.dups = 0

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.size

    def Dup(self):
        self.dups += 1
        return StoreComm(self.store.underlying_store, self.rank, self.size,
                         f'{self.name}.{self.dups}')

    def Free(self):
        pass

    # every collective: each rank's bytes, all ranks' in rank order
    def _exchange(self, payload, senders=None):
        self.seq += 1
        keys = [f'c{self.seq}/{r}' for r in range(self.size)]
        if senders is None or self.rank in senders:
            self.store.set(keys[self.rank], payload)
        wanted = keys if senders is None else [keys[r] for r in senders]
        got = dict(zip(wanted, self.store.multi_get(wanted)))
        if self.store.add(f'c{self.seq}/read', 1) == self.size:
            for k in wanted + [f'c{self.seq}/read']:
                self.store.delete_key(k)
        return [got.get(k) for k in keys]

    @staticmethod
    def _arrays(blobs, dtype):
        return [None if b is None else np.frombuffer(b, dtype) for b in blobs]

    @staticmethod
    def _bytes(a):
        return xp.ascontiguousarray(a).tobytes()

    def Barrier(self):
        self._exchange(b'')

    def Allreduce(self, send, recv, op):
        data = recv if send is StoreMPI.IN_PLACE else send
        parts = self._arrays(self._exchange(self._bytes(data)), data.dtype)
        recv[...] = op(np.stack(parts)).reshape(recv.shape)

    def Bcast(self, buf, root=0):
        blob = self._exchange(self._bytes(buf), senders=[root])[root]
        buf[...] = np.frombuffer(blob, buf.dtype).reshape(buf.shape)

    def Reduce(self, send, recv, op, root=0):
        data = recv if send is StoreMPI.IN_PLACE else send
        parts = self._arrays(self._exchange(self._bytes(data)), data.dtype)
        if self.rank == root:
            recv[...] = op(np.stack(parts)).reshape(recv.shape)

    def Allgather(self, send, recv):
        parts = self._arrays(self._exchange(self._bytes(send)), send.dtype)
        recv.reshape(self.size, -1)[...] = np.stack(parts).astype(recv.dtype, copy=False)

    def Allgatherv(self, send, spec):
        recv, (counts, displs) = spec
        parts = self._arrays(self._exchange(self._bytes(send)), send.dtype)
        for p, c, d in zip(parts, counts, displs):
            recv[d:d + c] = p

    def Reduce_scatter(self, send, recv, counts, op):
        parts = self._arrays(self._exchange(self._bytes(send)), send.dtype)
        start = sum(counts[:self.rank])
        recv[...] = op(np.stack(parts))[start:start + counts[self.rank]]

    def Scatterv(self, send, recv, root=0):
        blob = self._bytes(send[0]) if self.rank == root else b''
        whole = np.frombuffer(self._exchange(blob, senders=[root])[root], recv.dtype)
        counts, displs = self._exchange_object((send[1] if self.rank == root else None), root)
        d, c = displs[self.rank], counts[self.rank]
        recv.reshape(-1)[...] = whole[d:d + c]

    def Gatherv(self, send, spec, root=0):
        parts = self._arrays(self._exchange(self._bytes(send)), send.dtype)
        if self.rank == root:
            recv, (counts, displs) = spec
            for p, c, d in zip(parts, counts, displs):
                recv[d:d + c] = p

    Ibarrier = _nonblocking(Barrier)
    Iallreduce = _nonblocking(Allreduce)
    Ibcast = _nonblocking(Bcast)
    Ireduce = _nonblocking(Reduce)
    Iallgather = _nonblocking(Allgather)
    Iallgatherv = _nonblocking(Allgatherv)
    Ireduce_scatter = _nonblocking(Reduce_scatter)
    Iscatterv = _nonblocking(Scatterv)
    Igatherv = _nonblocking(Gatherv)

    # Python objects travel pickled, as PyTorch's *_object collectives send them: the
    # ranks of one job trust each other's data
    def _exchange_object(self, obj, root):
        return pickle.loads(self._exchange(pickle.dumps(obj), senders=[root])[root])

    def allgather(self, obj):
        return [pickle.loads(b) for b in self._exchange(pickle.dumps(obj))]

    def bcast(self, obj, root=0):
        return self._exchange_object(obj, root)

    def gather(self, obj, root=0):
        objs = self.allgather(obj)
        return objs if self.rank == root else None

    # point to point: the messages from one rank to another on one tag are numbered, so
    # they are received in the order they were sent
    def _next(self, counts, pair):
        counts[pair] = counts.get(pair, 0) + 1
        return counts[pair]

    def Send(self, buf, dest, tag=0):
        k = self._next(self.sent, (dest, tag))
        self.store.set(f'p{self.rank}>{dest}/{tag}/{k}', self._bytes(buf))

    def Recv(self, buf, source, tag=0):
        if source == StoreMPI.ANY_SOURCE:
            source = self._first_sender(tag)
        k = self.received.get((source, tag), 0) + 1
        key = f'p{source}>{self.rank}/{tag}/{k}'
        blob = self.store.get(key)
        self.received[(source, tag)] = k
        self.store.delete_key(key)
        buf.reshape(-1)[...] = np.frombuffer(blob, buf.dtype)

    def _first_sender(self, tag):
        others = [r for r in range(self.size) if r != self.rank]
        limit = self.store.timeout.total_seconds()
        start = time.monotonic()
        while True:
            for r in others:
                k = self.received.get((r, tag), 0) + 1
                if self.store.check([f'p{r}>{self.rank}/{tag}/{k}']):
                    return r
            if limit > 0 and time.monotonic() - start > limit:
                from .stores import DistStoreError
                raise DistStoreError(f'recv: no rank sent a message with tag {tag} to rank '
                                     f'{self.rank} within {limit:g} s')
            time.sleep(self.POLL)

    def Isend(self, buf, dest, tag=0):
        self.Send(buf, dest, tag)
        return _Done()

    def Irecv(self, buf, source, tag=0):
        return _Deferred(lambda: self.Recv(buf, source, tag))
