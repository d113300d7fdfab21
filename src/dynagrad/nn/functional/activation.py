"""Activation functions, and the softmax family.

Each activation with a node of its own in PyTorch (``EluBackward0``, ``GeluBackward0``,
...) is one fused op here; the composites of PyTorch (``softsign``, ``tanhshrink``,
``softmin``, ``gumbel_softmax``) are composites here too, so the node names agree.
The in-place forms (``inplace=True``, ``elu_``, ...) save the result where PyTorch does
(``EluBackward1``, ``LeakyReluBackward1``, ``ThresholdBackward1``, ...).
"""
import math
import warnings

import numpy as np

from ...autograd.batched import vmap_function
from ... import ops as _ops
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...backend import native_kernel, xp
from ...ops import formula as fm
from ...ops.blocked import horner_, run_blocked
from ...ops import special as _sp
from ...ops.pointwise import not_implemented
from ...ops.random import array_rng
from ...tensor import method, wrap


def _float_only(input, kernel):
    """PyTorch's activations have no integer kernels: NotImplementedError as torch."""
    if input._data.dtype.kind not in 'fV':
        raise not_implemented(kernel, input._data)


def _sigmoid(x):
    """Sigmoid of an array (overflow-free) or of a tensor (recorded)."""
    if fm.is_array(x):
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
    return _ops.sigmoid(x)


def _erf(x):
    return _sp.erf(x) if fm.is_array(x) else _ops.erf(x)


def _cat(parts, axis):
    if fm.is_array(parts[0]):
        return xp.concatenate(parts, axis=axis)
    return _ops.cat(parts, axis)


def _softplus_arr(bx):
    return xp.logaddexp(bx.dtype.type(0), bx)


# -- softmax family ---------------------------------------------------------------------


class LogSoftmaxOp(Op):
    widens_half = True
    node_name = 'LogSoftmaxBackward0'
    quiet_fp = True
    float_result = True

    def forward(self, x, dim):
        self.dim = dim
        if x.size == 0:
            out = x.copy()
            self.save_for_backward(out)
            return out
        native = _native_rows('log_softmax', x, dim)
        if native is not None:
            out = native(x)
        elif x.ndim == 0:
            out = xp.zeros_like(x)
        else:
            # in place on one fresh array: a pass less and no temporaries (issue 15)
            out = x - x.max(axis=dim, keepdims=True)
            e = xp.exp(out)
            out -= xp.log(e.sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out

    def backward(self, g):
        out, = self.saved_tensors
        native = _native_rows('log_softmax_backward', g, self.dim)
        if native is not None:
            return native(g, out)
        if fm.is_array(g) and g.ndim:
            gx = xp.exp(out)
            gx *= g.sum(axis=self.dim, keepdims=True)
            return xp.subtract(g, gx, out=gx)
        return g - fm.exp(out) * _sum_keepdim(g, self.dim)


class SoftmaxOp(Op):
    widens_half = True
    node_name = 'SoftmaxBackward0'
    quiet_fp = True
    float_result = True

    def forward(self, x, dim):
        self.dim = dim
        if x.size == 0:
            out = x.copy()
            self.save_for_backward(out)
            return out
        native = _native_rows('softmax', x, dim)
        if native is not None:
            out = native(x)
        elif x.ndim == 0:
            out = xp.ones_like(x)
        else:
            # in place on one fresh array: no temporaries (issue 15)
            out = x - x.max(axis=dim, keepdims=True)
            xp.exp(out, out=out)
            out /= out.sum(axis=dim, keepdims=True)
        self.save_for_backward(out)
        return out

    def backward(self, g):
        out, = self.saved_tensors
        native = _native_rows('softmax_backward', g, self.dim)
        if native is not None:
            return native(g, out)
        gy = g * out
        if fm.is_array(gy) and gy.ndim:
            gy -= out * gy.sum(axis=self.dim, keepdims=True)
            return gy
        return gy - out * _sum_keepdim(gy, self.dim)


def _native_rows(name, x, dim):
    """The native kernel ``name`` when ``dim`` is ``x``'s last axis (rows of contiguous
    values: the kernels' layout), else None."""
    if x.ndim and dim in (-1, x.ndim - 1) and x.size:
        return native_kernel(name, x)
    return None


def _sum_keepdim(g, dim):
    if g.ndim == 0:
        return g
    shape = list(g.shape)
    shape[dim] = 1
    return g.sum((dim,)).reshape(tuple(shape))


def _wrap_dim(dim, ndim, name='softmax'):
    if dim is None:
        # PyTorch's legacy implicit choice (it warns): 0 for 0-, 1- and 3-D input, else 1.
        warnings.warn(f'Implicit dimension choice for {name} has been deprecated. Change the '
                      'call to include dim=X as an argument.', UserWarning, stacklevel=4)
        return 0 if ndim in (0, 1, 3) else 1
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                        f'{type(dim).__name__}')
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f'Dimension out of range (expected to be in range of '
                         f'[{-n}, {n - 1}], but got {dim})')
    return int(dim) % n


