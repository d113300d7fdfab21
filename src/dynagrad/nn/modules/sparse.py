"""Embedding layers."""
from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from .. import functional as F
from .. import init
from ... import ops
from ...autograd.grad_mode import no_grad


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError('Padding_idx must be within num_embeddings')
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError('Shape of weight does not match num_embeddings and '
                                     'embedding_dim')
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f'{self.num_embeddings}, {self.embedding_dim}'
        if self.padding_idx is not None:
            s += f', padding_idx={self.padding_idx}'
        if self.max_norm is not None:
            s += f', max_norm={self.max_norm}'
        if self.norm_type != 2:
            s += f', norm_type={self.norm_type}'
        if self.scale_grad_by_freq:
            s += ', scale_grad_by_freq=True'
        if self.sparse:
            s += ', sparse=True'
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise AssertionError('Embeddings parameter is expected to be 2-dimensional')
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


class EmbeddingBag(Module):
    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode='mean', sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype))
            init.normal_(self.weight)
            if padding_idx is not None:
                with no_grad():
                    self.weight[padding_idx].fill_(0)
        else:
            self.weight = Parameter(_weight)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f'{self.num_embeddings}, {self.embedding_dim}'
        if self.max_norm is not None:
            s += f', max_norm={self.max_norm}'
        if self.norm_type != 2:
            s += f', norm_type={self.norm_type}'
        if self.scale_grad_by_freq:
            s += ', scale_grad_by_freq=True'
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f', padding_idx={self.padding_idx}'
        return s


__all__ = ['Embedding', 'EmbeddingBag']
