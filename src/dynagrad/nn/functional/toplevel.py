"""The forms of nn.functional ops that PyTorch also has at top level (``torch.softmax``,
``torch.conv2d``, ``torch.dropout``, ...), with the top-level signatures.

These follow ATen's schemas rather than nn.functional's Python signatures: ``dim`` of the
softmax family is required, dropout takes ``(input, p, train)``, losses take ``reduction``
as an int (0 none, 1 mean, 2 sum), batch/instance norm take the affine parameters before
the running statistics, and the ``native_*`` forms return their saved statistics too.
Every one is a thin wrapper: the maths lives in nn.functional.

``max_pool3d``, ``channel_shuffle`` and ``native_channel_shuffle`` look their
nn.functional form up when called, so this module imports whatever nn.functional has.
"""
import warnings
from importlib import import_module

from ... import ops
from ...autograd.device_dispatch import device_function
from ...autograd.grad_mode import no_grad
from ...backend import xp
from ...tensor import Tensor, wrap
from . import activation as _act
from . import conv as _conv
from . import distance as _dist
from . import loss as _loss
from . import normalization as _norm
from . import pooling as _pool
from . import sparse as _sparse
from . import vision as _vision
from .rnn import recurrent_layer, recurrent_stack
from ...ops.out_args import give_out, EXACT

# nn.functional binds ``dropout`` and ``linear`` to the functions: reach the modules by import
_drop = import_module(f'{__package__}.dropout')
_lin = import_module(f'{__package__}.linear')

_REDUCTIONS = {0: 'none', 1: 'mean', 2: 'sum'}


def _reduction(value, fn):
    if value in _REDUCTIONS:
        return _REDUCTIONS[value]
    raise ValueError(f'{fn}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {value!r}')


def _stride(stride):
    """ATen's ``stride=[]`` (the default) means "the kernel size", nn.functional's None."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


def _functional():
    from ... import nn
    return nn.functional


# -- activations ---------------------------------------------------------------------------

def softmax(input, dim, dtype=None):
    return _act.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return _act.log_softmax(input, dim, dtype=dtype)


def celu(input, alpha=1.0):
    return _act.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _act.celu_(input, alpha)


def selu(input):
    return _act.selu(input)


def selu_(input):
    return _act.selu_(input)


def relu_(input):
    return _act.relu_(input)


def rrelu(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return _act.rrelu_with_generator(input, lower, upper, training, False, generator)


def rrelu_(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return _act.rrelu_with_generator(input, lower, upper, training, True, generator)


def threshold(input, threshold, value):
    return _act.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _act.threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    return _act.hardshrink(input, lambd)


def prelu(input, weight):
    return _act.prelu(input, weight)


# -- dropout -------------------------------------------------------------------------------

def dropout(input, p, train):
    return _drop.dropout(input, p, train)


def dropout_(input, p, train):
    return _drop.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _drop.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _drop.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1) of an input of any rank >= 2."""
    return _drop._feature(input, p, train, False)


def feature_dropout_(input, p, train):
    return _drop._feature(input, p, train, True)


def feature_alpha_dropout(input, p, train):
    return _drop.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _drop.feature_alpha_dropout(input, p, train, inplace=True)


def native_dropout(input, p, train):
    """``(output, mask)``: the mask (bool) says which elements were kept. ``train=None``
    counts as training, as in PyTorch; out of training the mask is all True."""
    _drop._check_p(p)
    data = input._data
    if train is False:
        keep = wrap(xp.ones(tuple(input.shape), bool))
        return _drop.DropoutMul.named('NativeDropoutBackward0').apply(
            input, noise=data.dtype.type(1)), keep
    kept = _drop._keep(tuple(input.shape), p, data.dtype)
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    noise = kept * data.dtype.type(scale)
    out = _drop.DropoutMul.named('NativeDropoutBackward0').apply(input, noise=noise)
    return out, wrap(kept.astype(bool))


# -- normalization -------------------------------------------------------------------------

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training,
                            momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _norm.instance_norm(input, running_mean, running_var, weight, bias,
                               use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
               cudnn_enable=True):
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _norm.rms_norm(input, normalized_shape, weight, eps)


