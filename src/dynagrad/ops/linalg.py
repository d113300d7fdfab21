"""Linear algebra: products (the matmul family, einsum, tensordot, kron, cross) and the
solvers, decompositions and norms of ``torch.linalg``, all batched over leading dimensions.

The ops live in four modules, re-exported here (this module's ``__all__`` is the family's
public names; each module registers its Tensor methods where it defines them):

* ``linalg_products``: matmul, mm, bmm, mv, dot, outer, inner, addmm and friends, einsum,
  tensordot, kron, cross, multi_dot;
* ``linalg_decompositions``: inv, det, slogdet, solve, cholesky, qr, svd, eigh, pinv,
  lstsq, matrix_rank, matrix_power;
* ``linalg_norms``: vector_norm, matrix_norm, linalg.norm (their op, ``VectorNorm``, is
  reduction.py's);
* ``_linalg_common``: LinAlgError and the argument checks they share.

``einsum`` takes equation strings (ellipses, broadcasting, repeated letters / diagonals,
implicit output), not the sublist format.
"""
from ._linalg_common import (  # noqa: F401
    LinAlgError, _eye, _np_dtype, _tname, _type_name, _diag_embed, _shape, _check_float,
    _check_square, _check_matrices, _first_bad, _singular_error)
from .linalg_products import (  # noqa: F401
    _mm, _matmul_name, Matmul, _same_dtype, _check_tensor, _xshape, matmul, mm, bmm, mv,
    _check_dot, dot, vdot, outer, ger, inner, AddMatmul, _ADD_MATMUL, _add_matmul, _matmul_op,
    _check_addmm_input, _add_dtypes,
    _check_addmm, addmm, addmm_, _check_addmv, addmv, addmv_, addr, addr_, _check_batches, baddbmm,
    baddbmm_, addbmm, addbmm_, _LETTERS, Einsum, _parse_einsum, einsum, tensordot, kron,
    Cross, _cross, cross, linalg_cross, _as_list, multi_dot, chain_matmul)
from .linalg_decompositions import (  # noqa: F401
    Inv, inv, _adjugate_T, Det, det, _slogdet_result, _slogdet_result_torch, Slogdet,
    linalg_slogdet, slogdet, logdet, Solve, solve, _tril_mask, Cholesky, _cholesky_error,
    cholesky, _qr_result, _copy_upper, _qr_back_tall, Qr, qr, _svd_result, _svd_back, Svd,
    Svdvals, svd, svdvals, _eigh_result, _eigh_back, Eigh, Eigvalsh, _check_uplo, eigh,
    eigvalsh, _pinv_back, _pinv_array, Pinv, _tolerances, pinv, pinverse, matrix_rank,
    _lstsq_result, Lstsq, lstsq, _PowerZero, matrix_power)
from .reduction import VectorNorm  # noqa: F401
from .linalg_norms import (  # noqa: F401
    _norm_dims, vector_norm, _Extreme, _unsqueeze, matrix_norm, linalg_norm)

inverse = inv

__all__ = ['matmul', 'mm', 'bmm', 'mv', 'dot', 'vdot', 'outer', 'ger', 'inner', 'addmm',
           'addmv', 'addmv_', 'addr', 'addbmm', 'baddbmm', 'einsum', 'tensordot', 'kron', 'cross',
           'matrix_power', 'chain_matmul', 'det', 'slogdet', 'logdet', 'inverse', 'pinverse']
