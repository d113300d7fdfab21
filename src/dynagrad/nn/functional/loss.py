"""Loss functions.

The common losses are fused ops with their own node (``MseLossBackward0``,
``BinaryCrossEntropyWithLogitsBackward0``, ...): one forward, one backward formula, both
numerically stable. Losses that PyTorch composes from tensor ops (``l1_loss``,
``kl_div``, the margin losses, ...) are composed the same way here, so their gradients,
double gradients and node names follow from those ops. ``ctc_loss`` runs the
forward-backward algorithm in log space, vectorised over the batch and the extended
label sequence.
"""
import math
import warnings

import numpy as np

from ...autograd.batched import vmap_function
from ...backend import native_kernel, xp
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...autograd.grad_mode import state as _grad_state
from ...autograd.forward_ad import state as _forward_ad_state
from ...ops import formula as fm
from ...ops.pointwise import not_implemented
from ...tensor import Tensor, wrap
from .activation import log_softmax
from ... import ops as _ops

_log1p = fm.dual(xp.log1p, 'log1p')
_EPSILON = 1e-12


def _abs(x):
    return x * fm.sign(x)


def _sigmoid(x):
    """Dual sigmoid: ``0.5 + 0.5 tanh(x / 2)`` (no overflow for large |x|)."""
    return fm.tanh(x * 0.5) * 0.5 + 0.5


def _softplus_neg(x):
    """Dual, stable ``log(1 + exp(-x))`` = ``log1p(exp(-|x|)) + max(-x, 0)``."""
    xa = fm.unwrap(x)
    return _log1p(fm.exp(-_abs(x))) + fm.where(xa < 0, -x, 0.0)


# -- reduction -----------------------------------------------------------------------------

_REDUCTIONS = ('mean', 'sum', 'none')


