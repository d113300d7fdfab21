"""``torch.sparse``: products, sums and softmax of sparse COO tensors (the tensors and their
kernels live in ``dynagrad.ops.sparse``; ``dynagrad.sparse_coo_tensor`` makes them)."""
from ..ops.sparse import (sparse_mm as mm, sparse_addmm as addmm, sparse_sum as sum,  # noqa
                          sparse_softmax as softmax, sparse_log_softmax as log_softmax)
from ..ops.sparse import sparse_coo_tensor as _sparse_coo_tensor

__all__ = ['mm', 'addmm', 'sum', 'softmax', 'log_softmax', 'spdiags',
           'check_sparse_tensor_invariants']


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of ``shape`` with the rows of ``diagonals`` on the diagonals given by
    ``offsets`` (SciPy's spdiags convention, as torch's)."""
    import numpy as np
    from ..tensor import Tensor
    from .._layout import sparse_coo
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError('spdiags: dynagrad makes sparse COO tensors only')
    d = diagonals._data if isinstance(diagonals, Tensor) else np.asarray(diagonals)
    off = offsets._data if isinstance(offsets, Tensor) else np.asarray(offsets)
    if d.ndim == 1:
        d = d[None]
    off = np.atleast_1d(off)
    rows_n, cols_n = shape
    rows, cols, vals = [], [], []
    for k, o in enumerate(off.tolist()):
        c = np.arange(max(0, o), min(cols_n, rows_n + o, d.shape[1]))
        r = c - o
        rows.append(r)
        cols.append(c)
        vals.append(d[k, c])
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    order = np.lexsort((c, r))
    return _sparse_coo_tensor(np.stack([r[order], c[order]]), v[order], tuple(shape),
                              is_coalesced=True)


class check_sparse_tensor_invariants:
    """PyTorch's switch for checking sparse tensors' invariants: dynagrad always checks
    what ``sparse_coo_tensor`` can check cheaply (indices within the size, not negative)."""
    _enabled = False

    def __init__(self, enable=True):
        self.state = enable

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.saved = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)
        return wrapped


class _LegacySparseTypeMeta(type):
    """``dynagrad.sparse.FloatTensor`` and friends: PyTorch's deprecated sparse COO
    constructors, and ``isinstance`` checks of a sparse tensor's dtype."""

    def __instancecheck__(cls, obj):
        from ..tensor import Tensor
        from .._layout import sparse_coo
        return isinstance(obj, Tensor) and obj.layout is sparse_coo and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        import warnings
        from ..tensor import Tensor
        from ..ops.creation import empty
        unknown = set(kwargs) - {'device'}
        if unknown:
            raise TypeError(f'new() got an unexpected keyword argument {sorted(unknown)[0]!r}')
        device = kwargs.get('device')
        if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
            indices, values = args[:2]
            warnings.warn(f'dynagrad.sparse.{cls.__name__}(indices, values, shape, *, device=) '
                          'is deprecated.  Please use dynagrad.sparse_coo_tensor(indices, '
                          'values, shape, dtype=, device=).', UserWarning, stacklevel=2)
            if indices.dtype.is_floating_point or indices.dtype.itemsize != 8:
                raise RuntimeError('indices must be an int64 tensor')
            return _sparse_coo_tensor(indices, values, *args[2:], device=device)
        sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            if len(args) == 1 and isinstance(args[0], list):
                raise TypeError(
                    f'dynagrad.sparse.{cls.__name__}(sequence) only accepts sizes.  Please use '
                    'dynagrad.sparse_coo_tensor() or construct a strided tensor and convert it '
                    'to sparse via to_sparse.')
            return empty(tuple(sizes) or (0,), dtype=cls.dtype, device=device).to_sparse()
        raise TypeError(
            f'new() received an invalid combination of arguments - got '
            f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
            ' * (*, dynagrad.device device = None)\n'
            ' * (Tensor indices, Tensor values, *, dynagrad.device device = None)\n'
            ' * (Tensor indices, Tensor values, tuple of ints size, *, dynagrad.device '
            'device = None)\n * (tuple of ints size, *, dynagrad.device device = None)\n')

    def __repr__(cls):
        return f"<class 'dynagrad.sparse.{cls.__name__}'>"


def _legacy_sparse(name, dtype_name):
    from .. import _dtype
    return _LegacySparseTypeMeta(name, (), {'dtype': getattr(_dtype, dtype_name)})


FloatTensor = _legacy_sparse('FloatTensor', 'float32')
DoubleTensor = _legacy_sparse('DoubleTensor', 'float64')
HalfTensor = _legacy_sparse('HalfTensor', 'float16')
BFloat16Tensor = _legacy_sparse('BFloat16Tensor', 'bfloat16')
LongTensor = _legacy_sparse('LongTensor', 'int64')
IntTensor = _legacy_sparse('IntTensor', 'int32')
ShortTensor = _legacy_sparse('ShortTensor', 'int16')
CharTensor = _legacy_sparse('CharTensor', 'int8')
ByteTensor = _legacy_sparse('ByteTensor', 'uint8')
