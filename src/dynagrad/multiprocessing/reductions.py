"""Tensors between processes through shared memory, as ``torch.multiprocessing`` sends them.

A shared array lives in a ``SharedSegment``: a memory file without a name (a Linux
``memfd``; elsewhere an unlinked temporary file) mapped into the process. Pickling a tensor
for another process (a ``multiprocessing`` queue, pipe or ``Process`` argument, a
DataLoader worker's batch) sends the file's descriptor and where the array lies in it
(dtype, shape, strides, offset) instead of the bytes; the receiver maps the same pages, so
each side sees the other's writes. The kernel frees the memory when the last process has
unmapped it and closed its descriptors: no name exists that could leak in ``/dev/shm``,
whatever happens to the processes.

What travels how:

* a tensor whose array is in shared memory (``share_memory_()``, or received shared):
  by handle, always, so that writes in any process are seen by all (Hogwild);
* any other tensor of at least ``SHARE_THRESHOLD`` bytes: copied once into a fresh
  segment, which the receiver maps. The sender's tensor is left as it was (PyTorch moves
  it into shared memory: dynagrad's views are NumPy views, which a move would detach);
* smaller tensors, and tensors pickled while a process is being started with ``spawn``
  or ``forkserver`` (unless already shared): by value, inside the pickle.

Descriptors go through the stdlib's own channels: ``multiprocessing.reduction.DupFd``,
which hands them to a process being started, or else has the receiver fetch them from the
sender (so the sender must still be alive when the receiver unpickles, as in PyTorch). The
DataLoader's workers instead send them beside each message on their Unix socket
(``passing_descriptors`` / ``receiving_descriptors``), which costs microseconds, not a
connection per descriptor.
"""
import contextlib
import mmap
import os
import sys
import threading
import weakref
from multiprocessing import context as mp_context, reduction

import numpy as np

from ..tensor import Tensor, method

__all__ = ['SHARE_THRESHOLD', 'SharedSegment', 'new_shared_array', 'share_array',
           'segment_of', 'is_shared_array', 'reduce_tensor', 'reduce_ndarray',
           'rebuild_array', 'passing_descriptors', 'receiving_descriptors', 'SUPPORTED']

# Below this many bytes a copy inside the pickle is cheaper than a segment (a memory file,
# a mapping and a descriptor on each side).
SHARE_THRESHOLD = 1 << 16

# Descriptor passing (SCM_RIGHTS) and mmap of a descriptor: POSIX.
SUPPORTED = os.name == 'posix'

_NON_LEAF = ('Cowardly refusing to serialize non-leaf tensor which requires_grad, since '
             'autograd does not support crossing process boundaries.  If you just want to '
             'transfer the data, call detach() on the tensor before serializing (e.g., '
             'putting it on the queue).')

# Python 3.13+ can map without keeping a private duplicate of the descriptor.
_MAP_KWARGS = {'trackfd': False} if sys.version_info >= (3, 13) else {}


class SharedSegment(mmap.mmap):
    """A memory file mapped into this process, shared with every process that maps it.

    ``handle`` is this process's descriptor of the file, with which it can send the
    segment on; None when the segment arrived without one worth keeping (a DataLoader
    batch): such a segment is copied if it is sent again. ``address`` is where the mapping
    starts, ``length`` its size in bytes.
    """
    handle = None
    address = 0
    length = 0

    def keep_handle(self, fd):
        self.handle = fd
        # Closed when the segment (every array viewing it) is gone; left to the OS at exit.
        weakref.finalize(self, os.close, fd).atexit = False


# Each memory file is mapped once per process: receiving a segment this process already
# maps (sent twice, or mapped by the parent it forked from) reuses the mapping.
_mapped = weakref.WeakValueDictionary()      # (st_dev, st_ino) -> SharedSegment
_lock_of_pid = (os.getpid(), threading.Lock())


def _mapped_lock():
    """The lock of ``_mapped``, new in each process: a child forked while another thread
    (a queue's feeder, pickling) held the parent's would wait for it forever. (A forked
    child starts with one thread, so making it here races with nothing.)"""
    global _lock_of_pid
    pid, lock = _lock_of_pid
    if pid != os.getpid():
        lock = threading.Lock()
        _lock_of_pid = (os.getpid(), lock)
    return lock