def _mean_rstd(x, dims, eps, keepdim):
    mean = x.mean(dim=dims, keepdim=keepdim)
    var = x.var(dim=dims, unbiased=False, keepdim=keepdim)
    return mean, (var + eps).rsqrt()


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """``(output, save_mean, save_invstd)``: the batch's per-channel mean and
    ``1 / sqrt(var + eps)`` in training, empty tensors out of training."""
    if training:
        with no_grad():
            dims = [0] + list(range(2, input.ndim))
            mean, invstd = _mean_rstd(input, dims, eps, False)
    else:
        mean = invstd = ops.empty(0, dtype=input.dtype)
    out = _norm.batch_norm(input, running_mean, running_var, weight, bias, training,
                           momentum, eps)
    return out, mean, invstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)``, the statistics shaped as the input with the normalized
    dims kept as size 1."""
    out = _norm.layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(_norm._normalized_shape(normalized_shape, 'native_layer_norm'))
    with no_grad():
        mean, rstd = _mean_rstd(input, list(range(input.ndim - k, input.ndim)), eps, True)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)``, the statistics of shape ``(N, group)``."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f'native_group_norm: expected input with {N} * {C} * {HxW} = '
                           f'{N * C * HxW} elements (N * C * HxW), got shape '
                           f'{list(input.shape)}')
    x = input.reshape(N, C, HxW) if input.ndim < 2 or input.shape[1] != C else input
    out = _norm.group_norm(x, group, weight, bias, eps).reshape(input.shape)
    mean, rstd = _mean_rstd(input.reshape(N, group, -1), [2], eps, False)
    return out, mean, rstd


def native_norm(input, *args, **kwargs):
    # PyTorch has this op for sparse tensors only: a dense CPU input raises there too.
    raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                              "'CPU' backend: native_norm is for sparse tensors, which "
                              'dynagrad does not have; use torch.linalg.vector_norm / '
                              'Tensor.norm')


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, the others of size 1);
    ``dim=-1``: the norm of the whole tensor. Weight normalization's norm."""
    if dim == -1:
        return v.norm(pow)
    nd = v.ndim
    if dim == 0:
        return v.reshape(v.shape[0], -1).norm(pow, 1).reshape((v.shape[0],) + (1,) * (nd - 1))
    if dim == nd - 1:
        return v.reshape(-1, v.shape[-1]).norm(pow, 0).reshape((1,) * (nd - 1) + (v.shape[-1],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# -- convolution and linear ----------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv.conv_transpose1d(input, weight, bias, stride, padding, output_padding,
                                  groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv.conv_transpose2d(input, weight, bias, stride, padding, output_padding,
                                  groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv.conv_transpose3d(input, weight, bias, stride, padding, output_padding,
                                  groups, dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The general convolution: 1, 2 or 3 spatial dims by ``weight``'s rank, transposed or
    not (``output_padding`` is used only when transposed). Unlike conv1d/2d/3d it is not on
    autocast's lists, so it runs in its inputs' dtype inside an autocast region."""
    d = weight.ndim - 2
    if d not in (1, 2, 3):
        raise RuntimeError(f'convolution: expected a weight of 3, 4 or 5 dims (1, 2 or 3 '
                           f'spatial dims), got weight of shape {list(weight.shape)}')
    if transposed:
        return _conv._conv_transposend(d, input, weight, bias, stride, padding,
                                       output_padding, groups, dilation, cast=False)
    return _conv._convnd(d, input, weight, bias, stride, padding, dilation, groups,
                         cast=False)


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution of a (time, batch, channels) input with a (kernel, in, out) weight."""
    if input.ndim != 3:
        raise RuntimeError(f'conv_tbc: Input must have 3 dims: time, batch, in_channel '
                           f'(got shape {list(input.shape)})')
    if weight.ndim != 3:
        raise RuntimeError(f'conv_tbc: Weight tensor must have 3 dims: kernel_width, '
                           f'in_channels, out_channels (got shape {list(weight.shape)})')
    if bias is None or bias.ndim != 1:
        raise RuntimeError('conv_tbc: Bias must be 1-D (out_channels)')
    out = _conv.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)


def bilinear(input1, input2, weight, bias=None):
    return _lin.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input, pad, value=0):
    return _vision.pad(input, list(pad), 'constant', value)


# -- pooling -------------------------------------------------------------------------------

def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    return _pool.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                            count_include_pad)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _pool.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                            return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _functional().max_pool3d(input, kernel_size, _stride(stride), padding, dilation,
                                    ceil_mode)


def adaptive_avg_pool1d(input, output_size):
    return _pool.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """``(output, indices)``: the top-level form always returns the indices."""
    return _pool.adaptive_max_pool1d(input, output_size, return_indices=True)


# -- vision --------------------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    return _vision.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _vision.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    return _functional().channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    return _functional().native_channel_shuffle(input, groups)


_INTERPOLATION = ('bilinear', 'nearest', 'bicubic')
_PADDING = ('zeros', 'border', 'reflection')


def _enum(table, value, what, fn):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(table):
        raise RuntimeError(f'{fn}: {what} must be an int in [0, {len(table)}) '
                           f'({", ".join(f"{i}: {n}" for i, n in enumerate(table))}), '
                           f'got {value!r}')
    return table[value]


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sample`` with the modes as ints: interpolation 0 bilinear, 1 nearest,
    2 bicubic; padding 0 zeros, 1 border, 2 reflection."""
    mode = _enum(_INTERPOLATION, interpolation_mode, 'interpolation_mode', 'grid_sampler')
    pad = _enum(_PADDING, padding_mode, 'padding_mode', 'grid_sampler')
    return _vision.grid_sample(input, grid, mode, pad, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 4:
        raise RuntimeError(f'grid_sampler_2d: expected 4D input, got input of shape '
                           f'{list(input.shape)}')
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 5:
        raise RuntimeError(f'grid_sampler_3d: expected 5D input, got input of shape '
                           f'{list(input.shape)}')
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    return _vision.affine_grid(theta, list(size), align_corners)


# -- distances -----------------------------------------------------------------------------

def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    return _dist.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    return _dist.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    return _dist.pdist(input, p)


# -- losses (reduction as an int: 0 none, 1 mean, 2 sum) -----------------------------------
# PyTorch's top-level losses default to 0 (no reduction), unlike nn.functional's 'mean'.

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    return _loss.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction, 'binary_cross_entropy_with_logits'),
        pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _loss.cosine_embedding_loss(input1, input2, target, margin,
                                       reduction=_reduction(reduction, 'cosine_embedding_loss'))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    return _loss.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                          _reduction(reduction, 'ctc_loss'), zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _loss.hinge_embedding_loss(input, target, margin,
                                      reduction=_reduction(reduction, 'hinge_embedding_loss'))


def kl_div(input, target, reduction=0, *, log_target=False):
    """KL divergence; ``reduction=1`` is the plain mean over all elements (nn.functional's
    'mean', without its advice to use 'batchmean', as PyTorch's top-level form)."""
    name = _reduction(reduction, 'kl_div')
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message="reduction: 'mean' divides")
        return _loss.kl_div(input, target, reduction=name, log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _loss.margin_ranking_loss(input1, input2, target, margin,
                                     reduction=_reduction(reduction, 'margin_ranking_loss'))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_reduction(reduction, 'poisson_nll_loss'))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction(reduction, 'triplet_margin_loss'))


