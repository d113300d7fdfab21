"""Statistics, histograms and sorted search: quantiles, covariance, counts, bins.

The differentiable functions here (quantile, cov, corrcoef, diff, gradient, trapezoid,
cumulative_trapezoid) are compositions of recorded ops (sort, gather, slicing, products),
as PyTorch's are: their gradients, double backward included, come from those ops. Counts,
bins and sorted search have integer (or, for histograms, piecewise constant) results and
compute on arrays directly.
"""
import builtins
import collections
import math
import numbers
import warnings

import numpy as np

from .._device import backend_of
from ..autograd.batched import vmap_function
from .. import _dtype
from ..backend import xp
from ..autograd.autocast import autocast_args, autocast_state
from ..autograd.forward_ad import has_tangent
from ..tensor import Tensor, method, wrap
from .reduction import _dim1, _check_int
from .formula import where

_py_range, _py_min, _py_max = builtins.range, builtins.min, builtins.max


def _dname(t):
    """PyTorch's capitalised dtype name in messages ('Float', 'Long')."""
    return _dtype.FROM_NUMPY[t._data.dtype].legacy_name[:-6]


def _named(name, fields):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = 'dynagrad.return_types'

    def __repr__(self):
        body = ',\n'.join(f'{f}={v!r}' for f, v in zip(fields, self))
        return f'dynagrad.return_types.{name}(\n{body})'
    cls.__repr__ = __repr__
    return cls


histogram_result = _named('histogram', ('hist', 'bin_edges'))
histogramdd_result = _named('histogramdd', ('hist', 'bin_edges'))


def _check_tensor(op, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")


# -- quantiles -------------------------------------------------------------------------------

_INTERPOLATIONS = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    _check_tensor(op, 'input', input)
    if autocast_state.active:   # PyTorch's CPU autocast runs quantiles in float32
        input, q = autocast_args('fp32', input, q)
    x = input._data
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f'{op}() input tensor must be either float or double dtype '
                           f'(got {_dname(input)})')
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f'{op}() q must be a scalar or 1D tensor (got {q.ndim}-D)')
        if q._data.dtype != x.dtype:
            raise RuntimeError(f'{op}() q tensor must be same dtype as the input tensor '
                               f'({_dname(q)} vs {_dname(input)})')
        qa = q._data
        if qa.size and not ((qa >= 0) & (qa <= 1)).all():
            raise RuntimeError(f'{op}() q values must be in the range [0, 1]')
        q_dim = q.ndim == 1
    else:
        if not isinstance(q, numbers.Real):
            raise TypeError(f"{op}(): argument 'q' must be float or Tensor, not "
                            f'{type(q).__name__}')
        if not 0 <= q <= 1:
            raise RuntimeError(f'{op}() q must be in the range [0, 1] but got {q}')
        qa = xp.asarray(q, dtype=x.dtype)
        q_dim = False
    if x.size == 0:
        raise RuntimeError(f'{op}() input tensor must be non-empty')
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f'{op}() interpolation must be one of linear, lower, higher, '
                           f'midpoint or nearest, but got {interpolation}')
    if dim is None:
        flat = input.reshape(-1)
        out_shape = (1,) * input.ndim if keepdim else ()
    else:
        axis = _dim1(dim, input.ndim, op)
        flat = input.movedim(axis, -1) if input.ndim else input.reshape(1)
        shape = list(x.shape)
        if shape:
            if keepdim:
                shape[axis] = 1
            else:
                del shape[axis]
        out_shape = tuple(shape)
    values = flat.sort(-1).values                   # NaN sorts last
    va = values._data
    n = va.shape[-1]
    qv = qa.reshape(-1).astype(x.dtype)             # (nq,)
    nans = xp.isnan(va).sum(-1, keepdims=True)      # (..., 1)
    if ignore_nan:
        scale = (n - nans - 1).astype(x.dtype)       # all NaN: -1, the rank clamped to 0
        valid = nans < n
    else:
        scale = xp.full(nans.shape, n - 1, x.dtype)
        valid = nans == 0                             # a NaN makes the quantile NaN (the
    ranks = xp.where(valid, qv * scale, 0 if ignore_nan else n - 1).astype(x.dtype)  # last)
    if interpolation == 'lower':
        ranks = xp.floor(ranks)
    elif interpolation == 'higher':
        ranks = xp.ceil(ranks)
    elif interpolation == 'nearest':
        ranks = xp.round(ranks)                      # half to even, as torch.round
    below = xp.floor(ranks).astype(np.int64)
    lo = values.gather(-1, wrap(below))
    if interpolation in ('lower', 'higher', 'nearest'):
        result = lo
    else:
        hi = values.gather(-1, wrap(xp.ceil(ranks).astype(np.int64)))
        if interpolation == 'midpoint':
            weight = wrap(xp.full(ranks.shape, 0.5, x.dtype))
        elif isinstance(q, Tensor) and (q.requires_grad or has_tangent(q)):
            # the weights depend on q: its gradient is (hi - lo) * (count - 1), as in torch
            weight = where(valid, q.reshape(-1) * wrap(scale) - wrap(below.astype(x.dtype)),
                           0.0)
        else:
            weight = wrap((ranks - below).astype(x.dtype))
        result = lo + weight * (hi - lo)
    # result: (..., nq) with ... the kept dims (flattened ones for dim=None)
    if q_dim:
        result = result.movedim(-1, 0).reshape((qv.size,) + out_shape)
    else:
        result = result.reshape(out_shape)
    return result