def _memory_file(size):
    if hasattr(os, 'memfd_create'):
        fd = os.memfd_create('dynagrad-shm', os.MFD_CLOEXEC)
    else:
        import tempfile  # only where memfd_create is missing
        fd, path = tempfile.mkstemp(prefix='dynagrad-shm-')
        os.unlink(path)
    try:
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _map(fd, size, keep):
    """The segment of memory file ``fd`` (which this call owns: kept as the segment's
    handle when ``keep``, else closed)."""
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    with _mapped_lock():
        seg = _mapped.get(key)
        if seg is None:
            if st.st_size < size:
                os.close(fd)
                raise RuntimeError(f'shared memory segment is {st.st_size} bytes, but the '
                                   f'sender described {size}: the message is corrupt')
            try:
                seg = SharedSegment(fd, size, **_MAP_KWARGS)
            except BaseException:
                os.close(fd)
                raise
            seg.length = size
            seg.address = np.frombuffer(seg, np.uint8).__array_interface__['data'][0]
            _mapped[key] = seg
        elif seg.handle is not None:
            if seg.handle == fd:        # the same descriptor, given twice (process start)
                return seg
            keep = False
        if keep:
            seg.keep_handle(fd)
        else:
            os.close(fd)
        return seg


def new_shared_array(shape, dtype):
    """An uninitialised NumPy array of ``shape`` and ``dtype`` in a new shared segment."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise TypeError(f'an array of {dtype} holds Python objects, which cannot be placed '
                        f'in shared memory')
    shape = tuple(int(s) for s in shape)
    size = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
    seg = _map(_memory_file(size), size, keep=True)
    return np.ndarray(shape, dtype, buffer=seg)


def share_array(array):
    """A copy of ``array`` in a new shared segment (C-contiguous)."""
    out = new_shared_array(array.shape, array.dtype)
    np.copyto(out, array, casting='no')
    return out


def segment_of(array):
    """The ``SharedSegment`` that ``array``'s memory belongs to, or None."""
    if not isinstance(array, np.ndarray):
        return None
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, SharedSegment) else None


def is_shared_array(array):
    return segment_of(array) is not None


# -- Tensor methods ----------------------------------------------------------------------

@method
def share_memory_(self):
    """Move this tensor's data into shared memory, in place; returns self.

    A no-op if the data is already there. Tensors sent to other processes afterwards
    (queues, ``Process`` arguments) share it: a write in any process is seen by all.
    Unlike PyTorch, where the storage moves with every view of it, views and aliases
    (``detach()``, ``.data``) of this tensor made before the call keep the old, private
    memory: share first, then make views.
    """
    seg = segment_of(self._data)
    if seg is None or seg.handle is None:
        if not isinstance(self._data, np.ndarray):
            raise RuntimeError(f'share_memory_: only CPU tensors can be moved to shared '
                               f'memory, this one is on {self.device}')
        self._data = share_array(self._data)
    if type(self) not in _registered:
        register_tensor_types()     # a Tensor subclass defined after the first registration
    return self


@method
def is_shared(self):
    """Whether the tensor's data lives in shared memory."""
    return segment_of(self._data) is not None


# -- pickling ----------------------------------------------------------------------------

class _Outgoing(threading.local):
    fds = None      # descriptors to send beside the message being pickled, or None
    index = None    # id(segment) -> position in fds
    keep = None     # the segments, alive until the message has gone


class _Incoming(threading.local):
    fds = None          # descriptors that came with the message being unpickled
    segments = None     # position -> the segment mapped from it


_outgoing = _Outgoing()
_incoming = _Incoming()


@contextlib.contextmanager
def passing_descriptors():
    """While pickling inside, shared segments are referred to by position in the list
    yielded, whose descriptors the caller sends beside the message (keep the message's
    segments alive: they are, until the block ends)."""
    _outgoing.fds, _outgoing.index, _outgoing.keep = [], {}, []
    try:
        yield _outgoing.fds
    finally:
        _outgoing.fds = _outgoing.index = _outgoing.keep = None


@contextlib.contextmanager
def receiving_descriptors(fds):
    """Unpickle inside a block given the descriptors that came with the message; it owns
    them: those the message did not use are closed at the end."""
    _incoming.fds, _incoming.segments = list(fds), {}
    try:
        yield
    finally:
        left, _incoming.fds, _incoming.segments = _incoming.fds, None, None
        for fd in left:
            if fd is not None:
                os.close(fd)