# -- embeddings ----------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` (first here) picked by ``indices``; ``padding_idx=-1``: none."""
    return _sparse.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                             scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Scale the rows of ``input`` read by ``indices`` whose norm exceeds ``max_norm`` down
    to it, in place; returns ``input``."""
    _sparse._check_indices(indices, 'embedding_renorm_')
    with no_grad():
        _sparse._renorm_(input, indices._data.reshape(-1), max_norm, norm_type)
    return input


_BAG_MODES = ('sum', 'mean', 'max')


@device_function
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``(output, offset2bag, bag_size, max_indices)`` with ``mode`` 0 sum, 1 mean, 2 max.

    The last three are the bookkeeping of PyTorch's kernel, given as it gives them: the
    bag of each index (empty for a plain sum of float32 or narrower weights, PyTorch's
    fast path), the number of counted indices per bag (zeros for sum), and per bag and
    feature the row the maximum came from (max), the bag sizes again (mean) or zeros
    (sum).
    """
    name = _enum(_BAG_MODES, mode, 'mode', 'embedding_bag')
    if padding_idx is not None and padding_idx < 0:
        padding_idx = None
    out = _sparse.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, name,
                                sparse, per_sample_weights, include_last_offset, padding_idx)
    return (out,) + _bag_bookkeeping(weight, indices, offsets, name, include_last_offset,
                                     padding_idx, out.shape[0])


