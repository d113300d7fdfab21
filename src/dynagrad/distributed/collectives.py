"""Collectives: every rank of the world calls the same one, in the same order.

Tensor collectives write their results into the tensors passed, in place, as PyTorch's do,
and count the write on each tensor's version counter. With ``async_op=True`` the
cross-rank checks still run synchronously, then a ``Work`` wraps the non-blocking MPI
request and writes the results back when it completes.

Tensors on the 'cuda' device go through host buffers: their arrays are copied to the host,
MPI runs on the copies, and the results are copied back into the tensors' own device arrays
(``host_buffers``). CUDA-aware MPI is not used.
"""
import enum

import numpy as np

from ..backend import xp
from ..tensor import bump_version
from .host_buffers import copy_into, on_device, to_host
from .checks import (DistributedError, check_rank, check_tensor, describe, element_count,
                     exchange_headers, require_same)
from .process_group import communicator, mpi_names
from .work import Work

__all__ = ['ReduceOp', 'barrier', 'all_reduce', 'broadcast', 'reduce', 'all_gather',
           'all_gather_into_tensor', 'reduce_scatter', 'reduce_scatter_tensor', 'scatter',
           'gather', 'all_gather_object', 'broadcast_object_list', 'gather_object',
           'all_to_all_single']


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


def _mpi_op(op):
    """(MPI's op, the ReduceOp): AVG is a SUM on the wire, divided afterwards."""
    MPI = mpi_names()
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


def _wire_dtype(dtype):
    """MPI has no half type: float16 travels (and is reduced) as float32."""
    return np.float32 if dtype == np.float16 else dtype


def _work_buffer(t, reduce=False):
    """A contiguous host array MPI can use for ``t``: its own memory when possible (never
    for a device tensor: MPI gets a host copy, written back by ``_write_into``)."""
    a = to_host(t._data)
    if reduce and a.dtype == np.float16:
        return xp.ascontiguousarray(a, dtype=np.float32)
    if a.flags.c_contiguous and a.flags.writeable:
        return a
    return xp.ascontiguousarray(a)


def _write_into(t, values, writer):
    """Copy ``values`` into ``t`` (unless MPI already wrote in its own memory) and count
    the write, so a graph that saved ``t`` refuses its stale value."""
    if values is not t._data:
        if on_device(t._data):
            copy_into(t._data, values)      # back onto the device, into the same array
        else:
            xp.copyto(t._data, values.reshape(t._data.shape), casting='unsafe')
    bump_version(t, writer)


def _displacements(counts):
    return list(xp.cumsum([0] + counts[:-1]))


def _check_list(lst, n, what, name):
    if not isinstance(lst, (list, tuple)) or len(lst) != n:
        got = len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__
        raise ValueError(f'{name}: {what} must be a list of {n} tensors (one per rank), got '
                         f'{got}')
    for t in lst:
        check_tensor(t, f'every element of {what}')


def _exchange_with_slots(name, comm, tensor, slots, what):
    """Exchange every rank's header for ``tensor`` and for its ``slots`` list (None on ranks
    that pass none); check on every rank that each list's entry i matches rank i's tensor,
    so that all ranks raise together instead of some entering the collective and hanging.
    Returns the tensors' headers (one row per rank)."""
    n = comm.Get_size()
    arrays = [tensor._data] + ([t._data for t in slots] if slots else [None] * n)
    every = exchange_headers(comm, arrays)
    headers = every[:, 0]
    for r in range(n):
        if every[r, 1, 1] < 0:
            continue
        for i in range(n):
            if not xp.array_equal(every[r, 1 + i], headers[i]):
                raise DistributedError(
                    f'{name}: rank {i} contributes {describe(headers[i])} but {what}[{i}] on '
                    f'rank {r} is {describe(every[r, 1 + i])} (this is rank {comm.Get_rank()})')
    return headers


def _require_same_dtype(name, headers, comm):
    codes = headers[:, 0]
    if not (codes == codes[0]).all():
        bad = int(xp.nonzero(codes != codes[0])[0][0])
        raise DistributedError(f'{name}: dtypes differ across ranks: rank 0 has '
                               f'{describe(headers[0])}, rank {bad} has {describe(headers[bad])}')


