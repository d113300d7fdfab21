"""Kernels over chunks of rows, run on the BLAS's own worker threads.

Why not only ``threads.parallel_for``: on two cores OpenBLAS keeps its worker thread
spinning between products for a while (measured: 99% of the second core through a GPT
evaluation pass), so a Python thread woken to take a chunk has no core to run on, and the
hand-off through the GIL and a queue took 20-40 us before a chunk began. NumPy's OpenBLAS
exports ``gotoblas_pthread(n, function, args, stride)``, which runs
``function(args + i * stride)`` for ``i < n`` on the calling thread and ``n - 1`` of the
same worker threads its products use: a chunk starts within microseconds and products and
kernels share one pool, as PyTorch's do. GELU over (12, 64, 512) float32 on two threads:
110 us against 194 on one thread and 182 through the Python pool (measured).

A chunk entry is a C callback ``entry(descriptor)`` that numba compiles (``cfunc``,
cached on disk) from a module-level function; the descriptor is a row of int64s:
``lo, hi, dtype code``, then the call's fields (addresses of C-contiguous arrays, sizes,
flags, floats as their IEEE bits). Every chunk runs the same code over its own rows, so the
result does not depend on the thread count. Where NumPy's BLAS is not a threaded OpenBLAS
with that symbol (MKL, Accelerate), or threadpoolctl is missing, the same entries run on
``threads.parallel_for``'s Python pool through ctypes, on larger chunks only.
"""
import ctypes

import numpy as np
from numba import carray, cfunc, literal_unroll, njit, types
from numba.extending import intrinsic, overload

from .. import backend
from . import threads

FLOAT32, FLOAT64 = 0, 1
_CODES = {np.dtype(np.float32): FLOAT32, np.dtype(np.float64): FLOAT64}
SIGNATURE = types.void(types.CPointer(types.int64))
# Python threads start a chunk 20-40 us after the call against about 1 us for the BLAS's
# spinning workers: without those, splitting pays only on chunks this many times larger
PYTHON_POOL_FACTOR = 8


class Entry:
    """A chunk entry: ``fn(descriptor)``, compiled as a C callback on first use."""

    __slots__ = ('fn', 'compiled')

    def __init__(self, fn):
        self.fn, self.compiled = fn, None

    def callback(self):
        if self.compiled is None:
            self.compiled = cfunc(SIGNATURE, nogil=True, cache=True)(self.fn)
        return self.compiled


def entry(fn):
    """Decorator: ``fn(d)`` (module-level, numba-compilable) as a chunk entry."""
    return Entry(fn)


@intrinsic
def _pointer(typingctx, address, dtype):
    """The int64 ``address`` as a pointer to ``dtype`` values."""
    target = types.CPointer(dtype.instance_type)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(target))
    return target(types.int64, dtype), codegen


@intrinsic
def _bitcast(typingctx, value, to):
    """``value``'s 64 bits read as a ``to`` (float64 <-> int64)."""
    target = to.instance_type

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(target))
    return target(value, to), codegen


def _njit_inline(fn):
    return njit(inline='always', nogil=True)(fn)


@_njit_inline
def array_at(address, size, dtype):
    """The ``size`` values of ``dtype`` at ``address`` (a C-contiguous array's data)."""
    return carray(_pointer(address, dtype), size)


@_njit_inline
def by_dtype(d, span):
    """``span(d, dtype)`` with the dtype the descriptor's code names: what every chunk entry
    does, so one compiled entry serves float32 and float64."""
    if d[2] == FLOAT32:
        span(d, np.float32)
    else:
        span(d, np.float64)


@_njit_inline
def rows_at(address, lo, hi, n, dtype):
    """Rows ``lo:hi`` of the (rows, ``n``) C-contiguous array at ``address``."""
    return carray(_pointer(address, dtype), (hi, n))[lo:]


@_njit_inline
def blocks_at(address, lo, hi, m, n, dtype):
    """Blocks ``lo:hi`` of the (blocks, ``m``, ``n``) C-contiguous array at ``address``."""
    return carray(_pointer(address, dtype), (hi, m, n))[lo:]


@_njit_inline
def float_at(bits, dtype):
    """The float given by its float64 bits, in ``dtype``."""
    return dtype(_bitcast(bits, np.float64))


def _field(value):
    """A descriptor field: an array's address, a float's bits, an int or a bool."""


@overload(_field, inline='always')
def _field_of(value):
    if isinstance(value, types.Array):
        return lambda value: np.int64(value.ctypes.data)
    if isinstance(value, types.Float):
        return lambda value: _bitcast(np.float64(value), np.int64)
    if isinstance(value, (types.Integer, types.Boolean)):
        return lambda value: np.int64(value)


@njit(nogil=True, cache=True)
def _describe(d, count, code, fields):
    """Fills the descriptors ``d`` (one row per chunk); returns their address."""
    parts = d.shape[0]
    for i in range(parts):
        d[i, 0], d[i, 1], d[i, 2] = count * i // parts, count * (i + 1) // parts, code
        k = 3
        for value in literal_unroll(fields):
            d[i, k] = _field(value)
            k += 1
    return d.ctypes.data


class _Runner:
    function = None     # gotoblas_pthread of NumPy's OpenBLAS, when found
    looked = False


def _blas_runner():
    if not _Runner.looked:
        _Runner.looked = True
        lib = backend.blas_library()
        if lib is not None and lib.internal_api == 'openblas' \
                and getattr(lib, 'threading_layer', None) == 'pthreads':
            function = getattr(ctypes.CDLL(lib.filepath), 'gotoblas_pthread', None)
            if function is not None:
                function.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int]
                function.restype = ctypes.c_int
                _Runner.function = function
    return _Runner.function


def parts(count, min_per_thread):
    """How many chunks to split ``count`` rows into (1: run the kernel directly)."""
    if _blas_runner() is None:
        min_per_thread *= PYTHON_POOL_FACTOR
    return threads.chunks(count, min_per_thread)


def run(chunk_entry, count, n_chunks, dtype, *fields):
    """``chunk_entry`` over ``n_chunks`` near-equal consecutive ranges of ``range(count)``,
    each with the descriptor ``(lo, hi, dtype code, *fields)`` (arrays given by address:
    they must be C-contiguous and stay alive for the call, which they do). The
    descriptors are filled by compiled code: in Python, an array's address alone costs
    1 us."""
    d = np.empty((n_chunks, 3 + len(fields)), np.int64)
    address = _describe(d, count, _CODES[dtype], fields)
    callback = chunk_entry.callback()
    runner = _blas_runner()
    if runner is not None:
        runner(n_chunks, callback.address, address, d.strides[0])
        return
    call, stride = callback.ctypes, d.strides[0]

    def chunks_from(lo, hi):
        for i in range(lo, hi):
            call(ctypes.cast(address + i * stride, call.argtypes[0]))
    threads.parallel_for(n_chunks, n_chunks, chunks_from)
