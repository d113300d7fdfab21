"""NumPy's own BLAS GEMM called directly, where NumPy's ``matmul`` leaves time on the table.

**Batched products of small matrices.** NumPy's ``matmul`` of stacked matrices calls GEMM
once per matrix from one thread: attention's (12, 4, 64, 32) @ (12, 4, 32, 64) is 48
products of 131,072 multiply-adds each, too small for OpenBLAS to thread, so a second core
never helps. Here the same GEMMs (same operands, transposition flags and leading dimensions
as NumPy's loop passes, so the same bits) are called from compiled code, the batch split
into chunks on the BLAS's own workers (``chunks``). Each product stays below OpenBLAS's
threading size (65,536 x 4 multiply-adds), so a GEMM called inside a worker runs on that
worker alone. The GEMM is reached through its address, called with an LLVM function type
written here.

**A linear layer's bias folded into its product** (``linear_bias``): the output filled
with the bias, then GEMM with beta = 1 adds the product to it, as PyTorch's ``addmm`` does,
instead of a product and then a second pass adding the bias.

Both use the 64-bit integer interface of NumPy's wheels' OpenBLAS
(``scipy_cblas_sgemm64_``, ``scipy_cblas_dgemm64_``); where that library or symbol is
absent the ops keep NumPy's ``matmul``.
"""
import ctypes
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .. import backend
from ._math import kernel
from . import chunks
from .chunks import array_at, by_dtype, entry

# the products this path takes: at most OpenBLAS's one-thread size each
MAX_WORK_PER_MATRIX = 65536 * 4
# multiply-adds per thread below which splitting the batch did not pay (2-core VM):
# attention's 64 x 32 x 64 products, 4 of them in 27 us on two threads against NumPy's 17,
# 16 in 56 against 71, 48 in 122 against 199
MIN_WORK_PER_THREAD = 524288
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
_SYMBOLS = {np.dtype(np.float32): 'scipy_cblas_sgemm64_',
            np.dtype(np.float64): 'scipy_cblas_dgemm64_'}


@intrinsic
def _gemm(typingctx, function, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc):
    """``C = alpha op(A) op(B)`` (row-major, beta 0) through the CBLAS GEMM at the int64
    address ``function``; matrices by address, integers 64-bit (the ILP64 interface)."""
    def codegen(context, builder, signature, args):
        fn, ta, tb, m_, n_, k_, al, a_, lda_, b_, ldb_, c_, ldc_ = args
        i32, i64 = ir.IntType(32), ir.IntType(64)
        real = context.get_value_type(signature.args[6])
        pointer = ir.IntType(8).as_pointer()
        gemm_type = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, real,
                                                    pointer, i64, pointer, i64, real,
                                                    pointer, i64])
        call = builder.inttoptr(fn, gemm_type.as_pointer())
        builder.call(call, [i32(ROW_MAJOR), builder.trunc(ta, i32), builder.trunc(tb, i32),
                            m_, n_, k_, al, builder.inttoptr(a_, pointer), lda_,
                            builder.inttoptr(b_, pointer), ldb_, real(0),
                            builder.inttoptr(c_, pointer), ldc_])
        return context.get_dummy_value()
    i = types.int64
    return types.void(i, i, i, i, i, i, alpha, i, i, i, i, i, i), codegen


@kernel
def _bmm_span(d, t):
    # fields: the GEMM, trans_a, trans_b, m, n, k, lda, ldb, ldc; the addresses of A, B
    # and C; the batch's three axes (padded with 1s); A's and B's byte strides along them
    lo, hi = d[0], d[1]
    n1, n2 = d[16], d[17]
    one = t(1)
    for i in range(lo, hi):
        i0, rest = divmod(i, n1 * n2)
        i1, i2 = divmod(rest, n2)
        a = d[12] + i0 * d[18] + i1 * d[19] + i2 * d[20]
        b = d[13] + i0 * d[21] + i1 * d[22] + i2 * d[23]
        c = d[14] + i * d[6] * d[7] * d[24]
        _gemm(d[3], d[4], d[5], d[6], d[7], d[8], one, a, d[9], b, d[10], c, d[11])


@entry
def _bmm_chunks(d):
    by_dtype(d, _bmm_span)


class _Gemm:
    functions = None    # dtype -> the GEMM (ctypes), found on first use ({} when none)


