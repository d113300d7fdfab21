"""``flex_attention``: attention whose scores a function modifies (``score_mod``) and whose
pattern a ``BlockMask`` restricts, as ``torch.nn.attention.flex_attention``.

PyTorch generates a fused kernel from the two functions; here they run once over the whole
score matrix, on tensors whose indices broadcast: ``b`` has shape (B, 1, 1, 1), ``h``
(1, H, 1, 1), ``q_idx`` (1, 1, L, 1) and ``kv_idx`` (1, 1, 1, S). A function written for
PyTorch's per-element calls (arithmetic, comparisons, ``where``, indexing a tensor with the
indices) therefore gives the same values, and gradients flow through it and through the
attention as through any dynagrad ops. A function that branches in Python on an index's
value cannot run this way (PyTorch's cannot either, under its vmap).

A ``BlockMask`` holds the block-sparse layout PyTorch computes (the same
``kv_num_blocks``/``kv_indices`` and full blocks, BLOCK_SIZE 128 by default); flex_attention
masks the scores with the blocks it lists, applying ``mask_mod`` inside the partial ones.
Rows with nothing to attend to give zeros and a log-sum-exp of -inf, as in PyTorch.
"""
import dataclasses
import math
import warnings
from typing import TypedDict

from ... import ops
from ..._dtype import bool as bool_, int32
from ...tensor import Tensor
from ..functional.activation import softmax

__all__ = ['BlockMask', 'flex_attention', 'AuxOutput', 'AuxRequest', 'FlexKernelOptions',
           'create_block_mask', 'create_mask', 'or_masks', 'and_masks', 'noop_mask']

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of PyTorch's generated kernels; accepted and unused here."""


@dataclasses.dataclass(frozen=True)
class AuxRequest:
    lse: bool = False
    max_scores: bool = False


class AuxOutput:
    def __init__(self, lse=None, max_scores=None):
        self.lse, self.max_scores = lse, max_scores

    def __repr__(self):
        return f'AuxOutput(lse={self.lse!r}, max_scores={self.max_scores!r})'


def noop_mask(batch, head, token_q, token_kv):
    """Every position attends everywhere."""
    return batch.new_ones(()).bool() if isinstance(batch, Tensor) else True


def _combine(mask_mods, name, join, start):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f'All inputs should be callable mask_mods: {mask_mods}')

    def combined(b, h, q_idx, kv_idx):
        result = start
        for mod in mask_mods:
            result = join(mod(b, h, q_idx, kv_idx), result)
        return result
    combined.__name__ = name
    return combined


def and_masks(*mask_mods):
    """A mask_mod that allows what every one of ``mask_mods`` allows."""
    return _combine(mask_mods, 'and_mask', lambda a, b: a & b, True)


def or_masks(*mask_mods):
    """A mask_mod that allows what any of ``mask_mods`` allows."""
    return _combine(mask_mods, 'or_mask', lambda a, b: a | b, False)


def _grid(B, H, Q_LEN, KV_LEN):
    """The broadcasting index tensors (b, h, q_idx, kv_idx) of a (B, H, Q, KV) grid."""
    return (ops.arange(B).view(B, 1, 1, 1), ops.arange(H).view(1, H, 1, 1),
            ops.arange(Q_LEN).view(1, 1, Q_LEN, 1), ops.arange(KV_LEN).view(1, 1, 1, KV_LEN))


