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
