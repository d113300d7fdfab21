"""AdaptiveLogSoftmaxWithLoss: the efficient softmax of Grave et al. for large vocabularies.

Frequent classes (below ``cutoffs[0]``) are scored by the head, together with one logit per
cluster of rarer classes; a class in cluster ``j`` scores ``log p(cluster j) + log p(class |
cluster j)``, the second term computed by a small projection only for the rows whose target
lies in that cluster.
"""
from collections import namedtuple

import numpy as np

from ..module import Module
from .linear import Linear
from .container import Sequential, ModuleList
from .. import functional as F
from ... import ops

_ASMoutput = namedtuple('_ASMoutput', ['output', 'loss'])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError('cutoffs should be a sequence of length larger than 0')
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs)
                or any(int(c) != c for c in cutoffs)):
            raise ValueError('cutoffs should be a sequence of unique, positive integers sorted '
                             'in an increasing order, where each value is between 1 and '
                             'n_classes-1')
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        tails = []
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(Linear(in_features, hidden, bias=False, device=device,
                                           dtype=dtype),
                                    Linear(hidden, size, bias=False, device=device,
                                           dtype=dtype)))
        self.tail = ModuleList(tails)

    def reset_parameters(self):
        from .. import init
        import math
        for linear in [self.head] + [m for t in self.tail for m in t]:
            bound = 1 / math.sqrt(linear.in_features) if linear.in_features else 0
            init.uniform_(linear.weight, -bound, bound)
            if linear.bias is not None:
                init.uniform_(linear.bias, -bound, bound)

    def forward(self, input, target):
        target_dim = target.dim()
        if target_dim == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError('Input and target should have the same size in the batch '
                                   'dimension.')
            if input.dim() != 2:
                raise RuntimeError(f'1D target tensor expects 2D input tensors, but found '
                                   f'inputs with size {input.size()}')
        elif target_dim == 0:
            if input.dim() != 1:
                raise RuntimeError(f'0D target tensor expects 1D input tensors, but found '
                                   f'inputs with size {input.size()}')
        else:
            raise RuntimeError('0D or 1D target tensor expected, multi-target not supported')
        unbatched = target_dim == 0
        if unbatched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        labels = np.asarray(target._data)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(f'Target values should be in [0, {self.n_classes - 1}], but '
                               f'values in range [{labels.min()}, {labels.max()}] were found. ')

        head_logprob = F.log_softmax(self.head(input), 1)
        # Score each cluster's rows, then put the pieces back in row order.
        pieces, order = [], []
        for j in range(self.n_clusters + 1):
            low = 0 if j == 0 else self.cutoffs[j - 1]
            high = self.cutoffs[j]
            rows = np.nonzero((labels >= low) & (labels < high))[0]
            if rows.size == 0:
                continue
            rows_t = ops.tensor(rows)
            if j == 0:
                picked = head_logprob[rows_t, ops.tensor(labels[rows])]
            else:
                tail_logprob = F.log_softmax(self.tail[j - 1](input[rows_t]), 1)
                local = ops.tensor(labels[rows] - low)
                picked = (head_logprob[rows_t, self.shortlist_size + j - 1]
                          + tail_logprob[ops.tensor(np.arange(rows.size)), local])
            pieces.append(picked)
            order.append(rows)
        positions = np.concatenate(order)
        inverse = np.empty_like(positions)
        inverse[positions] = np.arange(positions.size)
        output = ops.cat(pieces)[ops.tensor(inverse)]
        loss = (-output).mean()
        if unbatched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            cluster = head_logprob[:, self.shortlist_size + i:self.shortlist_size + i + 1]
            parts.append(F.log_softmax(tail(input), 1) + cluster)
        return ops.cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of every class: ``(N, n_classes)`` (or ``(n_classes,)``)."""
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        out = self._get_full_log_prob(input, self.head(input))
        return out.squeeze(0) if unbatched else out

    def predict(self, input):
        """The most likely class of each row (the same as ``log_prob(input).argmax(1)``)."""
        return self.log_prob(input).argmax(-1)


__all__ = ['AdaptiveLogSoftmaxWithLoss']
