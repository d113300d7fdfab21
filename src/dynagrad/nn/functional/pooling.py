"""Pooling: max, average, adaptive, LP pooling and max-unpooling.

The ops work on the last two (spatial) dimensions and take any leading dimensions, so
batched ``(N, C, H, W)`` and unbatched ``(C, H, W)`` inputs run the same code; the 1-d
forms are the 2-d ones on ``input.unsqueeze(-2)`` (as in PyTorch, whose 1-d results come
out of ``SqueezeBackward1``).

Every backward here is linear in the incoming gradient and is itself an op whose
backward is the forward map again (max pooling: scatter at the argmax <-> gather there;
average pooling: spread over windows <-> sum over windows; adaptive average pooling: a
matrix per axis <-> its transpose), so double backward comes from the pairs calling each
other through ``Op.run``.
"""
import math

import numpy as np

from ...backend import xp
from ...autograd.function import Op, autocast_args, autocast_state
from ...ops import formula as fm


# ---------------------------------------------------------------------------------------
# arguments

def _ntuple(value, n, what, fn):
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f'{fn}: {what} must either be a single int, or a tuple of {n} '
                               f'ints (got {tuple(value)})')
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


def _pool_args(fn, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Check the input and arguments of a 2-d pool; the output spatial size."""
    k = _ntuple(kernel_size, 2, 'kernel_size', fn)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _ntuple(stride, 2, 'stride', fn)
    p = _ntuple(padding, 2, 'padding', fn)
    d = _ntuple(dilation, 2, 'dilation', fn)
    if min(k) <= 0:
        raise RuntimeError(f'{fn}: kernel_size should be greater than zero, but got '
                           f'kernel_size {k}')
    if min(s) <= 0:
        raise RuntimeError(f'{fn}: stride should be greater than zero, but got stride {s}')
    if min(d) <= 0:
        raise RuntimeError(f'{fn}: dilation should be greater than zero, but got dilation {d}')
    if min(p) < 0:
        raise RuntimeError(f'{fn}: pad must be non-negative, but got pad {p}')
    for kk, pp, dd in zip(k, p, d):
        if pp * 2 > (kk - 1) * dd + 1:
            raise RuntimeError(f'{fn}: pad should be at most half of effective kernel size, '
                               f'but got pad={pp}, kernel_size={kk} and dilation={dd}')
    shape = tuple(input.shape)
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[-3:]):
        raise RuntimeError(f'{fn}: non-empty 3D or 4D (batch mode) tensor expected for input, '
                           f'but got input of shape {list(shape)}')
    H, W = shape[-2:]
    out = (_out_size(H, k[0], s[0], p[0], d[0], ceil_mode),
           _out_size(W, k[1], s[1], p[1], d[1], ceil_mode))
    if min(out) < 1:
        raise RuntimeError(f'{fn}: Given input size: ({shape[-3]}x{H}x{W}). Calculated output '
                           f'size: ({shape[-3]}x{out[0]}x{out[1]}). Output size is too small')
    return k, s, p, d, out


def _check_float(fn, input):
    dt = input.dtype
    if not dt.is_floating_point:
        name = dt.legacy_name[:-6]
        raise RuntimeError(f'"{fn}" not implemented for \'{name}\' '
                           f'(pooling needs a floating point input; use input.float())')


def _check_kind(fn, input):
    if input.dtype.category == 0:
        raise RuntimeError(f'"{fn}" not implemented for \'Bool\'')


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



# ---------------------------------------------------------------------------------------
# max pooling

def _windows(x, k, s, d, out, fill):
    """(lead, Ho, Wo, kh*kw) windows of ``x`` (already padded on the top/left)."""
    H, W = x.shape[-2:]
    need = [(o - 1) * st + dd * (kk - 1) + 1 for o, st, dd, kk in zip(out, s, d, k)]
    if need[0] > H or need[1] > W:   # ceil_mode windows reaching past the end
        big = xp.full(x.shape[:-2] + (max(H, need[0]), max(W, need[1])), fill, x.dtype)
        big[..., :H, :W] = x
        x = big
    ext = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
    v = xp.lib.stride_tricks.sliding_window_view(x, ext, axis=(-2, -1))
    v = v[..., :(out[0] - 1) * s[0] + 1:s[0], :(out[1] - 1) * s[1] + 1:s[1], ::d[0], ::d[1]]
    return v.reshape(v.shape[:-2] + (k[0] * k[1],))


def _pad2(x, p, fill):
    if p == (0, 0):
        return x
    out = xp.full(x.shape[:-2] + (x.shape[-2] + 2 * p[0], x.shape[-1] + 2 * p[1]), fill,
                  x.dtype)
    out[..., p[0]:p[0] + x.shape[-2], p[1]:p[1] + x.shape[-1]] = x
    return out


class MaxPool2dOp(Op):
    """Max over windows; backward puts the gradient at each window's argmax.

    Both directions loop over the kh*kw kernel offsets only: each offset is one strided
    slice of the (padded) input, as large as the output, so every step is a vectorised
    comparison over the whole batch. Ties keep the first offset, as ``argmax`` does.
    """
    widens_half = True
    node_name = 'MaxPool2DWithIndicesBackward0'

    def forward(self, x, k, s, p, d, out, return_indices):
        lead = x.shape[:-2]
        Ho, Wo = out
        self.in_shape, self.lead = x.shape, lead
        self.k, self.s, self.p, self.d, self.out = k, s, p, d, out
        low = -np.inf if x.dtype.kind in 'fV' else np.iinfo(x.dtype).min
        xp_ = _pad2(x, p, low)
        H, W = xp_.shape[-2:]
        need = ((Ho - 1) * s[0] + d[0] * (k[0] - 1) + 1, (Wo - 1) * s[1] + d[1] * (k[1] - 1) + 1)
        if need[0] > H or need[1] > W:   # ceil_mode windows reaching past the end
            big = xp.full(lead + (max(H, need[0]), max(W, need[1])), low, x.dtype)
            big[..., :H, :W] = xp_
            xp_ = big
        self.padded_shape = xp_.shape
        # A NaN in a window wins, as in PyTorch; one pass over x decides if that can happen.
        nan_aware = x.dtype.kind in 'fV' and bool(xp.isnan(x.sum()))
        # Arithmetic, not masked assignment (xp.where/copyto(where=) are several times slower):
        # y = max(y, view); arg += better * (t - arg).
        y = arg = better = step = None
        for t, view in enumerate(self._offsets(xp_)):
            if y is None:
                y = view.copy()
                arg = xp.zeros(y.shape, np.int8 if k[0] * k[1] < 128 else np.int64)
                better = xp.empty(y.shape, bool)
                step = xp.empty(y.shape, arg.dtype)
                continue
            xp.greater(view, y, out=better)
            if nan_aware:
                better |= xp.isnan(view) & ~xp.isnan(y)
                xp.copyto(y, view, where=better)
            else:
                xp.maximum(y, view, out=y)
            xp.subtract(t, arg, out=step, casting='unsafe')
            step *= better
            arg += step
        self.arg = arg
        self._flat = None
        if return_indices:
            return y, self.flat_indices()
        return y

    def _offsets(self, a):
        """The strided slice of ``a`` under each kernel offset, in window order."""
        (Ho, Wo), k, s, d = self.out, self.k, self.s, self.d
        for i in range(k[0]):
            r0 = i * d[0]
            for j in range(k[1]):
                c0 = j * d[1]
                yield a[..., r0:r0 + (Ho - 1) * s[0] + 1:s[0], c0:c0 + (Wo - 1) * s[1] + 1:s[1]]

    def flat_indices(self):
        """int64 indices into H*W of each output's argmax (PyTorch's ``indices``)."""
        if self._flat is None:
            k, s, p, d = self.k, self.s, self.p, self.d
            Ho, Wo = self.out
            W = self.in_shape[-1]
            a = self.arg.astype(np.int64)
            h = xp.arange(Ho).reshape(Ho, 1) * s[0] - p[0] + (a // k[1]) * d[0]
            w = xp.arange(Wo) * s[1] - p[1] + (a % k[1]) * d[1]
            self._flat = (h * W + w).astype(np.int64)
        return self._flat

    def backward(self, g, gi=None):
        lead, (Ho, Wo) = self.lead, self.out
        if fm.is_array(g):
            gx = xp.zeros(self.padded_shape, g.dtype)
            overlap = any(st < dd * (kk - 1) + 1 for st, dd, kk in zip(self.s, self.d, self.k))
            hit = xp.empty(self.arg.shape, bool)
            for t, view in enumerate(self._offsets(gx)):
                xp.equal(self.arg, t, out=hit)
                if overlap:   # windows share inputs: their gradients add up
                    view += g * hit
                else:         # each input sits in one window: write g where it won
                    xp.multiply(g, hit, out=view)
            p = self.p
            H, W = self.in_shape[-2:]
            return gx[..., p[0]:p[0] + H, p[1]:p[1] + W]
        H, W = self.in_shape[-2:]
        idx = self.flat_indices().reshape(lead + (Ho * Wo,))
        gx = ScatterFlat.run(g.reshape(lead + (Ho * Wo,)), idx=idx, size=H * W)
        return gx.reshape(self.in_shape)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input (PyTorch's ``F.max_pool2d``)."""
    k, s, p, d, out = _pool_args('max_pool2d', input, kernel_size, stride, padding, dilation,
                                 ceil_mode)
    _check_kind('max_pool2d', input)
    return MaxPool2dOp.apply(input, k=k, s=s, p=p, d=d, out=out,
                           return_indices=bool(return_indices))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)`` input."""
    _check_1d('max_pool1d', input)
    one = lambda v: (1,) + _ntuple(v, 1, 'argument', 'max_pool1d')  # noqa: E731
    r = max_pool2d(input.unsqueeze(-2), one(kernel_size),
                   None if stride is None or stride == () else one(stride),
                   (0,) + _ntuple(padding, 1, 'padding', 'max_pool1d'), one(dilation),
                   ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def _check_1d(fn, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f'{fn}: Expected 2D or 3D (batch mode) tensor for input, but got '
                           f'input of shape {list(input.shape)}')


# ---------------------------------------------------------------------------------------
# average pooling

def _divisors(size, k, s, p, o, count_include_pad):
    """PyTorch's divisor of each output position along one axis (a factor of the 2-d one)."""
    start = xp.arange(o) * s - p
    end = xp.minimum(start + k, size + p)
    pool = end - start
    if count_include_pad:
        return pool
    return xp.minimum(end, size) - xp.maximum(start, 0)


