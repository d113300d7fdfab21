"""Loss modules: each holds its options (and weights, as buffers) and calls nn.functional."""
import math
import warnings

from ..module import Module
from .. import functional as F


def _legacy_reduction(size_average, reduce, reduction):
    """Resolve the deprecated size_average/reduce flags as PyTorch does."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ('mean' if size_average else 'sum') if reduce else 'none'


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction='mean'):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction='mean'):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer('weight', weight)


def _simple_loss(name, fn_name, options=()):
    """A loss whose forward is ``F.<fn_name>(input, target, **options, reduction=...)``."""
    option_names = [k for k, _ in options]

    def __init__(self, *args, size_average=None, reduce=None, reduction='mean', **kwargs):
        values = dict(options)
        values.update(zip(option_names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        _Loss.__init__(self, size_average, reduce, reduction)
        for k in option_names:
            setattr(self, k, values[k])

    def forward(self, input, target):
        return getattr(F, fn_name)(input, target, reduction=self.reduction,
                                   **{k: getattr(self, k) for k in option_names})

    return type(name, (_Loss,), {'__init__': __init__, 'forward': forward})


L1Loss = _simple_loss('L1Loss', 'l1_loss')
MSELoss = _simple_loss('MSELoss', 'mse_loss')
SmoothL1Loss = _simple_loss('SmoothL1Loss', 'smooth_l1_loss', [('beta', 1.0)])
HuberLoss = _simple_loss('HuberLoss', 'huber_loss', [('delta', 1.0)])
SoftMarginLoss = _simple_loss('SoftMarginLoss', 'soft_margin_loss')
KLDivLoss = _simple_loss('KLDivLoss', 'kl_div', [('log_target', False)])
HingeEmbeddingLoss = _simple_loss('HingeEmbeddingLoss', 'hinge_embedding_loss',
                                  [('margin', 1.0)])
MultiLabelMarginLoss = _simple_loss('MultiLabelMarginLoss', 'multilabel_margin_loss')


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction='mean', label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction='mean'):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated alias of ``NLLLoss`` (which takes (N, C, H, W) input itself)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction='mean'):
        warnings.warn('`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a '
                      'drop-in replacement and see '
                      'https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more '
                      'details.', FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction='mean',
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer('weight', weight)
        self.register_buffer('pos_weight', pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction='mean'):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError('only p == 1 and p == 2 supported')
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction='mean'):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full=False, eps=1e-6, reduction='mean'):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class MarginRankingLoss(_Loss):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction='mean'):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction='mean'):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction='mean'):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance function (``PairwiseDistance()`` by default)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction='mean'):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f'TripletMarginWithDistanceLoss: expected margin to be greater '
                             f'than 0, got {margin} instead')
        if distance_function is None:
            from .distance import PairwiseDistance
            distance_function = PairwiseDistance()
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


from ..functional.loss import LinearCrossEntropyOptions  # noqa: E402


class LinearCrossEntropyLoss(Module):
    """Cross entropy of ``linear(input)`` logits: holds a ``Linear(in_features,
    num_classes * prod(out_features))`` whose weight is viewed as
    ``(num_classes, *out_features, in_features)``."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction='mean', weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        super().__init__()
        from .linear import Linear
        out_features = tuple(out_features)
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f'expected weight shape to be ({num_classes},), got '
                               f'{tuple(weight.shape)}')
        self.register_buffer('weight', weight)
        self.reduction = reduction
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.linear = Linear(in_features, num_classes * math.prod(out_features), bias=bias,
                             device=device, dtype=dtype)

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
            linear_bias=None if bias is None else bias.reshape(*shape), weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f'in_features={self.linear.in_features}, num_classes={self.num_classes}, '
                f'out_features={self.out_features}, bias={self.linear.bias is not None}, '
                f'reduction={self.reduction}, ignore_index={self.ignore_index}, '
                f'label_smoothing={self.label_smoothing}, options={self.options}')


class CTCLoss(_Loss):
    def __init__(self, blank=0, reduction='mean', zero_infinity=False):
        super().__init__(None, None, reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


__all__ = ['L1Loss', 'MSELoss', 'SmoothL1Loss', 'HuberLoss', 'SoftMarginLoss', 'KLDivLoss',
           'HingeEmbeddingLoss', 'MultiLabelMarginLoss', 'CrossEntropyLoss', 'NLLLoss',
           'BCELoss', 'BCEWithLogitsLoss', 'MultiLabelSoftMarginLoss', 'MultiMarginLoss',
           'PoissonNLLLoss', 'GaussianNLLLoss', 'MarginRankingLoss', 'CosineEmbeddingLoss',
           'TripletMarginLoss', 'CTCLoss', 'NLLLoss2d', 'TripletMarginWithDistanceLoss',
           'LinearCrossEntropyLoss', 'LinearCrossEntropyOptions']
