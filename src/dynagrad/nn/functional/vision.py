"""Padding, resampling and pixel rearrangement: pad, interpolate, grid_sample, ...

Most of these are linear maps of the input built once, in forward, from index arrays or
small per-axis matrices:

* ``pad`` (reflect / replicate / circular) and nearest interpolation *gather* along each
  spatial axis at an index array; the adjoint scatter-adds back (``AxisGather`` and
  ``AxisScatter`` are each other's backward). Constant padding is its own adjoint with
  the pads negated (padding and cropping swap).
* linear / bilinear / bicubic interpolation multiply each spatial axis by an
  ``(out, in)`` interpolation matrix (``pooling.AxisMatmul``; its adjoint uses the
  transposes).
* ``grid_sample`` gathers the neighbours of each sampling point (2**d corners, or 4 x 4
  taps for bicubic) and blends them with per-axis weights; its backward is
  written with dual operations (gather/scatter ops and arithmetic on the saved grid), so
  it differentiates again, as PyTorch's does.
"""
import itertools
import math
import warnings

import numpy as np

from ...backend import xp
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...ops import formula as fm
from ...tensor import wrap
from .pooling import AxisMatmul, GatherFlat, ScatterFlat, adaptive_avg_pool1d, \
    adaptive_avg_pool2d, adaptive_avg_pool3d


# ---------------------------------------------------------------------------------------
# gathering along axes and its adjoint

def _scatter_axis(g, idx, n, axis):
    """The adjoint of ``take(x, idx, axis)`` for an axis of size ``n``: repeats add up."""
    shape = list(g.shape)
    shape[axis] = n
    if len(idx) == 0:
        return xp.zeros(shape, g.dtype)
    order = xp.argsort(idx, kind='stable')
    s = idx[order]
    starts = xp.flatnonzero(xp.r_[True, s[1:] != s[:-1]])
    sums = xp.add.reduceat(xp.take(g, order, axis), starts, axis)
    targets = s[starts]
    if len(targets) == n:
        return sums
    out = xp.zeros(shape, g.dtype)
    key = [slice(None)] * g.ndim
    key[axis] = targets
    out[tuple(key)] = sums
    return out


class AxisGather(Op):
    """``x`` gathered at an index array along each of its last ``len(idxs)`` axes."""
    widens_half = True

    def forward(self, x, idxs):
        nd = len(idxs)
        self.idxs, self.sizes = idxs, x.shape[x.ndim - nd:]
        for i, idx in enumerate(idxs):
            if idx is not None:
                x = xp.take(x, idx, x.ndim - nd + i)
        return x

    def backward(self, g):
        return AxisScatter.run(g, idxs=self.idxs, sizes=self.sizes)



class AxisScatter(Op):
    """The adjoint of ``AxisGather``: zeros of the original sizes, ``g`` added at the indices."""
    widens_half = True
    node_name = 'AxisScatterBackward0'

    def forward(self, g, idxs, sizes):
        self.idxs = idxs
        nd = len(idxs)
        for i, (idx, n) in enumerate(zip(idxs, sizes)):
            if idx is not None:
                g = _scatter_axis(g, idx, n, g.ndim - nd + i)
        return g

    def backward(self, gg):
        return AxisGather.run(gg, idxs=self.idxs)



# ---------------------------------------------------------------------------------------
# pad

class ConstantPadNd(Op):
    """Pad (or, for negative pads, crop) the last dims; the adjoint pads by the negation."""
    node_name = 'ConstantPadNdBackward0'

    def forward(self, x, pads, value=0):
        self.pads = pads
        k = len(pads)
        lead = x.shape[:x.ndim - k]
        sizes = x.shape[x.ndim - k:]
        out = xp.full(lead + tuple(n + l + r for n, (l, r) in zip(sizes, pads)), value,
                      x.dtype)
        src, dst = [], []
        for n, (l, r) in zip(sizes, pads):
            length = max(0, n - max(-l, 0) - max(-r, 0))
            src.append(slice(max(-l, 0), max(-l, 0) + length))
            dst.append(slice(max(l, 0), max(l, 0) + length))
        out[(Ellipsis,) + tuple(dst)] = x[(Ellipsis,) + tuple(src)]
        return out

    def backward(self, g):
        return ConstantPadNd.run(g, pads=tuple((-l, -r) for l, r in self.pads))



