"""Dropout and its variants: element-wise, channel-wise (1d/2d/3d), alpha (SELU-preserving).

Masks are drawn from dynagrad's default generator as PyTorch's CPU dropout draws them (the
``bernoulli_(1 - p)`` stream: one float64 uniform per mask element), so after the same
``manual_seed`` the masks, and the outputs, equal PyTorch's bit for bit. As in PyTorch,
out of training, with ``p == 0`` or on an empty input the input itself is returned; otherwise the output is ``input * noise`` (``MulBackward0``), plus a shift for
alpha dropout (``AddBackward0``), and the gradient is ``grad * noise`` with the same noise.
"""
import warnings

from ...autograd.batched import state as _vmap, vmap_function
from ...autograd.function import Op
from ...backend import native_kernel, xp
from ...ops.random import bernoulli_mask, native_draw

# -alpha * scale of SELU: the value alpha dropout sets dropped elements to (before a, b)
_ALPHA_P = 1.7580993408473766


class DropoutMul(Op):
    """``x * noise (+ shift)`` for a fixed, drawn ``noise`` broadcast against ``x``."""
    widens_half = True
    node_name = 'MulBackward0'

    def forward(self, x, noise, shift=None):
        self.noise = noise
        out = x * noise
        if shift is not None:
            out += shift
        return out

    def backward(self, g):
        return g * self.noise


class DropoutDraw(Op):
    """``dropout`` as one op that draws its own mask (the same draws, the same arithmetic as
    ``_dropout``): what ``dynagrad.compile`` records for it, so a replay draws each mask
    from the default generator where eager draws it, with no eager island around it. Eager
    runs it too where the native kernels run: the draw, the scaling and the product are
    then one pass (``native/random.py``), the generator advanced in place."""
    widens_half = True
    node_name = 'MulBackward0'
    draws_random = True     # a replay must run it even when nothing reads its result

    def forward(self, x, p):
        fused = native_kernel('dropout', x) if x.flags.c_contiguous else None
        if fused is not None:
            # draw, compare, scale and multiply in one pass: the same mask, the same noise
            drawn = native_draw(None, fused, 1.0 - p, x)
            if drawn is not False:
                out, self.noise = drawn
                return out
        self.noise = noise = _keep(x.shape, p, x.dtype) / x.dtype.type(1.0 - p)
        return x * noise

    def backward(self, g):
        return g * self.noise


def _dropout_captured(input, p=0.5, training=True, inplace=False):
    """The capture rule of ``dropout``: its usual case as ``DropoutDraw``; None for the
    others (an eager island)."""
    if inplace or not training or not 0 < p < 1 or input.numel() == 0 or \
            input._data.dtype.kind != 'f':
        return None
    return DropoutDraw.apply(input, p=p)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f'dropout probability has to be between 0 and 1, but got {p}')


def _keep(shape, p, dtype):
    """A 0/1 mask of ``shape`` (1 with probability ``1 - p``), from the default generator."""
    return bernoulli_mask(None, 1.0 - p, shape, dtype)


def _dropout(input, p, training, inplace, noise_shape, alpha=False):
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    x = input._data
    if x.dtype.kind not in 'fV':
        from ...ops.pointwise import type_name
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f'{type_name(x)}')
    dtype = x.dtype
    if not (alpha or inplace or _vmap.active) and p < 1 and noise_shape == x.shape and \
            native_kernel('dropout', x) is not None:
        return DropoutDraw.apply(input, p=p)    # the mask drawn inside the op's one kernel
    shift = None
    if p == 1:
        noise = xp.zeros((1,) * x.ndim, dtype)
    else:
        keep = _keep(noise_shape, p, dtype)
        if alpha:
            a = 1.0 / xp.sqrt((_ALPHA_P * _ALPHA_P * p + 1) * (1 - p))
            shift = ((keep - 1) * dtype.type(_ALPHA_P * a)
                     + dtype.type(_ALPHA_P * a * p)).astype(dtype, copy=False)
            noise = keep * dtype.type(a)
        else:
            noise = keep / dtype.type(1.0 - p)   # PyTorch divides; the reciprocal rounds apart
    op = DropoutMul if shift is None else DropoutMul.named('AddBackward0')
    if inplace:
        return op.apply_(input, noise=noise, shift=shift)
    return op.apply(input, noise=noise, shift=shift)