def _mask_values(mask_mod, B, H, Q_LEN, KV_LEN):
    b, h, q, kv = _grid(B, H, Q_LEN, KV_LEN)
    out = mask_mod(b, h, q, kv)
    if not isinstance(out, Tensor):
        out = ops.tensor(bool(out))
    return out.bool().expand(B, H, Q_LEN, KV_LEN)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod (B or H None means 1)."""
    return _mask_values(mod_fn, B or 1, H or 1, Q_LEN, KV_LEN).contiguous()


def _ordered(flags):
    """(count, indices): how many blocks are set per row, and the block indices with the
    set ones first, each group ascending (PyTorch's layout)."""
    flags = flags.to(int32)
    return flags.sum(-1).to(int32), \
        ops.argsort(flags, dim=-1, descending=True, stable=True).to(int32)


class BlockMask:
    """The block-sparse layout of a mask: for each (batch, head, query block) the key blocks
    to compute, partial ones (``kv_num_blocks``, ``kv_indices``, where ``mask_mod`` applies)
    and full ones (``full_kv_*``), and the transposed layout for the backward pass."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod=noop_mask, **kwargs):
        if kv_indices.ndim < 2:
            raise RuntimeError('BlockMask must have at least 2 dimensions')
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, **kwargs):
        size = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * size[0], kv_indices.shape[-1] * size[1])
        partial = _blocks_dense(kv_num_blocks, kv_indices)
        full = None if full_kv_num_blocks is None else \
            _blocks_dense(full_kv_num_blocks, full_kv_indices)
        q = _ordered(partial.transpose(-1, -2)) if compute_q_blocks else (None, None)
        fq = _ordered(full.transpose(-1, -2)) if compute_q_blocks and full is not None \
            else (None, None)
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   q[0], q[1], fq[0], fq[1], size, mask_mod or noop_mask)

    def as_tuple(self, flatten=True):
        return (self.seq_lengths[0], self.seq_lengths[1], self.kv_num_blocks, self.kv_indices,
                self.full_kv_num_blocks, self.full_kv_indices, self.q_num_blocks,
                self.q_indices, self.full_q_num_blocks, self.full_q_indices,
                *self.BLOCK_SIZE, self.mask_mod)

    @property
    def shape(self):
        return (*self.kv_indices.shape[:-2], *self.seq_lengths)

    def to_dense(self):
        """The (B, H, query blocks, key blocks) int32 layout: 1 where a block is computed."""
        dense = _blocks_dense(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _blocks_dense(self.full_kv_num_blocks, self.full_kv_indices)
        return dense.to(int32)

    def sparsity(self):
        """The percentage of the score matrix that is not computed."""
        computed = self.to_dense().sum().item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        total = math.prod(self.shape)
        return 100 * (1 - computed / total)

    def __getitem__(self, index):
        # an integer keeps its dimension (bm[0] is batch entry 0 of a batch of one)
        keep = lambda i: slice(i, i + 1 if i != -1 else None) if isinstance(i, int) else i  # noqa
        index = tuple(map(keep, index)) if isinstance(index, tuple) else keep(index)
        pick = lambda t: None if t is None else t[index]   # noqa: E731
        kv = pick(self.kv_indices)
        if kv.ndim < 2:
            raise RuntimeError('BlockMask must have at least 2 dimensions')
        return BlockMask(self.seq_lengths, pick(self.kv_num_blocks), kv,
                         pick(self.full_kv_num_blocks), pick(self.full_kv_indices),
                         pick(self.q_num_blocks), pick(self.q_indices),
                         pick(self.full_q_num_blocks), pick(self.full_q_indices),
                         self.BLOCK_SIZE, self.mask_mod)

    def __repr__(self):
        def line(name):
            value = getattr(self, name)
            return f'    {name}={value.shape if value is not None else None},'
        names = ['kv_num_blocks', 'kv_indices', 'full_kv_num_blocks', 'full_kv_indices',
                 'q_num_blocks', 'q_indices', 'full_q_num_blocks', 'full_q_indices']
        mod = getattr(self.mask_mod, '__name__', self.mask_mod)
        return '\n'.join(['BlockMask('] + [line(n) for n in names] + [
            f'    BLOCK_SIZE={self.BLOCK_SIZE},', f'    shape={self.shape},',
            f'    sparsity={self.sparsity():.2f}%,', f'    mask_mod={mod}', ')'])

    def to(self, device):
        return self


def _blocks_dense(num_blocks, indices):
    """(..., query blocks, key blocks) booleans: the first ``num_blocks`` of each row's
    ``indices`` are set."""
    n_kv = indices.shape[-1]
    rank = ops.arange(n_kv).expand(*indices.shape)
    listed = rank < num_blocks.unsqueeze(-1)
    dense = ops.zeros(*indices.shape[:-1], n_kv, dtype=bool_)
    return dense.scatter(-1, indices.long(), listed)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """The ``BlockMask`` of ``mask_mod`` over (B, H, Q_LEN, KV_LEN); B or H None means the
    mask is the same for every batch entry or head."""
    bq, bkv = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    b, h = B or 1, H or 1
    nq, nkv = -(-Q_LEN // bq), -(-KV_LEN // bkv)
    dense = _mask_values(mask_mod, b, h, Q_LEN, KV_LEN)
    # positions past the end pad the last blocks with False: a padded block is never full
    padded = ops.zeros(b, h, nq * bq, nkv * bkv, dtype=bool_)
    padded[:, :, :Q_LEN, :KV_LEN] = dense
    blocks = padded.view(b, h, nq, bq, nkv, bkv)
    counts = blocks.sum(dim=(3, 5))
    any_set, full = counts > 0, counts == bq * bkv
    if separate_full_blocks:
        partial = any_set & ~full
    else:
        partial, full = any_set, None
    kv = _ordered(partial)
    q = _ordered(partial.transpose(-1, -2))
    fkv = _ordered(full) if full is not None else (None, None)
    fq = _ordered(full.transpose(-1, -2)) if full is not None else (None, None)
    return BlockMask((Q_LEN, KV_LEN), kv[0], kv[1], fkv[0], fkv[1], q[0], q[1], fq[0], fq[1],
                     (bq, bkv), mask_mod)


def _allowed(block_mask, B, H, L, S):
    """(B', H', L, S) booleans: where ``block_mask`` lets a query attend to a key."""
    bq, bkv = block_mask.BLOCK_SIZE
    partial = _blocks_dense(block_mask.kv_num_blocks, block_mask.kv_indices)
    b, h = partial.shape[0], partial.shape[1]
    grow = lambda t: t.repeat_interleave(bq, -2).repeat_interleave(bkv, -1)[..., :L, :S]  # noqa
    allowed = grow(partial) & _mask_values(block_mask.mask_mod, b, h, L, S)
    if block_mask.full_kv_num_blocks is not None:
        allowed = allowed | grow(_blocks_dense(block_mask.full_kv_num_blocks,
                                               block_mask.full_kv_indices))
    return allowed


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """``softmax(score_mod(Q K^T * scale)) V`` over the positions ``block_mask`` allows.
    query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev) -> (B, Hq, L, Ev)."""
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise NotImplementedError('NYI: query, key, and value must be 4D tensors')
    if return_lse and return_aux is not None:
        raise ValueError('Cannot specify both return_lse and return_aux. return_lse is '
                         'deprecated, please use return_aux=AuxRequest(lse=True) instead.')
    if return_aux is not None and return_aux.max_scores:
        raise NotImplementedError('Returning max scores is not supported on CPU/MPS.')
    if return_lse:
        warnings.warn('return_lse is deprecated and will be removed in v2.10. Please use '
                      'return_aux=AuxRequest(lse=True) instead.', FutureWarning, stacklevel=2)
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(f'Expect query and key/value to have the same number of heads but '
                             f'got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.')
        if Hq % Hkv:
            raise ValueError(f'Expect number of query heads to be a multiple of kv heads for '
                             f'GQA but got Hq={Hq} and Hkv={Hkv}.')
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    if block_mask is not None and block_mask.seq_lengths != (L, S):
        raise ValueError(f'block_mask was created for block_mask.shape={block_mask.shape} but '
                         f'got q_len={L} and kv_len={S}. As the block mask was created for a '
                         'smaller length than you are using it for, you likely need to create '
                         'a new block mask.')
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = ops.matmul(query, key.transpose(-2, -1)) * scale
    if score_mod is not None:
        b, h, q, kv = _grid(B, Hq, L, S)
        scores = score_mod(scores, b, h, q, kv).expand(B, Hq, L, S)
    if block_mask is not None:
        allowed = _allowed(block_mask, B, Hq, L, S)
        scores = scores.masked_fill(~allowed, float('-inf'))
    lse = ops.logsumexp(scores, -1)
    # a row with no position left gives zeros (its softmax would be 0/0)
    empty = ops.isneginf(lse).unsqueeze(-1)
    weights = softmax(scores.masked_fill(empty, 0.0), -1).masked_fill(empty, 0.0)
    out = ops.matmul(weights, value)
    if return_lse:
        return out, lse
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None)
    return out