def _reduction(size_average, reduce, reduction):
    """``reduction``, or the one the legacy ``size_average``/``reduce`` flags select."""
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      "reduction='" + _legacy(size_average, reduce) + "' instead.",
                      UserWarning, stacklevel=3)
        return _legacy(size_average, reduce)
    if reduction not in ('mean', 'sum', 'none'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    return reduction


def _legacy(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return 'none'
    return 'mean' if size_average else 'sum'


def _reduce(loss, reduction):
    if reduction == 'mean':
        return loss.mean()
    if reduction == 'sum':
        return loss.sum()
    return loss


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and isinstance(x, float) else None
    from ...ops.creation import tensor
    return tensor(x, dtype=dtype)


def _no_grad_arg(t, fn, arg):
    if isinstance(t, Tensor) and t.requires_grad and _grad_state.grad_enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _check_same_size(input, target, op):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f'Using a target size ({_size(target)}) that is different to the input '
                      f'size ({_size(input)}). This will likely lead to incorrect results due '
                      'to broadcasting. Please ensure they have the same size.', UserWarning,
                      stacklevel=3)


class _DivScalar(Op):
    """``x / number`` as torch's C++ losses record it (``DivBackward1``)."""
    widens_half = True
    quiet_fp = True
    node_name = 'DivBackward1'

    def forward(self, x, other):
        self.other = other
        return x / other

    def backward(self, g):
        return g * (1.0 / self.other) if self.other else g * float('nan'), None


def _size(t):
    return f'torch.Size({list(t.shape)})'


class _PointwiseLoss(Op):
    """An elementwise loss ``l(x, t)`` and its reduction, fused into one node."""
    quiet_fp = True
    promotes = True

    def _reduce(self, loss, reduction):
        self.reduction = reduction
        if reduction == 'none':
            return loss
        self.n = loss.size
        if reduction == 'sum':
            return loss.sum()
        # sum / n, not mean(): an empty loss gives nan as in PyTorch, without NumPy's
        # "Mean of empty slice" warning (the same arithmetic otherwise)
        return loss.sum() / loss.dtype.type(self.n)

    def _scale(self, g):
        """The upstream gradient per element of the unreduced loss."""
        if self.reduction == 'mean' and self.n:
            return g * (1.0 / self.n)
        return g


# -- regression losses -----------------------------------------------------------------------

class MseLoss(_PointwiseLoss):

    def forward(self, x, t, reduction='mean'):
        self.save_for_backward(x, t)
        d = x - t
        return self._reduce(d * d, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        gd = (x - t) * (self._scale(g) * 2.0)
        return gd, (-gd if self.needs_input_grad[1] else None)


class SmoothL1LossOp(_PointwiseLoss):
    node_name = 'SmoothL1LossBackward0'

    def forward(self, x, t, reduction='mean', beta=1.0):
        self.save_for_backward(x, t)
        self.beta = beta
        d = x - t
        ad = xp.abs(d)
        if beta == 0:
            loss = ad
        else:
            loss = xp.where(ad < beta, (0.5 / beta) * d * d, ad - 0.5 * beta)
        return self._reduce(loss, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        d = x - t
        beta = self.beta
        if beta == 0:
            gd = fm.sign(d)
        else:
            gd = fm.where(xp.abs(fm.unwrap(d)) < beta, d * (1.0 / beta), fm.sign(d))
        gd = gd * self._scale(g)
        return gd, (-gd if self.needs_input_grad[1] else None)


class HuberLossOp(_PointwiseLoss):
    node_name = 'HuberLossBackward0'

    def forward(self, x, t, reduction='mean', delta=1.0):
        self.save_for_backward(x, t)
        self.delta = delta
        d = x - t
        ad = xp.abs(d)
        loss = xp.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
        return self._reduce(loss, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        d = x - t
        gd = fm.where(xp.abs(fm.unwrap(d)) < self.delta, d, fm.sign(d) * self.delta)
        gd = gd * self._scale(g)
        return gd, (-gd if self.needs_input_grad[1] else None)


def _pointwise(cls, input, target, reduction, op, **params):
    if tuple(target.shape) != tuple(input.shape):
        _check_same_size(input, target, op)
    return cls.apply(input, target, reduction=reduction, **params)


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    """Mean (or sum, or none) of the squared differences; shapes broadcast as in PyTorch."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        diff = input - target
        return _reduce(diff * diff * weight, reduction)
    return _pointwise(MseLoss, input, target, reduction, 'mse_loss')


def l1_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    """Mean (or sum, or none) of the absolute differences."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        _check_same_size(input, target, 'l1_loss')
    loss = _ops.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0):
    """Squared error below ``beta`` (scaled by 1/beta), absolute error above it."""
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError(f'smooth_l1_loss does not support negative values for beta. '
                           f'(got beta={beta})')
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    return _pointwise(SmoothL1LossOp, input, target, reduction, 'smooth_l1_loss', beta=beta)


def huber_loss(input, target, reduction='mean', delta=1.0, weight=None):
    """Squared error below ``delta``, ``delta``-scaled absolute error above it."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError(f'huber_loss does not support non-positive values for delta. '
                           f'(got delta={delta})')
    if weight is not None:
        return _reduce(HuberLossOp.apply(input, target, reduction='none', delta=delta) * weight,
                       reduction)
    return _pointwise(HuberLossOp, input, target, reduction, 'huber_loss', delta=delta)


# -- binary classification ---------------------------------------------------------------

class BinaryCrossEntropy(_PointwiseLoss):

    def forward(self, x, t, weight=None, reduction='mean'):
        self.save_for_backward(x, t)
        self.weight = weight
        log_x = xp.maximum(xp.log(x), -100.0)
        log_1x = xp.maximum(xp.log1p(-x), -100.0)
        loss = -(t * (log_x - log_1x) + log_1x)
        if weight is not None:
            loss = loss * weight
        return self._reduce(loss, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        g = self._scale(g)
        if self.weight is not None:
            g = g * self.weight
        gx = gt = None
        if self.needs_input_grad[0]:
            xa = fm.unwrap(x)
            denom = x * (1.0 - x)
            gx = (x - t) / fm.where((xa * (1.0 - xa)) < _EPSILON, _EPSILON, denom) * g
        if self.needs_input_grad[1]:
            # unclamped, as PyTorch's: infinite where x is 0 or 1
            gt = (_log1p(-x) - fm.log(x)) * g
        return gx, gt


@vmap_function('pointwise_loss')
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction='mean'):
    """Binary cross entropy of probabilities; each log is clamped to >= -100 as in PyTorch."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f'Using a target size ({_size(target)}) that is different to the '
                         f'input size ({_size(input)}) is deprecated. Please ensure they have '
                         'the same size.')
    x = input._data
    if x.size and not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError('all elements of input should be between 0 and 1 '
                           '(binary_cross_entropy takes probabilities: apply sigmoid first, '
                           'or use binary_cross_entropy_with_logits)')
    w = None
    if weight is not None:
        _no_grad_arg(weight, 'binary_cross_entropy', 'weight')
        w = xp.broadcast_to(fm.unwrap(weight), x.shape).astype(x.dtype, copy=False)
    return BinaryCrossEntropy.apply(input, target, weight=w, reduction=reduction)


class BinaryCrossEntropyWithLogits(_PointwiseLoss):

    def forward(self, x, t, weight=None, pos_weight=None, reduction='mean'):
        self.save_for_backward(x, t)
        self.weight, self.pos_weight = weight, pos_weight
        sp = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)   # -log sigmoid(x)
        if pos_weight is None:
            loss = (1 - t) * x + sp
        else:
            loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * sp
        if weight is not None:
            loss = loss * weight
        return self._reduce(loss, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        g = self._scale(g)
        if self.weight is not None:
            g = g * self.weight
        pw = self.pos_weight
        gx = gt = None
        if self.needs_input_grad[0]:
            s_neg = _sigmoid(-x)
            if pw is None:
                gx = ((1.0 - t) - s_neg) * g
            else:
                gx = ((1.0 - t) - (t * (pw - 1) + 1.0) * s_neg) * g
        if self.needs_input_grad[1]:
            gt = -x if pw is None else _softplus_neg(x) * (pw - 1) - x
            gt = gt * g
        return gx, gt


@vmap_function('pointwise_loss')
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction='mean', pos_weight=None):
    """Sigmoid then binary cross entropy, fused in the stable log-sum-exp form."""
    if autocast_state.active:
        input, target, weight, pos_weight = autocast_args('fp32', input, target, weight, pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f'Target size ({_size(target)}) must be the same as input size '
                         f'({_size(input)})')
    dt = input._data.dtype
    w = pw = None
    if weight is not None:
        _no_grad_arg(weight, 'binary_cross_entropy_with_logits', 'weight')
        w = fm.unwrap(weight).astype(dt, copy=False)
    if pos_weight is not None:
        _no_grad_arg(pos_weight, 'binary_cross_entropy_with_logits', 'pos_weight')
        pw = fm.unwrap(pos_weight).astype(dt, copy=False)
    if w is not None or pw is not None:
        shape = np.broadcast_shapes(input.shape, *(a.shape for a in (w, pw) if a is not None))
        if shape != tuple(input.shape):
            raise RuntimeError(f'binary_cross_entropy_with_logits: weight/pos_weight do not '
                               f'broadcast to the input shape {list(input.shape)}')
    return BinaryCrossEntropyWithLogits.apply(input, target, weight=w, pos_weight=pw,
                                              reduction=reduction)


class SoftMarginLossOp(_PointwiseLoss):
    node_name = 'SoftMarginLossBackward0'

    def forward(self, x, t, reduction='mean'):
        self.save_for_backward(x, t)
        z = -t * x
        loss = xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(z, 0)
        return self._reduce(loss, reduction)

    def backward(self, g):
        x, t = self.saved_tensors
        return -t * _sigmoid(-(x * t)) * self._scale(g), None


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """``log(1 + exp(-target * input))``: two-class logistic loss with targets in {1, -1}."""
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _no_grad_arg(target, 'soft_margin_loss', 'target')
    _check_broadcast(input, target)
    if isinstance(target, Tensor) and target._data.dtype != input._data.dtype:
        target = target.to(input.dtype)     # the loss has the input's dtype, as in PyTorch
    return SoftMarginLossOp.apply(input, target, reduction=reduction)


def _check_broadcast(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    for k in range(1, min(len(sa), len(sb)) + 1):
        if sa[-k] != sb[-k] and sa[-k] != 1 and sb[-k] != 1:
            dim = max(len(sa), len(sb)) - k
            raise RuntimeError(f'The size of tensor a ({sa[-k]}) must match the size of tensor '
                               f'b ({sb[-k]}) at non-singleton dimension {dim}')


def _logsigmoid(x):
    """Composed, stable ``log(sigmoid(x))`` = ``-(log1p(exp(-|x|)) + relu(-x))``."""
    return -(_ops.log1p(_ops.exp(-_ops.abs(x))) + _ops.relu(-x))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction='mean'):
    """Per-class logistic losses averaged over the classes (last dimension)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_broadcast(input, target)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


# -- classification over classes ------------------------------------------------------------

class NllLoss(Op):
    """Negative log-likelihood of class indices, with weights and an ignored index."""
    widens_half = True
    quiet_fp = True
    node_name = 'NllLossBackward0'

    def forward(self, logp, target, weight=None, ignore_index=-100, reduction='mean'):
        keep = target != ignore_index
        safe = xp.where(keep, target, 0)
        w = keep.astype(logp.dtype) if weight is None else weight[safe] * keep
        # The picked log-probabilities: class axis 1 (or 0 for one unbatched sample).
        axis = 1 if logp.ndim > 1 else 0
        picked = xp.take_along_axis(logp, xp.expand_dims(safe, axis), axis).squeeze(axis)
        losses = -w * picked
        self.mask = (xp.arange(logp.shape[axis]).reshape(
            (-1,) + (1,) * (logp.ndim - axis - 1)) == xp.expand_dims(safe, axis))
        self.reduction = reduction
        if reduction == 'none':
            self.scale = w
            return losses
        if reduction == 'sum':
            self.scale = w
            return losses.sum()
        total = w.sum()
        self.scale = w / total
        return losses.sum() / total

    def backward(self, g):
        scale = self.scale
        if self.reduction == 'none':
            per_item = -g * scale
        else:
            per_item = -(g * scale) if fm.is_array(g) else g * -scale
        axis = 1 if self.mask.ndim > 1 else 0
        spread = per_item.reshape(per_item.shape[:axis] + (1,) + per_item.shape[axis:])
        return fm.where(self.mask, spread, 0.0), None, None


def _class_dims(input, op):
    if input.ndim < 1:
        raise ValueError(f'Expected 1 or more dimensions (got {input.ndim})')
    return input.shape[1] if input.ndim > 1 else input.shape[0]


def _scalar_name(t):
    return t.type().rsplit('.', 1)[-1][:-6]   # 'Float', 'Half', 'BFloat16'


def _check_class_indices(t, n_classes, ignore_index, fn):
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f'Target {int(t[bad].flat[0])} is out of bounds ({fn} over '
                         f'{n_classes} classes)')


def _checked_targets(input, target, weight, ignore_index, fn, check_indices=True):
    """Class-index targets (and class weights) as arrays, after PyTorch's checks (the
    indices' range left to the caller without ``check_indices``)."""
    n_classes = _class_dims(input, fn)
    t = target._data
    if t.dtype.kind not in 'iu' or t.dtype not in (np.int64, np.uint8):
        if t.dtype.kind in 'iu':
            raise RuntimeError(f'expected target dtype to be Long or Byte, but got '
                               f'{target.dtype} ({fn}: cast the target with .long())')
        raise RuntimeError(f'{fn}: expected target of integer (Long) dtype, got '
                           f'{target.dtype}; for class probabilities use cross_entropy')
    batch = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    if tuple(target.shape) != tuple(batch):
        if input.ndim > 1 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
            raise ValueError(f'Expected input batch_size ({input.shape[0]}) to match target '
                             f'batch_size ({target.shape[0] if target.ndim else 1}): input of '
                             f'shape {list(input.shape)}, target of shape '
                             f'{list(target.shape)}')
        raise RuntimeError(f'{fn}: expected target of shape {list(batch)} for input of '
                           f'shape {list(input.shape)}, got {list(target.shape)}')
    if check_indices:
        _check_class_indices(t, n_classes, ignore_index, fn)
    w = None
    if weight is not None:
        if tuple(weight.shape) != (n_classes,):
            raise RuntimeError(f'weight tensor should be defined either for all {n_classes} '
                               f'classes or no classes but got weight tensor of shape: '
                               f'{list(weight.shape)}')
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(f'expected scalar type {_scalar_name(input)} but found '
                               f'{_scalar_name(weight)} ({fn}: cast the weight to the input '
                               f'dtype)')
        w = weight._data
    return t.astype(np.int64, copy=False), w


@vmap_function('class_loss')
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction='mean'):
    """Negative log-likelihood of class indices; input (C), (N, C) or (N, C, d1, ...)."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    t, w = _checked_targets(input, target, weight, ignore_index, 'nll_loss')
    op = NllLoss
    if input.ndim > 2:   # torch runs K-dim inputs through its 2-D kernel, viewed back for 'none'
        op = op.named('ViewBackward0' if input.ndim != 4 and reduction == 'none'
                      else 'NllLoss2DBackward0')
    return op.apply(input, t, weight=w, ignore_index=ignore_index, reduction=reduction)


def _class_view(weight, ndim):
    """``weight`` (C,) shaped to broadcast along the class dim of an ``ndim``-dim input."""
    if ndim <= 1:
        return weight
    return weight.reshape((1, -1) + (1,) * (ndim - 2))


def _out_of_bounds(t, bad, n_classes):
    return IndexError(f'Target {int(t[bad])} is out of bounds (nll_loss over {n_classes} '
                      f'classes)')


class CrossEntropy(Op):
    """Cross-entropy of (N, C) logits in one node: log-sum-exp forward, a softmax-based
    backward. Class indices (weighted, an ignored index, label smoothing) or, with
    ``soft``, class probabilities (then ``target`` is a float array: no gradient flows to
    it). One pass shorter each way than log_softmax + nll_loss; named as torch's output
    node (the caller picks the name: it depends on the variant)."""
    widens_half = True
    quiet_fp = True
    node_name = 'NllLossBackward0'

    def forward(self, x, target, weight=None, ignore_index=-100, reduction='mean',
                smoothing=0.0, soft=False, checked=True):
        if weight is not None and weight.dtype != x.dtype:    # float16 widened to float32
            weight = weight.astype(x.dtype)
        if soft and target.dtype != x.dtype:
            target = target.astype(x.dtype)
        self.target, self.weight, self.ignore_index = target, weight, ignore_index
        self.reduction, self.smoothing, self.soft = reduction, smoothing, soft
        self.save_for_backward(x)  # only read under create_graph (double backward)
        store = self.needs_input_grad[0]     # the softmax, backward's
        native = native_kernel('soft_cross_entropy' if soft else 'cross_entropy',
                               x) if x.size else None
        # backward's softmax: ``probs`` (NumPy path) or, from the kernels, the pair
        # (unnormalised exponentials, 1 / each row's sum) in ``native_softmax``
        probs = self.native_softmax = None
        if native is not None:
            x = xp.ascontiguousarray(x)
            if soft:
                losses, self.native_softmax, total = native(
                    x, xp.ascontiguousarray(target), weight, smoothing, store)
                denom = x.shape[0]
            else:
                losses, self.native_softmax, total, denom, bad = native(
                    x, target, weight, ignore_index, smoothing, store)
                if bad >= 0:
                    raise _out_of_bounds(target, bad, x.shape[1])
        else:
            if not (soft or checked):
                _check_class_indices(target, x.shape[1], ignore_index, 'nll_loss')
            losses, probs, total, denom = self._numpy_forward(x)
        self.probs = probs if store else None
        if reduction == 'none':
            return losses
        if reduction == 'sum':
            self.denom = 1
            return xp.asarray(total, x.dtype)
        self.denom = denom
        return xp.asarray(np.float64(total) / denom, x.dtype)

    def _numpy_forward(self, x):
        n = x.shape[0]
        target, weight, smoothing = self.target, self.weight, self.smoothing
        m = x.max(1, keepdims=True) if x.size else xp.zeros((n, 1), x.dtype)
        probs = xp.exp(x - m)
        total = probs.sum(1, keepdims=True)
        lse = xp.log(total)
        lse += m
        probs /= total
        if self.soft:
            q = target * (1 - smoothing) + smoothing / x.shape[1] if smoothing else target
            if weight is not None:
                q = q * weight
            losses = (q * (lse - x)).sum(1)
            return losses, probs, losses.sum(dtype=np.float64), n
        keep = target != self.ignore_index
        safe = xp.where(keep, target, 0)
        losses = lse[:, 0] - x[xp.arange(n), safe]
        if weight is not None:
            w = weight[safe] * keep
            losses *= w
        else:
            w = keep.astype(x.dtype)
        if smoothing:
            gaps = lse - x
            if weight is not None:
                gaps *= weight
            losses *= 1 - smoothing
            losses += gaps.sum(1) * (smoothing / x.shape[1])
        losses = xp.where(keep, losses, x.dtype.type(0))   # ignored rows: 0 (NaN logits too)
        return losses, probs, losses.sum(dtype=np.float64), w.sum(dtype=np.float64)

    def _row_scale(self, g):
        """The upstream gradient per row: ``g`` (none), or one value (sum; mean: divided)."""
        if self.reduction == 'none':
            return g
        if self.denom == 1:
            return g
        # no kept row (every target ignored): the mean is 0 / 0, its gradient 0 (torch's)
        return g / self.denom if self.denom else g * 0

    def backward(self, g):
        s = self._row_scale(g)
        if fm.is_array(g):
            parts = self.native_softmax
            if parts is not None:
                native = native_kernel('soft_cross_entropy_backward' if self.soft
                                       else 'cross_entropy_backward', parts[0])
                if native is not None:
                    if self.soft:
                        return native(parts, self.target, self.weight, self.smoothing,
                                      s), None, None
                    return native(parts, self.target, self.weight, self.ignore_index,
                                  self.smoothing, s), None, None
                if self.probs is None:  # the kernels were switched off since the forward
                    self.probs = parts[0] * parts[1][:, None]
            if self.probs is None:      # forward ran without storing the softmax
                x, = self.saved_tensors
                self.probs = self._numpy_forward(x._data)[1]
            probs = self.probs
            if not self.soft and not self.smoothing:
                keep = self.target != self.ignore_index
                safe = xp.where(keep, self.target, 0)
                w = keep if self.weight is None else self.weight[safe] * keep
                coef = xp.broadcast_to(s * w, keep.shape).astype(probs.dtype)
                gx = probs * coef.reshape(-1, 1)
                gx[xp.arange(len(safe)), safe] -= coef
                return gx, None, None
            a, b = self._softmax_share(probs.dtype, probs.shape[1])
            s = xp.asarray(s, probs.dtype).reshape(-1, 1)
            return (probs * a - b) * s, None, None
        x, = self.saved_tensors
        from .activation import softmax
        a, b = self._softmax_share(x._data.dtype, x.shape[1])
        s = s.reshape((-1, 1)) if s.ndim else s
        return (softmax(x, 1) * wrap(a) - wrap(b)) * s, None, None

    def _softmax_share(self, dtype, n_classes):
        """``(a, b)``, the logits' gradient per unit of upstream gradient being
        ``a * softmax - b``: a (N, 1), b (N, C)."""
        weight, smoothing = self.weight, self.smoothing
        if self.soft:
            b = (self.target * (1 - smoothing) + smoothing / n_classes if smoothing
                 else self.target).astype(dtype)
            if weight is not None:
                b = b * weight
            return b.sum(1, keepdims=True), b
        keep = self.target != self.ignore_index
        safe = xp.where(keep, self.target, 0)
        n = len(safe)
        w = xp.ones(n_classes, dtype) if weight is None else weight.astype(dtype)
        spread = smoothing / n_classes
        b = xp.zeros((n, n_classes), dtype)
        if spread:
            b += (spread * w)
        b[xp.arange(n), safe] += (1 - smoothing) * w[safe]
        b *= keep[:, None]
        a = b.sum(1, keepdims=True)
        return a, b


class CrossEntropyOfTensor(CrossEntropy):
    """``CrossEntropy`` taking the target as a tensor input and checking its class indices
    inside the op: what ``dynagrad.compile`` records for the common case of
    ``cross_entropy``, so a replay checks each call's targets and needs no eager island."""
    node_name = 'NllLossBackward0'

    def forward(self, x, target, ignore_index=-100, reduction='mean'):
        _check_class_indices(target, x.shape[1], ignore_index, 'nll_loss')
        return super().forward(x, target.astype(np.int64, copy=False), None, ignore_index,
                               reduction)