class AvgPool2dOp(Op):
    """Mean over windows; backward spreads ``g / divisor`` back over each window."""
    widens_half = True
    node_name = 'AvgPool2DBackward0'

    def forward(self, x, args):
        k, s, p, out, _, _ = self.args = args
        self.in_shape = x.shape
        lead = x.shape[:-2]
        H, W = x.shape[-2:]
        Ho, Wo = out
        if k == s and p == (0, 0) and H == Ho * k[0] and W == Wo * k[1]:
            v = x.reshape(lead + (Ho, k[0], Wo, k[1]))
            total = v.sum((-3, -1))
        else:
            total = _windows(_pad2(x, p, 0), k, s, (1, 1), out, 0).sum(-1)
        div = _divisor(H, W, *self.args)
        if x.dtype.kind not in 'fV':   # integer pooling truncates toward zero, as PyTorch's
            return xp.trunc(total / div).astype(x.dtype)
        return total / div.astype(x.dtype)

    def backward(self, g):
        return AvgPool2dAdjoint.run(g, in_shape=self.in_shape, args=self.args)



def _divisor(H, W, k, s, p, out, count_include_pad, divisor_override):
    if divisor_override:
        return xp.asarray(divisor_override)
    dh = _divisors(H, k[0], s[0], p[0], out[0], count_include_pad)
    dw = _divisors(W, k[1], s[1], p[1], out[1], count_include_pad)
    return dh.reshape(-1, 1) * dw


