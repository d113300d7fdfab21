"""dynagrad.linalg: PyTorch's torch.linalg namespace (the ops live in ops/linalg.py).

Everything is batched over leading dimensions. Real dtypes (float32, float64), and complex
ones for the products, the norms, ``eig`` and ``eigvals`` (whose results are complex).
Gradients of ``svd``/``eigh`` need distinct singular values / eigenvalues (as PyTorch's).
"""
from .ops.linalg import (LinAlgError, matmul, vector_norm, matrix_norm, inv, det, solve,  # noqa
                         cholesky, qr, svd, svdvals, eigh, eigvalsh, pinv, matrix_power, lstsq,
                         matrix_rank, multi_dot)
from .ops.linalg import linalg_norm as norm, linalg_slogdet as slogdet  # noqa: F401
from .ops.linalg import linalg_cross as cross  # noqa: F401
from .ops.linalg_solvers import (solve_triangular, cholesky_ex, inv_ex, solve_ex,  # noqa: F401
                                 tensorinv, tensorsolve, vander, vecdot, cond, matrix_exp,
                                 householder_product, diagonal, lu_factor, lu_factor_ex, lu,
                                 lu_solve, ldl_factor, ldl_factor_ex, ldl_solve)
from .ops.linalg_eig import eig, eigvals  # noqa: F401

__all__ = ['LinAlgError', 'matmul', 'norm', 'vector_norm', 'matrix_norm', 'inv', 'det',
           'slogdet', 'solve', 'cholesky', 'qr', 'svd', 'svdvals', 'eigh', 'eigvalsh', 'pinv',
           'matrix_power', 'lstsq', 'matrix_rank', 'cross', 'multi_dot', 'solve_triangular',
           'cholesky_ex', 'inv_ex', 'solve_ex', 'tensorinv', 'tensorsolve', 'vander', 'vecdot',
           'cond', 'matrix_exp', 'householder_product', 'diagonal', 'lu_factor',
           'lu_factor_ex', 'lu', 'lu_solve', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve', 'eig',
           'eigvals']

# out= as torch.linalg's functions take it (ops/out.py has the rules)
import sys as _sys  # noqa: E402
from .ops.out import LINALG_OUT_FUNCTIONS, install as _install_out  # noqa: E402
_install_out([_sys.modules[__name__]], LINALG_OUT_FUNCTIONS)