def barrier(group=None, async_op=False, device_ids=None):
    comm = communicator(group)
    if async_op:
        return Work([comm.Ibarrier()])
    comm.Barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every rank's ``tensor`` becomes the reduction over ranks, in place."""
    comm = communicator(group)
    check_tensor(tensor)
    mpi_op, op = _mpi_op(op)
    _check_avg(op, tensor, 'all_reduce')
    require_same('all_reduce', comm, tensor)
    buf = _work_buffer(tensor, reduce=True)
    IN_PLACE = mpi_names().IN_PLACE

    def finish():
        if op is ReduceOp.AVG:
            buf[...] /= comm.Get_size()
        _write_into(tensor, buf, 'dynagrad.distributed.all_reduce')

    if async_op:
        return Work([comm.Iallreduce(IN_PLACE, buf, op=mpi_op)], finish, buf)
    comm.Allreduce(IN_PLACE, buf, op=mpi_op)
    finish()


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Every rank's ``tensor`` becomes rank ``src``'s, in place."""
    comm = communicator(group)
    check_tensor(tensor)
    src = check_rank(src if group_src is None else group_src, comm, 'src')
    require_same('broadcast', comm, tensor)
    buf = _work_buffer(tensor)

    def finish():
        _write_into(tensor, buf, 'dynagrad.distributed.broadcast')
    if async_op:
        return Work([comm.Ibcast(buf, root=src)], finish, buf)
    comm.Bcast(buf, root=src)
    finish()


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``tensor`` becomes the reduction over ranks; the others' are unchanged."""
    comm = communicator(group)
    check_tensor(tensor)
    dst = check_rank(dst if group_dst is None else group_dst, comm, 'dst')
    mpi_op, op = _mpi_op(op)
    _check_avg(op, tensor, 'reduce')
    require_same('reduce', comm, tensor)
    MPI = mpi_names()
    root = comm.Get_rank() == dst
    buf = _work_buffer(tensor, reduce=True)
    send = MPI.IN_PLACE if root else buf
    recv = buf if root else None

    def finish():
        if root:
            if op is ReduceOp.AVG:
                buf[...] /= comm.Get_size()
            _write_into(tensor, buf, 'dynagrad.distributed.reduce')
    if async_op:
        return Work([comm.Ireduce(send, recv, op=mpi_op, root=dst)], finish, buf)
    comm.Reduce(send, recv, op=mpi_op, root=dst)
    finish()


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` becomes rank i's ``tensor`` on every rank (sizes may differ)."""
    comm = communicator(group)
    n = comm.Get_size()
    check_tensor(tensor)
    _check_list(tensor_list, n, 'tensor_list', 'all_gather')
    _exchange_with_slots('all_gather', comm, tensor, tensor_list, 'tensor_list')
    counts = [t._data.size for t in tensor_list]
    displs = _displacements(counts)
    wire = _wire_dtype(tensor._data.dtype)
    send = xp.ascontiguousarray(to_host(tensor._data), dtype=wire)
    recv = xp.empty(sum(counts), wire)

    def finish():
        for t, c, d in zip(tensor_list, counts, displs):
            _write_into(t, recv[d:d + c], 'dynagrad.distributed.all_gather')
    spec = [recv, (counts, displs)]
    if async_op:
        return Work([comm.Iallgatherv(send, spec)], finish, (send, recv))
    comm.Allgatherv(send, spec)
    finish()


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` (world_size times the input's size) holds every rank's input,
    concatenated along dim 0 (or stacked, when it has one more dimension)."""
    comm = communicator(group)
    check_tensor(output_tensor)
    check_tensor(input_tensor)
    require_same('all_gather_into_tensor', comm, input_tensor)
    n = comm.Get_size()
    if output_tensor._data.size != n * input_tensor._data.size:
        raise DistributedError(f'all_gather_into_tensor: output has {output_tensor._data.size} '
                               f'elements, expected world size {n} x {input_tensor._data.size}')
    send = xp.ascontiguousarray(to_host(input_tensor._data))
    recv = _work_buffer(output_tensor)
    if recv.dtype != send.dtype:
        raise DistributedError('all_gather_into_tensor: output and input dtypes differ: '
                               f'{recv.dtype.name} vs {send.dtype.name}')

    def finish():
        _write_into(output_tensor, recv, 'dynagrad.distributed.all_gather_into_tensor')
    if async_op:
        return Work([comm.Iallgather(send, recv)], finish, (send, recv))
    comm.Allgather(send, recv)
    finish()


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank i's ``output`` becomes the reduction over ranks of their ``input_list[i]``."""
    comm = communicator(group)
    n = comm.Get_size()
    check_tensor(output)
    _check_list(input_list, n, 'input_list', 'reduce_scatter')
    mpi_op, op = _mpi_op(op)
    _check_avg(op, output, 'reduce_scatter')
    # Each rank states its input_list shapes; every rank's list must agree with rank i's output.
    headers = exchange_headers(comm, [output._data] + [t._data for t in input_list])
    me = comm.Get_rank()
    for r in range(n):
        for i in range(n):
            if not xp.array_equal(headers[r, 1 + i], headers[i, 0]):
                raise DistributedError(
                    f'reduce_scatter: input_list[{i}] on rank {r} is {describe(headers[r, 1 + i])}'
                    f' but rank {i} expects output {describe(headers[i, 0])} (this is rank {me})')
    counts = [t._data.size for t in input_list]
    wire = _wire_dtype(output._data.dtype)
    send = xp.concatenate([xp.ravel(to_host(t._data)).astype(wire, copy=False)
                          for t in input_list]) \
        if input_list else xp.empty(0, wire)
    recv = xp.empty(counts[me], wire)

    def finish():
        if op is ReduceOp.AVG:
            recv[...] /= n
        # recv is never output's own memory: always copied (and cast back from float32)
        _write_into(output, recv, 'dynagrad.distributed.reduce_scatter')
    if async_op:
        return Work([comm.Ireduce_scatter(send, recv, counts, op=mpi_op)], finish, (send, recv))
    comm.Reduce_scatter(send, recv, counts, op=mpi_op)
    finish()


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` holds world_size equal chunks along dim 0; rank i gets the reduced chunk i."""
    n = communicator(group).Get_size()
    check_tensor(input)
    chunks = list(input.reshape(n, *output.shape).unbind(0)) if n else []
    return reduce_scatter(output, chunks, op=op, group=group, async_op=async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    """Rank i's ``tensor`` becomes ``scatter_list[i]`` of rank ``src``."""
    comm = communicator(group)
    n = comm.Get_size()
    src = check_rank(src if group_src is None else group_src, comm, 'src')
    check_tensor(tensor)
    root = comm.Get_rank() == src
    if root:
        _check_list(scatter_list, n, 'scatter_list', 'scatter')
    elif scatter_list:
        raise ValueError('scatter: only rank src passes scatter_list')
    headers = _exchange_with_slots('scatter', comm, tensor, scatter_list if root else None,
                                   'scatter_list')
    _require_same_dtype('scatter', headers, comm)
    counts = [element_count(h) if h[1] >= 0 else 0 for h in headers]
    displs = _displacements(counts)
    recv = _work_buffer(tensor)
    send = ([xp.concatenate([xp.ravel(to_host(t._data)) for t in scatter_list]), (counts, displs)]
            if root else None)

    def finish():
        _write_into(tensor, recv, 'dynagrad.distributed.scatter')
    if async_op:
        return Work([comm.Iscatterv(send, recv, root=src)], finish, (send, recv))
    comm.Scatterv(send, recv, root=src)
    finish()


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``gather_list[i]`` becomes rank i's ``tensor`` (sizes may differ)."""
    comm = communicator(group)
    n = comm.Get_size()
    dst = check_rank(dst if group_dst is None else group_dst, comm, 'dst')
    check_tensor(tensor)
    root = comm.Get_rank() == dst
    if root:
        _check_list(gather_list, n, 'gather_list', 'gather')
    elif gather_list:
        raise ValueError('gather: only rank dst passes gather_list')
    headers = _exchange_with_slots('gather', comm, tensor, gather_list if root else None,
                                   'gather_list')
    _require_same_dtype('gather', headers, comm)
    counts = [element_count(h) for h in headers]
    displs = _displacements(counts)
    send = xp.ascontiguousarray(to_host(tensor._data))
    recv = xp.empty(sum(counts), send.dtype) if root else None

    def finish():
        if root:
            for t, c, d in zip(gather_list, counts, displs):
                _write_into(t, recv[d:d + c], 'dynagrad.distributed.gather')
    spec = [recv, (counts, displs)] if root else None
    if async_op:
        return Work([comm.Igatherv(send, spec, root=dst)], finish, (send, recv))
    comm.Gatherv(send, spec, root=dst)
    finish()


def all_gather_object(object_list, obj, group=None):
    """``object_list[i]`` becomes rank i's ``obj`` (any picklable object)."""
    comm = communicator(group)
    n = comm.Get_size()
    if len(object_list) != n:
        raise ValueError(f'all_gather_object: object_list must have world size {n} entries, '
                         f'got {len(object_list)}')
    object_list[:] = comm.allgather(obj)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """``object_list`` becomes rank ``src``'s list (same length on every rank)."""
    comm = communicator(group)
    result = comm.bcast(list(object_list), root=check_rank(src, comm, 'src'))
    if len(result) != len(object_list):
        raise DistributedError(f'broadcast_object_list: rank {src} sent {len(result)} objects, '
                               f'this rank expects {len(object_list)}')
    object_list[:] = result


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    comm = communicator(group)
    result = comm.gather(obj, root=check_rank(dst, comm, 'dst'))
    if comm.Get_rank() == dst:
        object_gather_list[:] = result


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Not done yet (it needs MPI_Alltoallv): importable for the libraries that import it
    beside the collectives they use."""
    raise NotImplementedError('dynagrad.distributed.all_to_all_single is not implemented yet')