def _cross_entropy_captured(input, target, weight=None, size_average=None, ignore_index=-100,
                            reduce=None, reduction='mean', label_smoothing=0.0):
    """The capture rule of ``cross_entropy`` (``dynagrad.compile``): its fused case as one
    recorded op, checked as eager checks it; None for every other case (an eager island)."""
    if weight is not None or size_average is not None or reduce is not None or \
            label_smoothing != 0.0 or autocast_state.active or input.ndim != 2 or \
            target.ndim != 1 or reduction not in ('mean', 'sum', 'none'):
        return None
    _checked_targets(input, target, None, ignore_index, 'nll_loss')   # eager's errors, now
    return CrossEntropyOfTensor.apply(input, target, ignore_index=ignore_index,
                                      reduction=reduction)


@vmap_function('class_loss')
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction='mean', label_smoothing=0.0):
    """Log-softmax over the class dimension, then the NLL of class indices or the cross
    entropy with class probabilities; optional label smoothing. (N, C) logits go through
    the fused ``CrossEntropy`` (class probabilities there only when they need no
    gradient), the rest through log_softmax and its formulas."""
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    if size_average is not None or reduce is not None or reduction not in _REDUCTIONS:
        reduction = _reduction(size_average, reduce, reduction)
    n_classes = _class_dims(input, 'cross_entropy')
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f'label_smoothing must be between 0.0 and 1.0. Got: '
                           f'{label_smoothing}')
    x, t = input._data, target._data
    if input.ndim == 2 and x.dtype.kind in 'fV':
        if t.ndim == 1 and t.dtype.kind in 'iu':
            # the kernel checks the class indices itself (the op raises its IndexError)
            native = x.size and native_kernel('cross_entropy', x) is not None
            t, w = _checked_targets(input, target, weight, ignore_index, 'nll_loss',
                                    check_indices=not native)
            op = CrossEntropy.named('AddBackward0') if label_smoothing > 0 else CrossEntropy
            return op.apply(input, t, weight=w, ignore_index=ignore_index, reduction=reduction,
                            smoothing=float(label_smoothing), checked=not native)
        if (t.shape == x.shape and t.dtype == x.dtype and x.size and ignore_index < 0
                and not (target._requires_grad and _grad_state.grad_enabled)
                and not _forward_ad_state.propagate
                and (weight is None or (weight.shape == (n_classes,)
                                        and weight._data.dtype == x.dtype))):
            op = CrossEntropy.named('DivBackward1' if reduction == 'mean' else 'NegBackward0')
            return op.apply(input, t, weight=None if weight is None else weight._data,
                            reduction=reduction, smoothing=float(label_smoothing), soft=True)
    class_dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, class_dim)
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise RuntimeError(f'weight tensor should be defined either for all {n_classes} '
                           f'classes or no classes but got weight tensor of shape: '
                           f'{list(weight.shape)}')
    if t.dtype.kind in 'fV':
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f'cross_entropy: class-probability target of shape '
                               f'{list(target.shape)} must match the input shape '
                               f'{list(input.shape)} (0D or 1D target tensor expected for '
                               'class indices, multi-target not supported)')
        if ignore_index >= 0:
            raise RuntimeError('ignore_index is not supported for floating point target')
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * _class_view(weight, input.ndim)
        if reduction == 'none':
            return -prod.sum(class_dim)
        loss = -prod.sum()
        if reduction == 'mean':
            n = input.numel() // n_classes if n_classes else 0
            return _DivScalar.apply(loss, n)
        return loss
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    keep = t != ignore_index
    smooth = logp if weight is None else logp * _class_view(weight, input.ndim)
    smooth = -smooth.sum(class_dim) * wrap(xp.asarray(keep.astype(input._data.dtype)))
    if reduction == 'sum':
        smooth = smooth.sum()
    elif reduction == 'mean':
        if weight is None:
            den = keep.sum()
        else:
            den = (weight._data[xp.where(keep, t, 0)] * keep).sum()
        smooth = smooth.sum() / float(den)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


