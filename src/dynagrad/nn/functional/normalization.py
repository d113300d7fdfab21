"""Normalization layers as functions: batch, layer, group, instance, RMS, local response, Lp.

batch_norm, layer_norm, group_norm and instance_norm are one fused op, ``Normalize``:
statistics over some axes of the input (seen through a reshape for group_norm), then an
optional per-channel affine map. Its backward is the closed form in terms of
``x_hat = (x - mean) * rstd``::

    gx = rstd * (gx_hat - mean(gx_hat) - x_hat * mean(gx_hat * x_hat))   (batch statistics)
    gx = rstd * gx_hat                                                    (running statistics)

On arrays it reuses the mean and ``rstd`` saved by forward. Under ``create_graph=True`` it
recomputes them from the input tensor with recorded ops, so the same formula is itself
differentiable and double backward comes free. ``rms_norm`` is the same idea without the
mean. ``local_response_norm`` and ``normalize`` are composites, as in PyTorch.
"""
import math

import numpy as np

from ...autograd.batched import vmap_function
from ... import _dtype, ops as _ops
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...backend import native_kernel, xp
from ...tensor import bump_version
from ...ops import formula as fm
from ...ops.pointwise import not_implemented, type_name


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _mean_keep(t, axes, keep, count):
    return t.sum(axes).reshape(keep) * (1.0 / count) if count else t.sum(axes).reshape(keep)


def _trim(wshape):
    """``wshape`` without its leading 1s: the shape ``sum_to`` reduces a gradient to."""
    i = 0
    while i < len(wshape) - 1 and wshape[i] == 1:
        i += 1
    return tuple(wshape[i:])


class Normalize(Op):
    """``(x - mean) * rstd * weight + bias`` with the statistics over ``axes`` of ``x``
    reshaped to ``view``; ``fixed``: the statistics are running ones (constants)."""
    widens_half = True
    node_name = 'NativeBatchNormBackward0'

    def forward(self, x, weight, bias, *, view, axes, wshape, mean, rstd, eps, fixed):
        self.view, self.axes, self.wshape, self.eps, self.fixed = view, axes, wshape, eps, fixed
        param = weight if weight is not None else bias
        self.pshape = param.shape if param is not None else None
        out = x.reshape(view) - mean
        out *= rstd
        out = out.reshape(x.shape)
        if weight is not None:
            out *= weight.reshape(wshape)
        if bias is not None:
            out += bias.reshape(wshape)
        needs = self.needs_input_grad
        if needs[0] or (len(needs) > 1 and needs[1]):
            self.save_for_backward(x, weight if needs[0] else None, mean, rstd)
        return out

    def backward(self, g):
        x, weight, mean, rstd = self.saved_tensors
        view, axes = self.view, self.axes
        keep = _keep_shape(view, axes)
        count = 1
        for a in axes:
            count *= view[a]
        xv = x.reshape(view)
        if fm.is_array(g) and not self.fixed and x.size and self.wshape == tuple(
                view[len(view) - len(axes):]) and axes == tuple(
                range(len(view) - len(axes), len(view))):
            return self._rows_backward(g, x, weight, mean, rstd, count)
        if fm.is_array(g) or self.fixed:
            xhat = (xv - mean) * rstd
        else:   # create_graph: statistics as recorded functions of x
            xc = xv - _mean_keep(xv, axes, keep, count)
            rstd = 1 / fm.sqrt(_mean_keep(xc * xc, axes, keep, count) + self.eps)
            xhat = xc * rstd
        needs = self.needs_input_grad
        gx = gw = gb = None
        if needs[0]:
            gxh = g if weight is None else g * weight.reshape(self.wshape)
            gxh = gxh.reshape(view)
            if self.fixed:
                gx = gxh * rstd
            else:
                gx = (gxh - _mean_keep(gxh, axes, keep, count)
                      - xhat * _mean_keep(gxh * xhat, axes, keep, count)) * rstd
            gx = gx.reshape(x.shape)
        trimmed = _trim(self.wshape)
        if len(needs) > 1 and needs[1]:
            gw = fm.sum_to(g * xhat.reshape(x.shape), trimmed).reshape(self.pshape)
        if len(needs) > 2 and needs[2]:
            gb = fm.sum_to(g, trimmed).reshape(self.pshape)
        return gx, gw, gb


    def _rows_backward(self, g, x, weight, mean, rstd, count):
        """Layer norm's backward on arrays: statistics over the trailing ``count`` values of
        each row. The same formula as ``backward``, with the two row means of
        ``g * weight`` and ``g * weight * x_hat`` as matrix-vector products and the rest in
        place: four arrays instead of nine, 1.5x faster at a transformer's sizes."""
        needs = self.needs_input_grad
        native = native_kernel('layer_norm_backward', x) if _one_row_of(
            count, weight) else None
        if native is not None:
            return native(g, x, mean, rstd, weight, count, tuple(
                len(needs) > i and needs[i] for i in range(3)), self.pshape)
        rows = x.size // count
        g2 = g.reshape(rows, count)
        xhat = x.reshape(rows, count) - mean.reshape(rows, 1)
        rstd = rstd.reshape(rows, 1)
        xhat *= rstd
        gx = gw = gb = None
        gxhat = g2 * xhat
        if len(needs) > 1 and needs[1]:
            gw = gxhat.sum(0).reshape(self.pshape)
        if len(needs) > 2 and needs[2]:
            gb = g2.sum(0).reshape(self.pshape)
        if needs[0]:
            inv = g2.dtype.type(1.0 / count)
            if weight is None:
                mean_g = g2.sum(1, keepdims=True) * inv
                mean_gx = gxhat.sum(1, keepdims=True) * inv
                gx = g2 - mean_g
            else:
                w = weight.reshape(count)
                mean_g = (g2 @ w).reshape(rows, 1) * inv
                mean_gx = (gxhat @ w).reshape(rows, 1) * inv
                gx = g2 * w
                gx -= mean_g
            xhat *= mean_gx
            gx -= xhat
            gx *= rstd
            gx = gx.reshape(x.shape)
        return gx, gw, gb


