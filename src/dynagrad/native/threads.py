"""Running a native kernel on chunks of its rows with several Python threads.

Most kernels go through ``chunks`` instead, which runs compiled chunk entries on the BLAS's
own worker threads and comes back here only where NumPy's BLAS has none to lend; the
convolution's image chunks, which call BLAS themselves, always run here.

Why not numba's ``parallel=True``: pip's numba ships only the ``workqueue`` threading
layer, which aborts the process when two Python threads launch parallel kernels at once
and cannot be used after ``fork`` (DataLoader workers); ``tbb`` is another dependency.
The kernels here are compiled with ``nogil=True``, so plain Python threads can run them
side by side: a kernel is called once per chunk of independent rows (elements, images,
heads), each row computed by the same code as in one call, so the result does not depend
on how many threads ran it or where the chunks fell (bit for bit).

The caller takes part: it and the pool's threads take chunks from one shared counter until
none is left, then the caller waits for the chunks others started. On a busy machine a
worker that is slow to wake finds nothing left and the caller has done the work alone (the
serial time plus the hand-off, never a wait for a descheduled thread to begin).

The thread count is ``dynagrad.get_num_threads()`` (what ``set_num_threads`` or
threadpoolctl's limits set for the BLAS), read on each call that is large enough to split:
one thread runs the kernel exactly as before, with no pool. The pool holds daemon threads
made on first need; a child process made by ``fork`` starts with none (``register_at_fork``)
and makes its own. Several Python threads may call kernels at once: each only queues its
chunks and works on them itself.
"""
import itertools
import os
import queue
import threading

from .. import backend


class _Pool:
    """Persistent worker threads reading jobs from one queue (made on first need)."""

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.workers = 0
        self.lock = threading.Lock()

    def ensure(self, count):
        if self.workers >= count:
            return
        with self.lock:
            while self.workers < count:
                threading.Thread(target=self._serve, args=(self.jobs,), daemon=True,
                                 name=f'dynagrad-native-{self.workers}').start()
                self.workers += 1

    @staticmethod
    def _serve(jobs):
        while True:
            jobs.get().work()


_pool = _Pool()


def _forget_pool():
    # the parent's threads do not exist in a forked child (and its queue's lock may have
    # been held mid-call): start from an empty pool
    global _pool
    _pool = _Pool()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_forget_pool)


class _Job:
    """``body(lo, hi)`` over chunks taken from a shared counter by whoever is free."""

    __slots__ = ('body', 'bounds', 'next', 'left', 'lock', 'done', 'error')

    def __init__(self, body, bounds):
        self.body, self.bounds = body, bounds
        self.next = itertools.count()       # next() is atomic under the GIL
        self.left = len(bounds)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error = None

    def work(self):
        bounds = self.bounds
        while True:
            i = next(self.next)
            if i >= len(bounds):
                return
            try:
                self.body(*bounds[i])
            except BaseException as e:     # re-raised in the calling thread
                self.error = e
            with self.lock:
                self.left -= 1
                if self.left == 0:
                    self.done.set()


def chunks(count, min_per_chunk):
    """How many chunks to split ``count`` independent items into: 1 (run serially, as
    before) below ``2 * min_per_chunk`` items or with one thread, else up to the thread
    count, each at least ``min_per_chunk`` items (below that the hand-off, tens of
    microseconds, costs more than a thread saves)."""
    if count < 2 * min_per_chunk:
        return 1
    threads = backend.blas_thread_count()
    if threads <= 1:
        return 1
    return int(min(threads, count // min_per_chunk))


def parallel_for(count, parts, body):
    """``body(lo, hi)`` over ``parts`` near-equal consecutive ranges covering
    ``range(count)``, run by the calling thread and ``parts - 1`` pool threads. ``body``
    must release the GIL (a ``nogil`` kernel) for the threads to overlap."""
    if parts <= 1:
        body(0, count)
        return
    bounds = [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]
    job = _Job(body, bounds)
    pool = _pool
    pool.ensure(parts - 1)
    for _ in range(parts - 1):
        pool.jobs.put(job)
    job.work()
    job.done.wait()
    if job.error is not None:
        raise job.error