def _pad_index(n, left, right, mode):
    """Source index of each output position along one axis of size ``n``."""
    i = xp.arange(-left, n + right)
    if mode == 'reflect':
        i = xp.abs(i)
        return xp.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == 'replicate':
        return xp.clip(i, 0, n - 1)
    # circular: wrap around what is left after cropping by negative pads
    start, stop = max(-left, 0), n - max(-right, 0)
    return start + (i - start) % (stop - start)


_PAD_NAMES = {'reflect': 'ReflectionPad{}DBackward0', 'replicate': 'ReplicationPad{}DBackward0',
              'circular': 'CopySlices'}


def pad(input, pad, mode='constant', value=None):
    """Pad the last ``len(pad) // 2`` dims (PyTorch's ``F.pad``); negative pads crop.

    ``pad`` lists (left, right) pairs starting from the last dimension.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f'pad: Padding length must be divisible by 2 (got {len(pad)})')
    k = len(pad) // 2
    if k > input.ndim:
        raise RuntimeError(f'pad: Padding length should be less than or equal to two times '
                           f'the input dimension but got padding length {len(pad)} and input '
                           f'of dimension {input.ndim}')
    pairs = tuple((pad[2 * j], pad[2 * j + 1]) for j in reversed(range(k)))  # first dim first
    sizes = tuple(input.shape[input.ndim - k:])
    for j, (n, (l, r)) in enumerate(zip(sizes, pairs)):
        if n + l + r < 0:
            raise RuntimeError(f'pad: The input size {n}, plus negative padding {l} and {r} '
                               f'resulted in a negative output size, which is invalid. Check '
                               f'dimension {input.ndim - k + j} of your input.')
    if mode == 'constant':
        return ConstantPadNd.apply(input, pads=pairs, value=0 if value is None else value)
    if mode not in _PAD_NAMES:
        raise NotImplementedError(f'Unrecognised padding mode {mode} (expected '
                                  f"'constant', 'reflect', 'replicate' or 'circular')")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if autocast_state.active and (mode == 'replicate' or mode == 'reflect' and k < 3):
        input, = autocast_args('fp32', input)    # reflection_pad1d/2d, replication_pad*d
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f'Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n'
            'Supported combinations for non-constant padding:\n'
            '  - 2D or 3D input: padding size = 2 (pads last dimension)\n'
            '  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n'
            '  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)')
    for j, (n, (l, r)) in enumerate(zip(sizes, pairs)):
        dim = input.ndim - k + j
        if mode == 'reflect' and (l >= n or r >= n):
            raise RuntimeError(f'pad: Argument #4: Padding size should be less than the '
                               f'corresponding input dimension, but got: padding ({l}, {r}) '
                               f'at dimension {dim} of input {list(input.shape)}')
        if mode == 'circular' and (l > n or r > n):
            raise RuntimeError('pad: Padding value causes wrapping around more than once '
                               f'(padding ({l}, {r}) at dimension {dim} of size {n}).')
        if mode == 'replicate' and n == 0 and (l > 0 or r > 0):
            raise RuntimeError(f'pad: input tensor must have non-zero size at dimension {dim} '
                               f'to be replicate-padded')
    idxs = tuple(_pad_index(n, l, r, mode) for n, (l, r) in zip(sizes, pairs))
    return AxisGather.named(_PAD_NAMES[mode].format(k)).apply(input, idxs=idxs)


# ---------------------------------------------------------------------------------------
# interpolate

def _nearest_index(n_in, n_out, scale, exact):
    s = np.float32(1.0 / scale if scale else n_in / n_out)
    o = xp.arange(n_out, dtype=np.float32)
    src = xp.floor((o + np.float32(0.5)) * s if exact else o * s).astype(np.int64)
    return xp.minimum(src, n_in - 1)


def _source_coords(n_in, n_out, scale, align, cubic, dt):
    o = xp.arange(n_out).astype(dt)
    if align:
        ratio = dt.type((n_in - 1) / (n_out - 1)) if n_out > 1 else dt.type(0)
        return o * ratio
    ratio = dt.type(1.0 / scale if scale else n_in / n_out)
    src = ratio * (o + dt.type(0.5)) - dt.type(0.5)
    return src if cubic else xp.maximum(src, dt.type(0))


def _linear_matrix(n_in, n_out, scale, align, dt):
    src = _source_coords(n_in, n_out, scale, align, False, dt)
    i0 = xp.minimum(xp.floor(src).astype(np.int64), n_in - 1)
    i1 = xp.minimum(i0 + 1, n_in - 1)
    l1 = src - i0.astype(dt)
    m = xp.zeros((n_out, n_in), dt)
    rows = xp.arange(n_out)
    xp.add.at(m, (rows, i0), dt.type(1) - l1)
    xp.add.at(m, (rows, i1), l1)
    return m


def _cubic_weights(t, dt):
    A = dt.type(-0.75)
    one, two = dt.type(1), dt.type(2)

    def near(x):   # |x| <= 1
        return ((A + two) * x - (A + dt.type(3))) * x * x + one

    def far(x):    # 1 < |x| < 2
        return ((A * x - dt.type(5) * A) * x + dt.type(8) * A) * x - dt.type(4) * A
    return far(t + one), near(t), near(one - t), far(two - t)


def _cubic_matrix(n_in, n_out, scale, align, dt):
    src = _source_coords(n_in, n_out, scale, align, True, dt)
    i = xp.floor(src)
    t = src - i
    i = i.astype(np.int64)
    m = xp.zeros((n_out, n_in), dt)
    rows = xp.arange(n_out)
    for k, w in enumerate(_cubic_weights(t, dt)):
        xp.add.at(m, (rows, xp.clip(i - 1 + k, 0, n_in - 1)), w)
    return m


def _triangle_filter(x, dt):
    return xp.maximum(dt.type(1) - x, dt.type(0))


def _keys_cubic_filter(x, dt):
    # Keys' cubic with a = -0.5 (Pillow's), not the a = -0.75 of plain bicubic
    a, one = dt.type(-0.5), dt.type(1)
    near = ((a + 2) * x - (a + 3)) * x * x + one
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return xp.where(x < one, near, xp.where(x < 2, far, dt.type(0)))


def _lanczos3_filter(x, dt):
    """sinc(x) * sinc(x / 3) on |x| < 3 (Pillow's LANCZOS); x here is already |x|."""
    px = dt.type(np.pi) * x
    safe = xp.where(x == 0, dt.type(1), px)
    w = xp.where(x == 0, dt.type(1),
                 xp.sin(safe) * xp.sin(safe / dt.type(3)) / (safe * safe / dt.type(3)))
    return xp.where(x < dt.type(3), w, dt.type(0))


# filter, half width of its support (in input pixels before stretching)
_AA_FILTERS = {'bilinear': (_triangle_filter, 1), 'bicubic': (_keys_cubic_filter, 2),
               'lanczos': (_lanczos3_filter, 3)}


def _antialias_matrix(n_in, n_out, scale, align, mode, dt):
    """PyTorch's antialiased resampling along one axis: a triangle (bilinear), Keys cubic
    (a = -0.5, bicubic) or Lanczos-3 filter stretched by the downsampling factor, its taps
    normalised to sum to one. Upsampling keeps the filter's own width."""
    if align:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    ratio = dt.type(ratio)
    one, half = dt.type(1), dt.type(0.5)
    kernel, half_width = _AA_FILTERS[mode]
    half_width = dt.type(half_width)
    support = half_width * ratio if ratio >= one else half_width
    inv = one / ratio if ratio >= one else one
    center = ratio * (xp.arange(n_out).astype(dt) + half)
    # PyTorch truncates towards zero; the max with 0 makes that a floor where it matters
    lo = xp.maximum((center - support + half).astype(np.int64), 0)
    hi = xp.minimum((center + support + half).astype(np.int64), n_in)
    j = xp.arange(n_in)
    w = kernel(xp.abs((j.astype(dt) - center[:, None] + half) * inv), dt)
    w = xp.where((j >= lo[:, None]) & (j < hi[:, None]), w, dt.type(0)).astype(dt)
    total = w.sum(1, keepdims=True)
    return xp.where(total != 0, w / xp.where(total != 0, total, one), w).astype(dt)


_INTERP_DIMS = {'linear': 1, 'bilinear': 2, 'bicubic': 2, 'trilinear': 3}
_NEAREST_NAMES = {'nearest': 'UpsampleNearest{}DBackward0',
                  'nearest-exact': 'UpsampleNearestExact{}DBackward0'}


def interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of ``(N, C, L)`` or ``(N, C, H, W)`` input (``F.interpolate``)."""
    modes = ('nearest', 'linear', 'bilinear', 'bicubic', 'trilinear', 'lanczos', 'area',
             'nearest-exact')
    if mode not in modes:
        raise NotImplementedError(f'interpolate: unsupported mode {mode!r}; expected one of '
                                  f'{", ".join(modes)}')
    if mode in ('nearest', 'area', 'nearest-exact'):
        if align_corners is not None:
            raise ValueError('align_corners option can only be set with the interpolating '
                             'modes: linear | bilinear | bicubic | trilinear')
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if dim < 1:
        raise NotImplementedError(
            f'Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) '
            f'for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | '
            f'area | nearest-exact (got {mode})')
    in_sizes = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError('only one of size or scale_factor should be defined')
    if size is not None:
        if recompute_scale_factor:
            raise ValueError('recompute_scale_factor is not meaningful with an explicit size.')
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f'Input and output must have the same number of spatial dimensions, but '
                    f'got input with spatial dimensions of {list(in_sizes)} and output size of '
                    f'{tuple(size)}. Please provide input tensor in (N, C, d1, d2, ...,dK) '
                    f'format and output size in (o1, o2, ...,oK) format.')
            out = tuple(int(v) for v in size)
        else:
            out = (int(size),) * dim
        scales = (None,) * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f'Input and scale_factor must have the same number of spatial dimensions, '
                    f'but got input with spatial dimensions of {list(in_sizes)} and '
                    f'scale_factor of shape {tuple(scale_factor)}. Please provide input tensor '
                    f'in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) '
                    f'format.')
            scales = tuple(float(v) for v in scale_factor)
        else:
            scales = (float(scale_factor),) * dim
        out = tuple(math.floor(float(n) * s) for n, s in zip(in_sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * dim
    else:
        raise ValueError('either size or scale_factor should be defined')
    if antialias and not (mode in ('bilinear', 'bicubic', 'lanczos') and input.ndim == 4):
        raise ValueError('Anti-alias option is restricted to bilinear, bicubic, and lanczos '
                         'modes and requires a 4-D tensor as input')
    if mode == 'lanczos':
        # PyTorch's Lanczos-3 resampling exists only as the antialiased 2-D (Pillow) kernel
        if dim != 2:
            raise NotImplementedError(
                f'Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) '
                f'for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | '
                f'area | nearest-exact (got {mode})')
        if align_corners:
            raise ValueError('Lanczos mode does not support align_corners=True')
        if not antialias:
            raise ValueError('Lanczos mode requires antialias=True')
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != dim:
        raise NotImplementedError(f'Got {input.ndim}D input, but {mode} mode needs '
                                  f'{_INTERP_DIMS[mode] + 2}D input')
    if min(in_sizes) <= 0 or min(out) <= 0:
        raise RuntimeError(f'interpolate: Input and output sizes should be greater than 0, '
                           f'but got input {list(in_sizes)} output {list(out)}')
    if mode == 'area':
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, out)
    if mode in _NEAREST_NAMES:
        if not input.dtype.is_floating_point and input.dtype.name != 'uint8':
            raise NotImplementedError(f'"upsample_{mode}{dim}d" not implemented for '
                                      f'\'{input.dtype.legacy_name[:-6]}\' (use a float '
                                      f'or uint8 input)')
        idxs = tuple(_nearest_index(n, o, s, mode == 'nearest-exact')
                     for n, o, s in zip(in_sizes, out, scales))
        return AxisGather.named(_NEAREST_NAMES[mode].format(dim)).apply(input, idxs=idxs)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"upsample_{mode}" not implemented for '
                           f'\'{input.dtype.legacy_name[:-6]}\'')
    # source coordinates and weights in float32 at least, as PyTorch computes them (a
    # bfloat16 scale 1 / 0.7 is off by a tenth of a pixel at the far end)
    dt = input._data.dtype if input._data.dtype.char in 'fd' else np.dtype(np.float32)
    if antialias:
        if input._data.dtype.char not in 'fd':
            raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for '
                                      f'\'{input.dtype.legacy_name[:-6]}\' (antialiased '
                                      f'resampling needs a float32 or float64 input)')
        mats = [_antialias_matrix(n, o, s, align_corners, mode, dt)
                for n, o, s in zip(in_sizes, out, scales)]
        name = f'Upsample{mode.capitalize()}2DAaBackward0'
        return AxisMatmul.named(name).apply(input, mats=tuple(mats))
    build = _cubic_matrix if mode == 'bicubic' else _linear_matrix
    mats = [build(n, o, s, align_corners, dt) for n, o, s in zip(in_sizes, out, scales)]
    name = {'linear': 'UpsampleLinear1DBackward0', 'bilinear': 'UpsampleBilinear2DBackward0',
            'bicubic': 'UpsampleBicubic2DBackward0',
            'trilinear': 'UpsampleTrilinear3DBackward0'}[mode]
    return AxisMatmul.named(name).apply(input, mats=tuple(mats))


def _deprecated(name):
    warnings.warn(f'`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` '
                  f'instead.', stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None):
    """Deprecated (as in PyTorch): ``interpolate``."""
    _deprecated('upsample')
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated (as in PyTorch): ``interpolate(..., mode='nearest')``."""
    _deprecated('upsample_nearest')
    return interpolate(input, size, scale_factor, mode='nearest')


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated (as in PyTorch): ``interpolate(..., mode='bilinear', align_corners=True)``."""
    _deprecated('upsample_bilinear')
    return interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)


# ---------------------------------------------------------------------------------------
# grid_sample and affine_grid

def _reflect(c, low2, high2):
    """PyTorch's coordinate reflection into [low2/2, high2/2]; also the sign of d out/d in."""
    if low2 == high2:
        return xp.zeros_like(c), xp.zeros_like(c)
    lo = low2 / 2
    span = (high2 - low2) / 2
    c = c - lo
    sign = xp.where(c < 0, -1, 1).astype(c.dtype)
    c = xp.abs(c)
    extra = xp.fmod(c, span)
    flips = xp.floor(c / span)
    even = flips % 2 == 0
    return xp.where(even, extra + lo, span - extra + lo), xp.where(even, sign, -sign)


def _unnormalize(coord, size, align):
    """Pixel coordinate of the normalised ``coord`` and its derivative."""
    dt = coord.dtype.type
    if align:
        return (coord + dt(1)) / dt(2) * dt(size - 1), xp.full_like(coord, (size - 1) / 2)
    return ((coord + dt(1)) * dt(size) - dt(1)) / dt(2), xp.full_like(coord, size / 2)


def _source_index(coord, size, align, padding_mode):
    """Pixel coordinate and its derivative with respect to the normalised ``coord``."""
    c, slope = _unnormalize(coord, size, align)
    if padding_mode == 'border' or padding_mode == 'reflection':
        if padding_mode == 'reflection':
            c, m = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
            slope = slope * m
        inside = (c > 0) & (c < size - 1)
        c = xp.clip(c, 0, size - 1)
        slope = xp.where(inside, slope, 0).astype(coord.dtype)
    return c, slope


def _tap_index(pos, size, align, padding_mode):
    """Where bicubic's tap at whole pixel ``pos`` reads: the padding mode moves taps outside
    the image back in (border, reflection); with zeros they stay out and read 0."""
    if padding_mode == 'reflection':
        pos = _reflect(pos, 0, 2 * (size - 1))[0] if align else \
            _reflect(pos, -1, 2 * size - 1)[0]
    if padding_mode != 'zeros':
        pos = xp.clip(pos, 0, size - 1)
    return pos.astype(np.int64)


def _linear_taps(t):
    return 1 - t, t


def _cubic_taps(t):
    """Keys' cubic convolution weights (a = -0.75) of the taps at -1, 0, 1, 2 from the cell's
    low corner, for a point ``t`` in [0, 1) past it; arrays or tensors alike."""
    def near(x):   # |x| <= 1
        return (1.25 * x - 2.25) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((-0.75 * x + 3.75) * x - 6) * x + 3
    s = 1 - t
    return far(t + 1), near(t), near(s), far(s + 1)


def _cubic_tap_slopes(t):
    """d/dt of ``_cubic_taps``."""
    def d_near(x):
        return (3.75 * x - 4.5) * x

    def d_far(x):
        return (-2.25 * x + 7.5) * x - 6
    s = 1 - t
    return d_far(t + 1), d_near(t), -d_near(s), -d_far(s + 1)


class GridSampler(Op):
    """Sample ``x`` (N, C, *S) at ``grid`` (N, *So, d) points in [-1, 1], d = len(S) (2 or 3).

    The grid's last axis lists coordinates fastest-axis first (x for W, y for H, z for D), so
    spatial axis ``a`` of ``S`` reads grid component ``d - 1 - a``. Linear sampling blends the
    2**d corners of the cell around each point, bicubic the 4**d taps around it (2-d only);
    nearest takes the closest one. Each of the blends is a product of per-axis weights of
    the point's fractional position ``t`` in its cell; ``self.taps`` gives them.
    """
    autocast = 'fp32'
    node_name = 'GridSampler2DBackward0'

    def forward(self, x, grid, mode, padding_mode, align_corners):
        N, C = x.shape[:2]
        S = x.shape[2:]
        d = len(S)
        P = math.prod(grid.shape[1:-1])
        self.shape = (N, C, S, grid.shape[1:-1])
        self.mode = mode
        coords = [grid[..., d - 1 - a].reshape(N, 1, P) for a in range(d)]
        pix = [_source_index(coords[a], S[a], align_corners, padding_mode) for a in range(d)]
        strides = [math.prod(S[a + 1:]) for a in range(d)]
        if mode == 'nearest':
            corners = [(tuple(xp.rint(i).astype(np.int64) for i, _ in pix), None)]
        else:
            if mode == 'bicubic':
                # taps are placed around the unpadded coordinate; padding moves each tap
                pix = [_unnormalize(c, n, align_corners) for c, n in zip(coords, S)]
            lows = [xp.floor(i) for i, _ in pix]
            w1 = [i - lo for (i, _), lo in zip(pix, lows)]
            if mode == 'bicubic':
                self.taps = _cubic_taps
                at = [[_tap_index(lo + (k - 1), n, align_corners, padding_mode)
                       for k in range(4)] for lo, n in zip(lows, S)]
            else:
                self.taps = _linear_taps
                at = [[lo.astype(np.int64) + k for k in range(2)] for lo in lows]
            corners = [(tuple(at[a][k] for a, k in enumerate(ks)), ks)
                       for ks in itertools.product(range(len(at[0])), repeat=d)]
            self.w = w1
            # the affine map grid -> fractional weights, for the grid's second derivative
            self.affine = [(s, w - s * c) for (_, s), w, c in zip(pix, w1, coords)]
            weights = [self.taps(t) for t in w1]
        self.corners = []
        xf = x.reshape(N, C, -1)
        out = xp.zeros((N, C, P), x.dtype)
        for at, bits in corners:
            ok = True
            for t, n in zip(at, S):
                ok = ok & (t >= 0) & (t < n)
            idx = xp.where(ok, sum(t * s for t, s in zip(at, strides)), 0)
            mask = ok.astype(x.dtype)
            self.corners.append((idx, mask, bits))
            v = xp.take_along_axis(xf, xp.broadcast_to(idx, (N, C, P)), -1) * mask
            if bits is not None:
                v = v * math.prod(weights[a][k] for a, k in enumerate(bits))
            out += v
        need_grid = self.needs_input_grad[1]
        self.save_for_backward(x if need_grid and mode != 'nearest' else None,
                               grid if need_grid and mode != 'nearest' else None)
        self.grid_like = (grid.shape, grid.dtype)
        return out.reshape(grid.shape[:1] + x.shape[1:2] + grid.shape[1:-1])

    def backward(self, g):
        x, grid = self.saved_tensors
        N, C, S, So = self.shape
        d, P, size = len(S), math.prod(So), math.prod(S)
        g = g.reshape((N, C, P))
        need_x, need_grid = self.needs_input_grad[:2]
        if self.mode == 'nearest':
            idx, mask, _ = self.corners[0]
            gx = ScatterFlat.run(g * mask, idx=idx, size=size).reshape((N, C) + S) \
                if need_x else None
            ggrid = None
            if need_grid:   # nearest sampling is flat in the grid: PyTorch gives zeros
                ggrid = xp.zeros(*self.grid_like)
                if not fm.is_array(g):
                    ggrid = wrap(xp.ascontiguousarray(ggrid))
            return gx, ggrid
        w1 = self.w
        if grid is not None and not fm.is_array(grid):
            w1 = [grid[..., d - 1 - a].reshape((N, 1, P)) * s + c
                  for a, (s, c) in enumerate(self.affine)]
        w = [self.taps(v) for v in w1]     # w[a][k]: the weight of tap k along axis a
        gx = None
        if need_x:
            for idx, mask, bits in self.corners:
                weight = math.prod(w[a][b] for a, b in enumerate(bits))
                part = ScatterFlat.run(g * (weight * mask), idx=idx, size=size)
                gx = part if gx is None else gx + part
            gx = gx.reshape((N, C) + S)
        ggrid = None
        if need_grid:
            xf = x.reshape((N, C, size))
            v = {bits: GatherFlat.run(xf, idx=idx) * mask for idx, mask, bits in self.corners}
            eye = xp.eye(d, dtype=self.grid_like[1])
            dw = [_cubic_tap_slopes(t) for t in w1] if self.mode == 'bicubic' else None
            for a in range(d):
                # the blend differentiated along axis a: its taps' slopes there, the other
                # axes' weights as they are (linear: the difference of the two corners)
                slope = None
                for ks, value in v.items():
                    if dw is not None:
                        term = dw[a][ks[a]] * value
                    elif ks[a]:
                        term = value - v[ks[:a] + (0,) + ks[a + 1:]]
                    else:
                        continue
                    for b, k in enumerate(ks):
                        if b != a:
                            term = w[b][k] * term
                    slope = term if slope is None else slope + term
                part = ((g * slope).sum((1,)) * self.affine[a][0][:, 0]).reshape(
                    (N,) + So + (1,)) * eye[d - 1 - a]
                ggrid = part if ggrid is None else ggrid + part
        return gx, ggrid


def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalised ``grid`` locations
    (N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3) (PyTorch's ``F.grid_sample``)."""
    if autocast_state.active:
        input, grid = autocast_args('fp32', input, grid)
    if mode not in ('bilinear', 'nearest', 'bicubic'):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ('zeros', 'border', 'reflection'):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warn_align_corners()
    _check_grid_sample(input, grid, mode)
    op = GridSampler if input.ndim == 4 else GridSampler.named('GridSampler3DBackward0')
    return op.apply(input, grid, mode=mode, padding_mode=padding_mode,
                    align_corners=bool(align_corners))


def _check_grid_sample(input, grid, mode):
    # PyTorch's order of checks, so the first problem found is the one it reports
    sizes = f'input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}'
    if grid.ndim == 0 or grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f'grid_sampler(): expected grid to have size {input.ndim - 2} in '
                           f'last dimension, but got grid with sizes {list(grid.shape)}')
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f'grid_sampler(): expected grid and input to have same batch size, '
                           f'but got {sizes}')
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f'grid_sampler(): expected {4 if input.ndim == 4 else 5}D input and '
                           f'grid with same number of dimensions, but got {sizes}')
    for axis in range(2, input.ndim):
        if input.shape[axis] == 0:
            raise RuntimeError(f'grid_sampler(): expected input to have non-empty spatial '
                               f'dimensions, but input has sizes {list(input.shape)} with '
                               f'dimension {axis} being empty')
    if mode == 'bicubic' and input.ndim == 5:
        raise RuntimeError('grid_sampler(): bicubic interpolation only supports 4D input')
    if not input.dtype.is_floating_point:
        kernel = 'grid_sampler_2d_cpu_kernel_impl' if input.ndim == 4 else 'grid_sampler3d_cpu'
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f'\'{input.dtype.legacy_name[:-6]}\'')
    if input.dtype is not grid.dtype:
        raise RuntimeError(f'expected scalar type {input.dtype.legacy_name[:-6]} but found '
                           f'{grid.dtype.legacy_name[:-6]} (grid_sampler(): input and grid '
                           f'must have the same dtype)')


