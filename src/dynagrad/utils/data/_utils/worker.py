"""DataLoader worker processes: their loop, what they know about themselves
(``get_worker_info``), and their channel to the main process.

Each worker gets tasks ``(task index, sampler output)`` on its own index queue and answers
on its own Unix socket: one pickled message per task, with the descriptors of the shared
memory its tensors live in passed beside it (``Channel``). The main process maps that
memory: a batch is never copied through the socket (see dynagrad.multiprocessing.reductions).
"""
import dataclasses
import os
import pickle
import queue
import random
import signal
import socket
import struct
import sys
import traceback
from multiprocessing import reduction

import numpy as np

from ....multiprocessing.reductions import (SUPPORTED, passing_descriptors, receiving_descriptors,
                                            reduce_ndarray)
from .fetch import make_fetcher

__all__ = ['WorkerInfo', 'get_worker_info', 'ExceptionWrapper', 'Channel', 'worker_loop',
           'DATA', 'STOP', 'RESUMED', 'RESUME']

# What a worker's message is: a task's result (a batch or an ExceptionWrapper), the end of
# its IterableDataset, or its acknowledgment of RESUME (a new pass of persistent workers).
DATA, STOP, RESUMED = 0, 1, 2
RESUME = -1     # the task that starts a new pass

_HEADER = struct.Struct('<BqI')      # kind, task index, number of descriptors that follow
_MAX_FDS = 250                       # per SCM_RIGHTS message (Linux accepts up to 253)


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0 ..
    ``num_workers`` - 1), the ``seed`` its generators got, and its copy of the ``dataset``."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = 'multiprocessing'


_worker_info = None


def get_worker_info():
    """The ``WorkerInfo`` of this DataLoader worker process; None in the main process.

    An ``IterableDataset`` uses it to shard: each worker has a copy of the dataset and
    should yield only its share (else every worker yields everything).
    """
    return _worker_info


class _KeyErrorMessage(str):
    """KeyError prints its argument's repr; this keeps the traceback readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info=None, where='in background'):
        exc_type, exc, tb = sys.exc_info() if exc_info is None else exc_info
        self.exc_name = exc_type.__name__
        self.exc_msg = ''.join(traceback.format_exception(exc_type, exc, tb))
        self.where = where
        try:
            pickle.dumps(exc_type)
            self.exc_type = exc_type
        except Exception:       # a class the main process could not import
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f'Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}'
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:       # its constructor wants other arguments
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # No cycle exception -> traceback -> this frame -> exception: the frames (and
            # the DataLoader iterator in them) go as soon as the caller lets go of it.
            exception = None


class _LoaderPickler(reduction.ForkingPickler):
    """Pickles batches: NumPy arrays go through shared memory too, not only tensors."""

    def __init__(self, *args):
        super().__init__(*args)
        self.dispatch_table[np.ndarray] = reduce_ndarray


class Message:
    __slots__ = ('kind', 'index', 'payload', 'fds')

    def __init__(self, kind, index, payload, fds):
        self.kind, self.index, self.payload, self.fds = kind, index, payload, fds

    def decode(self):
        fds, self.fds = self.fds, []
        with receiving_descriptors(fds):
            return pickle.loads(self.payload)

    def discard(self):
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)


class Channel:
    """One end of a worker's socket pair (a ``multiprocessing`` duplex ``Pipe``)."""

    def __init__(self, conn):
        self.conn = conn
        self._sock = (socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM)
                      if SUPPORTED else None)

    def send(self, kind, index, obj):
        with passing_descriptors() as fds:
            payload = _LoaderPickler.dumps(obj)
            self.conn.send_bytes(_HEADER.pack(kind, index, len(fds)) + payload)
            for start in range(0, len(fds), _MAX_FDS):
                reduction.sendfds(self._sock, fds[start:start + _MAX_FDS])

    def recv(self):
        data = self.conn.recv_bytes()
        kind, index, count = _HEADER.unpack_from(data)
        fds = []
        try:
            while len(fds) < count:
                fds += reduction.recvfds(self._sock, min(count - len(fds), _MAX_FDS))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return Message(kind, index, memoryview(data)[_HEADER.size:], fds)

    def close(self):
        if self._sock is not None:
            self._sock.close()
        self.conn.close()


def _seed_worker(worker_id, base_seed):
    """PyTorch's worker seeding: Python's ``random`` and dynagrad's default generator get
    ``base_seed + worker_id``, NumPy's global generator a seed derived from both (distinct
    per worker and per pass; NumPy takes 32-bit words)."""
    from ....ops.random import manual_seed
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _shard_datapipe(dataset, worker_id, num_workers):
    """A DataPipe's sharding filters split its items between the workers, as PyTorch's
    workers do (each worker holds its own copy of the graph)."""
    datapipes = sys.modules.get('dynagrad.utils.data.datapipes.datapipe')
    if datapipes is not None and isinstance(dataset, datapipes.IterDataPipe):
        from ..graph_settings import SHARDING_PRIORITIES, apply_sharding
        apply_sharding(dataset, num_workers, worker_id, SHARDING_PRIORITIES.MULTIPROCESSING)


def worker_loop(dataset_kind, dataset, index_queue, conn, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers, check_interval):
    """The body of worker ``worker_id``: answer tasks until told to stop (None), or until
    the main process is gone."""
    # Ctrl-C reaches the whole process group: the main process gets KeyboardInterrupt and
    # stops the workers; they stay quiet meanwhile.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = Channel(conn)
    parent = os.getppid()
    global _worker_info
    seed = _seed_worker(worker_id, base_seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                              dataset=dataset)
    where = f'in DataLoader worker process {worker_id}'
    init_error = fetcher = None
    try:
        _shard_datapipe(dataset, worker_id, num_workers)
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where=where)
    ended = False
    try:
        while True:
            try:
                task = index_queue.get(timeout=check_interval)
            except queue.Empty:
                if os.getppid() != parent:      # orphaned: the main process died
                    return
                continue
            except (EOFError, OSError):         # the main process's end is gone
                return
            if task is None:
                return
            if task == RESUME:
                if init_error is None and dataset_kind == 'iterable':
                    fetcher = make_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                           drop_last)
                ended = False
                channel.send(RESUMED, RESUME, None)
                continue
            index, sampled = task
            if init_error is not None:
                data = init_error
            elif ended:
                continue
            else:
                try:
                    data = fetcher.fetch(sampled)
                except StopIteration:
                    if dataset_kind != 'iterable':
                        data = ExceptionWrapper(where=where)
                    else:
                        ended = True
                        channel.send(STOP, index, None)
                        continue
                except Exception:
                    data = ExceptionWrapper(where=where)
            try:
                channel.send(DATA, index, data)
            except ConnectionError:
                raise
            except Exception:       # the batch does not pickle, or no shared memory: say so
                channel.send(DATA, index, ExceptionWrapper(where=where))
            del data
    except ConnectionError:
        pass            # the main process closed its end: it is shutting us down
    finally:
        channel.close()