class AvgPool2dAdjoint(Op):
    """The backward of average pooling as an op (its backward is average pooling again)."""
    widens_half = True
    node_name = 'AvgPool2DBackwardBackward0'

    def forward(self, g, in_shape, args):
        self.args = args
        k, s, p, out, _, _ = args
        lead = in_shape[:-2]
        H, W = in_shape[-2:]
        Ho, Wo = out
        gs = g / _divisor(H, W, *args).astype(g.dtype)
        if k == s and p == (0, 0) and H == Ho * k[0] and W == Wo * k[1]:
            spread = xp.broadcast_to(gs.reshape(lead + (Ho, 1, Wo, 1)),
                                     lead + (Ho, k[0], Wo, k[1]))
            return spread.reshape(in_shape)
        # Strided slice-adds, one per kernel offset, into the padded (and extended) grid.
        Hp = max(H + 2 * p[0], (Ho - 1) * s[0] + k[0])
        Wp = max(W + 2 * p[1], (Wo - 1) * s[1] + k[1])
        gp = xp.zeros(lead + (Hp, Wp), g.dtype)
        for i in range(k[0]):
            for j in range(k[1]):
                gp[..., i:i + (Ho - 1) * s[0] + 1:s[0], j:j + (Wo - 1) * s[1] + 1:s[1]] += gs
        return gp[..., p[0]:p[0] + H, p[1]:p[1] + W].copy()

    def backward(self, gg):
        return AvgPool2dOp.run(gg, args=self.args)



