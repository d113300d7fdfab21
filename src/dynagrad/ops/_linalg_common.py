"""What the linear-algebra modules share: ``LinAlgError``, argument checks, small
helpers. ``ops/linalg.py`` re-exports everything."""
import numpy as np

from .. import _dtype
from ..backend import xp
from .formula import unwrap as _arr


class LinAlgError(RuntimeError):
    """A linear-algebra failure on valid input (singular matrix, not positive-definite)."""


# -- helpers ---------------------------------------------------------------------------


def _eye(n, dtype):
    return xp.eye(n, dtype=dtype)


def _np_dtype(x):
    return _arr(x).dtype


def _tname(x):
    return _dtype.FROM_NUMPY[_arr(x).dtype].legacy_name[:-6]


def _type_name(dtype):
    return _dtype.FROM_NUMPY[np.dtype(dtype)].legacy_name[:-6]


def _diag_embed(v):
    """A batch of vectors ``(..., n)`` as diagonal matrices ``(..., n, n)``."""
    n = v.shape[-1]
    return v[..., None] * _eye(n, _np_dtype(v))


def _shape(t):
    return list(t.shape)


def _check_float(op, A, name='input', complex_ok=False):
    kind = A._data.dtype
    if kind.kind == 'c' and not complex_ok:
        raise NotImplementedError(
            f'{op}: dynagrad does not compute this decomposition or solver on complex '
            f'matrices yet (got {_tname(A)}); its complex linear algebra is matmul and its '
            'relatives, inv, solve, matrix_exp, eig, eigvals and the norms')
    if kind.kind not in 'fVc':
        raise RuntimeError(f'{op}: Expected a floating point or complex tensor as {name}. '
                           f'Got {_tname(A)}')
    if kind.char in 'eE':   # float16, bfloat16
        kernel = _LAPACK_KERNEL.get(op)
        if kernel is not None:      # torch reaches its LAPACK kernel, which refuses them
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(A)}\'')
        raise RuntimeError(f'{op}: Low precision dtypes not supported. Got {_tname(A)}')


# The kernels whose dtype dispatch refuses float16 and bfloat16 in torch (a
# NotImplementedError naming the kernel); the other ops check first (a RuntimeError).
_LAPACK_KERNEL = {
    'linalg.solve': 'lu_cpu', 'linalg.det': 'lu_cpu', 'linalg.lu': 'lu_cpu',
    'linalg.lu_factor': 'lu_cpu', 'linalg.lu_factor_ex': 'lu_cpu',
    'linalg.cholesky': 'cholesky_cpu', 'linalg.cholesky_ex': 'cholesky_cpu',
    'linalg.qr': 'geqrf_cpu', 'geqrf': 'geqrf_cpu', 'linalg.eigh': 'linalg_eigh_cpu',
    'linalg.eigvalsh': 'linalg_eigh_cpu', 'linalg.svd': 'linalg_svd_cpu',
    'linalg.svdvals': 'linalg_svd_cpu', 'linalg.solve_triangular': 'triangular_solve_cpu',
    'linalg.householder_product': 'orgqr_cpu', 'ormqr': 'ormqr_cpu',
}


def _check_square(op, A, name='A', complex_ok=False):
    _check_float(op, A, complex_ok=complex_ok)
    if A.ndim < 2:
        raise RuntimeError(f'{op}: The input tensor {name} must have at least 2 dimensions.')
    m, n = A.shape[-2:]
    if m != n:
        raise RuntimeError(f'{op}: {name} must be batches of square matrices, but they are '
                           f'{m} by {n} matrices')


def _check_matrices(op, A, name='A'):
    _check_float(op, A)
    if A.ndim < 2:
        raise RuntimeError(f'{op}: The input tensor {name} must have at least 2 dimensions.')


def _first_bad(bad):
    """The position of the first True in a batch of flags, for error messages."""
    bad = xp.asarray(bad)
    if bad.ndim == 0:
        return ''
    idx = xp.argwhere(bad)
    if not len(idx):
        return ''
    flat = int(xp.ravel_multi_index(tuple(idx[0]), bad.shape))
    return f'(Batch element {flat}): '


def _singular_error(op, A, what):
    n = A.shape[-1]
    bad = xp.linalg.matrix_rank(A) < n if A.size else xp.zeros(A.shape[:-2], bool)
    return LinAlgError(f'{op}: {_first_bad(bad)}{what}')