@method
@vmap_function('quantile')
def quantile(input, q, dim=None, keepdim=False, *, interpolation='linear'):
    return _quantile('quantile', input, q, dim, keepdim, interpolation, False)


@method
@vmap_function('quantile')
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear'):
    return _quantile('nanquantile', input, q, dim, keepdim, interpolation, True)


# -- covariance ------------------------------------------------------------------------------

def _check_weights(name, w, n_obs, integral):
    if w.ndim > 1:
        raise RuntimeError(f'cov(): expected {name} to have one or fewer dimensions but got '
                           f'{name} with {w.ndim} dimensions')
    if w.numel() != n_obs:
        raise RuntimeError(f'cov(): expected {name} to have the same numel as there are '
                           f'observations in the input but got {w.numel()} != {n_obs}')
    kind = w._data.dtype.kind
    if integral and kind not in 'iu':
        raise RuntimeError(f'cov(): expected {name} to have integral dtype but got '
                           f'{name} with {_dname(w)} dtype')
    if not integral and kind not in 'fV':
        raise RuntimeError(f'cov(): expected {name} to have floating point dtype but got '
                           f'{name} with {_dname(w)} dtype')
    if w._data.size and (w._data < 0).any():
        raise RuntimeError(f'cov(): {name} cannot be negative but got {name} with '
                           f'min {w._data.min()}')