def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling (PyTorch's ``F.avg_pool2d``)."""
    if input.ndim < 3:
        raise IndexError(f'avg_pool2d: Dimension out of range (expected to be in range of '
                         f'[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got -3): '
                         f'expected (N, C, H, W) or (C, H, W) input, got {list(input.shape)}')
    k, s, p, _, out = _pool_args('avg_pool2d', input, kernel_size, stride, padding, 1,
                                 ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError('avg_pool2d: divisor must be not zero')
    _check_kind('avg_pool2d', input)
    return AvgPool2dOp.apply(input, args=(k, s, p, out, bool(count_include_pad),
                                        divisor_override))


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


class AxisMatmul(Op):
    """``A_h @ x @ A_w.T`` on the last two axes (a linear map per axis; None: identity).

    Its backward is the same op with the transposed matrices, so it differentiates any
    number of times. Adaptive average pooling and interpolation are such maps.
    """
    widens_half = True

    def forward(self, x, mh, mw):
        self.mh, self.mw = mh, mw
        if mh is not None:
            x = xp.matmul(mh.astype(x.dtype, copy=False), x)
        if mw is not None:
            x = xp.matmul(x, mw.T.astype(x.dtype, copy=False))
        return x

    def backward(self, g):
        name = self._node_name[:-len('Backward0')] + 'BackwardBackward0'
        return AxisMatmul.named(name).run(g, mh=None if self.mh is None else self.mh.T,
                                          mw=None if self.mw is None else self.mw.T)



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


def adaptive_avg_pool2d(input, output_size):
    """Average over ``output_size`` adaptive windows of the last two dims."""
    _check_adaptive_input('adaptive_avg_pool2d', input, 2)
    Ho, Wo = _adaptive_size(output_size, input.shape, 2, 'adaptive_avg_pool2d')
    if min(Ho, Wo) < 0:
        raise RuntimeError(f'adaptive_avg_pool2d: elements of output_size must be greater '
                           f'than or equal to 0 but received {[Ho, Wo]}')
    _check_float('adaptive_avg_pool2d', input)
    if (Ho, Wo) == (1, 1):   # global average pooling: PyTorch records a mean
        return input.mean((-2, -1), keepdim=True)
    H, W = input.shape[-2:]
    dt = input._data.dtype
    return AxisMatmul.named('AdaptiveAvgPool2DBackward0').apply(
        input, mh=_adaptive_matrix(H, Ho, dt), mw=_adaptive_matrix(W, Wo, dt))


def adaptive_avg_pool1d(input, output_size):
    _check_1d('adaptive_avg_pool1d', input)
    size = _ntuple(output_size, 1, 'output_size', 'adaptive_avg_pool1d')
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + size).squeeze(-2)


class AdaptiveMaxPool2dOp(Op):
    """Max over adaptive windows, gathered (padded by repeating each window's last element)."""
    widens_half = True
    node_name = 'AdaptiveMaxPool2DBackward0'

    def forward(self, x, out, return_indices):
        H, W = x.shape[-2:]
        Ho, Wo = out
        self.in_shape = x.shape
        if Ho * Wo == 0:
            self.idx = xp.zeros(x.shape[:-2] + out, np.int64)
            y = xp.zeros(x.shape[:-2] + out, x.dtype)
            return (y, self.idx) if return_indices else y
        hs, he = _adaptive_bounds(H, Ho)
        ws, we = _adaptive_bounds(W, Wo)
        kh, kw = int((he - hs).max()), int((we - ws).max())
        hi = xp.minimum(hs[:, None] + xp.arange(kh), (he - 1)[:, None])      # (Ho, kh)
        wi = xp.minimum(ws[:, None] + xp.arange(kw), (we - 1)[:, None])      # (Wo, kw)
        v = x[..., hi[:, None, :, None], wi[None, :, None, :]]             # (.., Ho, Wo, kh, kw)
        v = v.reshape(v.shape[:-2] + (kh * kw,))
        a = v.argmax(-1)[..., None]
        y = xp.take_along_axis(v, a, -1)[..., 0]
        a = a[..., 0]
        rows = hi[xp.arange(Ho).reshape(Ho, 1), a // kw]                    # (.., Ho, Wo)
        cols = wi[xp.arange(Wo), a % kw]
        self.idx = (rows * W + cols).astype(np.int64)
        if return_indices:
            return y, self.idx
        return y

    def backward(self, g, gi=None):
        lead = self.in_shape[:-2]
        H, W = self.in_shape[-2:]
        gx = ScatterFlat.run(g.reshape(lead + (-1,)), idx=self.idx.reshape(lead + (-1,)),
                             size=H * W)
        return gx.reshape(self.in_shape)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over ``output_size`` adaptive windows (PyTorch's ``F.adaptive_max_pool2d``)."""
    _check_adaptive_input('adaptive_max_pool2d', input, 2)
    out = _adaptive_size(output_size, input.shape, 2, 'adaptive_max_pool2d')
    if min(out) < 0:
        raise RuntimeError(f'adaptive_max_pool2d: elements of output_size must be greater '
                           f'than or equal to 0 but received {list(out)}')
    _check_float('adaptive_max_pool2d', input)
    return AdaptiveMaxPool2dOp.apply(input, out=out, return_indices=bool(return_indices))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_1d('adaptive_max_pool1d', input)
    size = _ntuple(output_size, 1, 'output_size', 'adaptive_max_pool1d')
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1,) + size, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


# ---------------------------------------------------------------------------------------
# max unpooling

class MaxUnpool2d(Op):
    """Zeros of the output size with each input value written at its index."""
    autocast = 'fp32'
    widens_half = True
    node_name = 'MaxUnpool2DBackward0'

    def forward(self, x, idx, out):
        lead = x.shape[:-2]
        self.in_shape = x.shape
        flat = idx.reshape(lead + (-1,))
        self.idx = flat
        y = xp.zeros(lead + (out[0] * out[1],), x.dtype)
        xp.put_along_axis(y, flat, x.reshape(lead + (-1,)), -1)
        return y.reshape(lead + tuple(out))

    def backward(self, g, gi=None):
        lead = self.in_shape[:-2]
        return GatherFlat.run(g.reshape(lead + (-1,)), idx=self.idx).reshape(self.in_shape)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: values back at their indices, zeros elsewhere."""
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    k = _ntuple(kernel_size, 2, 'kernel_size', 'max_unpool2d')
    s = k if stride is None else _ntuple(stride, 2, 'stride', 'max_unpool2d')
    p = _ntuple(padding, 2, 'padding', 'max_unpool2d')
    if input.ndim not in (3, 4):
        raise RuntimeError(f'max_unpool2d: Expected 3D or 4D tensor, but got '
                           f'{list(input.shape)}')
    default = tuple((input.shape[-2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(2))
    if output_size is None:
        out = default
    else:
        out = tuple(int(v) for v in output_size)
        if len(out) == input.ndim:
            out = out[-2:]
        if len(out) != 2:
            raise ValueError(f'output_size should be a sequence containing 2 or '
                             f'{input.ndim} elements, but it has a length of '
                             f'\'{len(output_size)}\'')
        for i in range(2):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < out[i] < hi:
                raise ValueError(f'invalid output_size "{list(out)}" (dim {i} must be '
                                 f'between {lo} and {hi})')
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f'Expected shape of indices to be same as that of the input '
                           f'tensor ({list(input.shape)}) but got indices tensor with shape: '
                           f'{list(indices.shape)}')
    if indices.dtype.is_floating_point or indices.dtype.is_complex or \
            str(indices.dtype).endswith('bool'):
        raise RuntimeError(f'elements in indices should be type int64 but got: '
                           f'{indices.dtype}')
    idx = indices._data
    size = out[0] * out[1]
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.max()) if idx.max() >= size else int(idx.min())
        raise RuntimeError(f'Found an invalid max index: {bad} (output volumes are of size '
                           f'{out[0]}x{out[1]})')
    return MaxUnpool2d.apply(input, idx=idx.astype(np.int64, copy=False), out=out)


# ---------------------------------------------------------------------------------------
# power-average pooling

def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over windows of x ** p) ** (1 / p)`` (PyTorch's ``F.lp_pool2d``)."""
    from ... import ops as _ops
    kh, kw = _ntuple(kernel_size, 2, 'kernel_size', 'lp_pool2d')
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_ops.sign(out) * _ops.relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    from ... import ops as _ops
    k, = _ntuple(kernel_size, 1, 'kernel_size', 'lp_pool1d')
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_ops.sign(out) * _ops.relu(out.abs())).mul(k).pow(1.0 / norm_type)


__all__ = ['max_pool1d', 'max_pool2d', 'avg_pool1d', 'avg_pool2d', 'adaptive_avg_pool1d',
           'adaptive_avg_pool2d', 'adaptive_max_pool1d', 'adaptive_max_pool2d',
           'max_unpool2d', 'lp_pool1d', 'lp_pool2d']
