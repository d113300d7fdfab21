"""A 2-d convolution's forward without im2col: stride 1, one group, float32 and float64.

im2col writes every window out before the GEMM reads it back: on the benchmark CNN's
second layer (32x16x13x13, 16 -> 32 channels, 3x3) the columns took 0.22 ms of the forward's
0.61 ms, where PyTorch's direct convolution takes 0.42 in all. Here the GEMM reads the
windows in place. With the (zero-padded) input laid flat per image, an output position
``p = i * Wp + j`` (``Wp`` the padded width, ``j`` running past the output's width into
positions that are computed and thrown away) reads input ``p + offset[c, di, dj]`` for
each window tap: for a vector of consecutive positions, one contiguous load per tap. A
tile of 8 output channels by one 64-byte vector of positions keeps 8 sums in registers,
each tap's load feeding 8 fused multiply-adds with the 8 channels' weights broadcast (the
few-row linear kernel's tile, ``linalg.py``, reading its rows through the tap offsets).
The positions past the output's width cost ``(kw - 1) / Wp`` more multiply-adds (2/13
here), less than the columns' copy.

Used by ``F.conv2d`` where the weight needs no gradient (inference, frozen layers): a
training step keeps im2col, whose columns its weight gradient reuses.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._math import kernel
from ._vectors import fma, item_pointer, splat, vector_setup
from .threads import chunks, parallel_for

# output channels per tile: 8 accumulator vectors fed by one load of the input
TILE = 8
U = np.uint64
# multiply-adds per thread below which the images are not split (about 0.1 ms of work:
# the pool's hand-off costs tens of microseconds)
MIN_PER_THREAD = 1 << 22


def _tap_tile(rows):
    """An intrinsic ``tile(x, taps, w, b, y, base, o, p)``: for ``r < rows`` and the
    positions ``p + l`` of one vector, ``y[o + r, p + l] = b[o + r] + sum_k w[o + r, k]
    x[base + taps[k] + p + l]``."""
    @intrinsic
    def tile(typingctx, x, taps, w, b, y, base, o, p):
        sig = types.void(x, taps, w, b, y, types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            x_ty, taps_ty, w_ty, b_ty, y_ty = signature.args[:5]
            (x_a, taps_a, w_a, b_a, y_a), scalar, size, lanes, vector, intp = vector_setup(
                context, builder, signature, args, 5)
            base, o0, p0 = args[5:]
            count = cgutils.unpack_tuple(builder, taps_a.shape)[0]
            fused = fma(builder, vector, lanes, size)
            sums = [cgutils.alloca_once_value(builder, ir.Constant(vector, None))
                    for _ in range(rows)]
            channels = [builder.add(o0, ir.Constant(intp, r)) for r in range(rows)]
            start = builder.add(base, p0)
            with cgutils.for_range(builder, count) as loop:
                k = loop.index
                tap = builder.load(item_pointer(context, builder, taps_a, taps_ty, [k]))
                at = item_pointer(context, builder, x_a, x_ty, [builder.add(start, tap)])
                xs = builder.load(builder.bitcast(at, vector.as_pointer()), align=size)
                for r in range(rows):
                    wk = builder.load(item_pointer(context, builder, w_a, w_ty,
                                                   [channels[r], k]))
                    total = builder.load(sums[r])
                    builder.store(builder.call(fused, [splat(builder, vector, lanes, wk), xs,
                                                       total]), sums[r])
            for r in range(rows):
                bias = builder.load(item_pointer(context, builder, b_a, b_ty, [channels[r]]))
                values = builder.fadd(builder.load(sums[r]), splat(builder, vector, lanes, bias))
                at = item_pointer(context, builder, y_a, y_ty, [channels[r], p0])
                builder.store(values, builder.bitcast(at, vector.as_pointer()), align=size)
            return context.get_dummy_value()
        return sig, codegen
    return tile


_tile_many = _tap_tile(TILE)
_tile_one = _tap_tile(1)


@kernel
def _conv(x, taps, w, b, out, image, width):
    # one image at a time: every vector of its flat positions, all output channels for
    # each (the vector's loads stay in cache across the tiles), into a scratch plane that
    # stays in cache too; then its rows, without the positions past the output's width,
    # into out (N, O, OH, OW)
    N, O, OH, OW = out.shape
    lanes = 64 // x.itemsize
    positions = (OH * width + lanes - 1) // lanes * lanes
    plane = np.empty((O, positions), x.dtype)
    # flat, with unsigned offsets: a signed index keeps numba's wrap-around test per
    # element and the row copies scalar (0.2 ms of conv1's 0.29 with slices)
    flat_plane, flat_out = plane.reshape(-1), out.reshape(-1)
    dst = U(0)
    for n in range(N):
        base = n * image
        for p in range(0, positions, lanes):
            o = 0
            while o + TILE <= O:
                _tile_many(x, taps, w, b, plane, base, o, p)
                o += TILE
            while o < O:
                _tile_one(x, taps, w, b, plane, base, o, p)
                o += 1
        for o in range(O):
            src = U(o * positions)
            for i in range(OH):
                for j in range(U(OW)):
                    flat_out[dst + j] = flat_plane[src + j]
                src += U(width)
                dst += U(OW)


def conv2d_direct(x, w, b, pads, dilation):
    """The convolution of ``x`` (N, C, H, W) with ``w`` (O, C, kh, kw) at stride 1, one
    group, ``pads`` ((top, bottom), (left, right)), ``dilation`` (dh, dw); ``b``: None or
    an (O,) array. Arrays of one dtype, float32 or float64; a new C-contiguous result."""
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    (top, bottom), (left, right) = pads
    dh, dw = dilation
    Hp, Wp = H + top + bottom, W + left + right
    OH, OW = Hp - dh * (kh - 1), Wp - dw * (kw - 1)
    lanes = 64 // x.itemsize
    # flat positions i * Wp + j of the OH output rows (j past OW thrown away), rounded up
    # to whole vectors; the input buffer runs on far enough for the last vector's taps
    positions = -(-OH * Wp // lanes) * lanes
    image = C * Hp * Wp
    # (intp: the tile adds them to addresses; NumPy 1's default integer on Windows is 32-bit)
    taps = ((np.arange(C, dtype=np.intp) * (Hp * Wp))[:, None, None]
            + (np.arange(kh, dtype=np.intp) * (dh * Wp))[:, None]
            + np.arange(kw, dtype=np.intp) * dw).reshape(-1)
    tail = max(0, positions + int(taps[-1]) - image)
    flat = np.empty(N * image + tail, x.dtype)
    if top or bottom or left or right:
        flat.fill(0)
    else:
        flat[N * image:] = 0
    flat[:N * image].reshape(N, C, Hp, Wp)[:, :, top:top + H, left:left + W] = x
    weights = np.ascontiguousarray(w).reshape(O, C * kh * kw)
    bias = np.zeros(O, x.dtype) if b is None else np.ascontiguousarray(b)
    out = np.empty((N, O, OH, OW), x.dtype)
    parts = chunks(N, -(-MIN_PER_THREAD // (O * taps.size * positions)))
    if parts == 1:
        _conv(flat, taps, weights, bias, out, image, Wp)
    else:
        parallel_for(N, parts, lambda lo, hi: _conv(flat[lo * image:], taps, weights, bias,
                                                    out[lo:hi], image, Wp))
    return out
