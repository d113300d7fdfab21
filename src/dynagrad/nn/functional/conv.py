"""Convolutions: conv1d/2d/3d, transposed convolutions, unfold and fold.

Three array kernels do the work, for any number of spatial dimensions and any groups:

- ``_conv(x, w)``: the convolution (a cross-correlation, as PyTorch's): im2col (one
  strided copy) and one batched GEMM ``w (g, O/g, C/g*K) @ cols (N, g, C/g*K, L)``,
  which lands directly in the NC(D)HW output layout;
- ``_conv_t(gy, w)``: its adjoint in the input, i.e. the transposed convolution: one
  batched GEMM ``w.T @ gy`` to columns, then col2im: for each kernel offset one strided
  slice-add (a loop over the K = kh*kw offsets, each a vectorised add over the whole
  batch; never a loop over pixels, channels or batch items);
- ``_conv_w(x, gy)``: its adjoint in the weight: im2col and one GEMM contracting batch
  and positions.

With the native kernels on (``backend.native_kernel``), im2col and col2im are numba loops
(``dynagrad.native.conv``) and the three always take the compact columns above. Otherwise,
for stride 1 (and enough input channels per output channel, see ``_Flat.plan``) the three
run on the "flat" layout below: im2col and col2im become contiguous shifted copies
and adds, and each direction one GEMM over the whole batch.  Work arrays are reused across
calls (``_scratch``; the columns kept for backward via ``_take``/``_give``), which spares the
allocator's page faults on fresh large arrays.

The three are bilinear and each one's derivatives are the other two, so the two ops
built on them (``Convolution`` for conv and conv_transpose, ``ConvolutionWeight`` for
the weight gradient) differentiate any number of times: their backward formulas call the
kernels through ``_conv_any``/``_conv_t_any``/``_conv_w_any``, which compute on arrays
and record an op on tensors (``create_graph=True``).
"""
import math
import warnings
import threading

import numpy as np

from ..._device import backend_of
from ...autograd.device_dispatch import current_device_type
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...backend import native_kernel, window_view, xp
from ...ops import formula as fm

_ndarray = np.ndarray

# Above this many floats the weight gradient's per-batch-item partial products are not
# materialised: both operands are transposed once and contracted by one GEMM instead.
_WGRAD_PARTIALS_MAX = 1 << 21


# -- array kernels -----------------------------------------------------------------------

def _out_size(sp, k, s, d):
    return (sp - d * (k - 1) - 1) // s + 1