class MultiMarginLossOp(Op):
    """Multi-class hinge loss: sum over j != y of w_y max(0, margin - x_y + x_j)^p / C."""
    widens_half = True
    node_name = 'MultiMarginLossBackward0'

    def forward(self, x, target, p=1, margin=1.0, weight=None, reduction='mean'):
        self.p, self.margin, self.weight, self.reduction = p, margin, weight, reduction
        self.target = target
        x2 = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
        t = target.reshape(-1)
        self.shape2 = x2.shape
        self.save_for_backward(x)
        h, active = self._hinge(x2, t)
        hp = h if p == 1 else h * h
        loss = (hp * active).sum(1) / x2.shape[1]
        if weight is not None:
            loss = loss * weight[t]
        if reduction == 'none':
            return loss.reshape(target.shape) if x.ndim > 1 else loss.reshape(())
        self.n = loss.size
        if reduction == 'sum':
            return loss.sum()
        # sum / n, not mean(): an empty loss gives nan as in PyTorch, without NumPy's
        # "Mean of empty slice" warning (the same arithmetic otherwise)
        return loss.sum() / loss.dtype.type(self.n)

    def _hinge(self, x2, t):
        rows = xp.arange(x2.shape[0])
        xy = x2[rows, t].reshape(-1, 1)
        h = x2 - xy + self.margin
        ha = fm.unwrap(h)
        onehot = xp.arange(x2.shape[1]) == t.reshape(-1, 1)
        self.onehot = onehot
        return h, (ha > 0) & ~onehot

    def backward(self, g):
        x, = self.saved_tensors
        x2 = x.reshape(self.shape2)
        t = self.target.reshape(-1)
        h, active = self._hinge(x2, t)
        c = self.shape2[1]
        if self.reduction == 'none':
            gr = g.reshape((-1, 1))
        elif self.reduction == 'mean':
            gr = g * (1.0 / self.n) if self.n else g
        else:
            gr = g
        coef = fm.where(active, 1.0, 0.0) * (1.0 / c) if self.p == 1 else \
            fm.where(active, h * (2.0 / c), 0.0)
        if self.weight is not None:
            coef = coef * self.weight[t].reshape(-1, 1)
        coef = coef * gr
        gx = coef - fm.where(self.onehot, coef.sum((1,)).reshape((-1, 1)), 0.0)
        return gx.reshape(x.shape), None


