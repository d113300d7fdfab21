"""Attention: scaled_dot_product_attention, one fused op, and multi_head_attention_forward
(nn.MultiheadAttention's computation, composed of recorded ops).

Forward: ``P = softmax(Q K^T * scale + mask)`` (rows that the mask hides entirely give 0,
as PyTorch's safe softmax), optional dropout on ``P``, ``O = P V``: two batched matmuls.
Backward: four batched matmuls and a softmax Jacobian-vector product from the saved ``P``.
Under ``create_graph=True`` the backward recomputes ``P`` from the recorded inputs with
tensor ops, so the double backward follows from those ops. With numba the passes between
the matrix products (scale, mask, softmax; the softmax gradient) are one kernel each
(``dynagrad.native.attention``).
"""
import math
import warnings

import numpy as np

from ...autograd.batched import vmap_function
from ... import ops
from ..._dtype import is_floating
from ...backend import native_kernel, xp
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...ops import formula as fm
from ...ops.random import bernoulli_mask
from ...tensor import Tensor, wrap
from .activation import softmax
from .dropout import dropout
from .linear import linear
from .vision import pad


def _sum_last(x):
    return x.sum((x.ndim - 1,)).reshape(tuple(x.shape[:-1]) + (1,))


class ScaledDotProductAttention(Op):
    widens_half = True
    node_name = 'UnsafeViewBackward0'   # torch's math path; see _node_for

    def forward(self, q, k, v, mask=None, bias=None, scale=1.0, keep=None, causal=False):
        """``mask``: a float mask tensor's array (an input); ``bias``: a constant additive
        array (from a boolean mask or is_causal); ``keep``: dropout's scaled keep mask;
        ``causal``: ``bias`` is the causal mask (a native kernel skips the hidden keys)."""
        self.scale = scale
        s = q @ xp.swapaxes(k, -1, -2)
        native = native_kernel('attention_probs', s) if s.size else None
        add = mask if mask is not None else None if causal else bias
        if native is not None and (add is None or np.broadcast_shapes(
                s.shape, add.shape) == s.shape):
            p, hidden = native(s, scale, add, causal)
        else:
            p, hidden = self._probs_arrays(s, mask, bias, scale)
        self.hidden, self.bias, self.keep = hidden, bias, keep
        pd = p if keep is None else p * keep
        self.save_for_backward(q, k, v, mask, p)
        return pd @ v

    @staticmethod
    def _probs_arrays(s, mask, bias, scale):
        """The NumPy path: the (..., L, S) probabilities from the unscaled scores ``s`` (a
        fresh array, reused), and the rows the mask hides entirely (or None)."""
        s *= scale
        if mask is not None:
            s = s + mask
        if bias is not None:
            s = s + bias
        m = s.max(-1, keepdims=True)
        hidden = None
        if mask is not None or bias is not None:
            hidden = m == -np.inf          # rows the mask hides entirely
            if hidden.any():
                m = xp.where(hidden, 0, m)
            else:
                hidden = None
        s -= m
        p = xp.exp(s, out=s)                   # s is a fresh array: reuse it
        z = p.sum(-1, keepdims=True)
        if hidden is not None:
            z = xp.where(hidden, 1, z)
        p /= z
        return p, hidden

    def backward(self, g):
        q, k, v, mask, p = self.saved_tensors
        keep, scale = self.keep, self.scale
        if fm.is_array(g):
            return self._backward_arrays(g, q, k, v, p)
        p = self._probs(q, k, mask)
        pd = p if keep is None else p * keep
        need = self.needs_input_grad
        gv = pd.mT @ g if need[2] else None
        gq = gk = gm = None
        if need[0] or need[1] or need[3]:
            dp = g @ v.mT
            if keep is not None:
                dp = dp * keep
            ds = p * (dp - _sum_last(dp * p))
            if need[0]:
                gq = (ds @ k) * scale
            if need[1]:
                gk = (ds.mT @ q) * scale
            if need[3]:
                gm = ds
        return gq, gk, gv, gm

    def _backward_arrays(self, g, q, k, v, p):
        """The same formulas on arrays, with fewer temporaries."""
        keep, scale = self.keep, self.scale
        need = self.needs_input_grad
        pd = p if keep is None else p * keep
        gv = xp.swapaxes(pd, -1, -2) @ g if need[2] else None
        gq = gk = gm = None
        if need[0] or need[1] or need[3]:
            dp = g @ xp.swapaxes(v, -1, -2)
            native = native_kernel('attention_probs_backward', dp) if (
                dp.shape == p.shape and (keep is None or keep.shape == p.shape)) else None
            if native is not None:
                # the scale goes into dS unless dS is also the mask's gradient
                fold = not need[3]
                ds = native(dp, p, keep, scale if fold else 1)
                gq = ds @ k if need[0] else None
                gk = xp.swapaxes(ds, -1, -2) @ q if need[1] else None
                if not fold:
                    if gq is not None:
                        gq *= scale
                    if gk is not None:
                        gk *= scale
                return gq, gk, gv, ds if need[3] else None
            if keep is not None:
                dp *= keep
            dp -= (dp * p).sum(-1, keepdims=True)
            dp *= p
            ds = dp
            if need[0]:
                gq = ds @ k
                gq *= scale
            if need[1]:
                gk = xp.swapaxes(ds, -1, -2) @ q
                gk *= scale
            if need[3]:
                gm = ds
        return gq, gk, gv, gm

    def _probs(self, q, k, mask):
        """P from tensors, recorded (for the double backward)."""
        s = (q @ k.mT) * self.scale
        if mask is not None:
            s = s + mask
        if self.bias is not None:
            bias = self.bias
            if self.hidden is not None:
                bias = xp.where(self.hidden, 0.0, bias)
            s = s + wrap(xp.asarray(bias.astype(fm.unwrap(q).dtype)))
        if self.hidden is not None:
            s = fm.where(xp.broadcast_to(self.hidden, s.shape), 0.0, s)
        p = softmax(s, -1)
        if self.hidden is not None:
            p = fm.where(xp.broadcast_to(self.hidden, p.shape), 0.0, p)
        return p