def _one_row_of(count, *params):
    """Whether each parameter given is one row's worth (``count`` values), as the native
    kernels take them; under vmap a weight can carry a batch dimension of its own."""
    return all(p is None or p.size == count for p in params)


def _compute_dtype(np_dtype):
    """float32 for float16 and bfloat16, whose statistics PyTorch computes in float."""
    return np.dtype(np.float32) if np_dtype.char in 'eE' else np_dtype


def _stats(xv, axes, eps):
    """Mean and biased variance over ``axes`` (kept), and ``1 / sqrt(var + eps)``."""
    xv = xv.astype(_compute_dtype(xv.dtype), copy=False)
    count = 1
    for a in axes:
        count *= xv.shape[a]
    # sums times 1/count, not .mean(): NumPy's mean is a Python wrapper costing 10 us a call
    inv = xv.dtype.type(1.0 / count) if count else xv.dtype.type(np.nan)
    mean = xv.sum(axis=axes, keepdims=True)
    mean *= inv
    xc = xv - mean
    xc *= xc
    var = xc.sum(axis=axes, keepdims=True)
    var *= inv
    return mean, var, (1 / xp.sqrt(var + xv.dtype.type(eps))).astype(xv.dtype, copy=False)


def _check_float(input, kernel):
    if input._data.dtype.kind not in 'fV':
        raise not_implemented(kernel, input._data)


def _check_same_dtype(input, *params):
    low = input._data.dtype.char in 'eE'    # float16/bfloat16 input: float32 params are fine
    for p in params:
        if p is not None and p._data.dtype != input._data.dtype and not (
                low and p._data.dtype == np.float32):
            raise RuntimeError(f'mixed dtype (CPU): expect parameter to have scalar type of '
                               f'{type_name(input._data)} (got {type_name(p._data)}); '
                               f'cast weight, bias and running statistics to the input dtype')


def _check_numel(name, t, n):
    if t is not None and t.numel() != n:
        raise RuntimeError(f'{name} should contain {n} elements not {t.numel()}')


def _update_running(running, batch_value, momentum, bump=False):
    """``running = (1 - momentum) * running + momentum * batch_value``, in place.

    PyTorch's batch_norm kernel writes the statistics without a version bump; instance_norm
    copies them back (``copy_``), which bumps it: ``bump`` follows that."""
    data = running._data
    if data.dtype.char in 'eE':    # float16/bfloat16: computed in float, rounded once
        data[...] = data.astype(np.float32) * (1 - momentum) + momentum * batch_value.reshape(
            data.shape)
    else:
        data *= 1 - momentum
        data += (momentum * batch_value.reshape(data.shape)).astype(data.dtype, copy=False)
    if bump:
        bump_version(running, 'the running statistics update')


