"""Pooling: max, average, adaptive, fractional, LP pooling and max-unpooling.

The ops work on the last ``n`` (spatial) dimensions, n = 2 or 3, and take any leading
dimensions, so batched ``(N, C, *spatial)`` and unbatched ``(C, *spatial)`` inputs run the
same code; one op class serves both n (the node name says which, as PyTorch's does). The
1-d forms are the 2-d ones on ``input.unsqueeze(-2)`` (as in PyTorch, whose 1-d results
come out of ``SqueezeBackward1``).

Every backward here is linear in the incoming gradient and is itself an op whose
backward is the forward map again (max pooling: scatter at the argmax <-> gather there;
average pooling: spread over windows <-> sum over windows; adaptive average pooling: a
matrix per axis <-> its transpose), so double backward comes from the pairs calling each
other through ``Op.run``.

Under CPU autocast PyTorch runs the 3-d max (without indices), average and adaptive
poolings, both fractional poolings and max-unpooling in float32, and the 1-d and 2-d forms
in the input's dtype; one op class serving both, the functions that run in float32 cast
their input themselves.
"""
import itertools
import math

import numpy as np

from ...autograd.batched import vmap_function
from ...backend import native_kernel, xp
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...ops import formula as fm
from ...ops.random import array_rng, uniform01

_WORDS = {1: 'one', 2: 'two', 3: 'three'}


# ---------------------------------------------------------------------------------------
# arguments

def _ntuple(value, n, what, fn):
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f'{fn}: {what} must either be a single int, or a tuple of '
                               f'{_WORDS.get(n, n)} ints (got {tuple(value)})')
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + p:   # the last window must start inside the input
            out -= 1
    else:
        out = span // s + 1
    return out


def _max_pool_pad_message(fn, k, p):
    head = f'{fn}: pad should be smaller than or equal to half of kernel size, but got '
    if len(k) == 3:
        return (head + f'kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} '
                f'padH: {p[1]}')
    return head + f'padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}'


def _pool_args(fn, input, kernel_size, stride, padding, dilation, ceil_mode, n=2):
    """Check the input and arguments of an n-d pool; the output spatial size."""
    k = _ntuple(kernel_size, n, 'kernel_size', fn)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _ntuple(stride, n, 'stride', fn)
    p = _ntuple(padding, n, 'padding', fn)
    d = _ntuple(dilation, n, 'dilation', fn)
    if min(k) <= 0:
        raise RuntimeError(f'{fn}: kernel_size should be greater than zero, but got '
                           f'kernel_size {k}')
    if min(s) <= 0:
        raise RuntimeError(f'{fn}: stride should be greater than zero (stride should not be '
                           f'zero), but got stride {s}')
    if min(d) <= 0:
        raise RuntimeError(f'{fn}: dilation should be greater than zero, but got dilation {d}')
    if min(p) < 0:
        raise RuntimeError(f'{fn}: pad must be non-negative, but got pad {p}')
    for kk, pp, dd in zip(k, p, d):
        if pp * 2 > (kk - 1) * dd + 1:
            raise RuntimeError(f'{fn}: pad should be at most half of effective kernel size, '
                               f'but got pad={pp}, kernel_size={kk} and dilation={dd}')
    if fn.startswith('max_pool') and any(pp * 2 > kk for kk, pp in zip(k, p)):
        # then PyTorch's max pooling bounds padding by half the kernel, dilation or not
        raise RuntimeError(_max_pool_pad_message(fn, k, p))
    shape = tuple(input.shape)
    if len(shape) not in (n + 1, n + 2) or any(v == 0 for v in shape[-n - 1:]):
        raise RuntimeError(f'{fn}: non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected '
                           f'for input, but got input of shape {list(shape)}')
    sizes = shape[-n:]
    out = tuple(_out_size(*a, ceil_mode) for a in zip(sizes, k, s, p, d))
    if min(out) < 1:
        given = 'x'.join(str(v) for v in shape[-n - 1:])
        calc = 'x'.join(str(v) for v in (shape[-n - 1],) + out)
        raise RuntimeError(f'{fn}: Given input size: ({given}). Calculated output size: '
                           f'({calc}). Output size is too small')
    return k, s, p, d, out


def _check_float(fn, input):
    dt = input.dtype
    if not dt.is_floating_point:
        name = dt.legacy_name[:-6]
        raise NotImplementedError(f'"{fn}" not implemented for \'{name}\' '
                                  f'(pooling needs a floating point input; use input.float())')


def _check_kind(fn, input):
    if input.dtype.category == 0:
        raise NotImplementedError(f'"{fn}" not implemented for \'Bool\'')


def _spatial(keys):
    """The index ``(..., *keys)``: one key per trailing (spatial) axis."""
    return (Ellipsis,) + tuple(keys)


def _along(values, i, n):
    """A 1-d array reshaped to broadcast along spatial axis ``i`` of ``n``."""
    shape = [1] * n
    shape[i] = -1
    return values.reshape(shape)


# ---------------------------------------------------------------------------------------
# gather / scatter at flat spatial indices: the backward of max pooling and unpooling