def _feature_shape(input):
    if input.ndim < 2:
        raise RuntimeError('Feature dropout requires at least 2 dimensions in the input')
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


@vmap_function('dropout')
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p``; scale the rest by ``1 / (1 - p)``."""
    return _dropout(input, p, training, inplace, input._data.shape)


dropout._capture_rule = _dropout_captured


@vmap_function('dropout')
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements become
    ``-alpha * scale`` of SELU, then an affine map restores the moments."""
    return _dropout(input, p, training, inplace, tuple(input.shape), alpha=True)


def _feature(input, p, training, inplace, alpha=False):
    _check_p(p)
    return _dropout(input, p, training, inplace, _feature_shape(input), alpha)


def _unbatched(fn, input, p, training, inplace, alpha=False):
    """Run channel dropout on ``input`` with a batch dim of 1 added, then removed."""
    from ... import ops as _ops
    if inplace:   # the noise of one sample, written straight into the input
        shape = tuple(input.shape[:1]) + (1,) * (input.ndim - 1)
        return _dropout(input, p, training, True, shape, alpha)
    return _ops.squeeze(_feature(_ops.unsqueeze(input, 0), p, training, False, alpha), 0)


@vmap_function('dropout')
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f'dropout1d: Expected 2D or 3D input, but received a {input.ndim}D '
                           'input. Note that dropout1d exists to provide channel-wise dropout '
                           'on inputs with 1 spatial dimension, a channel dimension, and an '
                           'optional batch dimension (i.e. 2D or 3D inputs).')
    if input.ndim == 2:
        return _unbatched(dropout1d, input, p, training, inplace)
    return _feature(input, p, training, inplace)


@vmap_function('dropout')
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, H, W)`` input with probability ``p``.

    As in PyTorch, a 3-D input is taken as ``(N, C, L)`` (1-D channel dropout), with a
    warning; other ranks warn as deprecated.
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f'dropout2d: Received a {input.ndim}-D input to dropout2d, which is '
                      'deprecated and will result in an error in a future release. To retain '
                      'the behavior and silence this warning, please use dropout instead. Note '
                      'that dropout2d exists to provide channel-wise dropout on inputs with 2 '
                      'spatial dimensions, a channel dimension, and an optional batch dimension '
                      '(i.e. 3D or 4D inputs).', UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn('dropout2d: Received a 3D input to dropout2d and assuming that '
                      'channel-wise 1D dropout behavior is desired - input is interpreted as '
                      'shape (N, C, L), where C is the channel dim. This behavior will change in '
                      'a future release to interpret the input as one without a batch '
                      'dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout '
                      'behavior, please switch to using dropout1d instead.', UserWarning,
                      stacklevel=2)
    return _feature(input, p, training, inplace)


@vmap_function('dropout')
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f'dropout3d: Received a {input.ndim}-D input to dropout3d, which is '
                      'deprecated and will result in an error in a future release. To retain '
                      'the behavior and silence this warning, please use dropout instead. Note '
                      'that dropout3d exists to provide channel-wise dropout on inputs with 3 '
                      'spatial dimensions, a channel dimension, and an optional batch dimension '
                      '(i.e. 4D or 5D inputs).', UserWarning, stacklevel=2)
    if input.ndim != 5:
        return _unbatched(dropout3d, input, p, training, inplace)
    return _feature(input, p, training, inplace)


@vmap_function('dropout')
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1)."""
    return _feature(input, p, training, inplace, alpha=True)


__all__ = ['dropout', 'alpha_dropout', 'dropout1d', 'dropout2d', 'dropout3d',
           'feature_alpha_dropout']