@vmap_function('batch_norm')
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalize each channel (dim 1) over the batch and spatial dims.

    In training the batch's statistics are used and ``running_mean`` / ``running_var``
    (when given) move toward them by ``momentum``, the variance unbiased, in place. Out of
    training the running statistics are used.
    """
    if training:
        size = input.shape
        n = size[0] if len(size) else 1
        for d in size[2:]:
            n *= d
        if n == 1:
            raise ValueError(f'Expected more than 1 value per channel when training, got '
                             f'input size {size}')
    elif running_mean is None or running_var is None:
        raise RuntimeError(f'running_{"mean" if running_mean is None else "var"} must be '
                           'defined in evaluation mode')
    channels = input.shape[1] if input.ndim > 1 else 0
    for name, t in (('running_mean', running_mean), ('running_var', running_var),
                    ('weight', weight), ('bias', bias)):
        _check_numel(name, t, channels)
    _check_float(input, 'batch_norm')
    _check_same_dtype(input, weight, bias)
    x = input._data
    axes = (0,) + tuple(range(2, x.ndim))
    wshape = (channels,) + (1,) * (x.ndim - 2)
    if training:
        if x.size:
            mean, var, rstd = _stats(x, axes, eps)
            n = x.size // channels
            if running_mean is not None:
                _update_running(running_mean, mean, momentum)
            if running_var is not None:
                _update_running(running_var, var * (n / max(n - 1, 1)), momentum)
        else:
            mean = rstd = xp.zeros(wshape, x.dtype)
        fixed = False
    else:
        # a copy: the running statistics change in place later
        comp = _compute_dtype(x.dtype)
        mean = running_mean._data.reshape(wshape).astype(comp)
        rv = running_var._data.reshape(wshape).astype(comp, copy=False)
        rstd = (1 / xp.sqrt(rv + comp.type(eps))).astype(comp, copy=False)
        fixed = True
    return Normalize.apply(input, weight, bias, view=x.shape, axes=axes, wshape=wshape,
                           mean=mean, rstd=rstd, eps=eps, fixed=fixed)


@vmap_function('instance_norm')
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalize each channel of each sample over its spatial dims.

    With ``use_input_stats`` the running statistics (when given) move toward the batch
    average of the per-instance statistics, the variance unbiased; without, they are used.
    """
    if use_input_stats:
        size = input.shape
        n = 1
        for d in size[2:]:
            n *= d
        if n == 1:
            raise ValueError(f'Expected more than 1 spatial element when training, got input '
                             f'size {size}')
    elif running_mean is None or running_var is None:
        raise RuntimeError('Expected running_mean and running_var to be defined when '
                           'use_input_stats is false')
    channels = input.shape[1]
    for name, t in (('running_mean', running_mean), ('running_var', running_var),
                    ('weight', weight), ('bias', bias)):
        _check_numel(name, t, channels)
    _check_float(input, 'batch_norm')
    _check_same_dtype(input, weight, bias)
    x = input._data
    axes = tuple(range(2, x.ndim))
    wshape = (channels,) + (1,) * (x.ndim - 2)
    if use_input_stats:
        mean, var, rstd = _stats(x, axes, eps)
        n = x.size // (x.shape[0] * channels) if x.size else 1
        if running_mean is not None:
            _update_running(running_mean, mean.mean(axis=0), momentum, True)
        if running_var is not None:
            _update_running(running_var, (var * (n / max(n - 1, 1))).mean(axis=0), momentum,
                            True)
        fixed = False
    else:
        # a copy: the running statistics change in place later
        comp = _compute_dtype(x.dtype)
        mean = running_mean._data.reshape(wshape).astype(comp)
        rv = running_var._data.reshape(wshape).astype(comp, copy=False)
        rstd = (1 / xp.sqrt(rv + comp.type(eps))).astype(comp, copy=False)
        fixed = True
    return Normalize.apply(input, weight, bias, view=x.shape, axes=axes, wshape=wshape,
                           mean=mean, rstd=rstd, eps=eps, fixed=fixed)


