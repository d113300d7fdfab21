"""Norms: ``linalg.vector_norm``, ``matrix_norm`` and ``linalg.norm``. Re-exported by
``ops/linalg.py``. Their op, ``VectorNorm``, lives in reduction.py with ``torch.norm``."""
import math

from .. import _dtype
from ..backend import xp
from ..autograd.function import Op
from ._linalg_common import _tname
from .reduction import VectorNorm
from .linalg_products import _check_tensor
from .linalg_decompositions import svdvals


# -- norms -----------------------------------------------------------------------------

def _norm_dims(dim, ndim, op):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = max(ndim, 1)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, '
                             f'{n - 1}], but got {d})')
        out.append(d % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f'{op}: dim {list(dims)} appears multiple times in the list of dims')
    return tuple(sorted(out)) if ndim else None


def _check_norm_dtype(have, want):
    """PyTorch's rule for vector_norm's ``dtype``: of the input's kind, and no narrower."""
    name = _dtype.type_name(want)
    if not (want.is_floating_point or want.is_complex):
        raise RuntimeError(f'linalg.vector_norm: dtype should be floating point or complex, '
                           f'but got {name}')
    if want.is_complex != have.is_complex:
        kind = 'complex for complex' if have.is_complex else 'real for real'
        raise RuntimeError(f'linalg.vector_norm: dtype should be {kind} inputs, but got {name}')
    if _dtype.promote_types(have, want) is not want:
        raise RuntimeError(f'linalg.vector_norm: the dtype of the input '
                           f'({_dtype.type_name(have)}) should be convertible without narrowing '
                           f'to the specified dtype ({name})')


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    _check_tensor('linalg.vector_norm', x)
    if x._data.dtype.kind not in 'fVc':
        raise RuntimeError(f'linalg.vector_norm: Expected a floating point or complex tensor as '
                           f'input. Got {_tname(x)}')
    if isinstance(ord, str) or isinstance(ord, bool):
        raise TypeError(f'linalg_vector_norm(): argument \'ord\' must be Number, not '
                        f'{type(ord).__name__}')
    if dtype is not None:
        _check_norm_dtype(x.dtype, dtype)
        x = x.to(dtype)
    dims = _norm_dims(dim, x.ndim, 'linalg.vector_norm')
    if dims == () and dim is not None:
        dims = None
    if ord in (math.inf, -math.inf) or ord < 0:
        size = x.numel() if dims is None else int(xp.prod([x.shape[d] for d in dims]))
        if size == 0:
            raise RuntimeError(f'linalg.vector_norm cannot compute the {ord} norm on an empty '
                               'tensor because the operation does not have an identity')
    if dims is None and keepdim and x.ndim:
        dims = tuple(range(x.ndim))
    return VectorNorm.apply(x, ord=float(ord), dim=dims, keepdim=keepdim)


class _Extreme(Op):
    """amax / amin over one dim (ties share the gradient equally, as torch's amax)."""

    node_name = 'AmaxBackward0'

    def forward(self, x, dim, keepdim, smallest):
        out = x.min(axis=dim, keepdims=True) if smallest else x.max(axis=dim, keepdims=True)
        mask = (x == out).astype(x.dtype)
        self.weights = mask / mask.sum(axis=dim, keepdims=True)
        self.dim, self.keepdim = dim, keepdim
        return out if keepdim else out.squeeze(dim)

    def backward(self, g):
        if not self.keepdim:
            g = _unsqueeze(g, self.dim % self.weights.ndim)
        return g * self.weights


class _ExtremeMin(_Extreme):
    node_name = 'AminBackward0'


def _extreme(x, dim, keepdim, smallest):
    return (_ExtremeMin if smallest else _Extreme).apply(x, dim=dim, keepdim=keepdim,
                                                         smallest=smallest)


def _unsqueeze(g, d):
    shape = list(g.shape)
    shape.insert(d, 1)
    return g.reshape(tuple(shape))


def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    _check_tensor('linalg.matrix_norm', A)
    if A.ndim < 2:
        raise RuntimeError('linalg.matrix_norm: The input tensor A must have at least 2 '
                           'dimensions.')
    if A._data.dtype.kind not in 'fVc':
        raise RuntimeError(f'linalg.matrix_norm: Expected a floating point or complex tensor '
                           f'as input. Got {_tname(A)}')
    if dtype is not None:
        A = A.to(dtype)
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got {dims}')
    _norm_dims(dims, A.ndim, 'linalg.matrix_norm')
    d0, d1 = (d % A.ndim for d in dims)
    if isinstance(ord, str):
        if ord not in ('fro', 'nuc'):
            raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    if ord in ('nuc', 2, -2) and A._data.dtype.char in 'eE':   # an SVD: not in half
        raise RuntimeError(f'linalg.matrix_norm: Low precision dtypes not supported. Got '
                           f'{_tname(A)}')
    if ord == 'fro':
        return VectorNorm.apply(A, ord=2.0, dim=tuple(sorted((d0, d1))), keepdim=keepdim)
    if A.shape[d0] == 0 or A.shape[d1] == 0:
        if ord in (-1, -2, -math.inf, 'nuc', 2):
            raise RuntimeError(f'linalg.matrix_norm: The norm of order {ord} is not defined '
                               'for empty matrices')
    if ord in (1, -1, math.inf, -math.inf):
        # inf: the largest row sum; 1: the largest column sum
        sum_dim, max_dim = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = A.abs().sum(sum_dim, keepdim=keepdim)
        if not keepdim and max_dim > sum_dim:
            max_dim -= 1
        return _extreme(sums, max_dim, keepdim, ord < 0)
    # 2, -2 and 'nuc' go through the singular values of the matrices moved last
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    order = rest + [d0, d1]
    S = svdvals(A.permute(*order))
    if ord == 'nuc':
        out = S.sum(-1)
    else:
        out = _extreme(S, -1, False, ord < 0)
    if keepdim:
        out = out.reshape(tuple(out.shape) + (1, 1)).permute(*xp.argsort(order).tolist())
    return out


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm."""
    _check_tensor('linalg.norm', A)
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
        if len(dim) == 1:
            dim = dim[0]
    if ord is None:
        if isinstance(dim, tuple):
            return matrix_norm(A, 'fro', dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f'linalg.norm: If dim is not specified but ord is, the input must be '
                           f'1D or 2D. Got {A.ndim}D.')
    if isinstance(dim, tuple):
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f'linalg.norm: If dim is specified, it mut be of length 1 or 2. Got '
                           f'{dim} with ord={ord}')
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)
