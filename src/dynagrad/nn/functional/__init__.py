"""dynagrad.nn.functional: the stateless forms of the layers in dynagrad.nn."""
from ... import ops as _ops

from .linear import linear  # noqa: E402
from .loss import log_softmax, softmax, nll_loss, cross_entropy  # noqa: E402

__all__ = ['linear', 'relu', 'tanh', 'sigmoid', 'mse_loss', 'log_softmax', 'softmax',
           'nll_loss', 'cross_entropy']


def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return _ops.relu(input)


def tanh(input):
    return _ops.tanh(input)


def sigmoid(input):
    return _ops.sigmoid(input)


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
