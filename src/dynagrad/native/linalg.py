"""``x @ weight.T (+ bias)`` for a few rows of ``x``: F.linear's forward at inference's
sizes (batch 1, a short context).

NumPy hands ``x @ weight.T`` to BLAS as a product with a transposed operand, and OpenBLAS
runs that form 2-6x slower than the untransposed one when ``x`` has a handful of rows (its
small-matrix kernels refuse it past a size: 128 -> 384 on 4 rows took 30-40 us against 5
for the same product with the weight stored transposed). Two kernels read ``weight`` as it
is:

- the packed kernel (``_linear_packed``) for whole 64-byte vectors of rows (16 float32, 8
  float64): x^T packed, its rows padded to whole vectors and transposed in registers by
  square blocks; tiles of 8 weight rows by one vector of rows, each weight value broadcast
  against the vector into 8 sums that hold 8 x 16 outputs; each tile transposed back in
  registers and stored a row at a time with the bias. Its tiles and transposes are LLVM
  intrinsics: numba has no vector type, and its scalars give the vectorisers dot products.
- the dot products (``_linear_dots``) for the rows left over (up to 6 in float64, 13 in
  float32: a packed block costs the same for 1 row as for a whole vector, see
  ``_packed_rows``): every output a dot product of two contiguous rows, in tiles of 4 rows
  of ``x`` by 4 of ``weight`` (16 sums vectorised along the shared dimension). Each output
  ends in a horizontal sum of a vector, which at an inner size of 128 (8 vector steps)
  costs about as much as the products: on 32 to 64 rows this kernel alone took 1.1-1.25x
  PyTorch's time.

Measured on one thread against NumPy's ``x @ w.T + b`` (OpenBLAS 0.3.31) and torch 2.13's
F.linear, same process, interleaved (AMD EPYC, Zen 4; benchmarks/native_linear.py), a GPT at
width 128 on 16 to 64 rows: float32 0.7-0.9x PyTorch's time (128 -> 384 on 64 rows 65 us
against 73, where the dot products took 86-95; 128 -> 128 23 against 27; 512 -> 128 83
against 96), float64 0.7-0.9x; below 7 float64 or 14 float32 rows unchanged (on one row
BLAS's matrix-vector product within 8% either way). The kernels are serial: where BLAS has
several threads the op asks for them only up to ``MAX_ROWS`` rows and ``MAX_WORK``
multiply-adds (about 0.2 ms on one core), and BLAS splits larger products; where it has
one, up to ``MAX_SERIAL_ROWS`` rows of any size.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._math import kernel, ZERO
from . import chunks
from .chunks import array_at, by_dtype, entry, rows_at
from ._vectors import fma, item_pointer, splat, vector_setup

MAX_ROWS = 64
MAX_WORK = 1 << 23
# With one thread the packed kernel also beats OpenBLAS's transposed-operand product on
# training and evaluation batches (float32, same process: 768 rows 128 -> 512 1.03 ms
# against 1.08, 512 -> 128 0.98 against 1.02, 1024 x 1024 x 1024 21.6 against 22.9): it
# is asked for up to MAX_SERIAL_ROWS rows of any size while BLAS runs on one thread
MAX_SERIAL_ROWS = 1024
# weight rows per tile of the packed kernel: 8 accumulator vectors, each fed by one
# broadcast weight value and the vector of x^T loaded once for all 8
TILE_COLS = 8


def _transposed_tile(cols):
    """An intrinsic ``tile(xt, w, b, out, j, m, count)``: ``out[m + l, j + c] = sum_k
    w[j + c, k] xt[k, m + l] + b[j + c]`` for ``c < cols`` and the 64 bytes of lanes ``l``
    (16 float32 or 8 float64); lanes from ``m + l = count`` on are padding.

    Written in LLVM's vectors because numba has none: its local arrays live on the heap,
    and its scalars give the vectorisers a dot product (one horizontal sum per output)."""
    @intrinsic
    def tile(typingctx, xt, w, b, out, j, m, count):
        sig = types.void(xt, w, b, out, types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            xt_ty, w_ty, b_ty, out_ty = signature.args[:4]
            (xt_a, w_a, b_a, out_a), scalar, size, lanes, vector, intp = vector_setup(
                context, builder, signature, args, 4)
            j0, m0, count = args[4:]
            i32 = ir.IntType(32)

            def pointer(a, ty, index):
                return item_pointer(context, builder, a, ty, index)
            inner = cgutils.unpack_tuple(builder, w_a.shape)[1]
            fused = fma(builder, vector, lanes, size)
            # allocas: LLVM promotes them to registers (the loop's phi nodes)
            sums = [cgutils.alloca_once_value(builder, ir.Constant(vector, None))
                    for _ in range(cols)]
            w_rows = [builder.add(j0, ir.Constant(intp, c)) for c in range(cols)]
            with cgutils.for_range(builder, inner) as loop:
                k = loop.index
                xs = builder.load(pointer(xt_a, xt_ty, [k, m0]), typ=vector, align=size)
                for c in range(cols):
                    wk = builder.load(pointer(w_a, w_ty, [w_rows[c], k]), typ=scalar)
                    total = builder.load(sums[c], typ=vector)
                    builder.store(builder.call(fused, [splat(builder, vector, lanes, wk), xs,
                                                       total]), sums[c])
            # each lane is one output row: its cols values, gathered from the cols sums
            # (a transpose), plus the bias, stored as one short vector
            out_row = ir.VectorType(scalar, cols)
            totals = [builder.load(s, typ=vector) for s in sums]
            bias = builder.load(pointer(b_a, b_ty, [j0]), typ=out_row, align=size)
            # padding lanes are stored too, over the last real row, before it (lanes
            # backwards): no branch per lane
            last = builder.sub(count, ir.Constant(intp, 1))
            for lane in reversed(range(lanes)):
                row = builder.add(m0, ir.Constant(intp, lane))
                row = builder.select(builder.icmp_signed('<', row, last), row, last)
                values = ir.Constant(out_row, ir.Undefined)
                for c in range(cols):
                    values = builder.insert_element(
                        values, builder.extract_element(totals[c], ir.Constant(i32, lane)),
                        ir.Constant(i32, c))
                values = builder.fadd(values, bias)
                target = pointer(out_a, out_ty, [row, j0])
                builder.store(values, builder.bitcast(target, out_row.as_pointer()), align=size)
            return context.get_dummy_value()
        return sig, codegen
    return tile


@intrinsic
def _transpose_block(typingctx, x, xt, row, m, k):
    """``xt[k + c, m + r] = x[row + r, k + c]`` for a square block of one 64-byte vector's
    lanes: rows loaded as vectors and swapped in halves, quarters, ... by two-vector
    shuffles, where a scalar transpose moves each value alone (3x the time)."""
    sig = types.void(x, xt, types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        x_ty, xt_ty = signature.args[:2]
        (x_a, xt_a), scalar, size, lanes, vector, intp = vector_setup(
            context, builder, signature, args, 2)
        row, m, k = args[2:]

        def pointer(a, ty, index):
            return builder.bitcast(item_pointer(context, builder, a, ty, index),
                                   vector.as_pointer())
        rows = [builder.load(pointer(x_a, x_ty, [builder.add(row, ir.Constant(intp, r)), k]),
                             align=size) for r in range(lanes)]
        mask = ir.VectorType(ir.IntType(32), lanes)
        half = lanes // 2
        while half:
            # rows r and r + half (r's bit `half` clear) trade their off-diagonal halves
            low = [l if l & half == 0 else lanes + l - half for l in range(lanes)]
            high = [l + half if l & half == 0 else lanes + l for l in range(lanes)]
            for r in range(lanes):
                if r & half == 0:
                    a, b = rows[r], rows[r + half]
                    rows[r] = builder.shuffle_vector(a, b, ir.Constant(mask, low))
                    rows[r + half] = builder.shuffle_vector(a, b, ir.Constant(mask, high))
            half //= 2
        for c in range(lanes):
            builder.store(rows[c], pointer(xt_a, xt_ty, [builder.add(k, ir.Constant(intp, c)),
                                                         m]), align=size)
        return context.get_dummy_value()
    return sig, codegen


_tile_many = _transposed_tile(TILE_COLS)
_tile_one = _transposed_tile(1)


@kernel
def _linear_packed(x, w, b, out, j_lo, j_hi):
    # out[m, j] = sum_k x[m, k] w[j, k] (+ b[j]) for j in [j_lo, j_hi) (j_lo a multiple of
    # TILE_COLS: each output then comes from the same tile whatever the column range),
    # vectorised along m: x^T packed with its
    # rows padded to whole vectors, each weight value broadcast against a vector of rows,
    # so no output ends in a horizontal sum
    # the intrinsics load x's rows and the bias as vectors: unit strides (no copy when
    # they have them already, as the op's arrays do)
    x = np.ascontiguousarray(x)
    count = x.shape[0]
    inner = x.shape[1]
    cols = w.shape[0]
    lanes = 64 // x.itemsize
    vectors = (count + lanes - 1) // lanes
    padded = vectors * lanes
    # x^T's rows an odd number of cache lines apart: at a power of two (64 rows: 256
    # bytes) its columns share a sixteenth of the cache's sets, and packing 64 x 512
    # took 21 us instead of 6
    xt = np.empty((inner, (vectors | 1) * lanes), x.dtype)
    bias = np.ascontiguousarray(b) if b.size > 0 else np.zeros(cols, x.dtype)
    whole_rows, whole_inner = count // lanes * lanes, inner // lanes * lanes
    for m in range(0, whole_rows, lanes):
        for k in range(0, whole_inner, lanes):
            _transpose_block(x, xt, m, m, k)
        for k in range(whole_inner, inner):
            for r in range(m, m + lanes):
                xt[k, r] = x[r, k]
    for m in range(whole_rows, count):
        for k in range(inner):
            xt[k, m] = x[m, k]
    for k in range(inner):
        for m in range(count, padded):
            xt[k, m] = ZERO
    for m in range(0, padded, lanes):
        j = j_lo
        while j + TILE_COLS <= j_hi:
            _tile_many(xt, w, bias, out, j, m, count)
            j += TILE_COLS
        while j < j_hi:
            _tile_one(xt, w, bias, out, j, m, count)
            j += 1


@kernel
def _linear_dots(x, w, b, out, j_lo, cols):
    # out[m, j] = sum_k x[m, k] w[j, k] (+ b[j]) for j in [j_lo, cols) (j_lo a multiple of
    # 4); b empty: no bias
    rows, inner = x.shape
    has_bias = b.size > 0
    j = j_lo
    while j + 4 <= cols:
        m = 0
        while m + 4 <= rows:
            a0 = a1 = a2 = a3 = ZERO
            b0 = b1 = b2 = b3 = ZERO
            c0 = c1 = c2 = c3 = ZERO
            d0 = d1 = d2 = d3 = ZERO
            for k in range(inner):
                x0, x1, x2, x3 = x[m, k], x[m + 1, k], x[m + 2, k], x[m + 3, k]
                w0, w1, w2, w3 = w[j, k], w[j + 1, k], w[j + 2, k], w[j + 3, k]
                a0 += x0 * w0
                a1 += x0 * w1
                a2 += x0 * w2
                a3 += x0 * w3
                b0 += x1 * w0
                b1 += x1 * w1
                b2 += x1 * w2
                b3 += x1 * w3
                c0 += x2 * w0
                c1 += x2 * w1
                c2 += x2 * w2
                c3 += x2 * w3
                d0 += x3 * w0
                d1 += x3 * w1
                d2 += x3 * w2
                d3 += x3 * w3
            if has_bias:
                e0, e1, e2, e3 = b[j], b[j + 1], b[j + 2], b[j + 3]
                a0 += e0
                a1 += e1
                a2 += e2
                a3 += e3
                b0 += e0
                b1 += e1
                b2 += e2
                b3 += e3
                c0 += e0
                c1 += e1
                c2 += e2
                c3 += e3
                d0 += e0
                d1 += e1
                d2 += e2
                d3 += e3
            out[m, j], out[m, j + 1], out[m, j + 2], out[m, j + 3] = a0, a1, a2, a3
            out[m + 1, j], out[m + 1, j + 1], out[m + 1, j + 2], out[m + 1, j + 3] = (
                b0, b1, b2, b3)
            out[m + 2, j], out[m + 2, j + 1], out[m + 2, j + 2], out[m + 2, j + 3] = (
                c0, c1, c2, c3)
            out[m + 3, j], out[m + 3, j + 1], out[m + 3, j + 2], out[m + 3, j + 3] = (
                d0, d1, d2, d3)
            m += 4
        while m < rows:     # the last rows, one at a time against the same 4 weight rows
            a0 = a1 = a2 = a3 = ZERO
            for k in range(inner):
                x0 = x[m, k]
                a0 += x0 * w[j, k]
                a1 += x0 * w[j + 1, k]
                a2 += x0 * w[j + 2, k]
                a3 += x0 * w[j + 3, k]
            if has_bias:
                a0 += b[j]
                a1 += b[j + 1]
                a2 += b[j + 2]
                a3 += b[j + 3]
            out[m, j], out[m, j + 1], out[m, j + 2], out[m, j + 3] = a0, a1, a2, a3
            m += 1
        j += 4
    while j < cols:         # the last weight rows, one at a time
        for m in range(rows):
            a0 = ZERO
            for k in range(inner):
                a0 += x[m, k] * w[j, k]
            if has_bias:
                a0 += b[j]
            out[m, j] = a0
        j += 1


def _packed_rows(rows, itemsize):
    """How many of the first rows go to the packed kernel, the rest to the dot products:
    whole vectors of rows, and a last partial one from 7/8 of a vector on: a packed block
    costs the same for 1 row as for a whole vector (float32, 128 -> 384: 17.5 us from 10
    to 14 rows, against 14.9 to 20.1 for the dot products, which win on 10 to 14 rows at
    an inner size of 512 or more)."""
    lanes = 64 // itemsize
    whole = rows // lanes * lanes
    return rows if (rows - whole) * 8 >= 7 * lanes else whole


_EMPTY = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


@kernel
def _linear_columns(x, w, b, out, packed, j_lo, j_hi):
    # the first ``packed`` rows by the packed kernel, the rest by the dot products
    rows = x.shape[0]
    if packed == rows:
        _linear_packed(x, w, b, out, j_lo, j_hi)
    elif packed == 0:
        _linear_dots(x, w, b, out, j_lo, j_hi)
    else:
        _linear_packed(x[:packed], w, b, out[:packed], j_lo, j_hi)
        _linear_dots(x[packed:], w, b, out[packed:], j_lo, j_hi)


@kernel
def _linear_span(d, t):
    # chunks of TILE_COLS weight rows: lo, hi count tiles
    rows, inner, cols = d[4], d[5], d[7]
    _linear_columns(rows_at(d[3], 0, rows, inner, t), rows_at(d[6], 0, cols, inner, t),
                    array_at(d[8], d[9], t), rows_at(d[10], 0, rows, cols, t), d[11],
                    d[0] * TILE_COLS, min(d[1] * TILE_COLS, cols))


@entry
def _linear_chunks(d):
    by_dtype(d, _linear_span)


# Multiply-adds per thread below which splitting the weight rows did not pay (2-core VM,
# chunks on OpenBLAS's workers, float32): 8 rows 128 -> 384 in 14 us on two threads
# against 22 on one; 16 rows 128 -> 128 9.5 against 8.2; 64 rows 128 -> 384 39 against 66
# (NumPy's OpenBLAS on two threads: 49)
MIN_WORK_PER_THREAD = 196608


def linear(x, weight, bias):
    """``x @ weight.T (+ bias)`` for a C-contiguous (rows, in) ``x`` and (out, in)
    ``weight`` of its dtype; ``bias``: None or an (out,) array of that dtype. On several
    threads the weight's rows are split in whole tiles (each output computed as on one)."""
    rows, inner = x.shape
    cols = weight.shape[0]
    out = np.empty((rows, cols), x.dtype)
    b = _EMPTY[x.dtype] if bias is None else bias
    packed = _packed_rows(rows, x.itemsize)
    parts = 1
    if rows * inner * cols >= 2 * MIN_WORK_PER_THREAD:
        tiles = -(-cols // TILE_COLS)
        parts = chunks.parts(tiles, -(-MIN_WORK_PER_THREAD // (rows * inner * TILE_COLS)))
    if parts == 1:
        _linear_columns(x, weight, b, out, packed, 0, cols)
    else:
        chunks.run(_linear_chunks, tiles, parts, x.dtype, x, rows, inner, weight, cols, b,
                   b.size, out, packed)
    return out


# -- x @ w for a few rows, the weight stored (in, out) ------------------------------------
#
# A recurrent layer's step multiplies a few rows (the batch) by the same weight at every time
# step, so the weight can be laid out once as (in, out): then each output row is a sum of
# weight rows scaled by x's values, and a tile of ROWS rows of x by COLS_VECTORS vectors of
# outputs keeps ROWS x COLS_VECTORS sums in registers, loading COLS_VECTORS weight vectors
# and broadcasting ROWS values of x per step of the inner dimension (9 loads for 20 fused
# multiply-adds; the packed kernel above takes 9 for 8). One thread, float32, in an LSTM
# of width 200 on 20 rows: its step's (20, 200) @ (200, 800) 56 us against the packed
# kernel's 70 and OpenBLAS's 82 (x @ w.T) or 53 (x @ w stored transposed), and the whole
# layer's forward 8.5 ms against 11.4 (PyTorch's 10.0), where the weight stays in cache
# between steps.
ROWS = 5
COLS_VECTORS = 4


def _row_tile(rows, vectors, fraction):
    """An intrinsic ``tile(x, w, out, m, j)``: ``out[m + r, j + c] = sum_k x[m + r, k]
    w[k, j + c]`` for ``r < rows`` and ``c`` over ``vectors`` vectors of 64 / ``fraction``
    bytes (a half vector finishes a row's last columns)."""
    @intrinsic
    def tile(typingctx, x, w, out, m, j):
        sig = types.void(x, w, out, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            x_ty, w_ty, out_ty = signature.args[:3]
            (x_a, w_a, out_a), scalar, size, lanes, _, intp = vector_setup(
                context, builder, signature, args, 3)
            lanes //= fraction
            vector = ir.VectorType(scalar, lanes)
            m0, j0 = args[3:]

            def pointer(a, ty, index, typ=None):
                p = item_pointer(context, builder, a, ty, index)
                return p if typ is None else builder.bitcast(p, typ.as_pointer())
            inner = cgutils.unpack_tuple(builder, x_a.shape)[1]
            fused = fma(builder, vector, lanes, size)
            sums = [[cgutils.alloca_once_value(builder, ir.Constant(vector, None))
                     for _ in range(vectors)] for _ in range(rows)]
            x_rows = [builder.add(m0, ir.Constant(intp, r)) for r in range(rows)]
            cols = [builder.add(j0, ir.Constant(intp, v * lanes)) for v in range(vectors)]
            with cgutils.for_range(builder, inner) as loop:
                k = loop.index
                ws = [builder.load(pointer(w_a, w_ty, [k, c], vector), align=size)
                      for c in cols]
                for r in range(rows):
                    xk = splat(builder, vector, lanes,
                               builder.load(pointer(x_a, x_ty, [x_rows[r], k])))
                    for v in range(vectors):
                        total = builder.load(sums[r][v], typ=vector)
                        builder.store(builder.call(fused, [xk, ws[v], total]), sums[r][v])
            for r in range(rows):
                for v in range(vectors):
                    builder.store(builder.load(sums[r][v], typ=vector),
                                  pointer(out_a, out_ty, [x_rows[r], cols[v]], vector),
                                  align=size)
            return context.get_dummy_value()
        return sig, codegen
    return tile


_tile_wide = _row_tile(ROWS, COLS_VECTORS, 1)
_tile_vector = _row_tile(ROWS, 1, 1)
_tile_half = _row_tile(ROWS, 1, 2)


@kernel
def _row_block(x, w, out, m, j, cols):
    # rows m to m + ROWS of the product, columns j to cols: wide tiles, then one vector, a
    # half vector and single columns
    inner = x.shape[1]
    lanes = 64 // x.itemsize
    while j + COLS_VECTORS * lanes <= cols:
        _tile_wide(x, w, out, m, j)
        j += COLS_VECTORS * lanes
    while j + lanes <= cols:
        _tile_vector(x, w, out, m, j)
        j += lanes
    if j + lanes // 2 <= cols:
        _tile_half(x, w, out, m, j)
        j += lanes // 2
    for r in range(m, m + ROWS):
        for c in range(j, cols):
            total = ZERO
            for k in range(inner):
                total += x[r, k] * w[k, c]
            out[r, c] = total


@kernel
def _matmul_rows(x, w, out, j_lo, j_hi):
    # columns j_lo to j_hi (j_lo a multiple of a wide tile's columns: each output then
    # comes from the same tile whatever the range)
    rows = x.shape[0]
    whole = rows // ROWS * ROWS
    for m in range(0, whole, ROWS):
        _row_block(x, w, out, m, j_lo, j_hi)
    if whole < rows:
        # the last rows through one more block, padded with zero rows
        padded = np.zeros((ROWS, x.shape[1]), x.dtype)
        padded[:rows - whole] = x[whole:]
        block = np.empty((ROWS, w.shape[1]), x.dtype)
        _row_block(padded, w, block, 0, j_lo, j_hi)
        out[whole:, j_lo:j_hi] = block[:rows - whole, j_lo:j_hi]


# Multiply-adds per thread below which splitting the columns did not pay (2-core VM, chunks
# on OpenBLAS's workers, float32): (20, 200) @ (200, 800), the LSTM LM's step, in 44 us on
# two threads against 66 on one (NumPy's OpenBLAS: 60); (10, 200) @ (200, 800) 27 against
# 36; (20, 100) @ (100, 400) 17.5 against 17.6
MIN_ROWS_WORK_PER_THREAD = 524288


@kernel
def _matmul_rows_span(d, t):
    # chunks of wide tiles of columns: lo, hi count tiles
    rows, inner, cols, tile = d[4], d[5], d[7], d[9]
    _matmul_rows(rows_at(d[3], 0, rows, inner, t), rows_at(d[6], 0, inner, cols, t),
                 rows_at(d[8], 0, rows, cols, t), d[0] * tile, min(d[1] * tile, cols))


@entry
def _matmul_rows_chunks(d):
    by_dtype(d, _matmul_rows_span)


def matmul_rows(x, w, out=None):
    """``x @ w`` for a C-contiguous (rows, in) ``x`` and (in, out) ``w`` of its dtype, into
    ``out`` (a C-contiguous (rows, out) array) when given. On several threads the columns
    are split in whole wide tiles (each output computed as on one thread)."""
    rows, inner = x.shape
    cols = w.shape[1]
    if out is None:
        out = np.empty((rows, cols), x.dtype)
    work = rows * inner * cols
    parts = 1
    if work >= 2 * MIN_ROWS_WORK_PER_THREAD:
        tile = COLS_VECTORS * 64 // x.itemsize
        tiles = -(-cols // tile)
        parts = chunks.parts(tiles, -(-MIN_ROWS_WORK_PER_THREAD // (rows * inner * tile)))
    if parts == 1:
        _matmul_rows(x, w, out, 0, cols)
    else:
        chunks.run(_matmul_rows_chunks, tiles, parts, x.dtype, x, rows, inner, w, cols, out,
                   tile)
    return out