@vmap_function('margin_loss')
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction='mean'):
    if autocast_state.active:
        input, target, weight = autocast_args('fp32', input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError('only p == 1 and p == 2 supported')
    _no_half(input, 'multi_margin_loss_cpu_kernel')
    if input.ndim > 2:
        raise RuntimeError(f'multi_margin_loss: expected input of 1 or 2 dimensions, got '
                           f'{list(input.shape)}')
    c = input.shape[-1] if input.ndim else 1
    n = input.shape[0] if input.ndim == 2 else 1
    t = target._data
    if t.size != n or (input.ndim == 2 and target.ndim != 1) or target.ndim > 1:
        raise RuntimeError(f'inconsistent target size: {list(target.shape)} for input of size: '
                           f'{list(input.shape)}')
    if t.dtype.kind not in 'iu':
        raise RuntimeError(f'multi_margin_loss: expected target of integer (Long) dtype, got '
                           f'{target.dtype}')
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError(f'target out of range (multi_margin_loss over {c} classes)')
    w = None
    if weight is not None:
        _no_grad_arg(weight, 'multi_margin_loss', 'weight')
        w = weight._data.reshape(-1).astype(input._data.dtype, copy=False)
        if w.size != c:
            raise RuntimeError(f'inconsistent weight size, expected {c} but got '
                               f'{list(weight.shape)}')
    return MultiMarginLossOp.apply(input, t.astype(np.int64), p=p, margin=margin, weight=w,
                                 reduction=reduction)


class MultilabelMarginLoss(Op):
    """sum over targets j and non-targets k of max(0, 1 - (x_j - x_k)) / C."""
    widens_half = True

    def forward(self, x, counts, reduction='mean'):
        self.reduction = reduction
        self._in_shape = x.shape
        x2 = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
        self.shape2 = x2.shape
        c = x2.shape[1]
        # pair weight: (number of times j is listed) x (k is no target)
        self.pairs = (counts[:, :, None] * (counts == 0)[:, None, :]).astype(x.dtype)
        h = 1.0 - x2[:, :, None] + x2[:, None, :]
        self.active = (h > 0) * self.pairs
        loss = (h * self.active).sum((1, 2)) / c
        if reduction == 'none':
            return loss if x.ndim == 2 else loss.reshape(())
        self.n = loss.size
        if reduction == 'sum':
            return loss.sum()
        # sum / n, not mean(): an empty loss gives nan as in PyTorch, without NumPy's
        # "Mean of empty slice" warning (the same arithmetic otherwise)
        return loss.sum() / loss.dtype.type(self.n)

    def backward(self, g):
        c = self.shape2[1]
        a = self.active * (1.0 / c)
        coef = a.sum(1) - a.sum(2)              # d/dx_k: +1 per active pair, d/dx_j: -1
        if self.reduction == 'none':
            gr = g.reshape((-1, 1))
        elif self.reduction == 'mean':
            gr = g * (1.0 / self.n) if self.n else g
        else:
            gr = g
        gx = gr * coef
        return gx.reshape(self._in_shape), None


def _no_half(input, kernel):
    """PyTorch has no float16/bfloat16 CPU kernel for this loss."""
    if input._data.dtype.char in 'eE':
        raise not_implemented(kernel, input._data)


@vmap_function('margin_loss')
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _no_half(input, 'multilabel_margin_loss_forward_out_frame')
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f'inconsistent target size: {list(target.shape)} for input of size: '
                           f'{list(input.shape)}')
    t = target._data.reshape(-1, input.shape[-1] if input.ndim else 1).astype(np.int64)
    c = t.shape[1]
    valid = xp.cumprod(t != -1, axis=1).astype(bool)   # the prefix before the first -1
    if (valid & ((t < 0) | (t >= c))).any():
        raise RuntimeError(f'multilabel_margin_loss: target index out of range [0, {c})')
    counts = xp.zeros(t.shape, np.int64)
    rows = xp.broadcast_to(xp.arange(t.shape[0])[:, None], t.shape)
    xp.add.at(counts, (rows[valid], t[valid]), 1)
    return MultilabelMarginLoss.apply(input, counts, reduction=reduction)