def _gemm_function(dtype):
    if _Gemm.functions is None:
        _Gemm.functions = {}
        lib = backend.blas_library()
        if lib is not None and lib.internal_api == 'openblas':
            so = ctypes.CDLL(lib.filepath)
            for dt, name in _SYMBOLS.items():
                function = getattr(so, name, None)
                if function is not None:
                    real = ctypes.c_float if dt == np.float32 else ctypes.c_double
                    i32, i64, address = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p
                    function.argtypes = [i32, i32, i32, i64, i64, i64, real, address, i64,
                                         address, i64, real, address, i64]
                    function.restype = None
                    _Gemm.functions[dt] = function
    return _Gemm.functions.get(dtype)


def _gemm_address(dtype):
    function = _gemm_function(dtype)
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def _layout(m, rows, cols):
    """(transposition flag, leading dimension) of the matrices of ``m`` (rows x cols each)
    as NumPy's loop passes them to GEMM: untransposed where the rows are unit-strided,
    else transposed where the columns are, else None (NumPy runs its own loop then)."""
    item = m.itemsize
    s_rows, s_cols = m.strides[-2], m.strides[-1]
    if s_cols == item and s_rows % item == 0 and s_rows // item >= cols:
        return NO_TRANS, s_rows // item
    if s_rows == item and s_cols % item == 0 and s_cols // item >= rows:
        return TRANS, s_cols // item
    return None


def _batch_strides(m, batch):
    """``m``'s byte strides along the three batch axes of ``batch`` (0 where broadcast)."""
    view = np.broadcast_to(m, batch + m.shape[-2:])
    return (0,) * (3 - len(batch)) + view.strides[:-2]


def batched_matmul(a, b):
    """``a @ b`` for float32 or float64 ``a`` (..., M, K) and ``b`` (..., K, N) with up to
    three batch axes (broadcasting), each product small, on several threads: the GEMMs
    NumPy's loop would call, with the same arguments, so the bits are NumPy's. None where
    this path does not apply or would not pay (NumPy's ``matmul`` then): one chunk, a
    vector operand (NumPy calls GEMV or a dot), operands GEMM cannot read as they are, or
    one matrix times its own transpose (NumPy calls SYRK)."""
    if a.ndim < 2 or b.ndim < 2 or max(a.ndim, b.ndim) < 3 or a.dtype != b.dtype:
        return None
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if b.shape[-2] != K or M < 2 or N < 2 or K < 1 or M * N * K > MAX_WORK_PER_MATRIX:
        return None
    # below the threshold before anything costlier (a batch is at least each operand's)
    if max(math.prod(a.shape[:-2]), math.prod(b.shape[:-2])) * M * N * K \
            < 2 * MIN_WORK_PER_THREAD:
        return None
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return None
    count = math.prod(batch)
    parts = chunks.parts(count, -(-MIN_WORK_PER_THREAD // (M * N * K)))
    if parts == 1 or len(batch) > 3:
        return None
    function = _gemm_address(a.dtype)
    la, lb = _layout(a, M, K), _layout(b, K, N)
    if function is None or la is None or lb is None or a.ctypes.data == b.ctypes.data:
        return None
    out = np.empty(batch + (M, N), a.dtype)
    axes = (1,) * (3 - len(batch)) + batch
    # addresses as ints: the operands' views come in many layouts and ranks, each a new
    # signature for the descriptor filler to compile
    chunks.run(_bmm_chunks, count, parts, a.dtype, function, la[0], lb[0], M, N, K, la[1],
               lb[1], N, a.ctypes.data, b.ctypes.data, out.ctypes.data, *axes,
               *_batch_strides(a, batch), *_batch_strides(b, batch), out.itemsize)
    return out


# outputs from which folding the bias pays (2-core VM, two threads): (768, 512) from
# (768, 128) 0.56 ms against 0.62 for the product and the addition; the LSTM LM's decoder
# (700, 10000) 16.4 against 16.9
MIN_FOLDED_OUTPUT = 65536


def linear_bias(x, weight, bias):
    """``x @ weight.T + bias`` for a C-contiguous (rows, in) ``x``, a C-contiguous (out, in)
    ``weight`` and an (out,) ``bias`` of its dtype, the bias folded into the GEMM; None
    (NumPy's product and addition then) below ``MIN_FOLDED_OUTPUT`` outputs or without the
    GEMM."""
    rows, inner = x.shape
    cols = weight.shape[0]
    if rows * cols < MIN_FOLDED_OUTPUT or not inner:
        return None
    gemm = _gemm_function(x.dtype)
    if gemm is None:
        return None
    out = np.empty((rows, cols), x.dtype)
    out[...] = bias
    gemm(ROW_MAJOR, NO_TRANS, TRANS, rows, cols, inner, 1.0, x.ctypes.data, inner,
         weight.ctypes.data, inner, 1.0, out.ctypes.data, cols)
    return out