class GatherFlat(Op):
    """``x[..., idx]`` along the last axis; ``idx`` broadcasts over x's leading dims."""
    widens_half = True
    node_name = 'GatherBackward0'

    def forward(self, x, idx):
        self.idx, self.size = idx, x.shape[-1]
        return xp.take_along_axis(x, idx, -1) if idx.shape[:-1] == x.shape[:-1] else \
            xp.take_along_axis(x, xp.broadcast_to(idx, x.shape[:-1] + idx.shape[-1:]), -1)

    def backward(self, g):
        return ScatterFlat.run(g, idx=self.idx, size=self.size)



class ScatterFlat(Op):
    """Zeros with ``size`` entries on the last axis, ``g`` added at ``idx`` (repeats add up)."""
    widens_half = True
    node_name = 'ScatterAddBackward0'

    def forward(self, g, idx, size):
        self.idx = idx
        lead = g.shape[:-1]
        rows = math.prod(lead)
        if idx.shape != g.shape:
            idx = xp.broadcast_to(idx, g.shape)
        flat = idx.reshape(rows, -1) + xp.arange(rows).reshape(rows, 1) * size
        out = xp.bincount(flat.ravel(), weights=g.reshape(-1), minlength=rows * size)
        return out.astype(g.dtype, copy=False).reshape(lead + (size,))

    def backward(self, gg):
        return GatherFlat.run(gg, idx=self.idx)



def _scatter_spatial(g, idx, in_shape, n):
    """Gradient of an input of ``in_shape`` from ``g`` at flat spatial indices ``idx``."""
    lead = in_shape[:-n]
    gx = ScatterFlat.run(g.reshape(lead + (-1,)), idx=idx.reshape(lead + (-1,)),
                         size=math.prod(in_shape[-n:]))
    return gx.reshape(in_shape)


def _flat_position(coords, sizes):
    """Row-major flat index of per-axis coordinates (broadcast together) in ``sizes``."""
    flat = 0
    for c, size in zip(coords, sizes):
        flat = flat * size + c
    return flat


# ---------------------------------------------------------------------------------------
# max pooling

def _window_argmax(v):
    """Argmax over the last axis (each row a window in PyTorch's scan order) with PyTorch's
    rules, shaped (..., 1): ties keep the first, but the LAST NaN wins (its scan replaces the
    max on any NaN), where ``argmax`` stops at the first NaN."""
    a = v.argmax(-1)[..., None]
    if v.dtype.kind in 'fV':
        nan = xp.isnan(xp.take_along_axis(v, a, -1))   # argmax lands on a NaN if any
        if nan.any():
            last = v.shape[-1] - 1 - xp.isnan(v[..., ::-1]).argmax(-1)[..., None]
            a = xp.where(nan, last, a)
    return a


def _grid(x, p, k, s, d, out, fill):
    """``x`` padded by ``p`` at both ends of each spatial axis and, where ceil_mode windows
    reach past the end, extended to cover them; new entries are ``fill``."""
    n = len(k)
    sizes = x.shape[-n:]
    need = tuple(max(sz + 2 * pp, (o - 1) * st + dd * (kk - 1) + 1)
                 for sz, pp, o, st, dd, kk in zip(sizes, p, out, s, d, k))
    if need == sizes:
        return x
    grid = xp.full(x.shape[:-n] + need, fill, x.dtype)
    grid[_spatial(slice(pp, pp + sz) for pp, sz in zip(p, sizes))] = x
    return grid


def _offset_views(a, k, s, d, out):
    """The strided slice of ``a`` under each kernel offset, in window order: view ``t`` holds
    element ``t`` of every window, so a loop over prod(k) whole-array steps pools."""
    for offset in itertools.product(*(range(kk) for kk in k)):
        yield a[_spatial(slice(i * dd, i * dd + (o - 1) * st + 1, st)
                         for i, dd, o, st in zip(offset, d, out, s))]


def _native_fits(k, s, p, d, out, shape):
    """Whether the native max pooling runs for this geometry: the 2x2 window at stride 2
    without padding (most CNNs'), whose kernel has constant sizes (forward 2.7-3.4x, with
    backward 2.9-3.6x faster than the passes below on the benchmark CNN's layers). The kernel's
    generic search over windows of any size lost to those passes elsewhere (forward
    1.3-2.5x slower at 3x3 stride 1 and 2, 1-d and 3-d windows, one thread: its selects
    chain through a loop of run-time length), so those keep the NumPy path."""
    return (k == (2, 2) and s == (2, 2) and p == (0, 0) and d == (1, 1)
            and 2 * out[0] <= shape[-2] and 2 * out[1] <= shape[-1])