# -- divergences and likelihoods ---------------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):
    """KL divergence with ``input`` log-probabilities; ``target`` probabilities (or log)."""
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction not in ('mean', 'sum', 'none', 'batchmean'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    elif reduction == 'mean':
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", UserWarning,
                      stacklevel=2)
    if log_target:
        loss = _ops.exp(target) * (target - input)
    else:
        loss = _ops.xlogy(target, target) - target * input
    if reduction == 'batchmean':
        if input.ndim == 0:
            return loss.sum()
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction='mean'):
    """Poisson negative log-likelihood (with Stirling's term for ``full``)."""
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = _ops.exp(input) - target * input
    else:
        loss = input - target * _ops.log(input + eps)
    if full:
        t = target
        # xlogy(t, t) is t * log(t) without 0 * -inf (masked below, but NumPy would warn)
        stirling = _ops.xlogy(t, t) - t + _ops.log(t * (2 * math.pi)) * 0.5
        loss = loss + _ops.where(t > 1, stirling, 0.0)
    return _reduce(loss, reduction)


@vmap_function('loop')
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean'):
    """Gaussian negative log-likelihood with predicted variances ``var`` (broadcast as torch:
    one dimension fewer, or a last dimension of 1, means one variance per sample)."""
    if not isinstance(var, Tensor):
        var = _as_tensor(float(var), input).expand(tuple(input.shape))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError('var is of incorrect size')
    if reduction not in ('mean', 'sum', 'none'):
        raise ValueError(reduction + ' is not valid')
    if (var._data < 0).any():
        raise ValueError('var has negative entry/entries')
    # var is clamped at eps without cutting its gradient, as PyTorch does (in place, no grad)
    clamped = xp.maximum(var._data, eps)
    if (clamped != var._data).any():
        var = var + wrap(xp.asarray((clamped - var._data).astype(var._data.dtype)))
    diff = input - target
    loss = (_ops.log(var) + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- embedding and ranking losses ----------------------------------------------------------

def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction='mean'):
    if autocast_state.active:
        input, target = autocast_args('fp32', input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_broadcast(input, target)
    zero = wrap(xp.zeros((), input._data.dtype))
    margin_clamp = _ops.clamp_min(margin - input, 0)
    out_margin = _ops.where(target != 1, margin_clamp, zero)
    out_self = _ops.where(target != -1, input, zero)
    return _reduce(out_margin + out_self, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction='mean'):
    if autocast_state.active:
        input1, input2, target = autocast_args('fp32', input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f'margin_ranking_loss : All input tensors should have same dimension '
                           f'but got sizes: input1: {_size(input1)}, input2: {_size(input2)}, '
                           f'target: {_size(target)} ')
    loss = _ops.clamp_min(-target * (input1 - input2) + margin, 0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction='mean'):
    if autocast_state.active:
        input1, input2, target = autocast_args('fp32', input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim not in (1, 2) or input1.ndim != input2.ndim:
        raise RuntimeError(f'cosine_embedding_loss: inputs must be 1D or 2D with the same '
                           f'dimensions, got {list(input1.shape)} and {list(input2.shape)}')
    if target.ndim != input1.ndim - 1:
        raise RuntimeError(f'{input1.ndim - 1}D target tensor expected, '
                           f'{target.ndim}D target tensor given')
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _EPSILON
    mag2 = (input2 * input2).sum(dim) + _EPSILON
    cos = prod / _ops.sqrt(mag1 * mag2)
    zero = wrap(xp.zeros((), cos._data.dtype))
    pos = _ops.where(target == 1, 1 - cos, zero)
    neg = _ops.where(target == -1, _ops.clamp_min(cos - margin, 0), zero)
    return _reduce(pos + neg, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction='mean'):
    if autocast_state.active:
        anchor, positive, negative = autocast_args('fp32', anchor, positive, negative)
    reduction = _reduction(size_average, reduce, reduction)
    from .distance import pairwise_distance
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise RuntimeError(f'The anchor, positive, and negative tensors are expected to have the '
                           f'same number of dimensions (1D or 2D), but got: anchor {dims[0]}D, '
                           f'positive {dims[1]}D, and negative {dims[2]}D inputs')
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = _ops.clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction='mean'):
    """Triplet loss with a custom distance (``pairwise_distance`` by default):
    ``max(d(a, p) - d(a, n) + margin, 0)``; ``swap`` uses ``min(d(a, n), d(p, n))``."""
    if margin <= 0:
        raise ValueError(f'margin must be greater than 0, got {margin}')
    reduction = _reduction(None, None, reduction)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(f'The anchor, positive, and negative tensors are expected to have the '
                           f'same number of dimensions, but got: anchor {dims[0]}D, positive '
                           f'{dims[1]}D, and negative {dims[2]}D inputs')
    if distance_function is None:
        from .distance import pairwise_distance as distance_function
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = _ops.minimum(d_neg, distance_function(positive, negative))
    loss = _ops.clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, reduction)


# -- linear + cross entropy ----------------------------------------------------------------

class LinearCrossEntropyOptions:
    """Options of the chunked ``linear_cross_entropy`` (PyTorch's memory-saving path).

    Accepted and validated as in PyTorch; dynagrad computes the same values by the reference
    path (the logits are materialized), so they change no result."""
    _POLICIES = ('accurate', 'balanced', 'compact', 'auto')
    __slots__ = ('allow_retain_graph', 'batch_chunk_size', 'chunking_method', 'acc_policy',
                 'acc_dtype')

    def __init__(self, allow_retain_graph=False, batch_chunk_size=None, chunking_method='auto',
                 acc_policy='auto', acc_dtype=None):
        if acc_policy not in self._POLICIES:
            raise ValueError(f'invalid acc_policy: {acc_policy!r}')
        if chunking_method is not None and not _valid_chunking(chunking_method):
            raise ValueError(f'invalid chunking_method: {chunking_method!r}')
        if batch_chunk_size is not None and (not isinstance(batch_chunk_size, int)
                                             or batch_chunk_size <= 0):
            raise ValueError(f'batch_chunk_size must be positive int or None, got '
                             f'{batch_chunk_size}')
        self.allow_retain_graph = allow_retain_graph
        self.batch_chunk_size = batch_chunk_size
        self.chunking_method = chunking_method
        self.acc_policy = acc_policy
        self.acc_dtype = acc_dtype

    def __repr__(self):
        fields = ', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)
        return f'{type(self).__name__}({fields})'

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)


