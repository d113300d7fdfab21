"""Multi-head attention, as ``torch.nn.MultiheadAttention``.

Sequence-first layout inside (``(L, N, E)``); ``batch_first=True`` transposes at the edges.
Masks follow PyTorch's convention: a boolean mask is True where attention is *not* allowed,
a float mask is added to the scores. Without ``need_weights`` the heads go through the fused
``F.scaled_dot_product_attention``; with it the weights are computed explicitly and returned
(averaged over heads unless ``average_attn_weights=False``).
"""
import math

import numpy as np

from ..._dtype import is_floating
from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from .. import functional as F
from .. import init
from .linear import NonDynamicallyQuantizableLinear
from ... import ops


def _canonical_mask(mask, mask_name, target_dtype):
    """A boolean mask becomes an additive float mask (-inf where True); floats pass."""
    if mask is None:
        return None
    if mask._data.dtype == np.bool_:
        zeros = ops.zeros(*mask.shape, dtype=target_dtype)
        return zeros.masked_fill(mask, float('-inf'))
    if not is_floating(mask._data.dtype):
        raise AssertionError(f'only bool and floating types of {mask_name} are supported')
    return mask


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched; PyTorch's shape checks and messages."""
    if query.ndim == 3:
        batched = True
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                f'For batched (3-D) `query`, expected `key` and `value` to be 3-D but found '
                f'{key.ndim}-D and {value.ndim}-D tensors respectively')
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(
                f'For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D '
                f'but found {key_padding_mask.ndim}-D tensor instead')
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(
                f'For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but '
                f'found {attn_mask.ndim}-D tensor instead')
    elif query.ndim == 2:
        batched = False
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(
                f'For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found '
                f'{key.ndim}-D and {value.ndim}-D tensors respectively')
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(
                f'For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D '
                f'but found {key_padding_mask.ndim}-D tensor instead')
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(
                    f'For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or '
                    f'3-D but found {attn_mask.ndim}-D tensor instead')
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f'Expected `attn_mask` shape to be {expected} but got '
                                         f'{attn_mask.shape}')
    else:
        raise AssertionError(f'query should be unbatched 2D or batched 3D tensor but received '
                             f'{query.ndim}-D query tensor')
    return batched


def _pad_last(t, n=1):
    """Append ``n`` zero columns on the last dimension (mask padding for bias_k / zero attn)."""
    return F.pad(t, (0, n))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None,
                                 average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first inputs (``(L, N, E)`` or unbatched ``(L, E)``).

    Returns ``(output, weights)``; ``weights`` is None unless ``need_weights``.
    """
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f'was expecting embedding dimension of {embed_dim_to_check}, but '
                             f'got {embed_dim}')
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f'embed_dim {embed_dim} not divisible by num_heads {num_heads}')
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f'key shape {key.shape} does not match value shape {value.shape}')

    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, 'key_padding_mask', dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError('Need attn_mask if specifying the is_causal hint. You may use the '
                           'Transformer module method `generate_square_subsequent_mask` to '
                           'create this mask.')
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None          # the hint stands for the mask: SDPA builds it
    else:
        attn_mask = _canonical_mask(attn_mask, 'attn_mask', dtype)
        if key_padding_mask is not None:
            is_causal = False

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError('use_separate_proj_weight is False but in_proj_weight is None')
        if query is key and key is value:
            q, k, v = F.linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias.chunk(3)
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            q = F.linear(query, w_q, b_q)
            if key is value:
                w_kv = in_proj_weight[embed_dim:]
                b_kv = in_proj_bias[embed_dim:] if in_proj_bias is not None else None
                k, v = F.linear(key, w_kv, b_kv).chunk(2, -1)
            else:
                k = F.linear(key, w_k, b_k)
                v = F.linear(value, w_v, b_v)
    else:
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = F.linear(query, q_proj_weight, b_q)
        k = F.linear(key, k_proj_weight, b_k)
        v = F.linear(value, v_proj_weight, b_v)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f'The shape of the 2D attn_mask is {attn_mask.shape}, but '
                                   f'should be {(tgt_len, src_len)}.')
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f'The shape of the 3D attn_mask is {attn_mask.shape}, but '
                                   f'should be {(bsz * num_heads, tgt_len, src_len)}.')
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    # learned key/value biases: one more key position
    if bias_k is not None and bias_v is not None:
        k = ops.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = ops.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError('bias_k and bias_v must be both set or both None')

    # heads: (L, N, E) -> (N*H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, v.shape[-1] // num_heads).transpose(0, 1)

    if add_zero_attn:
        k = ops.cat([k, ops.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = ops.cat([v, ops.zeros(bsz * num_heads, 1, v.shape[-1], dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f'expecting key_padding_mask shape of {(bsz, src_len)}, but '
                                 f'got {key_padding_mask.shape}')
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = ops.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = ops.matmul(weights, v)                              # (N*H, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, v.shape[-1])
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None


class MultiheadAttention(Module):
    """Attention over ``num_heads`` subspaces of ``embed_dim``, as ``torch.nn.MultiheadAttention``.

    Parameters: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E) or, when ``kdim`` or
    ``vdim`` differ from ``embed_dim``, ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``;
    ``bias_k``/``bias_v`` (1, 1, E) with ``add_bias_kv``; ``out_proj`` a Linear(E, E).
    """
    __constants__ = ['batch_first']

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        check_device(device)   # an unavailable device raises here
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f'embed_dim and num_heads must be greater than 0, got '
                             f'embed_dim={embed_dim} and num_heads={num_heads} instead')
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError('embed_dim must be divisible by num_heads')

        def empty(*shape):
            return Parameter(ops.zeros(*shape, dtype=dtype))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter('in_proj_weight', None)
        else:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            self.register_parameter('q_proj_weight', None)
            self.register_parameter('k_proj_weight', None)
            self.register_parameter('v_proj_weight', None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter('in_proj_bias', None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """Returns ``(attn_output, attn_output_weights)``; the weights are None unless
        ``need_weights`` (shape (N, L, S), or (N, num_heads, L, S) without averaging)."""
        batched = query.ndim == 3
        if self.batch_first and batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights


__all__ = ['MultiheadAttention']