def _softmax_input(input, dtype, kernel):
    if dtype is not None:
        return input.to(dtype)
    _float_only(input, kernel)
    return input


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    dim = _wrap_dim(dim, input.ndim, 'log_softmax')
    input = _softmax_input(input, dtype, 'log_softmax_lastdim_kernel_impl')
    return LogSoftmaxOp.apply(input, dim=dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    dim = _wrap_dim(dim, input.ndim, 'softmax')
    input = _softmax_input(input, dtype, 'softmax_lastdim_kernel_impl')
    return SoftmaxOp.apply(input, dim=dim)


# tensor.softmax(dim) and tensor.log_softmax(dim), as PyTorch has them
@method('softmax')
def _softmax_method(self, dim=None, dtype=None):
    return softmax(self, dim, dtype=dtype)


@method('log_softmax')
def _log_softmax_method(self, dim=None, dtype=None):
    return log_softmax(self, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` (recorded as PyTorch does: NegBackward0 then SoftmaxBackward0)."""
    dim = _wrap_dim(dim, input.ndim, 'softmin')
    input = _softmax_input(input, dtype, 'softmax_lastdim_kernel_impl')
    return SoftmaxOp.apply(-input, dim=dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of ``(logits + g) / tau`` with Gumbel(0, 1) noise ``g``; ``hard=True``
    returns the one-hot of the argmax in the forward pass and the soft sample's gradient
    (straight-through).

    The noise is PyTorch's draw, ``-log`` of ``exponential_()`` samples filling a fresh
    row-major tensor of the logits' shape and dtype, so a seed gives PyTorch's noise and
    leaves the default generator where PyTorch leaves it.
    """
    _float_only(logits, 'softmax_lastdim_kernel_impl')
    d = _wrap_dim(dim, logits.ndim, 'gumbel_softmax')
    e = _ops.empty(tuple(logits.shape), dtype=logits.dtype).exponential_()
    gumbels = -xp.log(e._data)
    y_soft = SoftmaxOp.apply((logits + gumbels) / tau, dim=d)
    if not hard:
        return y_soft
    y = y_soft._data
    if y.ndim == 0:
        onehot = xp.ones_like(y)
    else:
        index = xp.expand_dims(y.argmax(axis=d), d)
        onehot = xp.zeros_like(y)
        xp.put_along_axis(onehot, index, 1.0, axis=d)
    y_hard = wrap(onehot)
    return y_hard - y_soft.detach() + y_soft


# -- rectifiers ------------------------------------------------------------------------------


def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return _ops.relu(input)


def relu_(input):
    return input.relu_()


class HardtanhOp(Op):
    widens_half = True
    node_name = 'HardtanhBackward0'
    def forward(self, x, min_val, max_val, inplace=False):
        self.lo, self.hi = min_val, max_val
        out = xp.clip(x, min_val, max_val)
        if x.dtype.kind not in 'fV':
            out = out.astype(x.dtype)
        self.save_for_backward(out if inplace else x)
        return out

    def backward(self, g):
        x, = self.saved_tensors
        x = fm.unwrap(x)
        return g * ((x > self.lo) & (x < self.hi))


def _check_bool_input(input, kernel):
    if input._data.dtype == np.bool_:
        raise not_implemented(kernel, input._data)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError('min_val cannot be greater than max_val')
    _check_bool_input(input, 'hardtanh')
    if inplace:
        return HardtanhOp.apply_(input, min_val=min_val, max_val=max_val, inplace=True)
    return HardtanhOp.apply(input, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


class LeakyRelu(Op):
    widens_half = True
    def forward(self, x, negative_slope, inplace=False):
        self.slope = negative_slope
        out = xp.where(x > 0, x, x * x.dtype.type(negative_slope))
        self.inplace = inplace
        self.save_for_backward(out if inplace else x)
        return out

    def backward(self, g):
        x, = self.saved_tensors
        if self.inplace and self.slope < 0:
            raise RuntimeError(
                'In-place leakyReLu backward calculation is triggered with a negative slope '
                'which is not supported. This is caused by calling in-place forward function '
                'with a negative slope, please call out-of-place version instead.')
        return fm.where(fm.unwrap(x) > 0, g, g * self.slope)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _float_only(input, 'leaky_relu_cpu')
    if inplace:
        return LeakyRelu.named('LeakyReluBackward1').apply_(
            input, negative_slope=negative_slope, inplace=True)
    return LeakyRelu.apply(input, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


class Elu(Op):
    """``scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))``: elu, selu, celu.

    Out of place it saves the input (``EluBackward0``); in place the result
    (``EluBackward1``), from which the derivative ``input_scale * (y + alpha * scale)`` of
    the negative branch follows as well.
    """
    widens_half = True
    quiet_fp = True

    def forward(self, x, alpha, scale, input_scale, inplace=False):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        self.inplace = inplace
        t = x.dtype.type
        neg = t(alpha * scale) * xp.expm1(xp.minimum(x, 0) * t(input_scale))
        out = xp.where(x > 0, x * t(scale), neg)
        self.save_for_backward(out if inplace else x)
        return out

    def backward(self, g):
        v, = self.saved_tensors
        a, s, i = self.alpha, self.scale, self.input_scale
        if self.inplace:
            if a < 0:
                raise RuntimeError(
                    'In-place elu backward calculation is triggered with a negative slope '
                    'which is not supported. This is caused by calling in-place forward '
                    'function with a negative slope, please call out-of-place version instead.')
            neg = g * ((v + a * s) * i)
        else:
            neg = g * (fm.exp(v * i if i != 1 else v) * (a * s * i))
        return fm.where(fm.unwrap(v) > 0, g * s if s != 1 else g, neg)


def _elu(input, alpha, scale, input_scale, name, inplace, kernel='elu_cpu'):
    _float_only(input, kernel)
    kw = dict(alpha=alpha, scale=scale, input_scale=input_scale)
    if inplace:
        return Elu.named(name + 'Backward1').apply_(input, inplace=True, **kw)
    return Elu.named(name + 'Backward0').apply(input, **kw)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def elu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, 1.0, 'Elu', inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, 'Elu', inplace)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError('ZeroDivisionError: celu: alpha must not be 0')
    return _elu(input, alpha, 1.0, 1.0 / alpha, 'Celu', inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


class ThresholdOp(Op):
    """``x if x > threshold else value``; the mask of kept elements is all backward needs."""
    widens_half = True
    node_name = 'ThresholdBackward0'

    def forward(self, x, threshold, value):
        out = xp.where(x > threshold, x, xp.asarray(value).astype(x.dtype))
        if self.needs_input_grad[0]:
            self.mask = x > threshold
        return out

    def backward(self, g):
        return g * self.mask


def threshold(input, threshold, value, inplace=False):
    _check_bool_input(input, 'threshold_cpu')
    if inplace:
        return threshold_(input, threshold, value)
    return ThresholdOp.apply(input, threshold=threshold, value=value)


def threshold_(input, threshold, value):
    return ThresholdOp.named('ThresholdBackward1').apply_(input, threshold=threshold,
                                                          value=value)


class Rrelu(Op):
    """Leaky ReLU with a slope drawn per element in training, (lower + upper) / 2 in eval."""
    widens_half = True
    node_name = 'RreluWithNoiseBackward0'

    def forward(self, x, lower, upper, training, generator=None):
        if training:
            noise = _rrelu_noise(x, lower, upper, generator)
        else:
            noise = xp.where(x > 0, x.dtype.type(1), x.dtype.type((lower + upper) / 2))
        self.noise = noise
        return x * noise

    def backward(self, g):
        return g * self.noise


def _rrelu_noise(x, lower, upper, generator):
    """PyTorch's training slopes: one float64 uniform in [lower, upper) per element <= 0, in
    order (positive and NaN elements draw nothing and keep slope 1). The bounds and the slope
    are rounded to the compute type (float32 for the 32- and 16-bit dtypes)."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    low, high = float(work(lower)), float(work(upper))
    hit = xp.ascontiguousarray(x).reshape(-1) <= 0
    count = int(hit.sum())
    raw = array_rng(generator).bit_generator.random_raw(2 * count)
    # a 64-bit draw is two 32-bit ones, the first the high half; uniforms take its low 53 bits
    bits = ((raw[0::2] & xp.uint64((1 << 21) - 1)) << xp.uint64(32)) | raw[1::2]
    slopes = (bits.astype(np.float64) * 2.0 ** -53 * (high - low) + low).astype(work)
    noise = xp.ones(x.size, x.dtype)
    noise[hit] = slopes.astype(x.dtype)
    return noise.reshape(x.shape)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return rrelu_with_generator(input, lower, upper, training, inplace, None)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu_with_generator(input, lower, upper, training, True, None)


def rrelu_with_generator(input, lower, upper, training, inplace, generator):
    """``rrelu`` drawing its training slopes from ``generator`` (None: the default one), for
    ``torch.rrelu``'s ``generator=`` (``F.rrelu`` has none)."""
    if lower > upper:
        raise RuntimeError('Lower bound should be less than or equal to the upper bound')
    _float_only(input, 'rrelu_with_noise_out_cpu')
    kw = dict(lower=lower, upper=upper, training=bool(training))
    if training:
        array_rng(generator)    # a wrong generator's TypeError before anything changes
        kw['generator'] = generator
    if inplace:
        return Rrelu.named('RreluWithNoiseBackward1').apply_(input, **kw)
    return Rrelu.apply(input, **kw)


class Prelu(Op):
    widens_half = True
    node_name = 'PreluKernelBackward0'

    def forward(self, x, weight, wshape):
        self.wshape = wshape
        self.save_for_backward(x, weight)
        w = weight.reshape(wshape)
        return xp.where(x > 0, x, x * w)

    def backward(self, g):
        x, weight = self.saved_tensors
        pos = fm.unwrap(x) > 0
        w = weight.reshape(self.wshape)
        needs = self.needs_input_grad
        gx = fm.where(pos, g, g * w) if needs[0] else None
        gw = None
        if needs[1]:
            gw = fm.sum_to(fm.where(pos, 0.0, g * x), self.wshape).reshape(weight.shape)
        return gx, gw


@method('prelu')
@vmap_function('prelu')
def prelu(input, weight):
    if autocast_state.active:
        input, weight = autocast_args('lower', input, weight)
    if input._data.dtype != weight._data.dtype:
        from ...ops.pointwise import type_name
        raise RuntimeError(f'prelu: Type promoting not supported. Got '
                           f'{type_name(input._data)} and {type_name(weight._data)}')
    _float_only(input, 'prelu_cpu')
    if weight.ndim > 1:
        raise RuntimeError(f'prelu: Expected `weight` to be a scalar or 1D tensor, but got: '
                           f'ndim = {weight.ndim}')
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f'Mismatch of parameter numbers and input channel size. Found '
                           f'parameter numbers = {n} and channel size = {channels}.')
    if n == 1 or input.ndim < 2:
        wshape = ()
    else:
        wshape = (n,) + (1,) * (input.ndim - 2)
    return Prelu.apply(input, weight, wshape=wshape)


# -- smooth activations ----------------------------------------------------------------------


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715


# GELU's float32 fast path. The cost of GELU is Phi(x) = (1 + erf(x / sqrt 2)) / 2, and
# scipy's erf takes about 12 ns per float32 element (a C call per element, in float64).
# Here Phi comes from erf(a) = 1 - erfc(a), a = |x| / sqrt 2, with
# erfc(a) = t exp(-a^2 + P(t)), t = 1 / (1 + a / 2): the Chebyshev fit of Numerical Recipes
# (Press et al., 2nd ed., section 6.2), fractional error below 1.2e-7 for every a >= 0, so
# Phi is within a float32 ulp or two, as PyTorch's own kernel. Twenty in-place passes over
# cache-sized blocks (ops/blocked.py): 3x faster than scipy, forward and backward.
_ERFC_P = tuple(np.float32(c) for c in (
    0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
    0.37409196, 1.00002368, -1.26551223))
_F32 = np.float32


def _gelu_cdf_(out, x, a, t):
    """``out = Phi(x)`` on float32 blocks; ``a`` and ``t`` are scratch."""
    xp.abs(x, out=a)
    a *= _F32(_INV_SQRT_2)
    xp.multiply(a, _F32(0.5), out=t)
    t += _F32(1)
    xp.reciprocal(t, out=t)
    horner_(out, t, _ERFC_P)
    a *= a
    out -= a
    xp.exp(out, out=out)
    out *= t                            # erfc(|x| / sqrt 2)
    xp.subtract(_F32(1), out, out=out)  # erf(|x| / sqrt 2)
    xp.copysign(out, x, out=out)        # erf(x / sqrt 2): erf is odd
    out += _F32(1)
    out *= _F32(0.5)


def _gelu_kernel(out, x, a, t):
    _gelu_cdf_(out, x, a, t)
    out *= x


def _gelu_keeping_cdf_kernel(out, x, cdf, a, t):
    _gelu_cdf_(cdf, x, a, t)
    xp.multiply(cdf, x, out=out)


def _gelu_backward_kernel(out, g, x, cdf, a):
    """``g * (Phi(x) + x phi(x))``, phi the normal density, Phi kept by forward."""
    xp.multiply(x, x, out=a)
    a *= _F32(-0.5)
    xp.exp(a, out=a)
    a *= _F32(_INV_SQRT_2PI)
    a *= x
    a += cdf
    xp.multiply(a, g, out=out)


class Gelu(Op):
    widens_half = True
    quiet_fp = True
    def forward(self, x, approximate):
        self.approximate = approximate
        self.save_for_backward(x, None)
        native = native_kernel('gelu', x)
        if native is not None:
            return native(x, approximate == 'tanh')
        t = x.dtype.type
        if approximate == 'tanh':
            inner = t(_SQRT_2_OVER_PI) * (x + t(_GELU_C) * x * x * x)
            return t(0.5) * x * (1 + xp.tanh(inner))
        if x.dtype == np.float32:
            if not self.needs_input_grad[0]:
                return run_blocked(_gelu_kernel, (x,), x.dtype)
            # Phi is saved for backward (and released with the saved tensors): a float32
            # array more per GELU, and backward gets 3x cheaper (no second erfc fit)
            cdf = xp.empty(x.shape, x.dtype)
            self.save_for_backward(x, cdf)
            return run_blocked(_gelu_keeping_cdf_kernel, (x, cdf), x.dtype)
        return t(0.5) * x * (1 + _sp.erf(x * t(_INV_SQRT_2)))

    def backward(self, g):
        x, cdf = self.saved_tensors
        native = native_kernel('gelu_backward', x) if fm.is_array(g) else None
        if native is not None:
            return native(g, x, self.approximate == 'tanh')
        if cdf is not None and fm.is_array(g):
            return run_blocked(_gelu_backward_kernel, (g, x, cdf), x.dtype, scratch=1)
        if self.approximate == 'tanh':
            x2 = x * x
            th = fm.tanh((x + x2 * x * _GELU_C) * _SQRT_2_OVER_PI)
            d_inner = (x2 * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
            return g * ((th + 1) * 0.5 + x * 0.5 * (1 - th * th) * d_inner)
        cdf = (_erf(x * _INV_SQRT_2) + 1) * 0.5
        pdf = fm.exp(x * x * -0.5) * _INV_SQRT_2PI
        return g * (cdf + x * pdf)


def gelu(input, approximate='none'):
    if approximate not in ('none', 'tanh'):
        raise RuntimeError('approximate argument must be either none or tanh.')
    _float_only(input, 'GeluKernelImpl')
    return Gelu.apply(input, approximate=approximate)


class Silu(Op):
    widens_half = True
    quiet_fp = True
    def forward(self, x):
        self.save_for_backward(x)
        return x * _sigmoid(x)

    def backward(self, g):
        x, = self.saved_tensors
        s = _sigmoid(x)
        return g * (s * (x * (1 - s) + 1))


def silu(input, inplace=False):
    _float_only(input, 'silu_cpu')
    return Silu.apply_(input) if inplace else Silu.apply(input)


class MishOp(Op):
    widens_half = True
    node_name = 'MishBackward0'
    quiet_fp = True
    def forward(self, x):
        self.save_for_backward(x)
        return x * xp.tanh(_softplus_arr(x))

    def backward(self, g):
        x, = self.saved_tensors
        if fm.is_array(x):
            sp = _softplus_arr(x)
        else:
            sp = SoftplusOp.apply(x, beta=1.0, threshold=20.0)
        t = fm.tanh(sp)
        return g * (t + x * (1 - t * t) * _sigmoid(x))


def mish(input, inplace=False):
    _float_only(input, 'mish_cpu')
    return MishOp.apply_(input) if inplace else MishOp.apply(input)


class SoftplusOp(Op):
    widens_half = True
    node_name = 'SoftplusBackward0'
    quiet_fp = True
    def forward(self, x, beta, threshold):
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(x)
        t = x.dtype.type
        bx = x * t(beta)
        soft = _softplus_arr(bx) if beta == 1 else _softplus_arr(bx) / t(beta)
        return xp.where(bx > threshold, x, soft)

    def backward(self, g):
        x, = self.saved_tensors
        bx = x * self.beta if self.beta != 1 else x
        linear = fm.unwrap(bx) > self.threshold
        return fm.where(linear, g, g * _sigmoid(bx))


def softplus(input, beta=1.0, threshold=20.0):
    _float_only(input, 'softplus_cpu')
    return SoftplusOp.apply(input, beta=beta, threshold=threshold)


class LogSigmoidOp(Op):
    widens_half = True
    node_name = 'LogSigmoidBackward0'
    quiet_fp = True
    def forward(self, x):
        self.save_for_backward(x)
        return -_softplus_arr(-x)

    def backward(self, g):
        x, = self.saved_tensors
        return g * _sigmoid(-x)


def logsigmoid(input):
    _float_only(input, 'log_sigmoid_cpu')
    return LogSigmoidOp.apply(input)


_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


class HardsigmoidOp(Op):
    widens_half = True
    node_name = 'HardsigmoidBackward0'
    def forward(self, x):
        self.save_for_backward(x)
        t = x.dtype.type
        return xp.clip(x + t(3), t(0), t(6)) / t(6)

    def backward(self, g):
        x, = self.saved_tensors
        x = fm.unwrap(x)
        # PyTorch scales by the float constant 1/6 whatever the dtype
        return g * (((x > -3) & (x < 3)) * _ONE_SIXTH_F32).astype(x.dtype)


def hardsigmoid(input, inplace=False):
    _float_only(input, 'hardsigmoid_cpu')
    return HardsigmoidOp.apply_(input) if inplace else HardsigmoidOp.apply(input)


class HardswishOp(Op):
    widens_half = True
    node_name = 'HardswishBackward0'
    def forward(self, x):
        self.save_for_backward(x)
        t = x.dtype.type
        return x * xp.clip(x + t(3), t(0), t(6)) / t(6)

    def backward(self, g):
        x, = self.saved_tensors
        xa = fm.unwrap(x)
        mid = (xa >= -3) & (xa <= 3)
        return g * fm.where(mid, x / 3.0 + 0.5, (xa > 3).astype(xa.dtype))


def hardswish(input, inplace=False):
    _float_only(input, 'hardswish_cpu')
    return HardswishOp.apply_(input) if inplace else HardswishOp.apply(input)


class HardshrinkOp(Op):
    widens_half = True
    node_name = 'HardshrinkBackward0'
    def forward(self, x, lambd):
        keep = xp.abs(x) > lambd
        self.keep = keep
        return xp.where(keep, x, x.dtype.type(0))

    def backward(self, g):
        return g * self.keep


@method('hardshrink')
def hardshrink(input, lambd=0.5):
    _float_only(input, 'hardshrink_cpu')
    return HardshrinkOp.apply(input, lambd=lambd)


class SoftshrinkOp(Op):
    widens_half = True
    node_name = 'SoftshrinkBackward0'
    def forward(self, x, lambd):
        t = x.dtype.type
        keep = xp.abs(x) > lambd
        self.keep = keep
        return xp.where(keep, x - xp.sign(x) * t(lambd), t(0))

    def backward(self, g):
        return g * self.keep


def softshrink(input, lambd=0.5):
    _float_only(input, 'softshrink_check')
    if lambd < 0:
        name = input.dtype.legacy_name[:-6] if hasattr(input.dtype, 'legacy_name') else 'Float'
        raise RuntimeError(f'lambda must be in range [0, 3.40282e+38] for input dtype {name}, '
                           f'but found {lambd}')
    return SoftshrinkOp.apply(input, lambd=lambd)


def softsign(input):
    """``input / (1 + |input|)`` (a composite in PyTorch too: DivBackward0)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``input - tanh(input)`` (a composite in PyTorch too: SubBackward0)."""
    return input - input.tanh()


class Glu(Op):
    """``a * sigmoid(b)`` for the halves ``a``, ``b`` of the input along ``dim``."""
    widens_half = True

    def forward(self, x, dim):
        self.dim = dim
        h = x.shape[dim] // 2
        a, b = xp.split(x, [h], axis=dim)
        self.save_for_backward(x)
        return a * _sigmoid(b)

    def backward(self, g):
        x, = self.saved_tensors
        d = self.dim
        h = x.shape[d] // 2
        lead = (slice(None),) * d
        a, b = x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]
        s = _sigmoid(b)
        ga = g * s
        return _cat([ga, ga * a * (1 - s)], d)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError('glu does not support scalars because halving size must be even')
    _float_only(input, 'glu_cpu')
    d = _wrap_dim(dim, input.ndim, 'glu')
    if input.shape[d] % 2:
        raise RuntimeError(f'Halving dimension must be even, but dimension {d} is size '
                           f'{input.shape[d]}')
    return Glu.apply(input, dim=d)


def tanh(input):
    return _ops.tanh(input)


def sigmoid(input):
    return _ops.sigmoid(input)


__all__ = ['relu', 'relu_', 'relu6', 'hardtanh', 'hardtanh_', 'leaky_relu', 'leaky_relu_',
           'elu', 'elu_', 'selu', 'selu_', 'celu', 'celu_', 'threshold', 'threshold_',
           'rrelu', 'rrelu_', 'prelu', 'gelu', 'silu', 'mish', 'softplus', 'logsigmoid',
           'hardsigmoid', 'hardswish', 'hardshrink', 'softshrink', 'softsign', 'tanhshrink',
           'glu', 'tanh', 'sigmoid', 'softmax', 'log_softmax', 'softmin', 'gumbel_softmax']