def _normalized_shape(normalized_shape, fn):
    if normalized_shape.__class__ is tuple and all(n.__class__ is int for n in normalized_shape):
        return normalized_shape     # a module's own (nn.LayerNorm keeps a tuple of ints)
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f'ints, not int')
    return tuple(int(n) for n in normalized_shape)


def _check_trailing(input, shape, sep=', '):
    k = len(shape)
    full = input._data.shape
    if k > len(full) or full[len(full) - k:] != shape:
        raise RuntimeError(f'Given normalized_shape={list(shape)}, expected input with shape '
                           f'[*{sep}{", ".join(map(str, shape))}], but got input of size'
                           f'{list(input.shape)}')


class LayerNormOp(Normalize):
    """``Normalize`` computing its statistics itself: what ``dynagrad.compile`` records for
    ``layer_norm`` (whose eager path computes them before the op, as values a replay could
    not reuse), so a replay needs no eager island."""
    node_name = 'NativeLayerNormBackward0'

    def forward(self, x, weight, bias, *, axes, wshape, eps):
        count = math.prod(wshape)
        native = native_kernel('layer_norm', x) if x.size and _one_row_of(
            count, weight, bias) else None
        if native is not None:
            out, mean, rstd = native(x, count, weight, bias, eps)
            keep = x.shape[:x.ndim - len(axes)] + (1,) * len(axes)
            self.view, self.axes, self.wshape, self.eps, self.fixed = (
                x.shape, axes, wshape, eps, False)
            param = weight if weight is not None else bias
            self.pshape = param.shape if param is not None else None
            needs = self.needs_input_grad
            if needs[0] or (len(needs) > 1 and needs[1]):
                self.save_for_backward(x, weight if needs[0] else None, mean.reshape(keep),
                                       rstd.reshape(keep))
            return out
        mean, _, rstd = _stats(x, axes, eps)
        return super().forward(x, weight, bias, view=x.shape, axes=axes, wshape=wshape,
                               mean=mean, rstd=rstd, eps=eps, fixed=False)