@method
def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.ndim > 2:
        raise RuntimeError('cov(): expected input to have two or fewer dimensions but got an '
                           f'input with {input.ndim} dimensions')
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if x._data.dtype.kind in 'biu':
        x = x.to(_dtype.get_default_dtype())
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights('fweights', fweights, n_obs, True)
        w = fweights
    if aweights is not None:
        _check_weights('aweights', aweights, n_obs, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = float(n_obs)
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    norm_value = float(norm._data) if isinstance(norm, Tensor) else norm
    if norm_value <= 0:
        warnings.warn('cov(): degrees of freedom is <= 0. Correction should be strictly less '
                      'than the number of observations.', UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0.0
    xm = x - avg.unsqueeze(1)
    prod = (xm if w is None else xm * w) @ xm.mH    # the conjugate for complex data
    if isinstance(norm, Tensor):
        c = prod / norm.to(prod.dtype)
    else:
        with np.errstate(divide='ignore', invalid='ignore'):
            c = prod / norm if norm else prod * xp.asarray(np.inf, prod._data.dtype)
    return c.squeeze() if x.shape[0] == 1 else c


@method
def corrcoef(input):
    if input.ndim > 2:
        raise RuntimeError('corrcoef(): expected input to have two or fewer dimensions but got '
                           f'an input with {input.ndim} dimensions')
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.is_complex():      # PyTorch clips the real and imaginary parts each
        from .complex_numbers import complex as make_complex
        return make_complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# -- differences, gradients, integrals ----------------------------------------------------

@method
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.ndim == 0:
        raise RuntimeError('diff expects input to be at least one-dimensional')
    n = _check_int(n, 'diff', 'n')
    if n < 0:
        raise RuntimeError(f'order must be non-negative but got {n}')
    axis = _dim1(dim, input.ndim, 'diff')
    from .shape import cat
    parts = []
    for name, extra in (('prepend', prepend), (None, input), ('append', append)):
        if extra is None:
            continue
        if not isinstance(extra, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                            f'{type(extra).__name__}')
        if extra.ndim != input.ndim:
            raise RuntimeError(f'diff expects prepend or append to be the same dimension as '
                               f'input (input {input.ndim}-D, {name} {extra.ndim}-D)')
        parts.append(extra)
    x = cat(parts, axis) if len(parts) > 1 else input
    boolean = x._data.dtype == np.bool_
    for _ in _py_range(n):
        size = x.shape[axis]
        if size == 0:
            break
        a, b = x.narrow(axis, 1, size - 1), x.narrow(axis, 0, size - 1)
        x = a.logical_xor(b) if boolean else a - b
    return x


def _along_dim(v, axis, ndim):
    """A 1-D tensor (or array) shaped to broadcast along ``axis`` of an ``ndim``-D tensor."""
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(tuple(shape))


def _gradient_uniform(f, axis, h, edge_order):
    n = f.shape[axis]
    sl = lambda start, length: f.narrow(axis, start, length)  # noqa: E731
    interior = (sl(2, n - 2) - sl(0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / h
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / h
    else:
        first = (-1.5 * sl(0, 1) + 2.0 * sl(1, 1) - 0.5 * sl(2, 1)) / h
        last = (0.5 * sl(n - 3, 1) - 2.0 * sl(n - 2, 1) + 1.5 * sl(n - 1, 1)) / h
    return first, interior, last


def _gradient_coords(f, axis, coords, edge_order):
    n = f.shape[axis]
    nd = f.ndim
    # The weights are computed in the coordinates' dtype and promote with the input's, as
    # in PyTorch (a bfloat16 input with float32 coordinates gives float32)
    c = coords if coords._data.dtype.kind in 'fV' else coords.to(_dtype.get_default_dtype())
    sl = lambda start, length: f.narrow(axis, start, length)  # noqa: E731
    d = c[1:] - c[:-1]
    dx1, dx2 = d[:-1], d[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    cc = dx1 / (dx2 * (dx1 + dx2))
    interior = (_along_dim(a, axis, nd) * sl(0, n - 2) + _along_dim(b, axis, nd) * sl(1, n - 2)
                + _along_dim(cc, axis, nd) * sl(2, n - 2))
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / d[0]
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / d[-1]
    else:
        h1, h2 = d[0], d[1]
        first = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)) * sl(0, 1)
                 + (h1 + h2) / (h1 * h2) * sl(1, 1) - h1 / (h2 * (h1 + h2)) * sl(2, 1))
        h1, h2 = d[-2], d[-1]
        last = (h2 / (h1 * (h1 + h2)) * sl(n - 3, 1) - (h2 + h1) / (h1 * h2) * sl(n - 2, 1)
                + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * sl(n - 1, 1))
    return first, interior, last


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided ones (of order ``edge_order``) at the edges;
    one tensor per dimension of ``dim`` (all by default)."""
    from .shape import cat
    if edge_order not in (1, 2):
        raise RuntimeError('torch.gradient only supports edge_order=1 and edge_order=2.')
    if dim is None:
        axes = list(_py_range(input.ndim))
    elif isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        axes = [_dim1(dim, input.ndim, 'gradient')]
    else:
        axes = [_dim1(d, input.ndim, 'gradient') for d in dim]
        if len(set(axes)) != len(axes):
            raise RuntimeError('torch.gradient: dim appears multiple times in the list of dims')
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(axes):
            if dim is None:
                raise RuntimeError(
                    "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                    f"length equal to 'self.dim() = {input.ndim}', since dim argument was not "
                    f'given, but got a list of length {len(spacing)}')
            raise RuntimeError(
                'torch.gradient expected spacing to be unspecified, a scalar or a list of '
                f'length equal to the length of dim = {len(axes)}, but got a list of length '
                f'{len(spacing)}')
        spacings = list(spacing)
    elif isinstance(spacing, Tensor):
        raise TypeError('torch.gradient(): spacing must be a scalar or a list of scalars or '
                        'of 1-D tensors, not a Tensor (wrap it in a list)')
    else:
        spacings = [spacing] * len(axes)
    for axis in axes:
        if input.shape[axis] < edge_order + 1:
            raise RuntimeError('torch.gradient expected each dimension size to be at least '
                               'edge_order+1')
    f = input if input._data.dtype.kind in 'fV' else input.to(_dtype.get_default_dtype())
    out = []
    for axis, h in zip(axes, spacings):
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != input.shape[axis]:
                raise RuntimeError('torch.gradient expected each tensor to be on the same '
                                   'device and each spacing tensor to be 1-D with the size '
                                   f'of its dimension (dim {axis} has {input.shape[axis]}, '
                                   f'got shape {list(h.shape)})')
            parts = _gradient_coords(input, axis, h, edge_order)
        else:
            parts = _gradient_uniform(f, axis, float(h), edge_order)
        out.append(cat(parts, axis))
    return tuple(out)


def _trapezoid_args(y, x, dim, op):
    _check_tensor(op, 'y', y)
    axis = _dim1(dim, y.ndim, op)
    if y._data.dtype.kind not in 'fVc':
        y = y.to(_dtype.get_default_dtype())
    return y, axis


def _x_steps(y, x, axis, op):
    """The widths between sample points along ``axis``, broadcasting against ``y``'s pairs."""
    n = y.shape[axis]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f'{op}: There must be one `x` value for each sample point')
        steps = x[1:] - x[:-1]
        return _along_dim(steps, axis, y.ndim)
    if x.ndim != y.ndim and x.ndim > 1:
        xa = x                                    # broadcast like torch: leading dims added
    else:
        xa = x
    xaxis = axis - y.ndim + xa.ndim
    if xaxis < 0 or xa.shape[xaxis] != n:
        raise RuntimeError(f'{op}: There must be one `x` value for each sample point')
    m = xa.shape[xaxis]
    return xa.narrow(xaxis, 1, m - 1) - xa.narrow(xaxis, 0, m - 1)


def _pair_sums(y, axis):
    n = y.shape[axis]
    return y.narrow(axis, 1, n - 1) + y.narrow(axis, 0, n - 1)


def _zeros_without(y, axis):
    """PyTorch's result for no sample points: zeros, with no history."""
    shape = tuple(n for d, n in enumerate(y.shape) if d != axis)
    return wrap(backend_of(y._data).xp.zeros(shape, y._data.dtype))   # on y's device


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: sample points ``x`` or a constant spacing ``dx``."""
    y, axis = _trapezoid_args(y, x, dim, 'trapezoid')
    n = y.shape[axis] if y.ndim else 0
    if isinstance(x, Tensor):
        if dx is not None:
            raise TypeError('trapezoid(): pass either x or dx, not both')
        if n == 0:
            return _zeros_without(y, axis)
        x = x if x._data.dtype.kind in 'fV' else x.to(y.dtype)
        return (_x_steps(y, x, axis, 'trapezoid') * _pair_sums(y, axis)).sum(axis) / 2.0
    if x is not None:
        dx = x                                    # trapezoid(y, 2.0): the spacing
    dx = 1.0 if dx is None else dx
    if n == 0:
        return _zeros_without(y, axis)
    return _pair_sums(y, axis).sum(axis) * (dx / 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    y, axis = _trapezoid_args(y, x, dim, 'cumulative_trapezoid')
    n = y.shape[axis] if y.ndim else 0
    if n == 0:
        return y
    if isinstance(x, Tensor):
        x = x if x._data.dtype.kind in 'fV' else x.to(y.dtype)
        parts = _x_steps(y, x, axis, 'cumulative_trapezoid') * _pair_sums(y, axis) / 2.0
    else:
        if x is not None:
            dx = x
        dx = 1.0 if dx is None else dx
        parts = _pair_sums(y, axis) * (dx / 2.0)
    return parts.cumsum(axis)


# -- counts and histograms (no gradient) ----------------------------------------------------

@method
def bincount(input, weights=None, minlength=0):
    x = input._data
    if x.dtype.kind not in 'iub' or x.dtype.kind == 'b':
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_dname(input)}\'')
    minlength = _check_int(minlength, 'bincount', 'minlength')
    if minlength < 0:
        raise RuntimeError(f'minlength should be >= 0 (got {minlength})')
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError('bincount only supports 1-d non-negative integral inputs.')
    if weights is not None:
        w = weights._data
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError('weights should be 1-d and have the same length as input '
                               f'(input {list(x.shape)}, weights {list(w.shape)})')
        out_dtype = np.float32 if w.dtype == np.float32 else np.float64
        counts = xp.bincount(x, weights=w.astype(np.float64), minlength=minlength)
        return wrap(counts.astype(out_dtype))
    return wrap(xp.bincount(x, minlength=minlength).astype(np.int64))


def _require_float_hist(input, kernel):
    if input._data.dtype.kind not in 'fV':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dname(input)}\'')


def _bin_index(values, edges):
    """The bin of each value: ``edges[i] <= v < edges[i + 1]``, the last bin closed; -1
    outside."""
    idx = xp.searchsorted(edges, values, side='right') - 1
    nb = edges.size - 1
    idx = xp.where(values == edges[-1], nb - 1, idx)
    inside = (values >= edges[0]) & (values <= edges[-1])
    return xp.where(inside, idx, -1)


def _linear_edges(lo, hi, bins, dtype):
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5     # PyTorch widens an empty range by half on each side
    return xp.linspace(lo, hi, bins + 1).astype(dtype)


@method
def histc(input, bins=100, min=0, max=0):
    _require_float_hist(input, 'histogram_cpu')
    bins = _check_int(bins, 'histc', 'bins')
    if bins <= 0:
        raise RuntimeError(f'torch.histogram(): bins must be > 0, but got {bins} for '
                           'dimension 0')
    if max < min:
        raise RuntimeError(f'torch.histc: max must be larger than min (min={min}, max={max})')
    x = input._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f'torch.histc: range of [{lo}, {hi}] is not finite')
    edges = _linear_edges(x.dtype.type(lo), x.dtype.type(hi), bins, x.dtype)
    idx = _bin_index(x, edges)
    counts = xp.bincount(idx[idx >= 0], minlength=bins)[:bins]
    return wrap(counts.astype(x.dtype))


def _histogram_edges(op, data, bins, range_, dim_count, dtype):
    """Edges per dimension (arrays) from ``bins`` (int, list of ints, tensor or tensors)."""
    if isinstance(bins, Tensor):
        bins = [bins]
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        bins = [int(bins)] * dim_count
    bins = list(bins)
    if len(bins) != dim_count:
        raise RuntimeError(f'torch.{op}(): expected {dim_count} sequences of bin edges for '
                           f'each dimension, but got {len(bins)}')
    if range_ is not None:
        range_ = [float(r) for r in range_]
        if len(range_) != 2 * dim_count:
            raise RuntimeError(f'torch.{op}(): expected {2 * dim_count} values to specify '
                               f'the range, but got {len(range_)}')
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.ndim != 1:
                raise RuntimeError(f'torch.{op}(): bins tensor should have one dimension, but '
                                   f'got {b.ndim} dimensions in the bins tensor for dimension '
                                   f'{d}')
            e = b._data
            if e.size < 1:
                raise RuntimeError(f'torch.{op}(): bin tensors should have at least 1 element, '
                                   f'but got {e.size} for dimension {d}')
            if e.dtype != dtype:
                raise RuntimeError(f'torch.{op}: input tensor and bins tensors should have the '
                                   'same dtype')
            edges.append(e)
            continue
        b = _check_int(b, op, 'bins')
        if b <= 0:
            raise RuntimeError(f'torch.{op}(): bins must be > 0, but got {b} for dimension {d}')
        if range_ is not None:
            lo, hi = range_[2 * d], range_[2 * d + 1]
            if lo > hi:
                raise RuntimeError(f'torch.{op}(): max must be larger than min (got min {lo}, '
                                   f'max {hi} for dimension {d})')
        else:
            col = data[:, d]
            lo, hi = (float(col.min()), float(col.max())) if col.size else (0.0, 1.0)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is "
                               'not finite')
        edges.append(_linear_edges(dtype.type(lo), dtype.type(hi), b, dtype))
    return edges


def _histogramdd(op, input, bins, range_, weight, density, dim_count):
    x = input._data
    data = x.reshape(-1, dim_count)
    edges = _histogram_edges(op, data, bins, range_, dim_count, x.dtype)
    sizes = [e.size - 1 for e in edges]
    flat = xp.zeros(data.shape[0], np.int64)
    valid = xp.ones(data.shape[0], bool)
    for d, e in enumerate(edges):
        idx = _bin_index(data[:, d], e) if e.size > 1 else xp.full(data.shape[0], -1)
        valid &= idx >= 0
        flat = flat * _py_max(sizes[d], 1) + xp.maximum(idx, 0)
    total = int(np.prod(sizes))
    w = None
    if weight is not None:
        wa = weight._data
        if wa.shape != x.shape[:-1] and wa.size != data.shape[0]:
            raise RuntimeError(f'torch.{op}(): if weight tensor is provided it should have the '
                               f'same shape as the input tensor excluding its innermost '
                               f'dimension, but got input with shape {list(x.shape)} and '
                               f'weight with shape {list(wa.shape)}')
        w = wa.reshape(-1)[valid].astype(np.float64)
    hist = xp.bincount(flat[valid], weights=w, minlength=total)[:total].astype(np.float64)
    hist = hist.reshape(sizes)
    if density:
        s = hist.sum()
        widths = [xp.diff(e.astype(np.float64)) for e in edges]
        volume = xp.ones(sizes)
        for d, wd in enumerate(widths):
            volume = volume * wd.reshape([-1 if k == d else 1 for k in _py_range(len(sizes))])
        with np.errstate(divide='ignore', invalid='ignore'):
            hist = hist / s / volume
    return wrap(hist.astype(x.dtype)), [wrap(e.copy()) for e in edges]


@method
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    _require_float_hist(input, 'histogram_cpu')
    if isinstance(bins, Tensor) and bins.ndim != 1:
        raise RuntimeError(f'torch.histogram(): bins tensor should have one dimension, but got '
                           f'{bins.ndim} dimensions in the bins tensor')
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError('torch.histogram(): if weight tensor is provided, it should have the '
                           f'same shape as the input tensor (input {list(input.shape)}, weight '
                           f'{list(weight.shape)})')
    x = input.reshape(-1, 1)
    hist, edges = _histogramdd('histogram', x, bins, range, weight, density, 1)
    return histogram_result(hist, edges[0])


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    _require_float_hist(input, 'histogramdd')
    if input.ndim < 2:
        raise RuntimeError('torch.histogramdd: input tensor should have at least 2 dimensions, '
                           f'but got {input.ndim}')
    hist, edges = _histogramdd('histogramdd', input, bins, range, weight, density,
                               input.shape[-1])
    return histogramdd_result(hist, edges)


# -- sorted search and membership ---------------------------------------------------------

def _as_values(values, like):
    if isinstance(values, Tensor):
        return values._data, False
    if isinstance(values, (numbers.Number, np.generic)) and not isinstance(values, bool):
        return xp.asarray(values), True
    raise TypeError(f'expected a Tensor or a number for the values, got {type(values).__name__}')


def _search(seq, values, right):
    """``searchsorted`` of each row of ``values`` in the matching row of ``seq``."""
    side = 'right' if right else 'left'
    if seq.dtype.kind == 'V' or values.dtype.kind == 'V':
        seq, values = seq.astype(np.float32), values.astype(np.float32)
    if seq.ndim == 1:
        return xp.searchsorted(seq, values, side=side)
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(-1, values.shape[-1])
    out = xp.empty(vals.shape, np.int64)
    for k in _py_range(rows.shape[0]):
        out[k] = xp.searchsorted(rows[k], vals[k], side=side)
    return out.reshape(values.shape)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Indices where ``input`` would be inserted into ``sorted_sequence`` (its last dim)."""
    _check_tensor('searchsorted', 'sorted_sequence', sorted_sequence)
    seq = sorted_sequence._data
    values, scalar = _as_values(input, seq)
    if side is not None:
        if side not in ('left', 'right'):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f'got {side}')
        if right and side == 'left':
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites,"
                               ' got side of left while right was True')
        right = side == 'right'
    if seq.ndim == 0:
        raise RuntimeError('torch.searchsorted(): boundaries tensor should have positive '
                           'dimension, but got 0 dimension')
    if seq.ndim > 1 and (scalar or values.shape[:-1] != seq.shape[:-1]
                         or values.ndim != seq.ndim):
        raise RuntimeError('torch.searchsorted(): boundaries tensor should be 1 dimension or '
                           'the first N-1 dimensions of boundaries tensor and input value '
                           f'tensor must match, but we got boundaries tensor {list(seq.shape)} '
                           f'and input value tensor {list(values.shape)}')
    if sorter is not None:
        s = sorter._data
        if s.dtype != np.int64:
            raise RuntimeError('torch.searchsorted(): sorter must be a tensor of long dtype '
                               f'but got dtype {_dname(sorter)}')
        if s.shape != seq.shape:
            raise RuntimeError('torch.searchsorted(): boundary and sorter must have the same '
                               f'size, but got boundary tensor {list(seq.shape)}and got sorter '
                               f'tensor {list(s.shape)}')
        if s.size and (s.min() < 0 or s.max() >= seq.shape[-1]):
            raise RuntimeError('torch.searchsorted(): sorter index out of range')
        seq = xp.take_along_axis(seq, s, -1)
    idx = _search(seq, values, right)
    return wrap(xp.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    _check_tensor('bucketize', 'boundaries', boundaries)
    if boundaries.ndim != 1:
        raise RuntimeError(f'boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})')
    values, _ = _as_values(input, boundaries._data)
    idx = _search(boundaries._data, values, right)
    return wrap(xp.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError('isin() received an invalid combination of arguments - got '
                        f'({type(elements).__name__}, {type(test_elements).__name__}), but '
                        'expected one of: (Tensor elements, Tensor test_elements), (Number '
                        'element, Tensor test_elements), (Tensor elements, Number test_element)')
    a = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    out = xp.isin(a, b, assume_unique=assume_unique, invert=invert)
    return wrap(xp.asarray(out, dtype=np.bool_))


__all__ = ['quantile', 'nanquantile', 'cov', 'corrcoef', 'diff', 'gradient', 'trapezoid',
           'trapz', 'cumulative_trapezoid', 'bincount', 'histc', 'histogram', 'histogramdd',
           'searchsorted', 'bucketize', 'isin']