def _pad(x, pads):
    """``x`` (N, C, *S) zero-padded by ``pads`` ((lo, hi) per spatial dim)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads))
    out = xp.zeros(shape, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _)
                                           in zip(x.shape[2:], pads))] = x
    return out


def _im2col(x, K, stride, pads, dilation, out=None, keep=False):
    """Columns (N, C*prod(K), L) of ``x`` (N, C, *S) and the output spatial size.

    ``out`` (optional) keeps only the first ``out`` window positions per dimension;
    ``keep``: the columns are kept for backward, in a buffer from ``_take``.
    """
    native = native_kernel('im2col', x)
    if native is not None:
        out, cols = _native_columns(x, K, stride, pads, dilation, out, keep)
        return native(x, K, stride, pads, dilation, out, cols), out
    xpad = _pad(x, pads)
    sp = xpad.shape[2:]
    if out is None:
        out = tuple(_out_size(n, k, s, d) for n, k, s, d in zip(sp, K, stride, dilation))
    st = xpad.strides
    strides = (st[:2] + tuple(a * d for a, d in zip(st[2:], dilation))
               + tuple(a * s for a, s in zip(st[2:], stride)))
    view = window_view(xpad, xpad.shape[:2] + tuple(K) + out, strides)
    N, C = x.shape[:2]
    if keep:
        cols = _take((N, C * math.prod(K), math.prod(out)), x.dtype)
        xp.copyto(cols.reshape(view.shape), view)
        return cols, out
    cols = view.reshape(N, C * math.prod(K), math.prod(out))
    # a view of x after all (1x1 kernel, stride 1): own it (a device array has no read-only
    # flag to tell: any view is copied)
    if (not cols.flags.writeable) if cols.__class__ is np.ndarray else cols.base is not None:
        cols = cols.copy()
    return cols, out


def _native_columns(x, K, stride, pads, dilation, out, keep):
    """The output size (``out`` if given) of the native kernels' columns of ``x``, and the
    buffer they go to when kept for backward (else None: the kernel allocates them)."""
    if out is None:
        out = tuple(_out_size(n + lo + hi, k, s, d)
                    for n, (lo, hi), k, s, d in zip(x.shape[2:], pads, K, stride, dilation))
    N, C = x.shape[:2]
    return out, _take((N, C * math.prod(K), math.prod(out)), x.dtype) if keep else None


def _col2im(cols, size, K, stride, pads, dilation):
    """The adjoint of ``_im2col``: ``cols`` viewed as (N, C, *K, *out) summed into (N, C, *size).

    One vectorised strided slice-add per kernel offset.
    """
    native = native_kernel('col2im', cols)
    if native is not None:
        return native(cols, size, K, stride, pads, dilation)
    N, C = cols.shape[:2]
    out = cols.shape[2 + len(K):]
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
    buf = xp.zeros((N, C) + padded, cols.dtype)
    lead = (slice(None), slice(None))
    first = True
    for kidx in np.ndindex(*K):
        region = lead + tuple(slice(k * d, k * d + s * (o - 1) + 1, s)
                              for k, d, s, o in zip(kidx, dilation, stride, out))
        part = cols[lead + kidx]
        if first and all(r.stop - r.start == n and r.step == 1 for r, n in
                         zip(region[2:], padded)):
            buf[region] = part  # the first offset covers everything: no add needed
        else:
            buf[region] += part
        first = False
    if any(lo or hi for lo, hi in pads):
        buf = xp.ascontiguousarray(
            buf[lead + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, pads))])
    return buf


def _conv(x, w, stride, pads, dilation, groups, cols=None, out=None, keep=False):
    """The convolution of ``x`` (N, C, *S) with ``w`` (O, C/g, *K); also returns the columns.

    ``out``: the output spatial size when it is to be cut short (the input gradient of a
    transposed convolution whose output_padding reaches past a stride).
    """
    w = xp.ascontiguousarray(w)  # NumPy's matmul runs no BLAS on odd strides
    N = x.shape[0]
    O, Cg = w.shape[:2]
    K = w.shape[2:]
    if cols is None and groups == 1 and w.dtype == x.dtype \
            and (whole := native_kernel('conv_forward', x)) is not None:
        out, cols = _native_columns(x, K, stride, pads, dilation, out, keep)
        y, cols = whole(x, w.reshape(O, -1), K, stride, pads, dilation, out, cols)
        return y.reshape((N, O) + out), (cols, out)
    if cols is None:
        cols, out = _im2col(x, K, stride, pads, dilation, out, keep)
    else:
        out = cols[1]
        cols = cols[0]
    g = groups
    ck = Cg * math.prod(K)
    L = cols.shape[-1]
    if g == 1:
        y = xp.matmul(w.reshape(O, ck), cols)
    else:
        y = xp.matmul(w.reshape(g, O // g, ck), cols.reshape(N, g, ck, L))
    return y.reshape((N, O) + out), (cols, out)


def _conv_t(gy, w, size, stride, pads, dilation, groups):
    """The transposed convolution (the input gradient of ``_conv``), of spatial ``size``."""
    f = _flat_plan(gy, gy.shape[0], w.shape[1] * groups, w.shape[0], size, w.shape[2:], stride,
                   pads, dilation, gy.dtype, gy.shape[2:])
    if f is not None and gy.dtype == w.dtype and _finite(w):
        return _conv_t_flat(f.grad_out(gy), w, f, groups)
    gy = xp.ascontiguousarray(gy)  # NumPy's matmul runs no BLAS on odd strides
    w = xp.ascontiguousarray(w)
    N = gy.shape[0]
    O, Cg = w.shape[:2]
    K = w.shape[2:]
    out = gy.shape[2:]
    g = groups
    ck = Cg * math.prod(K)
    L = math.prod(out)
    if g == 1:
        cols = xp.matmul(w.reshape(O, ck).T, gy.reshape(N, O, L))
    else:
        cols = xp.matmul(w.reshape(g, O // g, ck).swapaxes(1, 2), gy.reshape(N, g, O // g, L))
    return _col2im(cols.reshape((N, g * Cg) + K + out), size, K, stride, pads, dilation)


def _conv_w(x, gy, K, stride, pads, dilation, groups, cols=None):
    """The weight gradient of ``_conv``: (O, C/g, *K)."""
    if cols is None and x.dtype == gy.dtype:
        f = _flat_plan(x, x.shape[0], x.shape[1], gy.shape[1], x.shape[2:], K, stride, pads,
                       dilation, x.dtype, gy.shape[2:])
        if f is not None:
            gw = _conv_w_flat(f.grad_out(gy), f.cols(f.buffer(x), scratch=True), f, groups)
            if gw is not None:
                return gw[0]
    gy = xp.ascontiguousarray(gy)
    cols = _im2col(x, K, stride, pads, dilation, gy.shape[2:])[0] if cols is None else cols[0]  # NumPy's matmul runs no BLAS on odd strides
    N, O = gy.shape[:2]
    g = groups
    ck = cols.shape[1] // g
    L = cols.shape[-1]
    if N * O * ck <= _WGRAD_PARTIALS_MAX:
        # (N, ck, L) @ (N, L, O), summed over N and transposed: no transposing copies of the
        # operands. This order ran 1.4x faster than gy @ cols^T (0.47 against 0.65 ms at
        # N=32, ck=144, O=32, L=121, float32, OpenBLAS, one thread), and 3-d operands faster
        # than 4-d ones with a groups axis of 1.
        if g == 1:
            gw = xp.matmul(cols, gy.reshape(N, O, L).swapaxes(1, 2)).sum(0).T
        else:
            gw = xp.matmul(cols.reshape(N, g, ck, L),
                           gy.reshape(N, g, O // g, L).swapaxes(2, 3)).sum(0).swapaxes(1, 2)
        gw = xp.ascontiguousarray(gw)
    else:
        gyt = gy.reshape(N, g, O // g, L).transpose(1, 2, 0, 3).reshape(g, O // g, N * L)
        ct = cols.reshape(N, g, ck, L).transpose(1, 0, 3, 2).reshape(g, N * L, ck)
        gw = xp.matmul(gyt, ct)
    return gw.reshape((O, ck // math.prod(K)) + tuple(K))


# -- the flat layout for stride-1 convolutions -------------------------------------------------
#
# With stride 1 the columns need no strided gather: the input is copied once, zero-padded and
# channel-major, to a flat buffer (C, N*P) (P: the padded image size), and the column row of
# channel c and kernel offset k is the contiguous run buf[c*N*P + off_k : ... + N*P], where
# off_k is the offset's shift in the flat padded image.  The columns (C*K, N*P) thus cover
# every padded position, not only the output ones: those extra columns are dropped from the
# output on the way in, and on the way back the output gradient is zero there, so they add
# nothing to the input gradient (col2im: one contiguous shifted add per kernel offset) nor to
# the weight gradient.  Every copy and add runs over long contiguous rows, and each direction
# is one GEMM over all N*P columns; the padded-to-output size ratio is capped to bound the
# extra GEMM work.  A non-finite weight (or input) would turn the zero products of the extra
# columns into NaN, so those cases take the general kernels instead.

_scratch_pool = threading.local()


def _scratch(slot, shape, dtype):
    """A per-thread reusable work array for an intermediate that never leaves the kernel.

    Large short-lived arrays are otherwise mapped and unmapped by the allocator on each
    call, and the page faults on touching them can cost more than the GEMM that fills them.
    """
    dtype = np.dtype(dtype)
    n = math.prod(shape) * dtype.itemsize
    pool = _scratch_pool.__dict__
    slot = (slot, current_device_type())     # a device's work arrays live on it
    buf = pool.get(slot)
    if buf is None or buf.nbytes < n:
        buf = pool[slot] = xp.empty(n, np.uint8)
    return buf[:n].view(dtype).reshape(shape)


def _take(shape, dtype):
    """A work array that outlives the call (the columns kept for backward), from this
    thread's free list of buffers handed back by ``_give`` when possible."""
    dtype = np.dtype(dtype)
    n = math.prod(shape) * dtype.itemsize
    free = _free_buffers(current_device_type())
    fits = [i for i, b in enumerate(free) if n <= b.nbytes <= 2 * n]
    if fits:
        buf = free.pop(min(fits, key=lambda i: free[i].nbytes))
    else:
        buf = xp.empty(n, np.uint8)
    return buf[:n].view(dtype).reshape(shape)


