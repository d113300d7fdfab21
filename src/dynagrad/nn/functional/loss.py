"""Loss functions."""
from ...backend import xp
from ...autograd.function import Op
from ...ops import _formula as fm
from .activation import log_softmax
from ... import ops as _ops


class NllLoss(Op):
    """Negative log-likelihood of class indices, with weights and an ignored index."""
    node_name = 'NllLossBackward0'

    def forward(self, logp, target, weight=None, ignore_index=-100, reduction='mean'):
        if logp.ndim > 2:
            self._node_name = 'NllLoss2DBackward0' if logp.ndim == 4 else 'NllLossNdBackward0'
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


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction='mean'):
    if target._data.dtype.kind not in 'iu':
        raise RuntimeError(f'nll_loss: expected target of integer (Long) dtype, got '
                           f'{target.dtype}')
    batch = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    if tuple(target.shape) != tuple(batch):
        raise ValueError(f'Expected input batch_size ({input.shape[0] if input.ndim else 1}) '
                         f'to match target batch_size ({target.shape[0] if target.ndim else 1})'
                         f': input of shape {list(input.shape)}, target of shape '
                         f'{list(target.shape)}')
    n_classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    t = target._data
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f'Target {int(t[bad].flat[0])} is out of bounds (nll_loss over '
                         f'{n_classes} classes)')
    if reduction not in ('mean', 'sum', 'none'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    w = weight._data if weight is not None else None
    return NllLoss.apply(input, t, weight=w, ignore_index=ignore_index, reduction=reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction='mean', label_smoothing=0.0):
    """Log-softmax over the class dimension then NLL of class indices."""
    if label_smoothing or target._data.dtype.kind == 'f':
        raise NotImplementedError('cross_entropy with class probabilities or label_smoothing '
                                  'arrives with nn.functional (issue 5)')
    return nll_loss(log_softmax(input, 1 if input.ndim > 1 else 0), target, weight,
                    ignore_index=ignore_index, reduction=reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """Mean (or sum, or none) of the squared differences; shapes broadcast as in PyTorch."""
    if size_average is not None or reduce is not None:
        # The legacy flags, resolved as torch's _Reduction.legacy_get_string does.
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ('mean' if size_average else 'sum') if reduce else 'none'
    diff = input - target
    sq = diff * diff
    if reduction == 'mean':
        return _ops.mean(sq)
    if reduction == 'sum':
        return _ops.sum(sq)
    if reduction == 'none':
        return sq
    raise ValueError(f'{reduction} is not a valid value for reduction')


__all__ = ['nll_loss', 'cross_entropy', 'mse_loss']