class _Passed:
    """A descriptor sent beside the message: its position among them."""
    __slots__ = ('position',)

    def __init__(self, position):
        self.position = position

    def __reduce__(self):
        return _Passed, (self.position,)

    def segment(self, length):
        """The segment mapped from this descriptor (once, however many arrays use it)."""
        fds, segments = _incoming.fds, _incoming.segments
        if fds is None or self.position >= len(fds):
            raise RuntimeError('a shared tensor arrived without its memory descriptor: '
                               'unpickle DataLoader messages with receiving_descriptors()')
        seg = segments.get(self.position)
        if seg is None:
            fd, fds[self.position] = fds[self.position], None
            # A DataLoader batch keeps no descriptor of its own: a program holding many
            # batches would run out of them.
            seg = segments[self.position] = _map(fd, length, keep=False)
        return seg


class _ArrayRef:
    """Stands in a tensor's pickle for its array: unpickles as the shared array."""
    __slots__ = ('reduced',)

    def __init__(self, reduced):
        self.reduced = reduced

    def __reduce__(self):
        return self.reduced


# Per process being started: the handles already passed to it. The stdlib would list a
# descriptor twice, which starting the process refuses.
_passed_at_start = weakref.WeakKeyDictionary()      # Popen -> {fd: DupFd}


def _send_handle(seg):
    if _outgoing.fds is not None:
        position = _outgoing.index.get(id(seg))
        if position is None:
            position = _outgoing.index[id(seg)] = len(_outgoing.fds)
            _outgoing.fds.append(seg.handle)
            _outgoing.keep.append(seg)
        return _Passed(position)
    popen = mp_context.get_spawning_popen()
    if popen is None:
        return reduction.DupFd(seg.handle)
    passed = _passed_at_start.setdefault(popen, {})
    if seg.handle not in passed:
        passed[seg.handle] = reduction.DupFd(seg.handle)
    return passed[seg.handle]


def _reduce_shared(array):
    """``(rebuild_array, args)`` sending ``array`` through shared memory, or None when it
    goes by value."""
    if not SUPPORTED or type(array) is not np.ndarray or array.dtype.hasobject:
        return None
    seg = segment_of(array)
    if seg is None or seg.handle is None:
        # Starting a process, the descriptor must outlive the pickling: only a segment
        # something else keeps alive (an explicitly shared tensor) can go.
        if array.nbytes < SHARE_THRESHOLD or (
                _outgoing.fds is None and mp_context.get_spawning_popen() is not None):
            return None
        array = share_array(array)
        seg = segment_of(array)
    offset = array.__array_interface__['data'][0] - seg.address
    return rebuild_array, (_send_handle(seg), seg.length, array.dtype, array.shape,
                           array.strides, offset)


def rebuild_array(handle, length, dtype, shape, strides, offset):
    """The receiving end of ``_reduce_shared``: the array, viewing the mapped segment."""
    if isinstance(handle, _Passed):
        seg = handle.segment(length)
    else:
        seg = _map(handle.detach(), length, keep=True)
    return np.ndarray(shape, dtype, buffer=seg, offset=offset, strides=strides)


def reduce_tensor(tensor):
    """ForkingPickler's reducer for dynagrad tensors: the tensor's own pickle, with its
    array sent through shared memory (see the module docstring)."""
    if tensor._requires_grad and tensor._grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    reduced = tensor.__reduce_ex__(2)
    array = tensor._data
    if not any(a is array for a in reduced[1]):
        return reduced      # (a Parameter pickles a plain tensor, which brings the array)
    shared = _reduce_shared(array)
    if shared is None:
        return reduced
    args = tuple(_ArrayRef(shared) if a is array else a for a in reduced[1])
    return (reduced[0], args) + tuple(reduced[2:])


def reduce_ndarray(array):
    """A reducer for NumPy arrays, for picklers of dynagrad's own channels only (the
    DataLoader's): registering it with ForkingPickler would change every program's arrays."""
    shared = _reduce_shared(array)
    return shared if shared is not None else array.__reduce__()


def register_tensor_types():
    """Register ``reduce_tensor`` with ``multiprocessing.reduction.ForkingPickler`` for
    Tensor and its subclasses defined so far.

    This changes how the stdlib's multiprocessing pickles dynagrad tensors, and nothing
    else: ForkingPickler looks reducers up by exact type, so no other type is affected.
    """
    pending = [Tensor]
    while pending:
        cls = pending.pop()
        if cls not in _registered:
            reduction.ForkingPickler.register(cls, reduce_tensor)
            _registered.add(cls)
        pending.extend(cls.__subclasses__())


_registered = set()