def _linspace(n, align, dt):
    if n <= 1:
        return xp.zeros(n, dt)
    r = xp.linspace(-1, 1, n).astype(dt)
    return r if align else r * dt.type((n - 1) / n)


class AffineGridGenerator(Op):
    """``base @ theta.mT``: the sampling grid of a batch of 2-d or 3-d affine maps; ``base``
    holds each output point's normalised (x, y[, z], 1)."""
    widens_half = True

    def forward(self, theta, sizes, align_corners):
        dt = theta.dtype
        d = len(sizes)
        base = xp.empty(tuple(sizes) + (d + 1,), dt)
        for a, n in enumerate(sizes):    # spatial axis a is coordinate d - 1 - a
            shape = [1] * d
            shape[a] = n
            base[..., d - 1 - a] = _linspace(n, align_corners, dt).reshape(shape)
        base[..., d] = 1
        P = math.prod(sizes)
        self.base = base.reshape(1, P, d + 1)
        self.shape = (theta.shape[0],) + tuple(sizes)
        return xp.matmul(self.base, theta.swapaxes(-1, -2)).reshape(self.shape + (d,))

    def backward(self, g):
        N, d = self.shape[0], len(self.shape) - 1
        base = self.base if fm.is_array(g) else wrap(xp.ascontiguousarray(self.base))
        return g.reshape((N, self.base.shape[1], d)).mT @ base


