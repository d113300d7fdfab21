"""Reductions."""
from ..backend import xp
from ..autograd.function import Op
from ._formula import broadcast_to, unsqueeze_dims


def _dims(dim, ndim, op):
    """Normalise ``dim`` (int, tuple or None) to a sorted tuple of non-negative axes."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = max(ndim, 1)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f'{op}(): Dimension out of range (expected to be in range of '
                             f'[{-n}, {n - 1}], but got {d})')
        out.append(d % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f'{op}(): dim {out} appears multiple times in the list of dims')
    return tuple(sorted(out)) if ndim else ()


class Sum(Op):
    def forward(self, x, dim=None, keepdim=False, dtype=None):
        self.shape = x.shape
        self.dims = dim
        self.keepdim = keepdim
        if dtype is None and x.dtype.kind in 'biu':
            dtype = xp.int64
        if dim is not None:
            self._node_name = 'SumBackward1'
        return x.sum(axis=dim, keepdims=keepdim, dtype=dtype)

    def backward(self, g):
        if self.dims is not None and not self.keepdim:
            g = unsqueeze_dims(g, self.dims, len(self.shape))
        return broadcast_to(g, self.shape)


class Mean(Op):
    def forward(self, x, dim=None, keepdim=False, dtype=None):
        if x.dtype.kind not in 'fc' and dtype is None:
            name = {'i': 'Long', 'b': 'Bool', 'u': 'Byte'}.get(x.dtype.kind, str(x.dtype))
            raise RuntimeError('mean(): could not infer output dtype. Input dtype must be '
                               f'either a floating point or complex dtype. Got: {name}')
        self.shape = x.shape
        self.dims = dim
        self.keepdim = keepdim
        if dim is not None:
            self._node_name = 'MeanBackward1'
        if x.size:
            out = x.mean(axis=dim, keepdims=keepdim, dtype=dtype)
        else:                                   # NaN, as torch gives, without NumPy's warning
            out = x.sum(axis=dim, keepdims=keepdim, dtype=dtype) * xp.nan
        self.count = max(x.size // max(out.size, 1), 1)
        return out

    def backward(self, g):
        if self.dims is not None and not self.keepdim:
            g = unsqueeze_dims(g, self.dims, len(self.shape))
        return broadcast_to(g / self.count, self.shape)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    dims = _dims(dim, input.ndim, 'sum')
    if dims == () and dim is not None:
        dims = tuple(range(input.ndim))     # dim=() sums everything (still SumBackward1)
    np_dtype = dtype.numpy if dtype is not None else None
    return Sum.apply(input, dim=dims, keepdim=keepdim, dtype=np_dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    dims = _dims(dim, input.ndim, 'mean')
    np_dtype = dtype.numpy if dtype is not None else None
    return Mean.apply(input, dim=dims, keepdim=keepdim, dtype=np_dtype)


__all__ = ['sum', 'mean']
METHODS = {name: globals()[name] for name in __all__}
