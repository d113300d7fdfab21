"""``DataLoader``: batches from a dataset, in the main process or in worker processes."""
import itertools
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
import warnings
from typing import Generic

from .dataset import IterableDataset, T_co
from .sampler import Sampler, SequentialSampler, RandomSampler, BatchSampler
from .collate import default_collate, default_convert
from ._utils import MP_STATUS_CHECK_INTERVAL
from ._utils.fetch import make_fetcher
from ._utils.worker import (STOP, RESUMED, RESUME, Channel, ExceptionWrapper,
                            get_worker_info, worker_loop)
from ... import _platform

__all__ = ['DataLoader', 'get_worker_info', 'default_collate', 'default_convert']

# How long shutting down waits for workers to finish their task before terminating them.
_SHUTDOWN_TIMEOUT = MP_STATUS_CHECK_INTERVAL

# The workers, index queues and channels of every iterator not yet shut down. An iterator
# freed by the cycle collector is finalized after the weak references into its garbage
# have fired: the queues' feeder threads would already be stopped and the processes'
# sentinels closed. Held from here, they are not garbage, and __del__ can use them.
_RUNNING = {}


class _InfiniteConstantSampler(Sampler):
    """The 'indices' of an IterableDataset: None forever (the dataset decides what comes)."""

    def __iter__(self):
        while True:
            yield None


_FROZEN = ('batch_size', 'batch_sampler', 'sampler', 'drop_last', 'dataset',
           'persistent_workers')


def _check_worker_number_rationality(num_workers, stacklevel=3):
    if num_workers == 0 or _platform.lacks_processes():
        return  # no workers will start: _get_iterator's own warning says why
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    if cpus and num_workers > cpus:
        warnings.warn(f'This DataLoader will create {num_workers} worker processes in total. '
                      f'Our suggested max number of worker in current system is {cpus}, which '
                      f'is smaller than what this DataLoader is going to create. Please be '
                      f'aware that excessive worker creation might get DataLoader running slow '
                      f'or even freeze, lower the worker number to avoid potential '
                      f'slowness/freeze if necessary.', stacklevel=stacklevel)


def _as_context(multiprocessing_context, num_workers):
    """The DataLoader's ``multiprocessing_context`` option, checked as PyTorch does."""
    if multiprocessing_context is None:
        return None
    if num_workers == 0:
        raise ValueError(f'multiprocessing_context can only be used with multi-process '
                         f'loading (num_workers > 0), but got num_workers={num_workers}')
    if isinstance(multiprocessing_context, str):
        methods = multiprocessing.get_all_start_methods()
        if multiprocessing_context not in methods:
            raise ValueError(f'multiprocessing_context option should specify a valid start '
                             f'method in {methods!r}, but got '
                             f'multiprocessing_context={multiprocessing_context!r}')
        multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
    if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
        raise TypeError(f'multiprocessing_context option should be a valid context object or '
                        f'a string specifying the start method, but got '
                        f'multiprocessing_context={multiprocessing_context}')
    return multiprocessing_context


