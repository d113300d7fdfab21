"""What every rank checks before data moves, so that a mismatch raises on every rank with
both sides named instead of hanging or corrupting memory.

A tensor is described by a fixed-size int64 header (dtype code, ndim, dims): fixed-size so
that all ranks can exchange headers with one plain all-gather, whatever the tensors are.
"""
import numpy as np

from ..backend import xp
from ..tensor import Tensor

__all__ = ['DistributedError']

MAX_DIMS = 12
WIRE_DTYPES = ['float32', 'float64', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8',
               'bool']
HEADER_SIZE = 2 + MAX_DIMS


class DistributedError(RuntimeError):
    """A collective was called inconsistently across ranks (shape, dtype, count)."""


def check_tensor(t, what='tensor'):
    if not isinstance(t, Tensor):
        raise TypeError(f'{what} must be a dynagrad.Tensor, got {type(t).__name__}')


def check_rank(r, comm, what):
    r = int(r)
    if not 0 <= r < comm.Get_size():
        raise ValueError(f'{what}={r} is not a rank of this job (world size {comm.Get_size()})')
    return r


def headers_of(arrays):
    """One header row per array; an array of None gets ndim -1 (a rank that passes nothing)."""
    h = xp.full((len(arrays), HEADER_SIZE), -1, np.int64)
    for i, a in enumerate(arrays):
        if a is None:
            continue
        name = a.dtype.name
        if name not in WIRE_DTYPES:
            raise TypeError(f'dynagrad.distributed cannot send {name} tensors')
        h[i, 0] = WIRE_DTYPES.index(name)
        h[i, 1] = a.ndim
        if a.ndim <= MAX_DIMS:
            h[i, 2:2 + a.ndim] = a.shape
        else:
            h[i, 2] = a.size
    return h


def describe(header):
    code, ndim = int(header[0]), int(header[1])
    if ndim < 0:
        return 'nothing'
    dtype = WIRE_DTYPES[code]
    shape = [int(d) for d in header[2:2 + ndim]] if ndim <= MAX_DIMS else f'<{ndim}-d>'
    return f'{shape} ({dtype})'


def element_count(header):
    ndim = int(header[1])
    return int(xp.prod(header[2:2 + ndim])) if ndim <= MAX_DIMS else int(header[2])


def dtype_of(header):
    return np.dtype(WIRE_DTYPES[int(header[0])])


def exchange_headers(comm, arrays):
    """All ranks' headers for ``arrays``: shape (world, len(arrays), HEADER_SIZE)."""
    mine = headers_of(arrays)
    out = xp.empty((comm.Get_size(),) + mine.shape, np.int64)
    comm.Allgather(mine, out)
    return out


def require_same(name, comm, t):
    """Raise on every rank when ``t`` differs in shape or dtype across ranks."""
    headers = exchange_headers(comm, [t._data])[:, 0]
    ref = headers[0]
    for r in range(1, len(headers)):
        if not xp.array_equal(headers[r], ref):
            raise DistributedError(
                f'{name}: the tensors differ across ranks: rank 0 has {describe(ref)}, '
                f'rank {r} has {describe(headers[r])} (this is rank {comm.Get_rank()}); '
                'every rank must pass a tensor of the same shape and dtype')
