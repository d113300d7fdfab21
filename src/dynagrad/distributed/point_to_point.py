"""Point-to-point messages between two ranks: send/recv and their non-blocking forms.

A message is a header (the sender's rank, then the tensor's header: dtype, shape) followed
by the data, both on the same tag: MPI keeps the messages between two ranks on one tag in
order, so the receiver can check the header before it takes the data.

Tensors on the 'cuda' device are sent from and received into host buffers
(``host_buffers``); CUDA-aware MPI is not used.
"""
import numpy as np

from ..backend import xp
from ..tensor import bump_version
from .host_buffers import copy_into, on_device, to_host
from .checks import (HEADER_SIZE, DistributedError, check_rank, check_tensor, describe,
                     dtype_of, element_count, headers_of)
from .process_group import communicator, mpi_names
from .work import Work

__all__ = ['send', 'recv', 'isend', 'irecv']

_MESSAGE_HEADER_SIZE = 1 + HEADER_SIZE  # the sender's rank, then the tensor's header


def _send_start(tensor, dst, tag, comm, nonblocking):
    check_tensor(tensor)
    dst = check_rank(dst, comm, 'dst')
    if dst == comm.Get_rank():
        raise ValueError('send: a rank cannot send to itself')
    head = xp.concatenate([[comm.Get_rank()], headers_of([tensor._data])[0]])
    data = xp.ascontiguousarray(to_host(tensor._data))   # a device tensor: a host copy
    if nonblocking:
        return Work([comm.Isend(head, dst, tag), comm.Isend(data, dst, tag)], None, (head, data))
    comm.Send(head, dst, tag)
    comm.Send(data, dst, tag)


def _check_message(tensor, head, source, comm):
    sent = head[1:]
    mine = headers_of([tensor._data])[0]
    if not xp.array_equal(mine, sent):
        raise DistributedError(f'recv: rank {source} sent {describe(sent)} but rank '
                               f'{comm.Get_rank()} receives into {describe(mine)}')


def _receive_into(tensor, buf):
    if on_device(tensor._data):
        copy_into(tensor._data, buf)    # the message lands on the host; then the device
    else:
        tensor._data[...] = buf
    bump_version(tensor, 'dynagrad.distributed.recv')


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    comm = communicator(group)
    _send_start(tensor, dst if group_dst is None else group_dst, tag, comm, False)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    comm = communicator(group)
    return _send_start(tensor, dst if group_dst is None else group_dst, tag, comm, True)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Fill ``tensor`` from rank ``src`` (any rank when None); return the sender's rank."""
    comm = communicator(group)
    check_tensor(tensor)
    MPI = mpi_names()
    src = src if group_src is None else group_src
    head = xp.empty(_MESSAGE_HEADER_SIZE, np.int64)
    comm.Recv(head, MPI.ANY_SOURCE if src is None else check_rank(src, comm, 'src'), tag)
    source = int(head[0])
    buf = xp.empty(tensor._data.shape, tensor._data.dtype)
    try:
        _check_message(tensor, head, source, comm)
    except DistributedError:
        # Drain the data message so the job can go on, then report.
        comm.Recv(xp.empty(element_count(head[1:]), dtype_of(head[1:])), source, tag)
        raise
    comm.Recv(buf, source, tag)
    _receive_into(tensor, buf)
    return source


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Non-blocking ``recv``; ``wait()`` returns once ``tensor`` holds the message.

    With ``src`` given, both messages are posted at once; with ``src=None`` the data is
    received when ``wait()`` learns the sender from the header.
    """
    comm = communicator(group)
    check_tensor(tensor)
    MPI = mpi_names()
    src = src if group_src is None else group_src
    head = xp.empty(_MESSAGE_HEADER_SIZE, np.int64)
    if src is None:
        def finish_any():
            source = int(head[0])
            _check_message(tensor, head, source, comm)
            buf = xp.empty(tensor._data.shape, tensor._data.dtype)
            comm.Recv(buf, source, tag)
            _receive_into(tensor, buf)
            return source
        return Work([comm.Irecv(head, MPI.ANY_SOURCE, tag)], finish_any, head)
    src = check_rank(src, comm, 'src')
    buf = xp.empty(tensor._data.shape, tensor._data.dtype)

    def finish():
        _check_message(tensor, head, src, comm)
        _receive_into(tensor, buf)
        return src
    return Work([comm.Irecv(head, src, tag), comm.Irecv(buf, src, tag)], finish, (head, buf))
