"""Embeddings and one-hot encoding.

``embedding`` reads rows of the weight; its backward adds the gradient rows back at the
indices (``IndexScatter`` of ``ops/indexing.py``: one ``xp.add.at``, repeated indices
accumulating), so its own backward, a gather, gives double backward. ``embedding_bag``
reduces the rows of each bag (sum, mean or max) without materialising the per-entry rows
for the gradient more than once.
"""
import numpy as np

from ...autograd.batched import vmap_function
from ...autograd.function import Op
from ...backend import native_kernel, xp
from ...ops import formula as fm
from ...ops.indexing import IndexScatter
from ..._coo import COO
from ...tensor import bump_version, legacy_type_name, wrap


def _check_indices(indices, fn):
    d = indices._data.dtype
    if d != np.int64 and d != np.int32:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f'following scalar types: Long, Int; but got '
                           f'torch.{legacy_type_name(d)} instead (while checking arguments for '
                           f'{fn})')


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num, 'Padding_idx must be within num_embeddings'
    elif padding_idx < 0:
        assert padding_idx >= -num, 'Padding_idx must be within num_embeddings'
        padding_idx += num
    return padding_idx


def _renorm_(weight, idx, max_norm, norm_type):
    """PyTorch's embedding_renorm_: rows of ``weight`` read by ``idx`` whose ``norm_type``
    norm exceeds ``max_norm`` are scaled down to it, in place (no gradient recorded)."""
    w = weight._data
    rows = xp.unique(idx)
    if rows.size == 0:
        return
    sel = w[rows]
    norms = xp.linalg.norm(sel, ord=norm_type, axis=1) if norm_type != 2 else \
        xp.sqrt((sel * sel).sum(axis=1))
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] = sel[big] * scale[:, None]
    bump_version(weight, 'embedding (max_norm renormalisation)')


def _grad_factor(idx, num, padding_idx, scale_grad_by_freq, dtype):
    """Per-index factor of the weight gradient (0 at padding, 1 / frequency), or None."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    factor = xp.ones(idx.shape, dtype)
    if scale_grad_by_freq:
        counts = xp.bincount(idx.reshape(-1), minlength=num)
        factor = factor / counts[idx]
    if padding_idx is not None:
        factor = xp.where(idx == padding_idx, 0, factor)
    return factor.astype(dtype, copy=False)


class EmbeddingOp(Op):
    """``weight[indices]``; the gradient adds rows back at the indices."""
    widens_half = True
    node_name = 'EmbeddingBackward0'

    def forward(self, weight, indices, factor=None):
        self.indices, self.factor, self.wshape = indices, factor, weight.shape
        return weight[indices]

    def backward(self, g):
        d = self.wshape[1]
        idx = self.indices.reshape(-1)
        rows = g.reshape((idx.shape[0], d))
        native = native_kernel('embedding_backward', rows)
        if native is not None:      # the rows scaled and added in one pass, in their order
            return native(rows, idx, self.factor, self.wshape[0])
        if self.factor is not None:
            rows = rows * self.factor.reshape((-1, 1))
        if fm.is_array(rows) and 0 < self.wshape[0] <= idx.shape[0]:
            return _segment_sum(rows, idx, self.wshape)
        return IndexScatter.run(rows, key=idx, shape=self.wshape)


def _segment_sum(rows, idx, shape):
    """The rows of ``rows`` summed by index into zeros of ``shape`` (PyTorch's dense
    embedding backward). Why not ``np.add.at``: it costs about 7 ns per element, while
    sorting the indices and summing each run with ``np.add.reduceat`` is 5x faster when
    indices repeat (a table no bigger than the batch: characters, positions)."""
    order = xp.argsort(idx, kind='stable')
    sorted_idx = idx[order]
    starts = xp.flatnonzero(xp.concatenate(([True], sorted_idx[1:] != sorted_idx[:-1])))
    out = xp.zeros(shape, rows.dtype)
    out[sorted_idx[starts]] = xp.add.reduceat(rows[order], starts, axis=0)
    return out


@vmap_function('embedding')
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at ``input``'s indices: shape ``input.shape + (D,)``."""
    _check_indices(input, 'embedding')
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    padding_idx = _padding_idx(padding_idx, num)
    idx = input._data
    _check_index_range(idx, num)
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    factor = _grad_factor(idx, num, padding_idx, scale_grad_by_freq, weight._data.dtype)
    if sparse:
        return SparseEmbeddingOp.apply(weight, indices=idx, factor=factor,
                                       padding_idx=padding_idx)
    return EmbeddingOp.apply(weight, indices=idx, factor=factor)


class EmbeddingOfTensor(EmbeddingOp):
    """``EmbeddingOp`` taking the indices as a tensor input and checking them inside the op:
    what ``dynagrad.compile`` records for ``embedding``'s usual case, so a replay checks each
    call's indices and needs no eager island."""
    node_name = 'EmbeddingBackward0'

    def forward(self, weight, indices):
        _check_index_range(indices, weight.shape[0])
        return super().forward(weight, indices)

    def backward(self, g):
        return super().backward(g), None