def _bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx,
                     n_bags):
    idx = indices._data.reshape(-1)
    if indices.ndim == 2:
        bag = xp.repeat(xp.arange(indices.shape[0]), indices.shape[1])
    else:
        starts = offsets._data.astype('int64')
        if include_last_offset:
            starts = starts[:-1]
        bag = xp.searchsorted(starts, xp.arange(idx.shape[0]), side='right') - 1
    counted = idx != padding_idx if padding_idx is not None else xp.ones(idx.shape, bool)
    # PyTorch's fast path (float32 and narrower, sum, no padding) does not fill offset2bag
    plain_sum = mode == 'sum' and padding_idx is None and weight._data.dtype.itemsize <= 4
    offset2bag = xp.zeros(0, 'int64') if plain_sum else bag.astype('int64')
    if mode == 'sum':
        size = xp.zeros(n_bags, 'int64')
        return wrap(offset2bag), wrap(size), wrap(size.copy())
    size = xp.bincount(bag[counted], minlength=n_bags).astype('int64')
    if mode == 'mean':
        return wrap(offset2bag), wrap(size), wrap(size.copy())
    w = weight._data
    best = xp.zeros((n_bags, w.shape[1]), 'int64')
    found = xp.full((n_bags, w.shape[1]), -xp.inf)
    for i in xp.flatnonzero(counted):   # first maximum wins, as in a left-to-right scan
        row = w[idx[i]]
        better = row > found[bag[i]]
        found[bag[i]] = xp.where(better, row, found[bag[i]])
        best[bag[i]] = xp.where(better, idx[i], best[bag[i]])
    return wrap(offset2bag), wrap(size), wrap(best)


# -- recurrent layers and cells -------------------------------------------------------------

def _is_tensor(x):
    return isinstance(x, Tensor)


def _run_rnn(mode, input, second, rest):
    """Both of PyTorch's overloads: ``(input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first)`` on a padded batch and ``(data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional)`` on a packed one."""
    lstm = mode == 'LSTM'
    packed = _is_tensor(second) and (lstm or (rest and _is_tensor(rest[0])))
    fn = mode.lower()
    if packed:
        if len(rest) != 7:
            raise TypeError(f'{fn}() on packed data takes (data, batch_sizes, hx, params, '
                            f'has_biases, num_layers, dropout, train, bidirectional)')
        hx, params, has_biases, num_layers, p, train, bidirectional = rest
        batch_sizes = [int(b) for b in second.tolist()]
        x = input
    else:
        if len(rest) != 7:
            raise TypeError(f'{fn}() takes (input, hx, params, has_biases, num_layers, '
                            f'dropout, train, bidirectional, batch_first)')
        hx = second
        params, has_biases, num_layers, p, train, bidirectional, batch_first = rest
        if input.ndim != 3:
            raise RuntimeError(f'{fn}: input must have 3 dimensions, got {input.ndim}')
        x = input.transpose(0, 1) if batch_first else input
        T, B = x.shape[0], x.shape[1]
        batch_sizes = [B] * T
        x = x.reshape(T * B, x.shape[2])
    if lstm:
        if len(hx) != 2:
            raise RuntimeError(f'lstm expects two hidden states, got {len(hx)}')
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    out, h_n, c_n = recurrent_stack(mode, x, batch_sizes, h0, c0, params, has_biases,
                                    num_layers, p, train, bidirectional)
    if not packed:
        out = out.reshape(T, B, out.shape[1])
        if batch_first:
            out = out.transpose(0, 1)
    return (out, h_n, c_n) if lstm else (out, h_n)