def _warn_align_corners():
    warnings.warn('Default grid_sample and affine_grid behavior has changed to '
                  'align_corners=False since 1.3.0. Please specify align_corners=True if the old '
                  'behavior is desired. See the documentation of grid_sample for details.',
                  UserWarning, stacklevel=3)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of ``theta`` (N, 2, 3) for an output of ``size`` (N, C, H, W), or of
    ``theta`` (N, 3, 4) for ``size`` (N, C, D, H, W)."""
    if autocast_state.active:
        theta, = autocast_args('lower', theta)
    if align_corners is None:
        _warn_align_corners()
    size = tuple(int(v) for v in size)
    if not theta.dtype.is_floating_point:
        raise ValueError(f'Expected theta to have floating point type, but got '
                         f'{theta.dtype}')
    if len(size) not in (4, 5):
        raise NotImplementedError(f'affine_grid only supports 4D and 5D sizes, for 2D and 3D '
                                  f'affine transforms, respectively. Got size {list(size)}.')
    d = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (d, d + 1):
        raise ValueError(f'Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for '
                         f'size {list(size)}. Got {list(theta.shape)}.')
    if min(size) <= 0:
        raise ValueError(f'Expected non-zero, positive output size. Got {list(size)}')
    if theta.shape[0] != size[0]:
        raise RuntimeError(f'affine_grid: theta has batch size {theta.shape[0]} but size asks '
                           f'for {size[0]}')
    return AffineGridGenerator.apply(theta, sizes=size[2:], align_corners=bool(align_corners))


# ---------------------------------------------------------------------------------------
# pixel shuffle

def _shuffle(x, r):
    lead = x.shape[:-3]
    C, H, W = x.shape[-3:]
    c = C // (r * r)
    v = x.reshape(lead + (c, r, r, H, W))
    n = len(lead)
    v = v.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return v.reshape(lead + (c, H * r, W * r))


def _unshuffle(x, r):
    lead = x.shape[:-3]
    C, H, W = x.shape[-3:]
    v = x.reshape(lead + (C, H // r, r, W // r, r))
    n = len(lead)
    v = v.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return v.reshape(lead + (C * r * r, H // r, W // r))


class PixelShuffle(Op):
    def forward(self, x, r):
        self.r = r
        return _shuffle(x, r)

    def backward(self, g):
        return PixelUnshuffle.run(g, r=self.r)



class PixelUnshuffle(Op):
    def forward(self, x, r):
        self.r = r
        return _unshuffle(x, r)

    def backward(self, g):
        return PixelShuffle.run(g, r=self.r)



def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f'pixel_shuffle expects input to have at least 3 dimensions, but '
                           f'got input with {input.ndim} dimension(s)')
    if r <= 0:
        raise RuntimeError(f'pixel_shuffle expects a positive upscale_factor, but got {r}')
    C = input.shape[-3]
    if C % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={C} "
                           f"is not divisible by {r * r}")
    return PixelShuffle.apply(input, r=r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f'pixel_unshuffle expects input to have at least 3 dimensions, but '
                           f'got input with {input.ndim} dimension(s)')
    if r <= 0:
        raise RuntimeError(f'pixel_unshuffle expects a positive downscale_factor, but got {r}')
    H, W = input.shape[-2:]
    if H % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={H} is not divisible by {r}")
    if W % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={W} is not divisible by {r}")
    return PixelUnshuffle.apply(input, r=r)


# ---------------------------------------------------------------------------------------
# channel shuffle

class ChannelShuffle(Op):
    """(N, g * c, *) -> (N, c * g, *): channel ``i * c + j`` moves to ``j * g + i``.

    The inverse is the shuffle with ``c`` groups, so backward is this op again.
    """
    def forward(self, x, groups):
        self.groups = groups
        N, C = x.shape[:2]
        rest = x.shape[2:]
        v = x.reshape((N, groups, C // groups) + rest).swapaxes(1, 2)
        return v.reshape(x.shape)

    def backward(self, g):
        return ChannelShuffle.run(g, groups=g.shape[1] // self.groups)



def channel_shuffle(input, groups):
    """Split the channels (dim 1) into ``groups`` and interleave them (``F.channel_shuffle``)."""
    groups = int(groups)
    if input.ndim <= 2:
        raise RuntimeError(f'channel_shuffle expects input with > 2 dims, but got input with '
                           f'sizes {list(input.shape)}')
    if groups <= 0:
        raise RuntimeError(f'Number of groups to divide channels in must be positive. Value '
                           f'of groups:{groups}')
    C = input.shape[1]
    if C % groups:
        raise RuntimeError(f'Number of channels must be divisible by groups. Got {C} channels '
                           f'and {groups} groups.')
    return ChannelShuffle.apply(input, groups=groups)


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` (PyTorch's kernel-level form; here the same op, differentiable)."""
    return channel_shuffle(input, groups)


__all__ = ['pad', 'interpolate', 'upsample', 'upsample_nearest', 'upsample_bilinear',
           'grid_sample', 'affine_grid', 'pixel_shuffle', 'pixel_unshuffle', 'channel_shuffle',
           'native_channel_shuffle']