def _free_buffers(device_type):
    """This thread's buffers handed back for reuse on ``device_type`` ('cpu', 'cuda')."""
    return _scratch_pool.__dict__.setdefault(('free', device_type), [])


def _give(arr):
    """Hand back an array from ``_take`` once nothing refers to it any more."""
    buf = arr
    while buf.base is not None:
        buf = buf.base
    free = _free_buffers(backend_of(buf).type)
    if len(free) >= 8:
        free.pop(0)
    free.append(buf)


def _flat_plan(a, *geometry):
    """``_Flat.plan(*geometry)`` for a convolution reading the array ``a``, or ``None``
    where im2col and col2im run native: their compact columns then cost less than the flat
    layout's copies and its GEMMs over padded positions (fwd+bwd 12-26% faster on six
    stride-1 3x3 and 5x5 shapes from the benchmark CNN's to 8x64x56x56 and 4x256x14x14,
    the same on a 1x1 one; one thread)."""
    if native_kernel('im2col', a) is not None:
        return None
    return _Flat.plan(*geometry)


class _Flat:
    """Geometry of the flat layout, or ``None`` from ``plan`` when it does not apply."""
    __slots__ = ('N', 'C', 'K', 'Kp', 'Sp', 'S', 'pads', 'out', 'P', 'koff', 'tail', 'M')

    @classmethod
    def plan(cls, N, C, O, S, K, stride, pads, dilation, dtype, out=None):
        """For a convolution of ``C`` to ``O`` channels.  The flat layout's own cost, the
        channel-major copies of the output and its gradient, grows with O, the compact
        im2col's and col2im's short rows with C*K: it takes the flat layout if C*K >= O."""
        if dtype.kind not in 'fV' or any(s != 1 for s in stride) or not K or N < 1 or C < 1 \
                or C * math.prod(K) < O:
            return None
        Sp = tuple(n + lo + hi for n, (lo, hi) in zip(S, pads))
        nat = tuple(n - d * (k - 1) for n, k, d in zip(Sp, K, dilation))
        out = nat if out is None else tuple(out)
        if any(o < 1 or o > m for o, m in zip(out, nat)) or math.prod(Sp) > 2 * math.prod(out):
            return None
        f = cls()
        f.N, f.C, f.K, f.Kp, f.Sp, f.S, f.pads, f.out = (N, C, tuple(K), math.prod(K), Sp,
                                                        tuple(S), pads, out)
        f.P = math.prod(Sp)
        st = [1] * len(Sp)
        for i in range(len(Sp) - 2, -1, -1):
            st[i] = st[i + 1] * Sp[i + 1]
        f.koff = tuple(d * a for d, a in zip(dilation, st))
        f.tail = sum((k - 1) * o for k, o in zip(K, f.koff))
        f.M = N * f.P
        return f

    def _interior(self, n):
        return (slice(None), slice(None)) + tuple(slice(lo, lo + m) for m, (lo, _)
                                                   in zip(n, self.pads))

    def buffer(self, x):
        """``x`` (N, C, *S) copied to a zero-padded flat scratch buffer (C*N*P + tail)."""
        n = self.C * self.M
        buf = _scratch('flat_in', (n + self.tail,), x.dtype)
        if any(lo or hi for lo, hi in self.pads):
            buf.fill(0)
        else:
            buf[n:] = 0
        buf[:n].reshape((self.C, self.N) + self.Sp)[self._interior(self.S)] = x.swapaxes(0, 1)
        return buf

    def cols(self, buf, scratch=False, ones=False):
        """The columns (C*K, M) of a flat buffer (a scratch array if ``scratch``), with a
        last row of ones (for a fused bias) if ``ones``."""
        it = buf.itemsize
        view = window_view(buf, (self.C,) + self.K + (self.M,),
                           (self.M * it,) + tuple(o * it for o in self.koff) + (it,))
        shape = (self.C * self.Kp + ones, self.M)
        cols = _scratch('flat_cols', shape, buf.dtype) if scratch else _take(shape, buf.dtype)
        xp.copyto(cols[:self.C * self.Kp].reshape(view.shape), view)
        if ones:
            cols[-1] = 1
        return cols

    def grad_out(self, gy):
        """``gy`` (N, O, *out) as a scratch (O, M), zero outside the output positions."""
        O = gy.shape[1]
        g = _scratch('flat_gy', (O, self.N) + self.Sp, gy.dtype)
        g.fill(0)
        g[tuple(slice(0, o) for o in (O, self.N) + self.out)] = gy.swapaxes(0, 1)
        return g.reshape(O, self.M)

    def unflat_out(self, y, b=None):
        """(O, M) GEMM output to a new (N, O, *out), plus the bias ``b``."""
        O = y.shape[0]
        src = y.reshape((O, self.N) + self.Sp)[(slice(None), slice(None))
                                               + tuple(slice(0, o) for o in self.out)]
        res = xp.empty((self.N, O) + self.out, y.dtype)
        if b is None:
            xp.copyto(res, src.swapaxes(0, 1))
        else:
            xp.add(src.swapaxes(0, 1), b.reshape((-1,) + (1,) * len(self.out)), out=res)
        return res

    def col2im(self, cols):
        """The adjoint of ``cols(buffer(.))``: (C*K, M) columns summed into a new (N, C, *S)."""
        n = self.C * self.M
        buf = _scratch('flat_acc', (n + self.tail,), cols.dtype)
        buf[n:] = 0
        parts = cols.reshape(self.C, self.Kp, self.M)
        for j, kidx in enumerate(np.ndindex(*self.K)):
            off = sum(k * o for k, o in zip(kidx, self.koff))
            dst = buf[off:off + n].reshape(self.C, self.M)
            if j:
                dst += parts[:, j]
            else:  # offset 0 covers all of buf but the tail
                xp.copyto(dst, parts[:, 0])
        body = buf[:n].reshape((self.C, self.N) + self.Sp)[self._interior(self.S)]
        # a copy even when the view is already contiguous (one image or one channel, no
        # padding): buf is scratch, and a gradient aliasing it would be overwritten by the
        # next convolution's backward before the engine sums the two
        return body.swapaxes(0, 1).copy()