def _valid_chunking(method):
    """'auto', or '<strategy>:<number>' as PyTorch's 'aspect_ratio:2'."""
    if method == 'auto':
        return True
    name, _, value = str(method).partition(':')
    try:
        return bool(name) and float(value) > 0
    except ValueError:
        return False


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction='mean', ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight) + linear_bias, target, ...)``, where
    ``linear_weight`` is ``(C, in)`` or ``(C, d1, ..., dK, in)`` (K-dimensional loss over a
    batched ``(N, in)`` input); ``ignore_index=None`` means -100."""
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f'linear_cross_entropy: options must be a LinearCrossEntropyOptions '
                        f'or None, got {type(options).__name__}')
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(f'expected equal input and linear_weight last dimensions '
                           f'(in_features), got {input.shape[-1]} and '
                           f'{linear_weight.shape[-1]}, respectively')
    classes_shape = tuple(linear_weight.shape[:-1])
    flat = linear_weight.reshape(-1, linear_weight.shape[-1])
    logits = _ops.matmul(input, flat.t())
    if len(classes_shape) > 1:
        if input.ndim != 2:
            raise RuntimeError(f'linear_cross_entropy: a {len(classes_shape)}-D linear_weight '
                               f'(K-dimensional loss) needs a batched (N, in_features) input, '
                               f'got {input.ndim}D')
        logits = logits.reshape(input.shape[0], *classes_shape)
    if linear_bias is not None:
        if tuple(linear_bias.shape) != classes_shape:
            raise RuntimeError(f'expected linear_bias shape {classes_shape}, got '
                               f'{tuple(linear_bias.shape)}')
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction,
                         label_smoothing=label_smoothing)


# -- CTC -------------------------------------------------------------------------------------

def _logaddexp3(a, b, c):
    m = xp.maximum(xp.maximum(a, b), c)
    m_safe = xp.where(xp.isneginf(m), 0.0, m)
    with np.errstate(divide='ignore'):
        return xp.log(xp.exp(a - m_safe) + xp.exp(b - m_safe) + xp.exp(c - m_safe)) + m_safe


def _shift(a, k):
    """``a`` moved ``k`` places right along its last axis, filled with -inf."""
    out = xp.full_like(a, -np.inf)
    out[..., k:] = a[..., :a.shape[-1] - k]
    return out


class CtcLoss(Op):
    """Per-sample CTC negative log-likelihood (T x N x C log-probabilities).

    The forward (alpha) and backward (beta) recursions run in log space over the extended
    label sequence (blanks between labels), vectorised over batch and positions; only the
    time steps are a loop. The gradient is PyTorch's: ``exp(lp) - exp(log(sum of alpha beta
    at each label) + nll - lp)``, which assumes ``log_probs`` come from a log_softmax.
    """
    widens_half = True
    quiet_fp = True

    def forward(self, lp, ext, skip, in_len, tgt_len, zero_infinity=False):
        T, N, C = lp.shape
        S = ext.shape[1]
        self.ext, self.skip, self.in_len, self.tgt_len = ext, skip, in_len, tgt_len
        lpe = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (T, N, S)), 2)  # (T, N, S)
        alpha = xp.full((T, N, S), -np.inf, lp.dtype)
        if T:
            alpha[0, :, 0] = lpe[0, :, 0]
            if S > 1:
                alpha[0, :, 1] = xp.where(tgt_len > 0, lpe[0, :, 1], -np.inf)
        skip_fill = xp.where(skip, 0.0, -np.inf).astype(lp.dtype)
        for t in range(1, T):
            a = alpha[t - 1]
            alpha[t] = _logaddexp3(a, _shift(a, 1), _shift(a, 2) + skip_fill) + lpe[t]
        rows = xp.arange(N)
        last = xp.maximum(in_len - 1, 0)
        end = 2 * tgt_len
        a_end = alpha[last, rows, end]
        a_prev = xp.where(tgt_len > 0, alpha[last, rows, xp.maximum(end - 1, 0)], -np.inf)
        nll = -xp.logaddexp(a_end, a_prev)
        nll = xp.where(in_len > 0, nll, xp.where(tgt_len > 0, np.inf, 0.0)).astype(lp.dtype)
        self.inf = xp.isinf(nll)
        self.zero_infinity = zero_infinity
        self.alpha, self.lpe, self.nll = alpha, lpe, nll
        self.save_for_backward(lp)
        return nll

    def _grad(self, lp):
        """d loss_n / d lp (T, N, C), torch's formula, zero past each input length."""
        T, N, C = lp.shape
        ext, skip, in_len, tgt_len = self.ext, self.skip, self.in_len, self.tgt_len
        lpe, alpha = self.lpe, self.alpha
        S = ext.shape[1]
        beta = xp.full((T, N, S), -np.inf, lp.dtype)
        rows = xp.arange(N)
        end = 2 * tgt_len
        skip_next = xp.where(_shift_left(skip, 2), 0.0, -np.inf).astype(lp.dtype)
        for t in range(T - 1, -1, -1):
            if t < T - 1:
                b = beta[t + 1]
                beta[t] = _logaddexp3(b, _shift_left_inf(b, 1),
                                      _shift_left_inf(b, 2) + skip_next) + lpe[t]
            start = in_len - 1 == t
            if start.any():
                n = rows[start]
                beta[t, n] = -np.inf
                beta[t, n, end[start]] = lpe[t, n, end[start]]
                has = tgt_len[start] > 0
                beta[t, n[has], end[start][has] - 1] = lpe[t, n[has], end[start][has] - 1]
        ab = alpha + beta                                             # (T, N, S)
        m = ab.max(2, keepdims=True) if S else xp.zeros((T, N, 1), lp.dtype)
        m = xp.where(xp.isneginf(m), 0.0, m)
        onehot = (ext[:, :, None] == xp.arange(C)).astype(lp.dtype)  # (N, S, C)
        summed = xp.matmul(xp.exp(ab - m).transpose(1, 0, 2), onehot).transpose(1, 0, 2)
        with np.errstate(divide='ignore', invalid='ignore'):
            lcab = xp.log(summed) + m
            grad = xp.exp(lp) - xp.exp(lcab + self.nll[None, :, None] - lp)
        valid = xp.arange(T)[:, None] < in_len[None, :]
        grad = xp.where(valid[:, :, None], grad, 0.0)
        if self.zero_infinity:
            grad = xp.where(self.inf[None, :, None], 0.0, grad)
        return grad.astype(lp.dtype)

    def backward(self, g):
        lp, = self.saved_tensors
        grad = self._grad(fm.unwrap(lp))
        if fm.is_array(g):
            return grad * g[None, :, None], None, None, None, None
        return _CtcLossBackward.apply(g, lp, grad=grad), None, None, None, None