def _start_in_range(y, arg, low, k, s, p, d):
    """Point the windows that start in the padding and hold nothing above ``low`` at their
    first in-range tap (PyTorch's index for them), in place in ``arg``.

    The scan above only moves off offset 0 for a strictly larger value, so such a window
    keeps a padding tap. Only the first ceil(p/s) windows along an axis start in the
    padding, so the test reads those border slabs of ``y``, not all of it. The in-range taps
    of a window form a box, so its first one in window order is each axis's first."""
    n = len(k)
    out = y.shape[-n:]
    first = 0   # flat offset of the first in-range tap, broadcast over the output grid
    for i in range(n):
        starts = xp.arange(out[i]) * s[i] - p[i]
        skip = xp.maximum(0, -(starts // d[i]))   # taps of axis i before the input begins
        first = first * k[i] + _along(skip, i, n)
    for i in range(n):
        border = min(out[i], -(-p[i] // s[i]))
        if border == 0:
            continue
        slab = _spatial(slice(None) if j != i else slice(0, border) for j in range(n))
        stuck = y[slab] == low
        if stuck.any():
            arg[slab] = xp.where(stuck, xp.broadcast_to(first, out)[slab[1:]], arg[slab])


class MaxPoolOp(Op):
    """Max over windows; backward puts the gradient at each window's argmax.

    Both directions loop over the prod(k) kernel offsets only: each offset is one strided
    slice of the (padded) input, as large as the output, so every step is a vectorised
    comparison over the whole batch. PyTorch's window rules: ties keep the first offset, a
    NaN wins and the last NaN of a window gives the index, and a window whose in-range
    values are all -inf (the dtype's lowest, for integers) points at its first in-range tap.
    """
    widens_half = True
    node_name = 'MaxPool2DWithIndicesBackward0'

    def forward(self, x, k, s, p, d, out, return_indices):
        self.in_shape = x.shape
        self.k, self.s, self.p, self.d, self.out = k, s, p, d, out
        native = native_kernel('max_pool', x) if _native_fits(k, s, p, d, out, x.shape) \
            else None
        if native is not None:
            # one pass over each window, the argmax kept as PyTorch's flat indices
            y, self._flat = native(x, k, s, p, d, out)
            self.arg = None
            return (y, self._flat) if return_indices else y
        low = -np.inf if x.dtype.kind in 'fV' else np.iinfo(x.dtype).min
        xp_ = _grid(x, p, k, s, d, out, low)
        self.padded_shape = xp_.shape
        # A NaN in a window wins (a later NaN over an earlier one, as PyTorch's scan does);
        # one pass over x decides if that can happen.
        nan_aware = x.dtype.kind in 'fV' and bool(xp.isnan(x.sum()))
        # Arithmetic, not masked assignment (xp.where/copyto(where=) are several times slower):
        # y = max(y, view); arg += better * (t - arg).
        y = arg = better = step = None
        for t, view in enumerate(self._offsets(xp_)):
            if y is None:
                y = view.copy()
                arg = xp.zeros(y.shape, np.int8 if math.prod(k) < 128 else np.int64)
                better = xp.empty(y.shape, bool)
                step = xp.empty(y.shape, arg.dtype)
                continue
            xp.greater(view, y, out=better)
            if nan_aware:
                better |= xp.isnan(view)
                xp.copyto(y, view, where=better)
            else:
                xp.maximum(y, view, out=y)
            xp.subtract(t, arg, out=step, casting='unsafe')
            step *= better
            arg += step
        if any(p):
            _start_in_range(y, arg, low, k, s, p, d)
        self.arg = arg
        self._flat = None
        if return_indices:
            return y, self.flat_indices()
        return y

    def _offsets(self, a):
        return _offset_views(a, self.k, self.s, self.d, self.out)

    def flat_indices(self):
        """int64 indices into prod(spatial) of each output's argmax (PyTorch's ``indices``)."""
        if self._flat is None:
            k, s, p, d, out = self.k, self.s, self.p, self.d, self.out
            n = len(k)
            offsets = xp.unravel_index(self.arg.astype(np.int64), k)
            coords = [_along(xp.arange(out[i]) * s[i] - p[i], i, n) + offsets[i] * d[i]
                      for i in range(n)]
            self._flat = xp.asarray(_flat_position(coords, self.in_shape[-n:]), np.int64)
        return self._flat

    def backward(self, g, gi=None):
        n = len(self.k)
        native = native_kernel('max_pool_backward', g) if self.arg is None and fm.is_array(
            g) else None
        if native is not None:
            return native(g, self._flat, self.in_shape, n)
        if fm.is_array(g) and self.arg is not None:
            gx = xp.zeros(self.padded_shape, g.dtype)
            overlap = any(st < dd * (kk - 1) + 1 for st, dd, kk in zip(self.s, self.d, self.k))
            hit = xp.empty(self.arg.shape, bool)
            for t, view in enumerate(self._offsets(gx)):
                xp.equal(self.arg, t, out=hit)
                if overlap:   # windows share inputs: their gradients add up
                    view += g * hit
                else:         # each input sits in one window: write g where it won
                    xp.multiply(g, hit, out=view)
            sizes = self.in_shape[-n:]
            return gx[_spatial(slice(pp, pp + sz) for pp, sz in zip(self.p, sizes))]
        return _scatter_spatial(g, self.flat_indices(), self.in_shape, n)


def _max_pool(fn, n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d, out = _pool_args(fn, input, kernel_size, stride, padding, dilation, ceil_mode,
                                 n)
    _check_kind(fn, input)
    return MaxPoolOp.named(f'MaxPool{n}DWithIndicesBackward0').apply(
        input, k=k, s=s, p=p, d=d, out=out, return_indices=bool(return_indices))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input (PyTorch's ``F.max_pool2d``)."""
    return _max_pool('max_pool2d', 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    # PyTorch's autocast lists max_pool3d as float32 but not max_pool3d_with_indices, which
    # F.max_pool3d calls for return_indices=True
    if autocast_state.active and not return_indices:
        input, = autocast_args('fp32', input)
    return _max_pool('max_pool3d', 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)`` input."""
    _check_1d('max_pool1d', input)
    one = lambda v: (1,) + _ntuple(v, 1, 'argument', 'max_pool1d')  # noqa: E731
    pad, size = _ntuple(padding, 1, 'padding', 'max_pool1d'), one(kernel_size)[1:]
    if not return_indices and pad[0] * 2 > size[0]:   # PyTorch's own check for this form
        raise RuntimeError(f'max_pool1d() padding should be at most half of kernel size, but '
                           f'got padding={pad[0]} and kernel_size={size[0]}')
    r = max_pool2d(input.unsqueeze(-2), one(kernel_size),
                   None if stride is None or stride == () else one(stride),
                   (0,) + _ntuple(padding, 1, 'padding', 'max_pool1d'), one(dilation),
                   ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool3d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _check_1d(fn, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f'{fn}: Expected 2D or 3D (batch mode) tensor for input, but got '
                           f'input of shape {list(input.shape)}')


# ---------------------------------------------------------------------------------------
# average pooling

def _divisors(size, k, s, p, o, count_include_pad):
    """PyTorch's divisor of each output position along one axis (a factor of the n-d one)."""
    start = xp.arange(o) * s - p
    end = xp.minimum(start + k, size + p)
    pool = end - start
    if count_include_pad:
        return pool
    return xp.minimum(end, size) - xp.maximum(start, 0)


def _divisor(sizes, k, s, p, out, count_include_pad, divisor_override):
    if divisor_override:
        return xp.asarray(divisor_override)
    n = len(k)
    div = 1
    for i in range(n):
        div = div * _along(_divisors(sizes[i], k[i], s[i], p[i], out[i], count_include_pad),
                           i, n)
    return div


def _tiles(k, s, p, sizes, out):
    """Windows that tile the input exactly: pooling is a reshape and a sum."""
    return k == s and not any(p) and all(sz == o * kk for sz, o, kk in zip(sizes, out, k))


class AvgPoolOp(Op):
    """Mean over windows; backward spreads ``g / divisor`` back over each window."""
    widens_half = True
    node_name = 'AvgPool2DBackward0'

    def forward(self, x, args):
        k, s, p, out, _, _ = self.args = args
        n = len(k)
        self.in_shape = x.shape
        sizes = x.shape[-n:]
        # One strided add per kernel offset (far faster than a multi-axis sum of a window
        # view); integers add up in int64, as PyTorch's accumulator.
        grid = _grid(x, p, k, s, (1,) * n, out, 0)
        total = None
        for view in _offset_views(grid, k, s, (1,) * n, out):
            if total is None:
                total = view.astype(np.int64 if x.dtype.kind in 'iub' else x.dtype)
            else:
                total += view
        div = _divisor(sizes, *self.args)
        if x.dtype.kind not in 'fV':   # integer pooling truncates toward zero, as PyTorch's
            return xp.trunc(total / div).astype(x.dtype)
        return total / xp.asarray(div).astype(x.dtype)

    def backward(self, g):
        name = self._node_name[:-len('Backward0')] + 'BackwardBackward0'
        return AvgPoolAdjoint.named(name).run(g, in_shape=self.in_shape, args=self.args)



class AvgPoolAdjoint(Op):
    """The backward of average pooling as an op (its backward is average pooling again)."""
    widens_half = True
    node_name = 'AvgPool2DBackwardBackward0'

    def forward(self, g, in_shape, args):
        self.args = args
        k, s, p, out, _, _ = args
        n = len(k)
        lead = in_shape[:-n]
        sizes = in_shape[-n:]
        gs = g / xp.asarray(_divisor(sizes, *args)).astype(g.dtype)
        if _tiles(k, s, p, sizes, out):   # each input in exactly one window: writes, no adds
            gx = xp.empty(in_shape, g.dtype)
            for view in _offset_views(gx, k, s, (1,) * n, out):
                view[...] = gs
            return gx
        # Strided slice-adds, one per kernel offset, into the padded (and extended) grid.
        grid = tuple(max(sz + 2 * pp, (o - 1) * st + kk)
                     for sz, pp, o, st, kk in zip(sizes, p, out, s, k))
        gp = xp.zeros(lead + grid, g.dtype)
        for view in _offset_views(gp, k, s, (1,) * n, out):
            view += gs
        return gp[_spatial(slice(pp, pp + sz) for pp, sz in zip(p, sizes))].copy()

    def backward(self, gg):
        name = self._node_name.replace('BackwardBackward0', 'Backward0')
        return AvgPoolOp.named(name).run(gg, args=self.args)



def _avg_pool(fn, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    k, s, p, _, out = _pool_args(fn, input, kernel_size, stride, padding, 1, ceil_mode, n)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f'{fn}: divisor must be not zero')
    _check_kind(fn, input)
    return AvgPoolOp.named(f'AvgPool{n}DBackward0').apply(
        input, args=(k, s, p, out, bool(count_include_pad), divisor_override))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling (PyTorch's ``F.avg_pool2d``)."""
    if input.ndim < 3:
        raise IndexError(f'avg_pool2d: Dimension out of range (expected to be in range of '
                         f'[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got -3): '
                         f'expected (N, C, H, W) or (C, H, W) input, got {list(input.shape)}')
    return _avg_pool('avg_pool2d', 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    k = _ntuple(kernel_size, 3, 'kernel_size', 'avg_pool3d')
    if input.ndim in (4, 5) and any(sz < kk for sz, kk in zip(input.shape[-3:], k)):
        T, H, W = input.shape[-3:]
        raise RuntimeError(f'avg_pool3d: input image (T: {T} H: {H} W: {W}) smaller than '
                           f'kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})')
    return _avg_pool('avg_pool3d', 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)`` input."""
    _check_1d('avg_pool1d', input)
    one = lambda v, w: (1,) + _ntuple(v, 1, w, 'avg_pool1d')  # noqa: E731
    r = avg_pool2d(input.unsqueeze(-2), one(kernel_size, 'kernel_size'),
                   None if stride is None or stride == () else one(stride, 'stride'),
                   (0,) + _ntuple(padding, 1, 'padding', 'avg_pool1d'), ceil_mode,
                   count_include_pad)
    return r.squeeze(-2)


# ---------------------------------------------------------------------------------------
# adaptive pooling

def _adaptive_bounds(size, out):
    i = xp.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    return start, end


def _adaptive_matrix(size, out, dtype):
    """(out, size): row i averages input positions [start_i, end_i)."""
    start, end = _adaptive_bounds(size, out)
    j = xp.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _matmul_axis(x, m, axis_from_end):
    """``m`` (out, in) applied along axis ``-axis_from_end`` of ``x``."""
    if axis_from_end == 1:
        return xp.matmul(x, m.T.astype(x.dtype, copy=False))
    # (..., in, rest) with the trailing axes flattened: one batched matmul.
    lead, size, rest = x.shape[:-axis_from_end], x.shape[-axis_from_end], \
        x.shape[x.ndim - axis_from_end + 1:]
    y = xp.matmul(m.astype(x.dtype, copy=False), x.reshape(lead + (size, math.prod(rest))))
    return y.reshape(lead + (m.shape[0],) + rest)


class AxisMatmul(Op):
    """A linear map per axis on the last ``len(mats)`` axes (``mats[i]`` is ``(out, in)``;
    None: identity).

    Its backward is the same op with the transposed matrices, so it differentiates any
    number of times. Adaptive average pooling and interpolation are such maps.
    """
    widens_half = True

    def forward(self, x, mats):
        self.mats = mats
        n = len(mats)
        for i, m in enumerate(mats):
            if m is not None:
                x = _matmul_axis(x, m, n - i)
        return x

    def backward(self, g):
        name = self._node_name[:-len('Backward0')] + 'BackwardBackward0'
        return AxisMatmul.named(name).run(
            g, mats=tuple(None if m is None else m.T for m in self.mats))



def _adaptive_size(output_size, shape, n, fn):
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RuntimeError(f'{fn}: output_size must be {n} (got {tuple(output_size)})')
        return tuple(shape[-n + i] if v is None else int(v) for i, v in enumerate(output_size))
    return (int(output_size),) * n


def _check_adaptive_input(fn, input, dims):
    shape = tuple(input.shape)
    if input.ndim not in (dims + 1, dims + 2) or any(v == 0 for v in shape[-dims:]) or (
            input.ndim == dims + 2 and shape[1] == 0):
        raise RuntimeError(f'{fn}(): Expected {dims + 1}D or {dims + 2}D tensor, but got '
                           f'{list(shape)} (non-zero sizes for non-batch dimensions)')


def _adaptive_avg(fn, n, input, output_size):
    _check_adaptive_input(fn, input, n)
    out = _adaptive_size(output_size, input.shape, n, fn)
    if min(out) < 0:
        raise RuntimeError(f'{fn}: elements of output_size must be greater than or equal to 0 '
                           f'but received {list(out)}')
    _check_float(fn, input)
    if out == (1,) * n:   # global average pooling: PyTorch records a mean
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    # the 1 / count weights in float32 at least: AxisMatmul computes half types in float32
    dt = input._data.dtype if input._data.dtype.char in 'fd' else np.dtype(np.float32)
    mats = tuple(_adaptive_matrix(sz, o, dt) for sz, o in zip(input.shape[-n:], out))
    return AxisMatmul.named(f'AdaptiveAvgPool{n}DBackward0').apply(input, mats=mats)


def adaptive_avg_pool2d(input, output_size):
    """Average over ``output_size`` adaptive windows of the last two dims."""
    return _adaptive_avg('adaptive_avg_pool2d', 2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average over ``output_size`` adaptive windows of the last three dims."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    return _adaptive_avg('adaptive_avg_pool3d', 3, input, output_size)


def adaptive_avg_pool1d(input, output_size):
    _check_1d('adaptive_avg_pool1d', input)
    size = _ntuple(output_size, 1, 'output_size', 'adaptive_avg_pool1d')
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + size).squeeze(-2)


class AdaptiveMaxPoolOp(Op):
    """Max over adaptive windows, gathered (padded by repeating each window's last element)."""
    widens_half = True
    node_name = 'AdaptiveMaxPool2DBackward0'

    def forward(self, x, out, return_indices):
        n = self.n = len(out)
        sizes = x.shape[-n:]
        self.in_shape = x.shape
        if math.prod(out) == 0:
            self.idx = xp.zeros(x.shape[:-n] + out, np.int64)
            y = xp.zeros(x.shape[:-n] + out, x.dtype)
            return (y, self.idx) if return_indices else y
        # per axis: (out_i, k_i) input positions of each window, the last one repeated
        pos, ks = [], []
        for sz, o in zip(sizes, out):
            start, end = _adaptive_bounds(sz, o)
            kk = int((end - start).max())
            pos.append(xp.minimum(start[:, None] + xp.arange(kk), (end - 1)[:, None]))
            ks.append(kk)
        # index arrays shaped (*out, *k) with axis i's entries on dims i and n + i
        keys = []
        for i, a in enumerate(pos):
            shape = [1] * (2 * n)
            shape[i], shape[n + i] = a.shape
            keys.append(a.reshape(shape))
        v = x[_spatial(keys)]
        v = v.reshape(v.shape[:-n] + (math.prod(ks),))
        # the repeated last elements keep scan order: the last NaN's copies share its place
        a = _window_argmax(v)
        y = xp.take_along_axis(v, a, -1)[..., 0]
        offsets = xp.unravel_index(a[..., 0], ks)
        coords = [pos[i][_along(xp.arange(out[i]), i, n), offsets[i]] for i in range(n)]
        self.idx = xp.asarray(_flat_position(coords, sizes), np.int64)
        if return_indices:
            return y, self.idx
        return y

    def backward(self, g, gi=None):
        return _scatter_spatial(g, self.idx, self.in_shape, self.n)


def _adaptive_max(fn, n, input, output_size, return_indices):
    _check_adaptive_input(fn, input, n)
    out = _adaptive_size(output_size, input.shape, n, fn)
    if min(out) < 0:
        raise RuntimeError(f'{fn}: elements of output_size must be greater than or equal to 0 '
                           f'but received {list(out)}')
    _check_float(fn, input)
    return AdaptiveMaxPoolOp.named(f'AdaptiveMaxPool{n}DBackward0').apply(
        input, out=out, return_indices=bool(return_indices))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over ``output_size`` adaptive windows (PyTorch's ``F.adaptive_max_pool2d``)."""
    return _adaptive_max('adaptive_max_pool2d', 2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over ``output_size`` adaptive windows of the last three dims."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    return _adaptive_max('adaptive_max_pool3d', 3, input, output_size, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_1d('adaptive_max_pool1d', input)
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    size = _ntuple(output_size, 1, 'output_size', 'adaptive_max_pool1d')
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1,) + size, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` returning ``(output, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` returning ``(output, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` returning ``(output, indices)``."""
    return adaptive_max_pool3d(input, output_size, True)


# ---------------------------------------------------------------------------------------
# fractional max pooling

def _interval_starts(u, size, out, k, dtype):
    """Window starts along one axis for samples ``u`` (..., ): (..., out) int64.

    PyTorch's pseudo-random sequence (Graham, 2014), in the input's floating type:
    ``alpha = (size - k) / (out - 1)``, start_i = int((i + u) * alpha) - int(u * alpha),
    and the last window ends at the end of the axis.
    """
    starts = xp.full(u.shape + (out,), size - k, np.int64)
    if out > 1:
        alpha = dtype.type(size - k) / dtype.type(out - 1)
        i = xp.arange(out - 1).astype(dtype)
        first = ((i + u[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = first - (u * alpha).astype(np.int64)[..., None]
    return starts


class FractionalMaxPoolOp(Op):
    """Max over pseudo-random windows of size ``k`` (one sample per plane and axis)."""
    widens_half = True
    node_name = 'FractionalMaxPool2DBackward0'

    def forward(self, x, samples, k, out, return_indices):
        n = len(k)
        self.in_shape, self.n = x.shape, n
        lead, sizes = x.shape[:-n], x.shape[-n:]
        if math.prod(out) == 0 or x.size == 0:
            self.idx = xp.zeros(lead + out, np.int64)
            y = xp.zeros(lead + out, x.dtype)
            return (y, self.idx) if return_indices else y
        planes = samples.reshape((-1,) + samples.shape[-1:])[:math.prod(lead)]
        coords = []
        for i in range(n):
            # PyTorch's samples of a plane: (width, height) in 2-d, (time, height, width) in 3-d
            u = planes[:, n - 1 - i] if n == 2 else planes[:, i]
            starts = _interval_starts(u, sizes[i], out[i], k[i], samples.dtype)
            window = starts[:, :, None] + xp.arange(k[i])           # (planes, out_i, k_i)
            shape = [window.shape[0]] + [1] * (2 * n)
            shape[1 + i], shape[1 + n + i] = out[i], k[i]
            coords.append(window.reshape(shape))
        flat = _flat_position(coords, sizes).reshape(len(planes), math.prod(out), math.prod(k))
        v = xp.take_along_axis(x.reshape(len(planes), -1, 1),
                               flat.reshape(len(planes), -1, 1), 1)
        v = v.reshape(flat.shape)
        a = _window_argmax(v)
        y = xp.take_along_axis(v, a, -1).reshape(lead + out)
        self.idx = xp.take_along_axis(flat, a, -1).reshape(lead + out).astype(np.int64)
        if return_indices:
            return y, self.idx
        return y

    def backward(self, g, gi=None):
        return _scatter_spatial(g, self.idx, self.in_shape, self.n)


def _fractional(fn, n, input, kernel_size, output_size, output_ratio, return_indices,
                _random_samples):
    if autocast_state.active:   # both of PyTorch's fractional poolings run in float32
        input, _random_samples = autocast_args('fp32', input, _random_samples)
    if output_size is None and output_ratio is None:
        raise ValueError(f'{fn} requires specifying either an output_size or an output_ratio')
    k = _ntuple(kernel_size, n, 'kernel_size', fn)
    if input.ndim < n + 1:   # PyTorch reads the channel count at dim -(n + 1) first
        raise IndexError(f'{fn}: Dimension out of range (expected to be in range of '
                         f'[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got '
                         f'{-n - 1}): expected {n + 1}D or {n + 2}D input, got '
                         f'{list(input.shape)}')
    if input.ndim > n + 2:
        raise RuntimeError(f'{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got: '
                           f'{list(input.shape)}')
    sizes = tuple(input.shape[-n:])
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else \
            (output_ratio,) * n
        if len(ratio) != n:
            raise ValueError(f'{fn}: output_ratio must be a number or a tuple of {n} numbers '
                             f'(got {output_ratio})')
        out = tuple(int(sz * r) for sz, r in zip(sizes, ratio))
    else:
        out = _ntuple(output_size, n, 'output_size', fn)
    if min(out) < 0:
        raise RuntimeError(f'{fn}: Trying to create tensor with negative dimension '
                           f'{min(out)}: {list(input.shape[:-n]) + list(out)}')
    names = ('height', 'width') if n == 2 else ('time', 'height', 'width')
    for name, sz, o, kk in zip(names, sizes, out, k):
        # PyTorch allows the last window to end at the input's end in 2-d, not in 3-d.
        if o + kk - 1 > sz or (n == 3 and o + kk - 1 == sz):
            raise RuntimeError(f'{fn}(): pool {name} {kk} too large relative to input '
                               f'{name} {sz} (output {name} {o})')
    _check_float(fn, input)
    batch = 1 if input.ndim == n + 1 else input.shape[0]
    channels = input.shape[-n - 1]
    dt = input._data.dtype
    if _random_samples is None:
        # PyTorch draws ``rand(N, C, n)`` in the input's dtype from the default generator
        samples = uniform01(array_rng(None), (batch, channels, n), dt)
    else:
        samples = _random_samples._data
        if samples.ndim != 3:
            raise RuntimeError(f'{fn}: Expect _random_samples to be a 3D tensor of shape '
                               f'(N, C, {n}), got {list(samples.shape)}')
        if samples.shape[2] != n:
            raise RuntimeError(f'Expect _random_samples.size(2) equals to {n}; got '
                               f'{samples.shape[2]}.')
        if samples.shape[0] < batch:
            raise RuntimeError(f'Expect _random_samples.size(0) no less then input batch size '
                               f'({samples.shape[0]} < {batch}).')
        if samples.shape[1] != channels:
            raise RuntimeError(f'Expect _random_samples.size(1) equals to input channel size '
                               f'({samples.shape[1]} != {channels}).')
        if samples.dtype != dt:
            raise RuntimeError(f'Expect _random_samples to have the same dtype as input '
                               f'({_random_samples.dtype} vs {input.dtype})')
        samples = samples[:batch]
    return FractionalMaxPoolOp.named(f'FractionalMaxPool{n}DBackward0').apply(
        input, samples=samples, k=k, out=out, return_indices=bool(return_indices))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d fractional max pooling (PyTorch's ``F.fractional_max_pool2d``); windows start at
    pseudo-random positions drawn from dynagrad's default generator."""
    return _fractional('fractional_max_pool2d', 2, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d fractional max pooling (PyTorch's ``F.fractional_max_pool3d``)."""
    return _fractional('fractional_max_pool3d', 3, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` returning ``(output, indices)``."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` returning ``(output, indices)``."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


# ---------------------------------------------------------------------------------------
# max unpooling

class MaxUnpool(Op):
    """Zeros of the output size with each input value written at its index."""
    autocast = 'fp32'
    widens_half = True
    node_name = 'MaxUnpool2DBackward0'

    def forward(self, x, idx, out):
        n = len(out)
        lead = x.shape[:-n]
        self.in_shape = x.shape
        flat = idx.reshape(lead + (-1,))
        self.idx = flat
        y = xp.zeros(lead + (math.prod(out),), x.dtype)
        xp.put_along_axis(y, flat, x.reshape(lead + (-1,)), -1)
        return y.reshape(lead + tuple(out))

    def backward(self, g, gi=None):
        lead = self.idx.shape[:-1]
        return GatherFlat.run(g.reshape(lead + (-1,)), idx=self.idx).reshape(self.in_shape)


def _unpool_output_size(fn, n, input, k, s, p, output_size):
    default = tuple((input.shape[-n + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    if output_size is None:
        return default
    out = tuple(int(v) for v in output_size)
    if len(out) == n + 2:
        out = out[2:]
    elif len(out) == input.ndim:
        out = out[-n:]
    if len(out) != n:
        raise ValueError(f'output_size should be a sequence containing {n} or {n + 2} '
                         f'elements, but it has a length of \'{len(output_size)}\'')
    for i in range(n):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < out[i] < hi:
            raise ValueError(f'invalid output_size "{tuple(out)}" (dim {i} must be between '
                             f'{lo} and {hi})')
    return out


@vmap_function('max_unpool')
def _max_unpool(fn, n, input, indices, out):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f'Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d '
                           f'Tensor, but got a tensor with {input.ndim} dimensions.')
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f'Expected shape of indices to be same as that of the input '
                           f'tensor ({list(input.shape)}) but got indices tensor with shape: '
                           f'{list(indices.shape)}')
    if indices.dtype.is_floating_point or indices.dtype.is_complex or \
            str(indices.dtype).endswith('bool'):
        raise RuntimeError(f'{fn}: elements in indices should be type int64 but got: '
                           f'{indices.dtype}')
    idx = indices._data
    size = math.prod(out)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.max()) if idx.max() >= size else int(idx.min())
        raise RuntimeError(f'Found an invalid max index: {bad} (output volumes are of size '
                           f'{"x".join(str(v) for v in out)})')
    return MaxUnpool.named(f'MaxUnpool{n}DBackward0').apply(
        input, idx=idx.astype(np.int64, copy=False), out=out)


def _unpool_args(fn, n, kernel_size, stride, padding):
    k = _ntuple(kernel_size, n, 'kernel_size', fn)
    s = k if stride is None else _ntuple(stride, n, 'stride', fn)
    p = _ntuple(padding, n, 'padding', fn)
    return k, s, p


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: values back at their indices, zeros elsewhere."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    k, s, p = _unpool_args('max_unpool2d', 2, kernel_size, stride, padding)
    if input.ndim not in (3, 4):
        raise RuntimeError(f'max_unpool2d: Input to max_unpooling2d should be a 3d or 4d '
                           f'Tensor, but got a tensor with {input.ndim} dimensions.')
    out = _unpool_output_size('max_unpool2d', 2, input, k, s, p, output_size)
    return _max_unpool('max_unpool2d', 2, input, indices, out)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    k, s, p = _unpool_args('max_unpool3d', 3, kernel_size, stride, padding)
    if min(s) <= 0:
        raise RuntimeError(f'max_unpool3d: strides should be greater than zero, but got '
                           f'stride: {list(s)}')
    if input.ndim not in (4, 5):
        raise RuntimeError(f'max_unpool3d: Input to max_unpooling3d should be a 4d or 5d '
                           f'Tensor, but got a tensor with {input.ndim} dimensions.')
    out = _unpool_output_size('max_unpool3d', 3, input, k, s, p, output_size)
    return _max_unpool('max_unpool3d', 3, input, indices, out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d`` (a 2-d unpool of ``input.unsqueeze(-1)``)."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    k, s, p = _unpool_args('max_unpool1d', 1, kernel_size, stride, padding)
    if input.ndim not in (2, 3):
        raise RuntimeError(f'max_unpool1d: Input to max_unpooling2d should be a 3d or 4d '
                           f'Tensor, but got a tensor with {input.ndim + 1} dimensions '
                           f'(max_unpool1d takes (N, C, L) or (C, L) input).')
    out = _unpool_output_size('max_unpool1d', 1, input, k, s, p, output_size)
    y = _max_unpool('max_unpool1d', 2, input.unsqueeze(-1), indices.unsqueeze(-1),
                    out + (1,))
    return y.squeeze(-1)


# ---------------------------------------------------------------------------------------
# power-average pooling

def _lp(out, norm_type, window):
    from ... import ops as _ops
    return (_ops.sign(out) * _ops.relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over windows of x ** p) ** (1 / p)`` (PyTorch's ``F.lp_pool2d``)."""
    kh, kw = _ntuple(kernel_size, 2, 'kernel_size', 'lp_pool2d')
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kw * kh)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over windows of x ** p) ** (1 / p)`` over the last three dims."""
    kd, kh, kw = _ntuple(kernel_size, 3, 'kernel_size', 'lp_pool3d')
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kd * kh * kw)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k, = _ntuple(kernel_size, 1, 'kernel_size', 'lp_pool1d')
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, k)


__all__ = ['max_pool1d', 'max_pool2d', 'max_pool3d', 'max_pool1d_with_indices',
           'max_pool2d_with_indices', 'max_pool3d_with_indices', 'avg_pool1d', 'avg_pool2d',
           'avg_pool3d', 'adaptive_avg_pool1d', 'adaptive_avg_pool2d', 'adaptive_avg_pool3d',
           'adaptive_max_pool1d', 'adaptive_max_pool2d', 'adaptive_max_pool3d',
           'adaptive_max_pool1d_with_indices', 'adaptive_max_pool2d_with_indices',
           'adaptive_max_pool3d_with_indices', 'fractional_max_pool2d', 'fractional_max_pool3d',
           'fractional_max_pool2d_with_indices', 'fractional_max_pool3d_with_indices',
           'max_unpool1d', 'max_unpool2d', 'max_unpool3d', 'lp_pool1d', 'lp_pool2d',
           'lp_pool3d']
