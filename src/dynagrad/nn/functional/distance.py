"""Distances and similarities: cosine_similarity, pairwise_distance, pdist, cdist.

``pdist`` and ``cdist`` are fused ops (``PdistBackward0``, ``CdistBackward0``). The
gradient of a p-norm distance with respect to the difference ``v`` of two points is
``sign(v) |v|^(p-1) / d^(p-1)`` (``v / d`` for p = 2), taken as 0 where the distance is 0,
as PyTorch does. Euclidean ``cdist`` on larger inputs uses the matrix-product expansion
``|a|^2 + |b|^2 - 2 a.b`` (clamped at 1e-30 before the square root), as PyTorch's default
``compute_mode`` does, and its backward is two batched matmuls.
"""
import math

import numpy as np

from ...autograd.batched import vmap_function
from ...backend import xp
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...ops import formula as fm
from ...ops.indexing import IndexScatter
from ...ops.pointwise import not_implemented
from ...tensor import wrap
from ... import ops as _ops


def _pnorm(diff, p):
    """p-norm of ``diff`` (an array) over its last axis."""
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return xp.sqrt((diff * diff).sum(-1))
    if math.isinf(p):
        if diff.shape[-1] == 0:
            return xp.zeros(diff.shape[:-1], diff.dtype)
        return a.max(-1)
    return (a ** p).sum(-1) ** (1.0 / p)


def _pnorm_grad(diff, dist, p):
    """d dist / d diff (dual), ``dist`` with a trailing axis of 1; 0 where dist == 0."""
    if p == 0:
        return diff * 0.0
    sgn = fm.sign(diff)
    if p == 1:
        return sgn
    zero = fm.unwrap(dist) == 0
    safe = fm.where(zero, 1.0, dist)
    keep = (~zero).astype(fm.unwrap(diff).dtype)
    if p == 2:
        return diff / safe * keep
    if math.isinf(p):
        return sgn * (xp.abs(fm.unwrap(diff)) == fm.unwrap(dist)).astype(fm.unwrap(diff).dtype)
    ad = diff * sgn
    return sgn * ad ** (p - 1) / safe ** (p - 1) * keep


# -- pdist ---------------------------------------------------------------------------------