def _shift_left(a, k):
    out = xp.zeros_like(a)
    out[..., :a.shape[-1] - k] = a[..., k:]
    return out


def _shift_left_inf(a, k):
    out = xp.full_like(a, -np.inf)
    out[..., :a.shape[-1] - k] = a[..., k:]
    return out


class _CtcLossBackward(Op):
    """The CTC gradient as a function of the upstream gradient, under create_graph: linear
    in ``g``; differentiating it w.r.t. ``log_probs`` raises, as in PyTorch."""
    node_name = 'CtcLossBackwardBackward0'

    def forward(self, g, lp, grad=None):
        self.grad = grad
        return grad * g[None, :, None]

    def backward(self, gg):
        if self.needs_input_grad[1]:
            raise RuntimeError('derivative for aten::_ctc_loss_backward is not implemented')
        return (gg * self.grad).sum((0, 2)), None


def _lengths(x, n, what):
    if not isinstance(x, (Tensor, tuple, list, np.ndarray)):
        raise TypeError(f'ctc_loss(): argument \'{what}\' must be a tuple of ints or a '
                        f'Tensor, not {type(x).__name__}')
    a = xp.asarray(fm.unwrap(x) if isinstance(x, Tensor) else x)
    if a.dtype.kind not in 'iu':
        if a.dtype.kind in 'fV' and a.size and (a != xp.round(a)).any() or a.dtype.kind == 'b':
            raise RuntimeError(f'ctc_loss: {what} must be integers, got {a.dtype}')
    a = a.astype(np.int64).reshape(-1)
    if a.size != n:
        raise RuntimeError(f'{what} must be of size batch_size (ctc_loss: got {a.size} '
                           f'lengths for a batch of {n})')
    return a


@vmap_function('loop')
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean',
             zero_infinity=False):
    """Connectionist Temporal Classification loss.

    ``log_probs``: (T, N, C) or unbatched (T, C), log-softmax outputs; ``targets``: padded
    (N, S) or concatenated 1-D (sum of ``target_lengths``); lengths as tuples or tensors.
    """
    if autocast_state.active:
        log_probs, = autocast_args('fp32', log_probs)
    reduction = _reduction(None, None, reduction)
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f'ctc_loss: expected log_probs of 2 (T, C) or 3 (T, N, C) '
                           f'dimensions, got {list(log_probs.shape)}')
    _no_half(log_probs, 'ctc_loss_cpu')
    lp_t = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp_t.shape
    if not 0 <= blank < C:
        raise RuntimeError('blank must be in label range')
    in_len = _lengths(input_lengths, N, 'input_lengths')
    tgt_len = _lengths(target_lengths, N, 'target_lengths')
    t = fm.unwrap(targets)
    if unbatched and t.ndim == 1:
        t = t[None]
    t = t.astype(np.int64)
    if in_len.size and (in_len.max() > T or in_len.min() < 0):
        bad = in_len.max() if in_len.max() > T else in_len.min()
        raise RuntimeError(f'Expected input_lengths to have value at most {T}, but got value '
                           f'{bad} (while checking arguments for ctc_loss_allocate_outputs)')
    if (tgt_len < 0).any():
        raise RuntimeError('ctc_loss: target_lengths must be non-negative')
    lmax = int(tgt_len.max()) if tgt_len.size else 0
    if t.ndim == 1:                       # concatenated targets
        if t.size < tgt_len.sum():
            raise RuntimeError(f'Expected tensor to have size at least {tgt_len.sum()} at '
                               f'dimension 0, but got size {t.size} for argument #2 '
                               "'targets' (while checking arguments for "
                               'ctc_loss_allocate_outputs)')
        offsets = xp.concatenate([[0], xp.cumsum(tgt_len)[:-1]]).astype(np.int64)
        pos = xp.arange(lmax)
        inside = pos[None, :] < tgt_len[:, None]
        idx = xp.where(inside, offsets[:, None] + pos[None, :], 0)
        padded = xp.where(inside, t[idx] if t.size else 0, blank)
    else:
        if t.shape[0] != N:
            raise RuntimeError(f'ctc_loss: expected targets with batch size {N}, got '
                               f'{list(t.shape)}')
        if lmax > t.shape[1]:
            raise RuntimeError(f'Expected tensor to have size at least {lmax} at dimension 1, '
                               f'but got size {t.shape[1]} for argument #2 \'targets\' '
                               '(while checking arguments for ctc_loss_allocate_outputs)')
        pos = xp.arange(lmax)
        inside = pos[None, :] < tgt_len[:, None]
        padded = xp.where(inside, t[:, :lmax], blank)
    if padded.size and ((padded < 0) | (padded >= C)).any():
        raise RuntimeError(f'ctc_loss: target labels must be in [0, {C}) (got '
                           f'{int(padded[(padded < 0) | (padded >= C)][0])})')
    S = 2 * lmax + 1
    ext = xp.full((N, S), blank, np.int64)
    ext[:, 1::2] = padded
    skip = xp.zeros((N, S), bool)
    skip[:, 3::2] = (padded[:, 1:] != padded[:, :-1]) & (padded[:, 1:] != blank)
    if log_probs._data.dtype.kind not in 'fV':
        raise RuntimeError(f'ctc_loss: expected floating-point log_probs, got '
                           f'{log_probs.dtype}')
    loss = CtcLoss.apply(lp_t, ext, skip, in_len, tgt_len, zero_infinity=zero_infinity)
    if zero_infinity:   # the op zeroes those gradients; the values are replaced here
        loss = _ops.where(wrap(xp.asarray(xp.isinf(loss._data))),
                          wrap(xp.zeros((), loss._data.dtype)), loss)
    if reduction == 'none':
        return loss.squeeze(0) if unbatched else loss
    if reduction == 'sum':
        return loss.sum()
    lengths = xp.maximum(tgt_len, 1).astype(log_probs._data.dtype)
    return (loss / wrap(xp.asarray(lengths))).mean()


__all__ = ['mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss', 'binary_cross_entropy',
           'binary_cross_entropy_with_logits', 'soft_margin_loss',
           'multilabel_soft_margin_loss', 'nll_loss', 'cross_entropy', 'multi_margin_loss',
           'multilabel_margin_loss', 'kl_div', 'poisson_nll_loss', 'gaussian_nll_loss',
           'hinge_embedding_loss', 'margin_ranking_loss', 'cosine_embedding_loss',
           'triplet_margin_loss', 'ctc_loss', 'triplet_margin_with_distance_loss',
           'linear_cross_entropy']


cross_entropy._capture_rule = _cross_entropy_captured