def lstm(input, hx, params, *args):
    """``(output, h_n, c_n)`` of a multi-layer LSTM from flat weights (PyTorch's order:
    per layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``)."""
    return _run_rnn('LSTM', input, hx, (params,) + args)


def gru(input, hx, params, *args):
    """``(output, h_n)`` of a multi-layer GRU from flat weights."""
    return _run_rnn('GRU', input, hx, (params,) + args)


def rnn_tanh(input, hx, params, *args):
    """``(output, h_n)`` of a multi-layer Elman RNN (tanh) from flat weights."""
    return _run_rnn('RNN_TANH', input, hx, (params,) + args)


def rnn_relu(input, hx, params, *args):
    """``(output, h_n)`` of a multi-layer Elman RNN (ReLU) from flat weights."""
    return _run_rnn('RNN_RELU', input, hx, (params,) + args)


def _cell(mode, input, h, c, w_ih, w_hh, b_ih, b_hh):
    if input.ndim != 2:
        raise RuntimeError(f'{mode.lower()}_cell: expected input of 2 dims (batch, '
                           f'input_size), got shape {list(input.shape)}')
    # the fused layer takes both biases or neither: a missing one of a pair adds nothing
    if (b_ih is None) != (b_hh is None):
        b_ih = ops.zeros_like(b_hh) if b_ih is None else b_ih
        b_hh = ops.zeros_like(b_ih) if b_hh is None else b_hh
    return recurrent_layer(mode, input, h, c, w_ih, w_hh, b_ih, b_hh, None,
                           (input.shape[0],), False)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: ``hx = (h, c)`` -> ``(h', c')``."""
    h, c = hx
    _, h1, c1 = _cell('LSTM', input, h, c, w_ih, w_hh, b_ih, b_hh)
    return h1, c1


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell('GRU', input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell('RNN_TANH', input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell('RNN_RELU', input, hx, None, w_ih, w_hh, b_ih, b_hh)[1]


__all__ = [
    'softmax', 'log_softmax', 'celu', 'celu_', 'selu', 'selu_', 'relu_', 'rrelu', 'rrelu_',
    'threshold', 'threshold_', 'hardshrink', 'prelu',
    'dropout', 'dropout_', 'alpha_dropout', 'alpha_dropout_', 'feature_dropout',
    'feature_dropout_', 'feature_alpha_dropout', 'feature_alpha_dropout_', 'native_dropout',
    'batch_norm', 'instance_norm', 'layer_norm', 'group_norm', 'rms_norm',
    'native_batch_norm', 'native_layer_norm', 'native_group_norm', 'native_norm',
    'norm_except_dim',
    'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
    'convolution', 'conv_tbc', 'bilinear', 'constant_pad_nd',
    'avg_pool1d', 'max_pool1d', 'max_pool1d_with_indices', 'max_pool2d', 'max_pool3d',
    'adaptive_avg_pool1d', 'adaptive_max_pool1d',
    'pixel_shuffle', 'pixel_unshuffle', 'channel_shuffle', 'native_channel_shuffle',
    'grid_sampler', 'grid_sampler_2d', 'grid_sampler_3d', 'affine_grid_generator',
    'cosine_similarity', 'pairwise_distance', 'pdist',
    'binary_cross_entropy_with_logits', 'cosine_embedding_loss', 'ctc_loss',
    'hinge_embedding_loss', 'kl_div', 'margin_ranking_loss', 'poisson_nll_loss',
    'triplet_margin_loss',
    'embedding', 'embedding_renorm_', 'embedding_bag',
    'lstm', 'gru', 'rnn_tanh', 'rnn_relu', 'lstm_cell', 'gru_cell', 'rnn_tanh_cell',
    'rnn_relu_cell',
]

# PyTorch's top-level forms of these take out= (dynagrad.ops.out_args)
give_out(globals(), 'threshold')
give_out(globals(), 'softmax log_softmax hardshrink', EXACT)
del give_out, EXACT

# torch's parser takes axis= and keepdims= for these too (torch.softmax(x, axis=1)), and
# Tensor.softmax and friends, bound by this package, only now exist
from ...ops.keywords import install as _install_keywords  # noqa: E402
_install_keywords((import_module(__name__),))