def _is_iter_datapipe(dataset):
    datapipes = sys.modules.get('dynagrad.utils.data.datapipes.datapipe')
    return datapipes is not None and isinstance(dataset, datapipes.IterDataPipe)


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    ``batch_size`` samples per batch (``None`` turns batching off); ``shuffle`` draws a new
    order each epoch from ``generator`` (default: dynagrad's default generator, so
    ``dynagrad.manual_seed`` makes the epochs repeat); ``sampler`` / ``batch_sampler``
    choose indices instead; ``collate_fn`` merges samples (``default_collate``);
    ``drop_last`` drops a last, incomplete batch.

    ``num_workers > 0`` loads in that many worker processes, started with
    ``multiprocessing_context`` (a start method's name or a context; default: the
    platform's, ``fork`` on Linux), each ``prefetch_factor`` (default 2) batches ahead.
    Batches arrive in the sampler's order (``in_order=False``: as they are ready) through
    shared memory. Each pass seeds worker i's generators (Python's ``random``, dynagrad's,
    NumPy's) from a base seed drawn from ``generator`` plus i, then calls
    ``worker_init_fn(i)``; ``get_worker_info()`` tells the code running in a worker which
    one it is. ``persistent_workers`` keeps the workers from one pass to the next; an
    exception in a worker is raised in the main process with the worker's traceback;
    ``timeout`` (seconds) bounds the wait for a batch. ``pin_memory`` is accepted (there
    is no accelerator to pin for).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device='',
                 in_order=True):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool):
            raise TypeError(f'num_workers must be an int, got {type(num_workers).__name__}')
        if num_workers < 0:
            raise ValueError('num_workers option should be non-negative; use num_workers=0 to '
                             'disable multiprocessing.')
        if timeout < 0:
            raise ValueError('timeout option should be non-negative')
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError('prefetch_factor option could only be specified in '
                             'multiprocessing.let num_workers > 0 to enable multiprocessing, '
                             'otherwise set prefetch_factor to None.')
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None:
            if not isinstance(prefetch_factor, int) or isinstance(prefetch_factor, bool):
                raise TypeError(f'prefetch_factor must be an int, got '
                                f'{type(prefetch_factor).__name__}')
            if prefetch_factor < 0:
                raise ValueError('prefetch_factor option should be non-negative')
        if persistent_workers and num_workers == 0:
            raise ValueError('persistent_workers option needs num_workers > 0')
        multiprocessing_context = _as_context(multiprocessing_context, num_workers)

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = 'iterable'
            if _is_iter_datapipe(dataset):
                # a DataPipe's shuffle is its shufflers' switch
                from .graph_settings import apply_shuffle_settings
                dataset = apply_shuffle_settings(dataset, shuffle=shuffle)
            elif shuffle not in (False, None):
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'shuffle option, but got shuffle={shuffle}')
            if sampler is not None:
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'sampler option, but got sampler={sampler}')
            if batch_sampler is not None:
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'batch_sampler option, but got batch_sampler={batch_sampler}')
        else:
            self._dataset_kind = 'map'
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError('sampler option is mutually exclusive with shuffle')
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError('batch_sampler option is mutually exclusive with batch_size, '
                                 'shuffle, sampler, and drop_last')
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError('batch_size=None option disables auto-batching and is mutually '
                             'exclusive with drop_last')

        if sampler is None:
            if self._dataset_kind == 'iterable':
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self._multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator = None
        self.__initialized = True
        _check_worker_number_rationality(num_workers)

    def __setattr__(self, name, value):
        if self.__dict__.get('_DataLoader__initialized') and name in _FROZEN:
            raise ValueError(f'{name} attribute should not be set after '
                             f'{type(self).__name__} is initialized')
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, value):
        self._multiprocessing_context = _as_context(value, self.num_workers)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if _platform.lacks_processes():
            # As PyTorch users expect on a machine that cannot run workers: the same
            # batches, loaded here (worker_init_fn and get_worker_info() have no worker),
            # and one warning per loader, not one per epoch.
            if self.__dict__.get('_warned_no_workers'):
                return _SingleProcessDataLoaderIter(self)
            self._warned_no_workers = True
            warnings.warn(f'DataLoader(num_workers={self.num_workers}): this platform, '
                          f'{_platform.name()}, cannot start worker processes, so the data '
                          f'loads in the main process', UserWarning, stacklevel=3)
            return _SingleProcessDataLoaderIter(self)
        _check_worker_number_rationality(self.num_workers, stacklevel=4)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0 and not _platform.lacks_processes():
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        return _length(self._dataset_kind, self.dataset, self._index_sampler, self.batch_size,
                       self.drop_last)


def _length(kind, dataset, index_sampler, batch_size, drop_last):
    if kind == 'iterable':
        n = len(dataset)
        if batch_size is not None:
            n = n // batch_size if drop_last else -(-n // batch_size)
        return n
    return len(index_sampler)