def _conv_flat(x, w, b, f, groups, scratch=False):
    """Convolution in the flat layout: returns (y, cols), with the bias ``b`` added.

    With ``groups == 1`` and a bias, ``cols`` has a last row of ones and the bias is a last
    column of the GEMM's weight.  ``cols`` is only valid until the next call if ``scratch``.
    """
    w = xp.ascontiguousarray(w)
    O = w.shape[0]
    fuse = b is not None and groups == 1
    cols = f.cols(f.buffer(x), scratch=scratch, ones=fuse)
    y = _scratch('flat_gemm', (O, f.M), cols.dtype)
    if groups == 1:
        wm = w.reshape(O, -1)
        if fuse:
            wm = xp.concatenate([wm, b.reshape(O, 1).astype(wm.dtype, copy=False)], 1)
        xp.matmul(wm, cols, out=y)
    else:
        ck = cols.shape[0] // groups
        xp.matmul(w.reshape(groups, O // groups, ck), cols.reshape(groups, ck, f.M),
                  out=y.reshape(groups, O // groups, f.M))
    return f.unflat_out(y, None if fuse else b), cols


def _conv_w_flat(gyf, cols, f, groups):
    """Weight gradient (O, C/g, *K) from flat ``gyf`` (O, M) and ``cols`` (C*K[+1], M), and
    the bias gradient when ``cols`` has the row of ones (else ``None``); ``None`` when
    non-finite (the extra columns may then have leaked into it)."""
    O = gyf.shape[0]
    ck = f.C * f.Kp // groups
    CK = cols.shape[0]
    if groups == 1 and O * CK <= 1024:
        # small: per-image products summed (one long thin GEMM runs poorly)
        gw = xp.matmul(cols.reshape(CK, f.N, f.P).transpose(1, 0, 2),
                       gyf.reshape(O, f.N, f.P).transpose(1, 2, 0)).sum(0).T
    elif groups == 1:
        gw = xp.matmul(cols, gyf.T).T
    else:
        gw = xp.matmul(gyf.reshape(groups, O // groups, f.M),
                       cols.reshape(groups, ck, f.M).swapaxes(1, 2))
    if not xp.isfinite(gw).all():
        return None
    gb = None
    if cols.shape[0] > f.C * f.Kp:
        gw, gb = gw[:, :-1], xp.ascontiguousarray(gw[:, -1])
    return xp.ascontiguousarray(gw).reshape((O, ck // f.Kp) + f.K), gb


def _conv_t_flat(gyf, w, f, groups):
    """Input gradient (N, C, *S) from flat ``gyf`` (O, M); needs a finite ``w``."""
    w = xp.ascontiguousarray(w)
    O = w.shape[0]
    cols = _scratch('flat_gemm', (w[0].size * groups, f.M), gyf.dtype)
    if groups == 1:
        xp.matmul(w.reshape(O, -1).T, gyf, out=cols)
    else:
        xp.matmul(w.reshape(groups, O // groups, -1).swapaxes(1, 2),
                  gyf.reshape(groups, O // groups, f.M), out=cols.reshape(groups, -1, f.M))
    return f.col2im(cols)


def _finite(a):
    return bool(xp.isfinite(a).all())


def _direct(x, w, b, stride, pads, dilation, groups, size):
    """The native direct convolution (no columns: ``dynagrad.native.conv_direct``), bias
    included, where it applies: 2-d, stride 1, one group, one float dtype, the output's
    natural size; else None."""
    if x.ndim != 4 or groups != 1 or size is not None or stride != (1, 1) \
            or w.dtype != x.dtype or (b is not None and b.dtype != x.dtype) or x.size == 0:
        return None
    kernel = native_kernel('conv2d_direct', x)
    if kernel is None:
        return None
    return kernel(x, w, b, pads, dilation)


def _split_gradients(gy, w, cols, size, K, geom):
    """The input gradient (from the weight ``w``) and the weight gradient (from the
    forward's ``cols``) by the native kernel that splits the images over threads and cuts
    the weight gradient's products below OpenBLAS's threading size
    (``dynagrad.native.conv.conv_backward``), each None where that does not apply: one
    group, one dtype, the weight gradient's per-image partials small enough (``_conv_w``'s
    own choice), and the kernel's own conditions."""
    stride, pads, dilation, groups = geom
    if groups != 1:
        return None, None
    if w is not None and (not fm.is_array(w) or w.dtype != gy.dtype):
        w = None
    if cols is not None and (cols[0].dtype != gy.dtype or gy.shape[0] * gy.shape[1]
                             * cols[0].shape[1] > _WGRAD_PARTIALS_MAX):
        cols = None
    kernel = native_kernel('conv_backward', gy) if w is not None or cols is not None else None
    if kernel is None:
        return None, None
    gx, gw = kernel(gy, None if w is None else xp.ascontiguousarray(w).reshape(w.shape[0], -1),
                    None if cols is None else cols[0], size, K, stride, pads, dilation)
    return gx, None if gw is None else gw.reshape((gy.shape[1], -1) + tuple(K))


# -- ops ---------------------------------------------------------------------------------

class Convolution(Op):
    """conv (``transposed=False``) and conv_transpose (``transposed=True``), bias fused."""
    widens_half = True
    node_name = 'ConvolutionBackward0'

    def forward(self, x, w, b=None, *, stride, pads, dilation, groups, transposed=False,
                size=None):
        self.geom = (stride, pads, dilation, groups)
        self.transposed = transposed
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, w if need_x else None)
        self.x_size = x.shape[2:]
        self.k_size = w.shape[2:]
        self._flat = self._cols = None
        if transposed:
            y = _conv_t(x, w, size, *self.geom)
        elif not need_w and (y := _direct(x, w, b, stride, pads, dilation, groups, size)) \
                is not None:
            return y
        else:
            f = _flat_plan(x, x.shape[0], x.shape[1], w.shape[0], x.shape[2:], w.shape[2:],
                           stride, pads, dilation, x.dtype, size) if x.dtype == w.dtype else None
            if f is not None:
                y, cols = _conv_flat(x, w, b, f, groups, scratch=not need_w)
                self._flat = f
                self._cols = cols if need_w else None
                return y
            y, cols = _conv(x, w, *self.geom, out=size, keep=need_w)
            self._cols = cols if need_w else None
        if b is not None:
            y += b.reshape((-1,) + (1,) * (y.ndim - 2))
        return y

    def backward(self, gy):
        x, w = self.saved_tensors
        needs = self.needs_input_grad
        gx = gw = gb = None
        if self.transposed:
            # y = T(x, w): <gy, T(x, w)> = <conv(gy, w), x> = <w, W(gy, x)>
            if needs[0]:
                gx = _conv_any(gy, w, self.geom, self.x_size)
            if needs[1]:
                gw = _conv_w_any(gy, x, self.k_size, self.geom)
        elif self._flat is not None and fm.is_array(gy):
            f, groups = self._flat, self.geom[3]
            gyf = f.grad_out(gy)
            if needs[0]:
                gx = (_conv_t_flat(gyf, w, f, groups) if _finite(w)
                      else _conv_t(gy, w, self.x_size, *self.geom))
            if needs[1]:
                res = _conv_w_flat(gyf, self._cols, f, groups) if self._cols is not None \
                    else None
                if res is None:  # non-finite: recompute without the extra columns
                    gw = _conv_w(x, gy, self.k_size, *self.geom, cols=_im2col(
                        x, self.k_size, self.geom[0], self.geom[1], self.geom[2], f.out))
                else:
                    gw, gb = res
                if self._cols is not None:
                    _give(self._cols)
            if len(needs) > 2 and needs[2]:
                if gb is None:
                    gb = gyf.sum(1)
            else:
                gb = None
            self._cols = None
            return gx, gw, gb
        else:
            cols = self._cols if needs[1] and fm.is_array(gy) and fm.is_array(x) and \
                self._flat is None else None
            if fm.is_array(gy):
                gx, gw = _split_gradients(gy, w if needs[0] else None, cols, self.x_size,
                                          self.k_size, self.geom)
            if needs[0] and gx is None:
                gx = _conv_t_any(gy, w, self.x_size, self.geom)
            if needs[1] and gw is None:
                gw = _conv_w_any(x, gy, self.k_size, self.geom, cols)
            if cols is not None:
                _give(cols[0])
            self._cols = None
        if len(needs) > 2 and needs[2]:
            gb = gy.sum((0,) + tuple(range(2, gy.ndim)))
        return gx, gw, gb


class ConvolutionWeight(Op):
    """The weight gradient ``W(x, gy)``, as an op so that it differentiates again."""
    widens_half = True
    node_name = 'ConvolutionBackwardBackward0'

    def forward(self, x, gy, *, k_size, geom):
        self.k_size, self.geom = k_size, geom
        self.x_size, self.gy_size = x.shape[2:], gy.shape[2:]
        need_x, need_gy = self.needs_input_grad[:2]
        self.save_for_backward(x if need_gy else None, gy if need_x else None)
        return _conv_w(x, gy, k_size, *geom)

    def backward(self, gg):
        # <gg, W(x, gy)> = <conv(x, gg), gy> = <x, T(gy, gg)>
        x, gy = self.saved_tensors
        needs = self.needs_input_grad
        gx = _conv_t_any(gy, gg, self.x_size, self.geom) if needs[0] else None
        ggy = _conv_any(x, gg, self.geom, self.gy_size) if needs[1] else None
        return gx, ggy


def _conv_any(x, w, geom, out=None):
    if fm.is_array(x) and fm.is_array(w):
        stride, pads, dilation, groups = geom
        f = _flat_plan(x, x.shape[0], x.shape[1], w.shape[0], x.shape[2:], w.shape[2:], stride,
                       pads, dilation, x.dtype, out) if x.dtype == w.dtype else None
        if f is not None:
            return _conv_flat(x, w, None, f, groups, scratch=True)[0]
        return _conv(x, w, *geom, out=out)[0]
    stride, pads, dilation, groups = geom
    return Convolution.apply(x, w, stride=stride, pads=pads, dilation=dilation, groups=groups,
                             size=out)


def _conv_t_any(gy, w, size, geom):
    if fm.is_array(gy) and fm.is_array(w):
        return _conv_t(gy, w, size, *geom)
    stride, pads, dilation, groups = geom
    return Convolution.apply(gy, w, stride=stride, pads=pads, dilation=dilation,
                             groups=groups, transposed=True, size=size)


def _conv_w_any(x, gy, k_size, geom, cols=None):
    if fm.is_array(x) and fm.is_array(gy):
        return _conv_w(x, gy, k_size, *geom, cols=cols)
    return ConvolutionWeight.apply(x, gy, k_size=k_size, geom=geom)


# -- argument checks shared by the function forms ------------------------------------------

def _tuple(value, n, name, fn):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
        if len(value) == n:
            return tuple(int(v) for v in value)
        if len(value) == 1:
            return (int(value[0]),) * n
        raise RuntimeError(f'{fn}: expected {name} to be a single integer value or a list of '
                           f'{n} values to match the convolution dimensions, but got '
                           f'{name}={list(value)}')
    raise TypeError(f'{fn}(): argument \'{name}\' must be an int or a tuple of {n} ints, '
                    f'not {type(value).__name__}')


def _shape(t):
    return list(t.shape)


def _check_tensors(fn, input, weight, bias, d, transposed=False):
    from ...tensor import Tensor
    for name, t in (('input', input), ('weight', weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f'{fn}(): argument \'{name}\' must be Tensor, not '
                            f'{type(t).__name__}')
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f'{fn}(): argument \'bias\' must be Tensor, not {type(bias).__name__}')
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f'Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {fn}, '
                           f'but got input of size: {_shape(input)}')
    if weight.ndim != d + 2:
        raise RuntimeError(f'{fn}: weight should have {d + 2} dimensions (out_channels, '
                           f'in_channels/groups, *kernel_size), but got weight of size '
                           f'{_shape(weight)}')
    dt = input._data.dtype
    if dt.kind == 'b':
        raise RuntimeError(f'{fn}: "slow_conv" not implemented for \'Bool\': convolutions '
                           'take floating-point or integer tensors')
    for name, t in (('weight', weight), ('bias', bias)):
        if t is not None and t._data.dtype != dt:
            raise RuntimeError(f'{fn}: Input type ({input.dtype}) and {name} type ({t.dtype}) '
                               'should be the same')


def _check_groups(fn, weight, groups, transposed):
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool):
        raise TypeError(f'{fn}(): argument \'groups\' must be int, not {type(groups).__name__}')
    if groups <= 0:
        raise RuntimeError(f'{fn}: non-positive groups is not supported (got groups={groups})')
    if not transposed and weight.shape[0] % groups:
        raise RuntimeError(f'{fn}: Given groups={groups}, expected weight to be divisible by '
                           f'{groups} at dimension 0, but got weight of size '
                           f'{_shape(weight)} instead')


def _check_bias(fn, weight, bias, out_channels):
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f'{fn}: Given weight of size {_shape(weight)}, expected bias to be '
                           f'1-dimensional with {out_channels} elements, but got bias of size '
                           f'{_shape(bias)} instead')


def _check_geometry(fn, stride, dilation, pads):
    if any(s <= 0 for s in stride):
        raise RuntimeError(f'{fn}: non-positive stride is not supported (got stride='
                           f'{list(stride)})')
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f'{fn}: dilation should be greater than zero (got dilation='
                           f'{list(dilation)})')
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise RuntimeError(f'{fn}: negative padding is not supported')


def _squeezed(result, batched):
    return result if batched else result.squeeze(0)


def _convnd(d, input, weight, bias, stride, padding, dilation, groups, *, cast=True):
    # cast=False: torch.convolution, which is not on autocast's lists (conv1d/2d/3d are)
    if cast and autocast_state.active:
        input, weight, bias = autocast_args('lower', input, weight, bias)
    fn = f'conv{d}d'
    _check_tensors(fn, input, weight, bias, d)
    stride = _tuple(stride, d, 'stride', fn)
    dilation = _tuple(dilation, d, 'dilation', fn)
    K = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == 'valid':
            pads = ((0, 0),) * d
        elif padding == 'same':
            if any(s != 1 for s in stride):
                raise RuntimeError(f"{fn}: padding='same' is not supported for strided "
                                   'convolutions')
            pads = tuple(((dd * (k - 1)) // 2, dd * (k - 1) - (dd * (k - 1)) // 2)
                         for k, dd in zip(K, dilation))
            if any(lo != hi for lo, hi in pads):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                              'may require a zero-padded copy of the input be created',
                              UserWarning, stacklevel=3)
        else:
            raise RuntimeError(f"{fn}: Invalid padding string: '{padding}' (use 'valid', "
                               "'same', an int or a tuple of ints)")
    else:
        pads = tuple((p, p) for p in _tuple(padding, d, 'padding', fn))
    _check_geometry(fn, stride, dilation, pads)
    _check_groups(fn, weight, groups, False)
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    C = x.shape[1]
    if weight.shape[1] * groups != C:
        raise RuntimeError(f'{fn}: Given groups={groups}, weight of size {_shape(weight)}, '
                           f'expected input{_shape(x)} to have {weight.shape[1] * groups} '
                           f'channels, but got {C} channels instead')
    _check_bias(fn, weight, bias, weight.shape[0])
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    eff = [dd * (k - 1) + 1 for k, dd in zip(K, dilation)]
    if any(p < e for p, e in zip(padded, eff)) or 0 in K:
        raise RuntimeError(
            f'{fn}: Calculated padded input size per channel: ({" x ".join(map(str, padded))}). '
            f'Kernel size: ({" x ".join(map(str, eff))}). Kernel size can\'t be greater than '
            'actual input size')
    args = (x, weight) if bias is None else (x, weight, bias)
    y = Convolution.apply(*args, stride=stride, pads=pads, dilation=dilation, groups=groups)
    return _squeezed(y, batched)


def _conv_transposend(d, input, weight, bias, stride, padding, output_padding, groups,
                      dilation, *, cast=True):
    if cast and autocast_state.active:
        input, weight, bias = autocast_args('lower', input, weight, bias)
    fn = f'conv_transpose{d}d'
    _check_tensors(fn, input, weight, bias, d, transposed=True)
    stride = _tuple(stride, d, 'stride', fn)
    dilation = _tuple(dilation, d, 'dilation', fn)
    if isinstance(padding, str):
        raise TypeError(f'{fn}(): argument \'padding\' must be an int or a tuple of ints, not '
                        "str (conv_transpose takes no 'same'/'valid' padding)")
    padding = _tuple(padding, d, 'padding', fn)
    output_padding = _tuple(output_padding, d, 'output_padding', fn)
    pads = tuple((p, p) for p in padding)
    _check_geometry(fn, stride, dilation, pads)
    _check_groups(fn, weight, groups, True)
    if any(op < 0 for op in output_padding) or any(
            op >= s and op >= dd for op, s, dd in zip(output_padding, stride, dilation)):
        raise RuntimeError(f'{fn}: output padding must be smaller than either stride or '
                           f'dilation, but got output_padding={list(output_padding)}, '
                           f'stride={list(stride)}, dilation={list(dilation)}')
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    C = x.shape[1]
    if weight.shape[0] != C or C % groups:
        raise RuntimeError(f'{fn}: Given transposed=1, weight of size {_shape(weight)}, '
                           f'expected input{_shape(x)} to have {weight.shape[0]} channels, '
                           f'but got {C} channels instead (and weight.shape[0] must be '
                           f'divisible by groups={groups})')
    _check_bias(fn, weight, bias, weight.shape[1] * groups)
    K = weight.shape[2:]
    size = tuple((n - 1) * s - 2 * p + dd * (k - 1) + op + 1 for n, s, p, dd, k, op in
                 zip(x.shape[2:], stride, padding, dilation, K, output_padding))
    if any(n <= 0 for n in size):
        raise RuntimeError(f'{fn}: Given input size per channel: {list(x.shape[2:])}, the '
                           f'calculated output size per channel {list(size)} is too small')
    args = (x, weight) if bias is None else (x, weight, bias)
    y = Convolution.apply(*args, stride=stride, pads=pads, dilation=dilation, groups=groups,
                          transposed=True, size=size)
    return _squeezed(y, batched)


# -- public functions ----------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or unbatched (C, L) input (PyTorch's ``F.conv1d``)."""
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over (N, C, H, W) or unbatched (C, H, W) input."""
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """1-D transposed convolution; ``weight`` is (in_channels, out_channels/groups, k)."""
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """2-D transposed convolution; ``weight`` is (in_channels, out_channels/groups, kh, kw)."""
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """3-D transposed convolution; ``weight`` is (in_channels, out_channels/groups, kd, kh, kw)."""
    return _conv_transposend(3, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


# -- unfold (im2col) and fold (col2im) ------------------------------------------------------

class Im2Col(Op):
    """unfold: (N, C, H, W) -> (N, C*kh*kw, L); unbatched (C, H, W) -> (C*kh*kw, L)."""
    widens_half = True

    def forward(self, x, *, K, dilation, pads, stride, batched=True):
        self.geom = (K, dilation, pads, stride, batched)
        self.size = x.shape[-2:]
        return self._unfold(x, K, dilation, pads, stride, batched)

    @staticmethod
    def _unfold(x, K, dilation, pads, stride, batched):
        cols = _im2col(x if batched else x[None], K, stride, pads, dilation)[0]
        return cols if batched else cols[0]

    def backward(self, g):
        K, dilation, pads, stride, batched = self.geom
        return Col2Im.run(g, size=self.size, K=K, dilation=dilation, pads=pads, stride=stride,
                          batched=batched)



class Col2Im(Op):
    """fold: (N, C*kh*kw, L) -> (N, C, H, W); unbatched (C*kh*kw, L) -> (C, H, W)."""
    widens_half = True

    def forward(self, cols, *, size, K, dilation, pads, stride, batched=True):
        self.geom = (K, dilation, pads, stride, batched)
        return self._fold(cols, size, K, dilation, pads, stride, batched)

    @staticmethod
    def _fold(cols, size, K, dilation, pads, stride, batched):
        if not batched:
            cols = cols[None]
        N, CK = cols.shape[:2]
        out = tuple(_out_size(n + lo + hi, k, s, d)
                    for n, (lo, hi), k, s, d in zip(size, pads, K, stride, dilation))
        x = _col2im(xp.ascontiguousarray(cols).reshape(
            (N, CK // math.prod(K)) + tuple(K) + out), size, K, stride, pads, dilation)
        return x if batched else x[0]

    def backward(self, g):
        K, dilation, pads, stride, batched = self.geom
        return Im2Col.run(g, K=K, dilation=dilation, pads=pads, stride=stride, batched=batched)



def _fold_args(fn, kernel_size, dilation, padding, stride):
    K = _tuple(kernel_size, 2, 'kernel_size', fn)
    dilation = _tuple(dilation, 2, 'dilation', fn)
    padding = _tuple(padding, 2, 'padding', fn)
    stride = _tuple(stride, 2, 'stride', fn)
    if any(k <= 0 for k in K):
        raise RuntimeError(f'{fn}: kernel size should be greater than zero, but got '
                           f'kernel_size={list(K)}')
    if any(s <= 0 for s in stride):
        raise RuntimeError(f'{fn}: stride should be greater than zero, but got '
                           f'stride={list(stride)}')
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f'{fn}: dilation should be greater than zero, but got '
                           f'dilation={list(dilation)}')
    if any(p < 0 for p in padding):
        raise RuntimeError(f'{fn}: padding should be non-negative, but got '
                           f'padding={list(padding)}')
    return K, dilation, tuple((p, p) for p in padding), stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C*kh*kw, L); also unbatched (C, H, W)."""
    K, dilation, pads, stride = _fold_args('unfold', kernel_size, dilation, padding, stride)
    if input.ndim < 3:
        raise IndexError(f'unfold: Dimension out of range (expected to be in range of '
                         f'[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 2): unfold '
                         f'takes (N, C, H, W) or (C, H, W) input, got {list(input.shape)}')
    if input.ndim > 4:
        raise RuntimeError('unfold: Expected 3D or 4D (batch mode) tensor with possibly 0 batch '
                           'size and other non-zero dimensions for input, but got: '
                           f'{list(input.shape)}')
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError(f'unfold: "im2col" not implemented for \'{input.dtype}\': use a '
                           'floating-point input')
    batched = input.ndim == 4
    padded = [n + lo + hi for n, (lo, hi) in zip(input.shape[-2:], pads)]
    out = [_out_size(p, k, s, d) for p, k, s, d in zip(padded, K, stride, dilation)]
    if any(o < 1 for o in out):
        raise RuntimeError(f'unfold: Given input with spatial size {list(input.shape[-2:])}, '
                           f'kernel_size={list(K)}, dilation={list(dilation)}, padding='
                           f'{[p[0] for p in pads]}, calculated shape of the array of sliding '
                           f'blocks as {out}, but its components must be at least one.')
    return Im2Col.apply(input, K=K, dilation=dilation, pads=pads, stride=stride,
                        batched=batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks into a tensor (col2im): (N, C*kh*kw, L) -> (N, C, H, W)."""
    K, dilation, pads, stride = _fold_args('fold', kernel_size, dilation, padding, stride)
    size = _tuple(output_size, 2, 'output_size', 'fold')
    if input.ndim not in (2, 3):
        raise RuntimeError('Input Error: Only unbatched (2D) or batched (3D) input Tensors are '
                           f'supported (got {input.ndim}D): fold takes (N, C*kh*kw, L)')
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError(f'fold: "col2im" not implemented for \'{input.dtype}\': use a '
                           'floating-point input')
    batched = input.ndim == 3
    cols = input if batched else input.unsqueeze(0)  # (for the checks only)
    kp = math.prod(K)
    if cols.shape[1] % kp:
        raise RuntimeError("fold: Expected size of input's dimension 1 to be divisible by the "
                           f'product of kernel_size, but got input.size(1)={cols.shape[1]} '
                           f'and kernel_size={list(K)}')
    out = [_out_size(n + lo + hi, k, s, d)
           for n, (lo, hi), k, s, d in zip(size, pads, K, stride, dilation)]
    if any(o < 1 for o in out) or cols.shape[2] != math.prod(out):
        raise RuntimeError(f'fold: Given output_size={list(size)}, kernel_size={list(K)}, '
                           f'dilation={list(dilation)}, padding={[p[0] for p in pads]}, '
                           f'stride={list(stride)}, expected size of input\'s dimension 2 to '
                           f'match the calculated number of sliding blocks {out[0]} * {out[1]} '
                           f'= {math.prod(out)}, but got input.size(2)={cols.shape[2]}.')
    return Col2Im.apply(input, size=size, K=K, dilation=dilation, pads=pads, stride=stride,
                        batched=batched)


__all__ = ['conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
           'conv_transpose3d', 'unfold', 'fold']
