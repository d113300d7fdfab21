"""Attention: scaled_dot_product_attention, one fused op.

Forward: ``P = softmax(Q K^T * scale + mask)`` (rows that the mask hides entirely give 0,
as PyTorch's safe softmax), optional dropout on ``P``, ``O = P V``: two batched matmuls.
Backward: four batched matmuls and a softmax Jacobian-vector product from the saved ``P``.
Under ``create_graph=True`` the backward recomputes ``P`` from the recorded inputs with
tensor ops, so the double backward follows from those ops.
"""
import math

import numpy as np

from ...backend import xp
from ...autograd.function import Op, autocast_args, autocast_state
from ...ops import formula as fm
from ...ops.random import array_rng, uniform01
from ...tensor import Tensor, wrap
from .activation import softmax


def _sum_last(x):
    return x.sum((x.ndim - 1,)).reshape(tuple(x.shape[:-1]) + (1,))


class ScaledDotProductAttention(Op):
    widens_half = True
    node_name = 'UnsafeViewBackward0'   # torch's math path; see _node_for

    def forward(self, q, k, v, mask=None, bias=None, scale=1.0, keep=None):
        """``mask``: a float mask tensor's array (an input); ``bias``: a constant additive
        array (from a boolean mask or is_causal); ``keep``: dropout's scaled keep mask."""
        self.scale = scale
        s = q @ xp.swapaxes(k, -1, -2)
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
        self.hidden, self.bias, self.keep = hidden, bias, keep
        pd = p if keep is None else p * keep
        self.save_for_backward(q, k, v, mask, p)
        return pd @ v

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
            u = uniform01(array_rng(None), shape, dt)
            keep = ((u >= dropout_p) * (1.0 / (1.0 - dropout_p))).astype(dt)
    op = ScaledDotProductAttention
    if query.ndim == 2 and key.ndim == 2 and value.ndim == 2:
        op = op.named('MmBackward0')
    elif _flash_eligible(query, key, value, attn_mask, dropout_p):
        op = op.named('ScaledDotProductFlashAttentionForCpuBackward0')
    return op.apply(query, key, value, mask, bias=bias, scale=scale, keep=keep)


__all__ = ['scaled_dot_product_attention']