class _BaseDataLoaderIter:
    """One pass over a DataLoader. It keeps what it needs, not the loader: a loader with
    persistent workers holds its iterator, and the workers stop when the loader goes."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._batch_size = loader.batch_size
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._timeout = loader.timeout
        self._sampler_iter = iter(self._index_sampler)
        # As PyTorch, every pass draws a base seed for the workers from the loader's
        # generator (the main process draws it too, so the random streams advance alike).
        from .sampler import _draw_seed
        self._base_seed = _draw_seed(loader.generator)   # PyTorch's draw: its worker seeds
        self._num_yielded = 0
        if loader.pin_memory:
            from ... import accelerator
            if not accelerator.is_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                              "found, then device pinned memory won't be used.", stacklevel=4)

    def __iter__(self):
        return self

    def __len__(self):
        return _length(self._dataset_kind, self._dataset, self._index_sampler,
                       self._batch_size, self._drop_last)

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads in the main process."""

    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError('_SingleProcessDataLoaderIter requires timeout == 0')
        self._fetcher = make_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last)

    def __next__(self):
        if getattr(self._fetcher, 'ended', False):
            raise StopIteration
        data = self._fetcher.fetch(next(self._sampler_iter))
        self._num_yielded += 1
        return data


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads in ``num_workers`` worker processes.

    Task i (a batch's indices) goes to a worker's index queue, round robin over the workers
    that still have data; at most ``prefetch_factor * num_workers`` tasks are out at once.
    Results that come early wait in ``_task_info`` until their turn (``in_order``).

    The main process waits on the workers' sockets and on their process sentinels together,
    so a worker that dies is noticed at once, and the pass raises instead of hanging.
    Shutting down (end of the pass, an error, ``del``, garbage collection) asks every worker
    to stop, drains their sockets meanwhile (a worker blocked sending a batch could not see
    the request), terminates any still running after ``_SHUTDOWN_TIMEOUT`` seconds and joins
    them all: no process is left behind.
    """

    def __init__(self, loader):
        self._shutdown = False          # first: __del__ reads it however far __init__ got
        self._workers, self._index_queues, self._channels = [], [], []
        self._owner = os.getpid()
        _RUNNING[id(self)] = (self._workers, self._index_queues, self._channels)
        super().__init__(loader)
        if loader.prefetch_factor <= 0:
            raise AssertionError('prefetch_factor must be greater than 0 for '
                                 'MultiProcessingDataLoaderIter')
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent_workers = loader.persistent_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        try:
            for worker_id in range(self._num_workers):
                index_queue = ctx.Queue()
                # Its feeder thread must never hold up the interpreter's exit.
                index_queue.cancel_join_thread()
                main_end, worker_end = ctx.Pipe(duplex=True)
                worker = ctx.Process(
                    target=worker_loop,
                    args=(self._dataset_kind, self._dataset, index_queue, worker_end,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, worker_id,
                          self._num_workers, MP_STATUS_CHECK_INTERVAL),
                    daemon=True)
                try:
                    worker.start()
                except BaseException:
                    main_end.close()
                    index_queue.close()
                    raise
                finally:
                    worker_end.close()      # the worker's now: its EOF tells us it died
                self._workers.append(worker)
                self._index_queues.append(index_queue)
                self._channels.append(Channel(main_end))
            self._begin_pass()
        except BaseException:
            self._shutdown_workers()
            raise

    # -- a pass ----------------------------------------------------------------------------
    def _begin_pass(self):
        self._send_idx = 0          # the next task's index
        self._rcvd_idx = 0          # the next task to return
        self._task_info = {}        # task -> (worker,) or (worker, result)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._retired = set()       # workers told to stop within the pass
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        """A new pass with the same (persistent) workers."""
        super()._reset(loader)
        for q in self._index_queues:
            q.put(RESUME)
        # Each worker answers RESUME after whatever it still had to send from the last
        # pass; that is dropped.
        waiting = self._num_workers
        while waiting:
            message = self._next_message(None, range(self._num_workers))
            if message.kind == RESUMED:
                waiting -= 1
            message.discard()
        self._begin_pass()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return          # every worker's IterableDataset has ended
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def __next__(self):
        while True:
            # Skip the tasks of workers whose IterableDataset ended: they will not answer.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            kind, idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if kind == STOP:
                self._mark_worker_unavailable(self._task_info[idx][0])
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process(data)
            self._task_info[idx] += (data,)

    def _process(self, data):
        self._num_yielded += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_unavailable(self, worker):
        self._workers_status[worker] = False
        if not self._persistent_workers:
            self._index_queues[worker].put(None)
            self._retired.add(worker)

    # -- receiving -------------------------------------------------------------------------
    def _get_data(self):
        if self._shutdown:
            raise RuntimeError('DataLoader iterator was shut down (a worker failed)')
        timeout = self._timeout if self._timeout > 0 else None
        live = [w for w in range(self._num_workers) if w not in self._retired]
        message = self._next_message(timeout, live)
        if message.kind == STOP:
            message.discard()
            return STOP, message.index, None
        return message.kind, message.index, message.decode()

    def _next_message(self, timeout, workers):
        """The next message from one of ``workers``; raises if one of them died or nothing
        came within ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        conns = {self._channels[w].conn: w for w in workers}
        sentinels = {self._workers[w].sentinel: w for w in workers}
        while True:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0)
            ready = multiprocessing.connection.wait(list(conns) + list(sentinels), remaining)
            if not ready:
                raise RuntimeError(f'DataLoader timed out after {self._timeout} seconds')
            dead = []
            for obj in ready:
                if obj in conns:        # results first: a worker may send, then exit
                    worker = conns[obj]
                    try:
                        return self._channels[worker].recv()
                    except (EOFError, OSError):
                        dead.append(worker)
            for obj in ready:
                if obj in sentinels and sentinels[obj] not in dead:
                    worker = sentinels[obj]
                    if self._channels[worker].conn.poll():
                        break           # its last words are still in the socket
                    dead.append(worker)
            if dead:
                self._worker_failed(dead)

    def _worker_failed(self, workers):
        pids = ', '.join(str(self._workers[w].pid) for w in workers)
        self._shutdown_workers()
        details = []
        for w in workers:
            code = self._workers[w].exitcode
            if code is not None and code < 0:
                try:
                    name = f'signal {os.strsignal(-code) or -code}'
                except (ValueError, AttributeError):
                    name = f'signal {-code}'
                details.append(f'worker {w} was killed by {name}')
            else:
                details.append(f'worker {w} exited with code {code}')
        raise RuntimeError(f'DataLoader worker (pid(s) {pids}) exited unexpectedly '
                           f'({"; ".join(details)})')

    # -- shutting down ---------------------------------------------------------------------
    def _shutdown_workers(self):
        if self._shutdown or os.getpid() != self._owner:
            # (A forked child holds a copy of this iterator: the workers are not its own.)
            return
        self._shutdown = True
        try:
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            self._drain_until_exit(time.monotonic() + _SHUTDOWN_TIMEOUT)
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(1)
                    if w.is_alive():
                        w.kill()
                w.join()
        finally:
            for channel in self._channels:
                channel.close()
            for q in self._index_queues:
                q.close()
            _RUNNING.pop(id(self), None)

    def _drain_until_exit(self, deadline):
        """Wait for the workers to exit, reading (and dropping) what they still send."""
        conns = {c.conn: c for c in self._channels}
        sentinels = {w.sentinel: w for w in self._workers if w.pid is not None}
        while sentinels and time.monotonic() < deadline:
            ready = multiprocessing.connection.wait(
                list(conns) + list(sentinels), max(deadline - time.monotonic(), 0))
            for obj in ready:
                if obj in sentinels:
                    del sentinels[obj]
                elif obj in conns:
                    try:
                        conns[obj].recv().discard()
                    except (EOFError, OSError):
                        del conns[obj]

    def __del__(self):
        if sys.is_finalizing():
            return      # the interpreter is going: multiprocessing ends daemon workers
        self._shutdown_workers()