def _flash_eligible(q, k, v, mask, dropout_p):
    """Whether torch's CPU dispatcher picks its flash kernel (whose node name differs)."""
    arrays = (q._data, k._data, v._data)
    return (q.ndim == 4 and k.ndim == 4 and v.ndim == 4 and dropout_p == 0
            and q.shape[-1] == k.shape[-1] == v.shape[-1]
            and not (isinstance(mask, Tensor) and mask.requires_grad)
            and all(a.strides[-1] == a.itemsize or a.shape[-1] <= 1 for a in arrays))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` over the last two dimensions (batch dims broadcast).

    ``attn_mask``: boolean (True takes part) or float (added to the scores), broadcastable
    to (..., L, S). ``is_causal``: a top-left aligned lower-triangular boolean mask.
    ``dropout_p`` > 0 drops attention weights with dynagrad's default generator.
    """
    if autocast_state.active:
        query, key, value = autocast_args('lower', query, key, value)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f'Expected query, key, and value to all be  at least 2 dimensional, '
                           f'but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: '
                           f'{value.ndim} instead.')
    dt = query._data.dtype
    if key._data.dtype != dt or value._data.dtype != dt:
        raise RuntimeError(f'Expected query, key, and value to have the same dtype, but got '
                           f'query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: '
                           f'{value.dtype} instead.')
    if dt.kind not in 'fV':
        raise RuntimeError(f'scaled_dot_product_attention: expected floating-point query, key '
                           f'and value, got {query.dtype}')
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f'dropout probability has to be between 0 and 1, but got '
                           f'{dropout_p}')
    if is_causal and attn_mask is not None:
        raise RuntimeError('_scaled_dot_product_attention: Explicit attn_mask should not be set '
                           'when is_causal=True')
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(f'scaled_dot_product_attention: query and key must have the same '
                           f'embedding size, got {query.shape[-1]} and {key.shape[-1]}')
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f'scaled_dot_product_attention: key and value must have the same '
                           f'sequence length, got {key.shape[-2]} and {value.shape[-2]}')
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq != hk or hq != hv:
            if hk == 0 or hv == 0 or hq % hk or hq % hv:
                raise RuntimeError(f'scaled_dot_product_attention: number of heads in key and '
                                   f'value must divide the number of query heads for GQA, got '
                                   f'{hq}, {hk} and {hv}')
            key = key.repeat_interleave(hq // hk, -3) if hq != hk else key
            value = value.repeat_interleave(hq // hv, -3) if hq != hv else value
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else math.inf
    mask = bias = None
    if is_causal:
        bias = xp.where(xp.tri(L, S, dtype=bool), 0.0, -np.inf).astype(dt)
    elif attn_mask is not None:
        m = attn_mask._data
        if m.dtype == np.bool_:
            bias = xp.where(m, 0.0, -np.inf).astype(dt)
        elif m.dtype != dt and m.dtype != np.float32:   # float32 goes with any query dtype
            raise RuntimeError(f'Expected attn_mask dtype to be bool or float or to match query '
                               f'dtype, but got attn_mask.dtype: {attn_mask.dtype} and  '
                               f'query.dtype: {query.dtype} instead.')
        else:
            mask = attn_mask
    keep = None
    if dropout_p > 0:
        shape = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2],
                                    (attn_mask.shape[:-2] if attn_mask is not None else ()))
        shape = tuple(shape) + (L, S)
        if dropout_p == 1:
            keep = xp.zeros(shape, dt)
        else:
            # PyTorch's math path drops out the weights with bernoulli_(1 - p): same masks
            keep = bernoulli_mask(None, 1.0 - dropout_p, shape, dt) / dt.type(1.0 - dropout_p)
    op = ScaledDotProductAttention
    if query.ndim == 2 and key.ndim == 2 and value.ndim == 2:
        op = op.named('MmBackward0')
    elif _flash_eligible(query, key, value, attn_mask, dropout_p):
        op = op.named('ScaledDotProductFlashAttentionForCpuBackward0')
    return op.apply(query, key, value, mask, bias=bias, scale=scale, keep=keep,
                    causal=bool(is_causal))


# ---------------------------------------------------------------------------------------
# multi_head_attention_forward: nn.MultiheadAttention's computation, as a function.
# Sequence-first layout (``(L, N, E)``, or unbatched ``(L, E)``). Masks follow PyTorch's
# convention: a boolean mask is True where attention is *not* allowed, a float mask is
# added to the scores. Without ``need_weights`` the heads go through the fused
# scaled_dot_product_attention; with it the weights are computed explicitly and returned.
# Errors are AssertionError / RuntimeError with PyTorch's texts, as its callers expect.

def _canonical_mask(mask, mask_name, target_dtype, other=None, other_name=''):
    """A boolean mask becomes an additive float mask (-inf where True); floats pass.

    ``other``: the mask this one is combined with; differing dtypes are deprecated.
    """
    if mask is None:
        return None
    dt = mask._data.dtype
    if dt != np.bool_ and not is_floating(dt):
        raise AssertionError(f'only bool and floating types of {mask_name} are supported')
    if other is not None and other._data.dtype != dt:
        warnings.warn(f'Support for mismatched {mask_name} and {other_name} is deprecated. '
                      f'Use same type for both instead.', stacklevel=3)
    if dt == np.bool_:
        return ops.zeros(*mask.shape, dtype=target_dtype).masked_fill(mask, float('-inf'))
    return mask


def _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
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


def _pad_last(t):
    """One more (zero) key column in a mask, for bias_k/bias_v or add_zero_attn."""
    return pad(t, (0, 1))


def _in_projection_packed(query, key, value, weight, bias, embed_dim):
    """q, k, v from the packed (3E, E) weight; one GEMM where inputs are shared."""
    if key is value:
        if query is key:                       # self-attention
            return linear(query, weight, bias).chunk(3, -1)
        b_q = b_kv = None                      # encoder-decoder attention
        if bias is not None:
            b_q, b_kv = bias[:embed_dim], bias[embed_dim:]
        k, v = linear(key, weight[embed_dim:], b_kv).chunk(2, -1)
        return linear(query, weight[:embed_dim], b_q), k, v
    w_q, w_k, w_v = weight.chunk(3)
    b_q = b_k = b_v = None
    if bias is not None:
        b_q, b_k, b_v = bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _in_projection(query, key, value, w_q, w_k, w_v, bias):
    """q, k, v from three weights (key and value may have their own widths)."""
    e_q, e_k, e_v = query.shape[-1], key.shape[-1], value.shape[-1]
    for name, w, expected in (('query', w_q, (e_q, e_q)), ('key', w_k, (e_q, e_k)),
                              ('value', w_v, (e_q, e_v))):
        if tuple(w.shape) != expected:
            raise AssertionError(f'expecting {name} weights shape of {expected}, but got '
                                 f'{w.shape}')
    b_q = b_k = b_v = None
    if bias is not None:
        b_q, b_k, b_v = bias.chunk(3)
        for name, b in (('query', b_q), ('key', b_k), ('value', b_v)):
            if tuple(b.shape) != (e_q,):
                raise AssertionError(f'expecting {name} bias shape of {(e_q,)}, but got '
                                     f'{b.shape}')
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _static_heads(static, name, bsz_heads, head_dim):
    """A precomputed (N*H, S, head_dim) key or value, checked."""
    if static.shape[0] != bsz_heads:
        raise AssertionError(f'expecting {name}.size(0) of {bsz_heads}, but got '
                             f'{static.shape[0]}')
    if static.shape[2] != head_dim:
        raise AssertionError(f'expecting {name}.size(2) of {head_dim}, but got '
                             f'{static.shape[2]}')
    return static


@vmap_function('loop')
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first inputs (``(L, N, E)`` or unbatched ``(L, E)``),
    as ``torch.nn.functional.multi_head_attention_forward``.

    Returns ``(attn_output, attn_weights)``: the output (L, N, E); the weights (N, L, S)
    averaged over heads, or (N, num_heads, L, S) with ``average_attn_weights=False``, or
    None without ``need_weights``. ``static_k``/``static_v`` (N*num_heads, S, E/num_heads)
    replace the projected keys/values.
    """
    batched = _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, 'key_padding_mask', dtype,
                                       attn_mask, 'attn_mask')
    if is_causal and attn_mask is None:
        raise RuntimeError('Need attn_mask if specifying the is_causal hint. You may use the '
                           'Transformer module method `generate_square_subsequent_mask` to '
                           'create this mask.')
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None          # the hint stands for the mask: SDPA builds it
    else:
        attn_mask = _canonical_mask(attn_mask, 'attn_mask', dtype)
        if key_padding_mask is not None:
            is_causal = False     # the merged mask is no longer causal

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

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError('use_separate_proj_weight is False but in_proj_weight is None')
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias,
                                        embed_dim)
    else:
        for name, w in (('q', q_proj_weight), ('k', k_proj_weight), ('v', v_proj_weight)):
            if w is None:
                raise AssertionError(f'use_separate_proj_weight is True but {name}_proj_weight '
                                     f'is None')
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, in_proj_bias)

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
        if static_k is not None:
            raise AssertionError('bias cannot be added to static key.')
        if static_v is not None:
            raise AssertionError('bias cannot be added to static value.')
        k = ops.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = ops.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError('bias_k is set but bias_v is None')
    elif bias_v is not None:
        raise AssertionError('bias_v is set but bias_k is None')

    # heads: (L, N, E) -> (N*H, L, head_dim)
    heads = bsz * num_heads
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], heads, head_dim).transpose(0, 1)
    else:
        k = _static_heads(static_k, 'static_k', heads, head_dim)
    if static_v is None:
        v = v.reshape(v.shape[0], heads, head_dim).transpose(0, 1)
    else:
        v = _static_heads(static_v, 'static_v', heads, head_dim)

    if add_zero_attn:
        k = ops.cat([k, ops.zeros(heads, 1, head_dim, dtype=k.dtype)], 1)
        v = ops.cat([v, ops.zeros(heads, 1, head_dim, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f'Expected key_padded_mask.shape[0] to be {bsz}, but got '
                                 f'{key_padding_mask.shape[0]}')
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f'Expected key_padded_mask.shape[1] to be {src_len}, but got '
                                 f'{key_padding_mask.shape[1]}')
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = ops.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = ops.matmul(weights, v)                              # (N*H, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
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
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None


__all__ = ['scaled_dot_product_attention', 'multi_head_attention_forward']
