"""Linear algebra."""
from ..backend import xp
from ..autograd.function import Op
from .. import _dtype

_NAMES = {(1, 1): 'DotBackward0', (2, 1): 'MvBackward0', (2, 2): 'MmBackward0'}


class Matmul(Op):
    promotes = True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        self._node_name = _NAMES.get((a.ndim, b.ndim), 'MatmulBackward0' if min(a.ndim, b.ndim)
                                     == 1 else 'BmmBackward0')
        return xp.matmul(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        ga = gb = None
        if a.ndim == 1 and b.ndim == 1:           # dot: g is a scalar
            return (g * b if need_a else None), (g * a if need_b else None)
        if a.ndim == 1:                           # (k) @ (..., k, m) -> (..., m)
            if need_a:
                ga = (b @ g[..., None])[..., 0]
            if need_b:
                gb = a[:, None] @ g[..., None, :]
            return ga, gb
        if b.ndim == 1:                           # (..., n, k) @ (k) -> (..., n)
            if need_a:
                ga = g[..., None] @ b[None, :]
            if need_b:
                gb = (a.mT @ g[..., None])[..., 0]
            return ga, gb
        if need_a:
            ga = g @ b.mT
        if need_b:
            gb = a.mT @ g
        return ga, gb


def matmul(input, other):
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f'both arguments to matmul need to be at least 1D, but they are '
                           f'{a.ndim}D and {b.ndim}D')
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        if a.ndim <= 2 and b.ndim <= 2:
            if a.ndim == 1 and b.ndim == 1:
                raise RuntimeError('inconsistent tensor size, expected tensor [{}] and src [{}] '
                                   'to have the same number of elements, but got {} and {} '
                                   'elements respectively'.format(ka, kb, ka, kb))
            sa = 'x'.join(str(d) for d in (a.shape if a.ndim == 2 else (1,) + a.shape))
            sb = 'x'.join(str(d) for d in (b.shape if b.ndim == 2 else b.shape + (1,)))
            raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})')
        raise RuntimeError(f'matmul: the inner dimensions of shapes {list(a.shape)} and '
                           f'{list(b.shape)} do not match ({ka} != {kb})')
    if a.dtype != b.dtype:
        raise RuntimeError(f'expected m1 and m2 to have the same dtype, but got: '
                           f'{_dtype.FROM_NUMPY[a.dtype].name} != '
                           f'{_dtype.FROM_NUMPY[b.dtype].name}')
    return Matmul.apply(input, other)


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError('self must be a matrix' if input.ndim != 2 else 'mat2 must be a matrix')
    return matmul(input, mat2)


__all__ = ['matmul', 'mm']
METHODS = {name: globals()[name] for name in __all__}
