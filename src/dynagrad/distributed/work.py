"""``Work``: the handle ``async_op=True`` and ``isend``/``irecv`` return."""
from .process_group import mpi_names

__all__ = ['Work']


class Work:
    """What ``async_op=True`` returns: ``wait()`` blocks until the operation finished and
    its results are in the output tensors; ``is_completed()`` polls without blocking."""

    def __init__(self, requests=(), finish=None, keep=None):
        self._requests = list(requests)
        self._finish = finish
        self._keep = keep  # MPI reads or writes these buffers until completion: keep them alive
        self._done = False
        self._result = None

    def _complete(self):
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            self._result = finish()
        self._requests = []
        self._keep = None

    def wait(self, timeout=None):
        if not self._done:
            if self._requests:
                mpi_names().Request.Waitall(self._requests)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and (not self._requests or mpi_names().Request.Testall(self._requests)):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        self.wait()
        return self._result

    def __repr__(self):
        return f'<dynagrad.distributed.Work completed={self._done}>'


def completed_work(result=None):
    """A ``Work`` that is already complete: for an operation with nothing to wait for."""
    w = Work()
    w._done = True
    w._result = result
    return w
