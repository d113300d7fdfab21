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
from .ops.out_args import give_out, EXACT

__all__ = ['LinAlgError', 'matmul', 'norm', 'vector_norm', 'matrix_norm', 'inv', 'det',
           'slogdet', 'solve', 'cholesky', 'qr', 'svd', 'svdvals', 'eigh', 'eigvalsh', 'pinv',
           'matrix_power', 'lstsq', 'matrix_rank', 'cross', 'multi_dot', 'solve_triangular',
           'cholesky_ex', 'inv_ex', 'solve_ex', 'tensorinv', 'tensorsolve', 'vander', 'vecdot',
           'cond', 'matrix_exp', 'householder_product', 'diagonal', 'lu_factor',
           'lu_factor_ex', 'lu', 'lu_solve', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve', 'eig',
           'eigvals']


# the forms that take out= in PyTorch (see ops/out_args.py)
give_out(globals(), 'cond matrix_power matrix_rank pinv tensorinv tensorsolve')
give_out(globals(), '''
    cholesky cholesky_ex cross det eig eigh eigvals eigvalsh householder_product inv inv_ex
    ldl_factor ldl_factor_ex ldl_solve lu lu_factor lu_factor_ex lu_solve matmul matrix_norm
    multi_dot norm qr slogdet solve solve_ex solve_triangular svd svdvals vecdot
    vector_norm''', EXACT)
del give_out, EXACT