def _embedding_captured(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
    """The capture rule of ``embedding`` (eager's checks, then one recorded op); None for
    padding, renormalising, frequency scaling and sparse gradients (an eager island)."""
    if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
        return None
    _check_indices(input, 'embedding')
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    return EmbeddingOfTensor.apply(weight, input)


def _check_index_range(idx, num):
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError(f'index out of range in self (embedding of {num} rows, indices in '
                         f'[{int(idx.min())}, {int(idx.max())}])')


class SparseEmbeddingOp(EmbeddingOp):
    """``embedding(sparse=True)``: the weight's gradient is a sparse COO tensor holding one
    row per index read (uncoalesced, padding entries left out), as PyTorch's
    embedding_sparse_backward makes it."""
    widens_half = False

    def forward(self, weight, indices, factor=None, padding_idx=None):
        self.padding_idx = padding_idx
        return super().forward(weight, indices, factor)

    def backward(self, g):
        g = g._data if not fm.is_array(g) else g
        n, d = self.wshape
        idx = self.indices.reshape(-1)
        rows = g.reshape((idx.shape[0], d))
        if self.factor is not None:
            rows = rows * self.factor.reshape((-1, 1))
        if self.padding_idx is not None:
            keep = idx != self.padding_idx
            idx, rows = idx[keep], rows[keep]
        grad = COO(idx.astype(np.int64)[None], xp.ascontiguousarray(rows), (n, d))
        return grad if self._as_tensors is False else wrap(grad)


class EmbeddingBagOp(Op):
    """Bags of rows of ``weight`` reduced by sum, mean or max.

    ``idx`` are the entries' rows, ``bag`` each entry's bag, ``scale`` each entry's factor
    (per-sample weight, ``1 / bag size`` for mean, 0 at padding) or None; ``freq`` scales
    only the weight gradient of each entry (``1 / frequency`` of its row, for
    ``scale_grad_by_freq``) or is None.
    """
    widens_half = True
    node_name = 'EmbeddingBagBackward0'

    def forward(self, weight, psw, idx, bag, n_bags, mode, scale, freq=None, sparse=False):
        self.idx, self.bag, self.mode, self.wshape = idx, bag, mode, weight.shape
        self.sparse = sparse
        self.freq = freq
        d = weight.shape[1]
        rows = weight[idx]
        # Bags are contiguous runs of entries: reduce each non-empty run with reduceat.
        counts = xp.bincount(bag, minlength=n_bags)
        full = counts > 0
        starts = (xp.cumsum(counts) - counts)[full]
        out = xp.zeros((n_bags, d), weight.dtype)
        if mode == 'max':
            n = idx.shape[0]
            first = xp.full((n_bags, d), n)
            if n:
                valid = scale != 0 if scale is not None else None
                vals = rows if valid is None else xp.where(valid[:, None], rows, -np.inf)
                best = xp.maximum.reduceat(vals, starts, axis=0)
                hit = vals == xp.repeat(best, counts[full], axis=0)
                if valid is not None:
                    hit &= valid[:, None]
                # the first entry reaching each (bag, dim) maximum takes its gradient
                pos = xp.where(hit, xp.arange(n)[:, None], n)
                first[full] = xp.minimum.reduceat(pos, starts, axis=0)
                out[full] = best
            self.has = first < n
            self.rows_of = idx[xp.minimum(first, max(n - 1, 0))] if n else first
            return xp.where(self.has, out, 0).astype(weight.dtype, copy=False)
        self.scale = scale
        self.weighted = psw is not None
        if psw is not None:
            rows = rows * (psw if scale is None else psw * scale)[:, None]
            self.save_for_backward(weight if self.needs_input_grad[1] else None, psw)
        elif scale is not None:
            rows = rows * scale[:, None]
        if idx.shape[0]:
            out[full] = xp.add.reduceat(rows, starts, axis=0)
        return out

    def backward(self, g):
        d = self.wshape[1]
        if self.mode == 'max':
            cols = xp.broadcast_to(xp.arange(d), self.has.shape)
            gsel = g * self.has if fm.is_array(g) else g * self.has.astype(g.dtype.numpy)
            return IndexScatter.run(gsel, key=(self.rows_of, cols), shape=self.wshape), None
        per_entry = g[self.bag]
        gpsw = None
        factor = self.scale
        if self.weighted:
            weight, psw = self.saved_tensors
            if weight is not None:
                wrows = weight[self.idx]
                gpsw = (per_entry * wrows).sum((1,))
                if factor is not None:
                    gpsw = gpsw * factor
            factor = psw if factor is None else psw * factor
        if self.freq is not None:
            factor = self.freq if factor is None else factor * self.freq
        if factor is not None:
            per_entry = per_entry * factor.reshape((-1, 1))
        if self.sparse and self.needs_input_grad[0]:
            # sparse=True: one gradient row per entry read, as a sparse COO (uncoalesced)
            rows = per_entry if fm.is_array(per_entry) else per_entry._data
            return COO(self.idx.astype(np.int64)[None], xp.ascontiguousarray(rows),
                       self.wshape), gpsw
        gw = IndexScatter.run(per_entry, key=self.idx, shape=self.wshape) \
            if self.needs_input_grad[0] else None
        return gw, gpsw


@vmap_function('loop')
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode='mean', sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings, without the intermediate rows.

    A 2-D ``input`` holds one bag per row; a 1-D ``input`` is cut into bags at
    ``offsets`` (the last offset ends the last bag when ``include_last_offset``).
    """
    if weight.ndim != 2:
        raise ValueError(f'weight has to be a 2D Tensor, but got Tensor of dimension '
                         f'{weight.ndim}')
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f'embedding_bag: If per_sample_weights ({per_sample_weights.shape}) '
                         f'is not None, then it must have the same shape as the input '
                         f'({input.shape})')
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError('if input is 2D, then offsets has to be None, as input is treated '
                             'is a mini-batch of fixed length sequences. However, found offsets '
                             f'of type {type(offsets)}')
        n_bags, length = input.shape
        bag = xp.repeat(xp.arange(n_bags), length)
        idx = input._data.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError('offsets has to be a 1D Tensor but got None')
        if offsets.ndim != 1:
            raise ValueError('offsets has to be a 1D Tensor')
        off = offsets._data.astype(np.int64)
        idx = input._data
        n = idx.shape[0]
        if off.size and off[0] != 0:
            raise RuntimeError(f'offsets[0] has to be 0, i.e., the first sequence in the '
                               f'mini-batch has to start from position 0. However, got '
                               f'{int(off[0])}')
        if off.size and off[-1] > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                               f'got offsets[-1] of {int(off[-1])}')
        starts = off[:-1] if include_last_offset else off
        n_bags = starts.shape[0]
        if include_last_offset and off.size:
            idx = idx[:off[-1]]
        bag = xp.searchsorted(starts, xp.arange(idx.shape[0]), side='right') - 1
        psw = per_sample_weights
        if psw is not None and include_last_offset and off.size:
            psw = psw[:int(off[-1])]
    else:
        raise ValueError(f'input has to be 1D or 2D Tensor, but got Tensor of dimension '
                         f'{input.ndim}')
    if mode not in ('sum', 'mean', 'max'):
        raise ValueError('mode has to be one of sum, mean or max')
    if scale_grad_by_freq and mode == 'max':
        raise ValueError('max mode does not support scaling the gradient by the frequency')
    _check_indices(input, 'embedding_bag')
    if per_sample_weights is not None and mode != 'sum':
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    num = weight.shape[0]
    padding_idx = _padding_idx(padding_idx, num)
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = int(xp.flatnonzero((idx < 0) | (idx >= num))[0])
        raise RuntimeError(f'Index {bad} of input takes value {int(idx[bad])} which is not in '
                           f'the valid range [0, {num})')
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    dtype = weight._data.dtype
    scale = None
    if padding_idx is not None:
        scale = (idx != padding_idx).astype(dtype)
    if mode == 'mean':
        kept = scale if scale is not None else xp.ones(idx.shape, dtype)
        counts = xp.bincount(bag, weights=kept, minlength=n_bags)
        scale = (kept / xp.maximum(counts, 1)[bag]).astype(dtype)
    freq = None
    if scale_grad_by_freq:
        # Frequencies count every index of the input (those after an included last offset
        # too), as PyTorch counts them. PyTorch 2.13's CPU kernel divides some rows by
        # another row's count (pytorch/pytorch#190063, fixed upstream); this is the
        # documented 1 / frequency, which its embedding and CUDA kernels give.
        counts = xp.bincount(input._data.reshape(-1), minlength=num)
        freq = (1.0 / counts[idx]).astype(dtype)
    if sparse and mode == 'max':
        raise ValueError('max mode does not support sparse weights')
    return EmbeddingBagOp.apply(weight, psw, idx=idx, bag=bag, n_bags=n_bags, mode=mode,
                                scale=scale, freq=freq, sparse=sparse)


@vmap_function('one_hot')
def one_hot(tensor, num_classes=-1):
    """``(..., num_classes)`` int64 tensor with a 1 at each index."""
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError('one_hot is only applicable to index tensor of type LongTensor.')
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError('Can not infer total number of classes from empty tensor.')
        num_classes = int(t.max()) + 1
    if t.size:
        if t.min() < 0:
            raise RuntimeError('Class values must be non-negative.')
        if t.max() >= num_classes:
            raise RuntimeError('Class values must be smaller than num_classes.')
    elif num_classes < 0:
        raise RuntimeError('Class values must be smaller than num_classes.')
    out = (t[..., None] == xp.arange(num_classes)).astype(np.int64)
    return wrap(out)


__all__ = ['embedding', 'embedding_bag', 'one_hot']


embedding._capture_rule = _embedding_captured