def _layer_norm_captured(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """The capture rule of ``layer_norm`` (eager's checks, then one recorded op)."""
    shape = _layer_norm_checks(input, normalized_shape, weight, bias)
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    return LayerNormOp.apply(input, weight, bias, axes=axes, wshape=shape, eps=eps)


def _layer_norm_checks(input, normalized_shape, weight, bias):
    shape = _normalized_shape(normalized_shape, 'layer_norm')
    if not shape:
        raise RuntimeError('Expected normalized_shape to be at least 1-dimensional, i.e., '
                           'containing at least one element, but got normalized_shape = []')
    for name, t in (('weight', weight), ('bias', bias)):
        if t is not None and t._data.shape != shape:
            raise RuntimeError(f'Expected {name} to be of same shape as normalized_shape, but '
                               f'got {name} of shape {list(t.shape)} and normalized_shape = '
                               f'{list(shape)}')
    _check_trailing(input, shape)
    _check_float(input, 'LayerNormKernelImpl')
    _check_same_dtype(input, weight, bias)
    return shape


@vmap_function('layer_norm')
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the last ``len(normalized_shape)`` dims, then ``* weight + bias``."""
    shape = _layer_norm_checks(input, normalized_shape, weight, bias)
    x = input._data
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    if native_kernel('layer_norm', x) is not None:
        # statistics and output in one kernel, inside the op
        return LayerNormOp.apply(input, weight, bias, axes=axes, wshape=shape, eps=eps)
    mean, _, rstd = _stats(x, axes, eps)
    return Normalize.named('NativeLayerNormBackward0').apply(
        input, weight, bias, view=x.shape, axes=axes, wshape=shape, mean=mean, rstd=rstd,
        eps=eps, fixed=False)


layer_norm._capture_rule = _layer_norm_captured


@vmap_function('group_norm')
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalize each of ``num_groups`` groups of channels of each sample."""
    if input.ndim < 2:
        raise RuntimeError(f'Expected at least 2 dimensions for input tensor but received '
                           f'{input.ndim}')
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f'Expected number of channels in input to be divisible by '
                           f'num_groups, but got input of shape {list(input.shape)} and '
                           f'num_groups={num_groups}')
    for name, t in (('weight', weight), ('bias', bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f'Expected {name} to be a vector of size equal to the number of '
                               f'channels in input, but got {name} of shape {list(t.shape)} '
                               f'and input of shape {list(input.shape)}')
    _check_float(input, 'GroupNormKernelImpl')
    _check_same_dtype(input, weight, bias)
    x = input._data
    view = (n, num_groups, x.size // max(n * num_groups, 1))
    mean, _, rstd = _stats(x.reshape(view), (2,), eps)
    return Normalize.named('NativeGroupNormBackward0').apply(
        input, weight, bias, view=view, axes=(2,), wshape=(c,) + (1,) * (x.ndim - 2),
        mean=mean, rstd=rstd, eps=eps, fixed=False)


class RmsNorm(Op):
    """``x * rsqrt(mean(x^2) + eps) * weight`` over the trailing dims ``axes``."""
    widens_half = True
    node_name = 'FusedRmsNormBackward0'

    def forward(self, x, weight, *, axes, eps):
        self.axes, self.eps = axes, eps
        count = math.prod(x.shape[a] for a in axes)
        native = native_kernel('rms_norm', x) if x.size and _one_row_of(
            count, weight) else None
        if native is not None:
            out, r = native(x, count, weight, eps)
            self.save_for_backward(x, weight, r.reshape(_keep_shape(x.shape, axes)))
            return out
        ms = (x * x).mean(axis=axes, keepdims=True)
        r = (1 / xp.sqrt(ms + x.dtype.type(eps))).astype(x.dtype, copy=False)
        out = x * r
        if weight is not None:
            out *= weight
        self.save_for_backward(x, weight, r)
        return out

    def backward(self, g):
        x, weight, r = self.saved_tensors
        axes = self.axes
        keep = _keep_shape(x.shape, axes)
        count = 1
        for a in axes:
            count *= x.shape[a]
        native = native_kernel('rms_norm_backward', x) if fm.is_array(g) and _one_row_of(
            count, weight) else None
        if native is not None:
            needs = self.needs_input_grad
            return native(g, x, r, weight, count, (needs[0], len(needs) > 1 and needs[1]))
        if not fm.is_array(g):
            r = 1 / fm.sqrt(_mean_keep(x * x, axes, keep, count) + self.eps)
        needs = self.needs_input_grad
        gx = gw = None
        if needs[0]:
            gxh = g if weight is None else g * weight
            gx = (gxh - x * (r * r) * _mean_keep(gxh * x, axes, keep, count)) * r
        if len(needs) > 1 and needs[1]:
            gw = fm.sum_to(g * (x * r), tuple(weight.shape))
        return gx, gw


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims;
    ``eps=None`` means the input dtype's machine epsilon, as in PyTorch."""
    shape = _normalized_shape(normalized_shape, 'rms_norm')
    _check_trailing(input, shape, sep='')
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f'Expected weight to be of same shape as normalized_shape, but got '
                           f'weight of shape {list(weight.shape)} and normalized_shape = '
                           f'{list(shape)}')
    _check_float(input, 'rms_norm')
    if eps is None:
        eps = _dtype.finfo(input.dtype).eps
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    return RmsNorm.apply(input, weight, axes=axes, eps=eps)


@vmap_function('merge')
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha * avg(input^2 over a window of size channels)) ** beta``.

    A composite as in PyTorch; the window sum is ``size`` shifted slices of the zero-padded
    squares (channels padded by ``size // 2`` before and ``(size - 1) // 2`` after).
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError(f'Expected 3D or higher dimensionality                          '
                         f'input (got {dim} dimensions)')
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    if dim > 3 and autocast_state.active:    # PyTorch averages 4-D and up with avg_pool3d,
        sq, = autocast_args('fp32', sq)      # an autocast float32 op
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(_ops.zeros((input.shape[0], before) + tuple(input.shape[2:]),
                                dtype=input.dtype))
    parts.append(sq)
    if after:
        parts.append(_ops.zeros((input.shape[0], after) + tuple(input.shape[2:]),
                                dtype=input.dtype))
    padded = _ops.cat(parts, 1) if len(parts) > 1 else sq
    window = padded[:, 0:c]
    for s in range(1, size):
        window = window + padded[:, s:s + c]
    div = (window * (alpha / size) + k) ** beta
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p over dim, eps)`` (a composite, as in PyTorch)."""
    denom = _ops.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is not None:
        return out.copy_(input / denom)
    return input / denom


__all__ = ['batch_norm', 'instance_norm', 'layer_norm', 'group_norm', 'rms_norm',
           'local_response_norm', 'normalize']