class Pdist(Op):
    """Distances between the rows of an N x M input, for pairs i < j in row-major order."""
    widens_half = True

    def forward(self, x, p=2.0):
        n = x.shape[0]
        self.p, self.n = p, n
        self.rows = xp.triu_indices(n, 1)
        i, j = self.rows
        out = _pnorm(x[i] - x[j], p)
        self.save_for_backward(x, out)
        return out

    def backward(self, g):
        x, dist = self.saved_tensors
        i, j = self.rows
        if i.size == 0:
            return x * 0.0
        diff = x[i] - x[j]
        gd = _pnorm_grad(diff, dist.reshape((-1, 1)), self.p) * g.reshape((-1, 1))
        shape = tuple(x.shape)
        return (IndexScatter.run(gd, key=(i,), shape=shape)
                - IndexScatter.run(gd, key=(j,), shape=shape))


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of ``input`` (N x M)."""
    if input.ndim != 2:
        raise RuntimeError(f'pdist only supports 2D tensors, got: {input.ndim}D')
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError(f'pdist only supports floating-point dtypes, got {input.dtype}')
    if input._data.dtype.char in 'eE' and input.shape[0] > 1:   # no float16/bfloat16 kernel
        raise not_implemented('pdist', input._data)
    if p < 0:
        raise RuntimeError('pdist only supports non-negative p values')
    return Pdist.apply(input, p=float(p))


# -- cdist ---------------------------------------------------------------------------------

class Cdist(Op):
    """Distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R)."""
    widens_half = True
    promotes = True

    def forward(self, x1, x2, p=2.0, use_mm=False):
        self.p = p
        if use_mm:
            # The matrix-product expansion, as torch's mm path (its node is a view).
            sq1 = (x1 * x1).sum(-1)[..., :, None]
            sq2 = (x2 * x2).sum(-1)[..., None, :]
            s = sq1 + sq2 - 2.0 * (x1 @ xp.swapaxes(x2, -1, -2))
            out = xp.sqrt(xp.maximum(s, 1e-30))
            self.clamped = s <= 1e-30
        else:
            out = _pnorm(x1[..., :, None, :] - x2[..., None, :, :], p)
            self.clamped = None
        self.save_for_backward(x1, x2, out)
        return out

    def backward(self, g):
        x1, x2, dist = self.saved_tensors
        p = self.p
        need1, need2 = self.needs_input_grad[:2]
        if p == 2:
            zero = fm.unwrap(dist) == 0
            if self.clamped is not None:
                zero = zero | self.clamped
            keep = (~zero).astype(fm.unwrap(dist).dtype)
            G = g / fm.where(zero, 1.0, dist) * keep
            g1 = g2 = None
            if need1:
                g1 = x1 * G.sum((G.ndim - 1,)).reshape(tuple(G.shape[:-1]) + (1,)) - G @ x2
            if need2:
                g2 = x2 * G.sum((G.ndim - 2,)).reshape(tuple(G.shape[:-2]) + (G.shape[-1], 1)) \
                    - G.mT @ x1
            return g1, g2
        diff = x1[..., :, None, :] - x2[..., None, :, :]
        gd = _pnorm_grad(diff, dist.reshape(tuple(dist.shape) + (1,)), p) \
            * g.reshape(tuple(g.shape) + (1,))
        g1 = gd.sum((gd.ndim - 2,)) if need1 else None
        g2 = -gd.sum((gd.ndim - 3,)) if need2 else None
        return g1, g2


_MODES = ('use_mm_for_euclid_dist_if_necessary', 'use_mm_for_euclid_dist',
          'donot_use_mm_for_euclid_dist')


def cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'):
    """The p-norm distance between each row of ``x1`` and each row of ``x2`` (batched)."""
    if autocast_state.active:
        x1, x2 = autocast_args('fp32', x1, x2)
    if x1.ndim < 2:
        raise RuntimeError(f'cdist only supports at least 2D tensors, X1 got: {x1.ndim}D')
    if x2.ndim < 2:
        raise RuntimeError(f'cdist only supports at least 2D tensors, X2 got: {x2.ndim}D')
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f'X1 and X2 must have the same number of columns. X1: '
                           f'{x1.shape[-1]} X2: {x2.shape[-1]}')
    if x1._data.dtype.kind not in 'fV' or x2._data.dtype.kind not in 'fV':
        raise RuntimeError(f'cdist only supports floating-point dtypes, X1 got: {x1.dtype}, '
                           f'X2 got: {x2.dtype}')
    if p < 0:
        raise RuntimeError('cdist only supports non-negative p values')
    if compute_mode is None:
        compute_mode = _MODES[0]
    if compute_mode not in _MODES:
        raise ValueError(f'{compute_mode} is not a valid value for compute_mode')
    np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    use_mm = p == 2 and x1.shape[-1] > 0 and (
        compute_mode == _MODES[1] or compute_mode == _MODES[0] and (
            x1.shape[-2] > 25 or x2.shape[-2] > 25))
    if x1._data.dtype.char in 'eE' and not use_mm:   # PyTorch's kernel lacks them; matmul not
        raise not_implemented('cdist', x1._data)
    op = Cdist.named('ViewBackward0') if use_mm else Cdist
    return op.apply(x1, x2, p=float(p), use_mm=use_mm)


# -- pairwise and cosine ---------------------------------------------------------------------

class _LastDimNorm(Op):
    """The p-norm over the last dimension (torch's ``norm(x, p, dim)`` node)."""
    widens_half = True
    node_name = 'NormBackward1'

    def forward(self, x, p=2.0, keepdim=False):
        self.p, self.keepdim = p, keepdim
        out = _pnorm(x, p) if x.ndim else xp.abs(x)
        self.save_for_backward(x, out)
        return out[..., None] if keepdim and x.ndim else out

    def backward(self, g):
        x, out = self.saved_tensors
        if not x.ndim:
            return g * _pnorm_grad(x, out, self.p) if self.p != 0 else g * 0.0
        if not self.keepdim:
            g = g.reshape(tuple(g.shape) + (1,))
        return _pnorm_grad(x, out.reshape(tuple(out.shape) + (1,)), self.p) * g


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``norm(x1 - x2 + eps, p)`` over the last dimension (inputs broadcast)."""
    _check_broadcast(x1, x2)
    return _LastDimNorm.apply(x1 - x2 + eps, p=float(p), keepdim=keepdim)


def _check_broadcast(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    for k in range(1, min(len(sa), len(sb)) + 1):
        if sa[-k] != sb[-k] and sa[-k] != 1 and sb[-k] != 1:
            dim = max(len(sa), len(sb)) - k
            raise RuntimeError(f'The size of tensor a ({sa[-k]}) must match the size of tensor '
                               f'b ({sb[-k]}) at non-singleton dimension {dim}')


@vmap_function('cosine_similarity')
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1/max(|x1|, eps) * x2/max(|x2|, eps))`` along ``dim`` (inputs broadcast).

    Each norm is clamped at ``eps`` without cutting its gradient, as in PyTorch 2.x.
    """
    _check_broadcast(x1, x2)
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    n1 = _clamped_norm(x1, dim, eps)
    n2 = _clamped_norm(x2, dim, eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _clamped_norm(x, dim, eps):
    n = _ops.norm(x, 2, dim=dim, keepdim=True)
    lifted = xp.maximum(n._data, eps)
    if (lifted != n._data).any():
        n = n + wrap(xp.asarray((lifted - n._data).astype(n._data.dtype)))
    return n


__all__ = ['pdist', 'cdist', 'pairwise_distance', 'cosine_similarity']
