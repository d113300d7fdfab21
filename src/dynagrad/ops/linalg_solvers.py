"""The rest of ``torch.linalg`` over real matrices, and the legacy top-level forms.

Most are compositions of the ops of ``linalg_decompositions`` and ``linalg_products``, so
their gradients (and higher ones) come from those ops' backward formulas with nothing
new written: a triangular solve is ``solve`` on the masked triangle (so only the triangle
gets a gradient, as in PyTorch), ``cholesky_solve`` two of them, ``tensorinv`` an ``inv``
of a reshape. ``matrix_exp`` is an op of its own: its value from SciPy's ``expm``
(Padé with scaling and squaring; an optional dependency, as for the special functions),
its gradient the upper-right block of the exponential of ``[[A^T, G], [0, A^T]]``,
itself ``matrix_exp`` of a bigger matrix, so it differentiates any number of times.
"""
import math
import warnings
from collections import namedtuple

import numpy as np

from ..backend import xp
from ..autograd.function import Op
from ..autograd.autocast import (autocast_args, autocast_state, autocast_thread_state,
                                 set_cpu_autocast)
from ..tensor import Tensor, method, wrap
from ..autograd.batched import vmap_function
from . import linalg_decompositions as _dec
from .linalg_products import matmul
from ._linalg_common import LinAlgError, _check_float, _check_square, _tname
from .shape import cat
from .creation import zeros_like, eye, arange, zeros
from .out_args import give_out, EXACT

__all__ = ['solve_triangular', 'cholesky_ex', 'inv_ex', 'solve_ex', 'tensorinv',
           'tensorsolve', 'vander', 'vecdot', 'cond', 'matrix_exp', 'householder_product',
           'diagonal', 'lu_factor', 'lu_factor_ex', 'lu', 'lu_solve', 'lu_unpack']


def _tensors(op, *ts):
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument must be Tensor, not {type(t).__name__}")


class _autocast_off:
    """A composite that is one kernel in PyTorch runs its steps without autocast."""

    def __enter__(self):
        set_cpu_autocast(False)

    def __exit__(self, *exc):
        set_cpu_autocast(True)


def _no_half(kernel, *ts):
    """PyTorch's LAPACK-backed kernels take no float16 or bfloat16 (and dynagrad's here
    take no complex matrices yet)."""
    for t in ts:
        if isinstance(t, Tensor) and t._data.dtype.kind == 'c':
            raise NotImplementedError(
                f'{kernel}: dynagrad computes this on real matrices only (got '
                f'{_tname(t)}); its complex linear algebra is matmul and its relatives, inv, '
                'solve, matrix_exp, eig, eigvals and the norms')
        name = str(t.dtype)
        if name in ('dynagrad.float16', 'dynagrad.bfloat16'):
            kind = 'Half' if name.endswith('float16') and 'b' not in name else 'BFloat16'
            raise NotImplementedError(f'"{kernel}" not implemented for \'{kind}\'')


def _triangle(A, upper, unitriangular):
    """The triangle of A a triangular solve reads (and the only part that gets a gradient)."""
    T = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        T = T - T.diagonal(0, -2, -1).diag_embed() + eye(n, dtype=A.dtype)
    return T


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``), ``A`` triangular."""
    _tensors('linalg.solve_triangular', A, B)
    _check_float('linalg.solve_triangular', A)
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError('linalg.solve_triangular: The input tensor B must have at least 2 '
                           'dimensions.' if B.ndim < 2 else 'linalg.solve_triangular: The '
                           'input tensor A must have at least 2 dimensions.')
    _check_square('linalg.solve_triangular', A)
    if A.dtype != B.dtype:      # PyTorch promotes the two
        from .._dtype import result_type
        common = result_type(A, B)
        A, B = A.to(common), B.to(common)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f'linalg.solve_triangular: Incompatible shapes of A and B for the '
                           f'equation {"AX = B" if left else "XA = B"} ({n}x{n} and '
                           f'{B.shape[-2]}x{B.shape[-1]})')
    T = _triangle(A, upper, unitriangular)
    if not left:
        return _dec.solve(T.mT, B.mT).mT
    return _dec.solve(T, B)


_cholesky_ex = namedtuple('linalg_cholesky_ex', ['L', 'info'])
_inv_ex = namedtuple('linalg_inv_ex', ['inverse', 'info'])
_solve_ex = namedtuple('linalg_solve_ex', ['result', 'info'])
_triangular = namedtuple('triangular_solve', ['solution', 'cloned_coefficient'])
_svd = namedtuple('svd', ['U', 'S', 'V'])
_qr = namedtuple('qr', ['Q', 'R'])


@vmap_function('physical')
def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info 0 for a positive-definite matrix, else the order of the leading
    minor that is not (and L is not meaningful there)."""
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _tensors('linalg.cholesky_ex', A)
    _no_half('cholesky_cpu', A)
    _check_float('linalg.cholesky_ex', A)
    _check_square('linalg.cholesky_ex', A)
    data = A._data
    batch = data.shape[:-2]
    info = xp.zeros(batch, np.int32)
    flat = data.reshape((-1,) + data.shape[-2:])
    bad = []
    for i, m in enumerate(flat):
        try:
            xp.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            k = next((j for j in range(1, m.shape[0] + 1)
                      if not _leading_pd(m[:j, :j])), m.shape[0])
            info.reshape(-1)[i] = k
            bad.append(i)
    if bad and check_errors:
        return _dec.cholesky(A, upper=upper)    # raises PyTorch's error
    if not bad:
        return _cholesky_ex(_dec.cholesky(A, upper=upper), wrap(xp.asarray(info)))
    safe = A.detach().clone()
    eye_n = xp.eye(data.shape[-1], dtype=data.dtype)
    view = safe._data.reshape((-1,) + data.shape[-2:])
    for i in bad:
        view[i] = eye_n
    L = _dec.cholesky(safe, upper=upper)
    L._data.reshape((-1,) + data.shape[-2:])[bad] = np.nan
    return _cholesky_ex(L, wrap(xp.asarray(info)))


def _leading_pd(m):
    try:
        xp.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


def _lu_info(m):
    """LAPACK getrf's info for one matrix: 0, or the 1-based index of the first zero pivot
    of its partially pivoted LU (Doolittle with row exchanges, as getrf runs)."""
    a = xp.array(m, dtype=np.float64)
    n = a.shape[0]
    for k in range(n):
        p = k + int(xp.argmax(xp.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= xp.outer(a[k + 1:, k], a[k, k + 1:])
    return 0


@vmap_function('physical')
def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: info 0, or the index of the first zero pivot of a singular
    matrix (whose inverse is then not meaningful)."""
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _tensors('linalg.inv_ex', A)
    _check_float('linalg.inv', A)
    _check_square('linalg.inv_ex', A)
    return _inv_ex(*_ex(A, lambda M: _dec.inv(M), check_errors))


@vmap_function('physical')
def solve_ex(A, B, *, left=True, check_errors=False):
    """``(solution, info)`` of ``linalg.solve``, info as ``inv_ex``'s."""
    _tensors('linalg.solve_ex', A, B)
    return _solve_ex(*_ex(A, lambda M: _dec.solve(M, B, left=left), check_errors))


def _ex(A, compute, check_errors):
    data = A._data
    flat = data.reshape((-1,) + data.shape[-2:])
    info = xp.array([_lu_info(m) for m in flat], np.int32).reshape(data.shape[:-2])
    if not info.any() or check_errors:
        return compute(A), wrap(xp.asarray(info))
    safe = A.detach().clone()
    view = safe._data.reshape((-1,) + data.shape[-2:])
    bad = xp.flatnonzero(info.reshape(-1))
    view[bad] = xp.eye(data.shape[-1], dtype=data.dtype)
    out = compute(safe)
    out._data.reshape((len(flat),) + out._data.shape[len(data.shape) - 2:])[bad] = np.nan
    return out, wrap(xp.asarray(info))


def tensorinv(A, ind=2):
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dims by the rest."""
    _tensors('linalg.tensorinv', A)
    if ind <= 0:
        raise RuntimeError(f'Expected a strictly positive integer for \'ind\', but got {ind}')
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f'Expected self to satisfy the requirement prod(self.shape[ind:]) '
                           f'== prod(self.shape[:ind]), but got {math.prod(cols)} != '
                           f'{math.prod(rows)}')
    n = math.prod(rows)
    return _dec.inv(A.reshape(n, n)).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) == B``."""
    _tensors('linalg.tensorsolve', A, B)
    if dims is not None:
        order = [d for d in range(A.ndim) if d not in [x % A.ndim for x in dims]]
        A = A.permute(*(order + [x % A.ndim for x in dims]))
    rest = tuple(A.shape[B.ndim:])
    n = math.prod(B.shape)
    if n != math.prod(rest):
        raise RuntimeError(f'Expected self to satisfy the requirement prod(self.shape[other.ndim:'
                           f']) == prod(self.shape[:other.ndim]), but got {math.prod(rest)} != '
                           f'{n}')
    return _dec.solve(A.reshape(n, n), B.reshape(n)).reshape(rest)


def vander(x, *, N=None):
    """The Vandermonde matrix: columns ``x^0, x^1, ..., x^(N-1)`` (increasing powers)."""
    _tensors('linalg.vander', x)
    if str(x.dtype) in ('dynagrad.float16', 'dynagrad.bfloat16', 'dynagrad.bool'):
        kind = {'dynagrad.float16': 'Half', 'dynagrad.bfloat16': 'BFloat16'}.get(
            str(x.dtype), 'Bool')
        raise RuntimeError(f'linalg.vander supports floating point, complex, and integer '
                           f'tensors, but got {kind}')
    if x.ndim == 0:
        raise RuntimeError('linalg.vander: x must have at least one dimension.')
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError('N must be greater than 1.')
    # cumulative products, as PyTorch computes them (exact for integers)
    powers = [x.unsqueeze(-1) * 0 + 1]
    for _ in range(n - 1):
        powers.append(powers[-1] * x.unsqueeze(-1))
    return cat(powers, -1)


def vecdot(x, y, *, dim=-1):
    """``sum(x * y, dim)`` (the conjugate of x, for real tensors itself)."""
    if autocast_state.active:
        x, y = autocast_args('lower', x, y)
    _tensors('linalg.vecdot', x, y)
    if x.dtype != y.dtype:
        raise RuntimeError(f'linalg.vecdot: Expected x and y to have the same dtype, but found '
                           f'x of type {_tname(x)} and y of type {_tname(y)} instead')
    return (x.conj() * y).sum(dim)


def cond(A, p=None):
    """The condition number of ``A`` in the norm ``p`` (2 when None)."""
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _tensors('linalg.cond', A)
    _no_half('linalg_svd_cpu' if p in (None, 2, -2) else 'linalg_inv_ex', A)
    _check_float('linalg.cond', A)
    if A.ndim < 2:
        raise RuntimeError('linalg.cond: The input tensor A must have at least 2 dimensions.')
    if p is None or p in (2, -2):
        s = _dec.svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p in (None, 2) else small / big
    _check_square('linalg.cond', A)
    from .linalg_norms import matrix_norm
    return matrix_norm(A, p) * matrix_norm(_dec.inv(A), p)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


class MatrixExp(Op):
    """``expm(A)`` (SciPy's Padé with scaling and squaring, batched here)."""
    supports_complex = True
    node_name = 'LinalgMatrixExpBackward0'
    widens_half = True

    def forward(self, A):
        try:
            from scipy.linalg import expm
        except ImportError:
            raise ModuleNotFoundError(
                "dynagrad.linalg.matrix_exp is computed by SciPy's scipy.linalg.expm, which "
                "is not installed: pip install 'dynagrad[special]' (or pip install scipy)"
            ) from None
        self.save_for_backward(A)
        if A.size == 0:
            return A.copy()
        return xp.asarray(expm(A)).astype(A.dtype, copy=False)

    def backward(self, g):
        A, = self.saved_tensors
        n = A.shape[-1]
        # d expm(A) [G] read off the block matrix [[A^T, G], [0, A^T]]'s exponential
        At = A.mT
        if hasattr(g, '_data'):
            top = cat([At, g], -1)
            bottom = cat([zeros_like(At), At], -1)
            big = cat([top, bottom], -2)
            return MatrixExp.apply(big)[..., :n, n:]
        big = xp.zeros(A.shape[:-2] + (2 * n, 2 * n), A.dtype)
        big[..., :n, :n] = At
        big[..., :n, n:] = g
        big[..., n:, n:] = At
        return MatrixExp.run(big)[..., :n, n:]


@method('matrix_exp')
def matrix_exp(A):
    _tensors('linalg.matrix_exp', A)
    if not A.dtype.is_inexact:
        raise RuntimeError(f'linalg.matrix_exp: Expected a floating point or complex tensor as '
                           f'input. Got {_tname(A)}')
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:    # (half precision allowed, as in PyTorch)
        m, n = (A.shape[-2:] if A.ndim >= 2 else (A.shape or (0,)) * 2)
        raise RuntimeError(f'linalg.matrix_exp: A must be batches of square matrices, but they '
                           f'are {m} by {n} matrices')
    return MatrixExp.apply(A)


def householder_product(A, tau):
    """The first ``n`` columns of ``H_1 H_2 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with
    ``v_i`` the i-th column of A below the diagonal and 1 on it (LAPACK's orgqr)."""
    if autocast_state.active:
        A, tau = autocast_args('fp32', A, tau)
    _tensors('linalg.householder_product', A, tau)
    _no_half('orgqr_cpu', A, tau)
    if A.ndim < 2:
        raise RuntimeError('torch.linalg.householder_product: input must have at least 2 '
                           'dimensions.')
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError('torch.linalg.householder_product: input.shape[-2] must be greater '
                           'than or equal to input.shape[-1]')
    if k > n:
        raise RuntimeError('torch.linalg.householder_product: input.shape[-1] must be greater '
                           'than or equal to tau.shape[-1]')
    rows = arange(m).unsqueeze(-1)
    Q = eye(m, n, dtype=A.dtype).expand(tuple(A.shape[:-2]) + (m, n))
    for i in reversed(range(k)):
        col = A[..., :, i]
        v = (col * (rows[:, 0] > i)) + (rows[:, 0] == i).to(A.dtype)
        # Q <- H_i Q = Q - tau_i v (v^T Q)
        Q = Q - tau[..., i, None, None] * v.unsqueeze(-1) * matmul(v.unsqueeze(-2), Q)
    return Q


# -- legacy top-level forms -----------------------------------------------------------------

@method('triangular_solve')
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(solution, A)`` of ``A X = b`` (``A^T X = b`` when ``transpose``), as the old
    ``torch.triangular_solve``; prefer ``linalg.solve_triangular``."""
    _tensors('triangular_solve', b, A)
    warnings.warn('torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular'
                  'and will be removed in a future PyTorch release.\ntorch.linalg.'
                  'solve_triangular has its arguments reversed and does not return a copy of '
                  'one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be '
                  'replaced with\nX = torch.linalg.solve_triangular(A, B).', UserWarning,
                  stacklevel=2)
    T = _triangle(A, upper, unitriangular)
    X = _dec.solve(T.mT if transpose else T, b)
    return _triangular(X, A.clone())


@method('cholesky_solve')
def cholesky_solve(B, L, upper=False):
    """``X`` with ``A X = B`` for ``A = L L^T`` (``U^T U`` when ``upper``)."""
    _tensors('cholesky_solve', B, L)
    if upper:
        Y = solve_triangular(L.mT, B, upper=False)
        return solve_triangular(L, Y, upper=True)
    Y = solve_triangular(L, B, upper=False)
    return solve_triangular(L.mT, Y, upper=True)


@method('cholesky_inverse')
def cholesky_inverse(L, upper=False):
    """``(L L^T)^-1`` from its Cholesky factor."""
    _tensors('cholesky_inverse', L)
    n = L.shape[-1]
    return cholesky_solve(eye(n, dtype=L.dtype).expand(L.shape), L, upper=upper)


@method('cholesky')
def legacy_cholesky(A, upper=False):
    warnings.warn('torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be '
                  'removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be '
                  'replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, '
                  'upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n'
                  'This transform will produce equivalent results for all valid (symmetric '
                  'positive definite) inputs.', UserWarning, stacklevel=2)
    return _dec.cholesky(A, upper=upper)


@method('svd')
def legacy_svd(input, some=True, compute_uv=True):
    """``(U, S, V)`` with ``V`` (not ``Vh``), reduced unless ``some=False``."""
    _tensors('svd', input)
    if not compute_uv:
        S = _dec.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        U = zeros(tuple(input.shape[:-2]) + (m, m if not some else min(m, n)),
                  dtype=input.dtype)
        V = zeros(tuple(input.shape[:-2]) + (n, n if not some else min(m, n)),
                  dtype=input.dtype)
        return _svd(U, S, V)
    U, S, Vh = _dec.svd(input, full_matrices=not some)
    return _svd(U, S, Vh.mT)


@method('qr')
def legacy_qr(input, some=True):
    _tensors('qr', input)
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                  "future PyTorch release.\nThe boolean parameter 'some' has been replaced with "
                  "a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced "
                  "with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
                  UserWarning, stacklevel=2)
    Q, R = _dec.qr(input, 'reduced' if some else 'complete')
    return _qr(Q, R)


def _removed(name, text):
    def fn(*args, **kwargs):
        raise RuntimeError('This function was deprecated since version 1.9 and is now removed.'
                           + text)
    fn.__name__ = fn.__qualname__ = name
    return fn


def orgqr(input, tau):
    """The old name of ``linalg.householder_product``."""
    return householder_product(input, tau)


method('orgqr')(orgqr)


# PyTorch's words for the functions it removed
symeig = _removed('symeig', (
    ' The default behavior has changed from using the upper triangular portion of the matrix '
    'by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) '
    "should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
    'and\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = '
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')"))
eig = _removed('eig', (
    ' `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than '
    'real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n'
    'L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) '
    'should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)'))
lstsq = _removed('lstsq', (
    ' `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has '
    'reversed arguments and does not return the QR decomposition in the returned tuple '
    '(although it returns other information about the problem).\n\nTo get the QR '
    'decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in '
    '`torch.lstsq` stored the residuals of the solution in the last m - n columns of the '
    'returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field '
    "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
    'torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = '
    'torch.linalg.lstsq(A, B).solution'))
solve = _removed('solve', (
    ' `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has '
    'its arguments reversed and does not return the LU factorization.\n\nTo get the LU '
    'factorization see `torch.lu`, which can be used with `torch.lu_solve` or '
    '`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = '
    'torch.linalg.solve(A, B)'))
matrix_rank = _removed('matrix_rank', (
    "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' "
    "was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."))

for _name, _fn in (('symeig', symeig), ('eig', eig), ('lstsq', lstsq), ('solve', solve)):
    method(_name)(_fn)

def nuclear_norm(input, dim=None, keepdim=False, *, dtype=None):
    """The sum of the singular values (deprecated in PyTorch for ``linalg.matrix_norm``)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    from .linalg_norms import matrix_norm
    if isinstance(dim, int):    # torch's parser repeats one int to fill its two dims
        dim = (dim, dim)
    return matrix_norm(input, 'nuc', (-2, -1) if dim is None else dim, keepdim, dtype=dtype)


# the top-level names (dynagrad/__init__.py); linalg's own are in dynagrad.linalg
TOP_LEVEL = {'triangular_solve': triangular_solve, 'cholesky_solve': cholesky_solve,
             'cholesky_inverse': cholesky_inverse, 'cholesky': legacy_cholesky,
             'svd': legacy_svd, 'qr': legacy_qr, 'matrix_exp': matrix_exp, 'orgqr': orgqr,
             'symeig': symeig, 'eig': eig, 'matrix_rank': matrix_rank, 'lstsq': lstsq,
             'solve': solve,
             'nuclear_norm': nuclear_norm}


# -- Householder QR in LAPACK's compact form -------------------------------------------------

_geqrf = namedtuple('geqrf', ['a', 'tau'])


class Geqrf(Op):
    """QR as LAPACK's geqrf leaves it: R on and above the diagonal, the Householder vectors
    below it, and their scalars ``tau`` (NumPy's ``qr(mode='raw')``, transposed back)."""
    node_name = 'GeqrfBackward0'

    def forward(self, A):
        if A.size == 0:
            k = min(A.shape[-2:])
            return A.copy(), xp.zeros(A.shape[:-2] + (k,), A.dtype)
        flat = A.reshape((-1,) + A.shape[-2:])
        hs, taus = [], []
        for m in flat:
            h, tau = xp.linalg.qr(m, mode='raw')
            hs.append(h.T)
            taus.append(tau)
        return (xp.stack(hs).reshape(A.shape).astype(A.dtype),
                xp.stack(taus).reshape(A.shape[:-2] + (taus[0].shape[-1],)).astype(A.dtype))

    def backward(self, *grads):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@method('geqrf')
def geqrf(input):
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    _tensors('geqrf', input)
    _no_half('geqrf_cpu', input)
    if input.ndim < 2:
        raise RuntimeError('torch.geqrf: input must have at least 2 dimensions.')
    return _geqrf(*Geqrf.apply(input))


@method('ormqr')
def ormqr(input, tau, other, left=True, transpose=False):
    """``Q @ other`` (``Q^T``, or from the right) for the Q that ``geqrf``'s reflectors
    make, without forming it by hand: the full m-by-m product of the reflectors."""
    if autocast_state.active and autocast_thread_state.enabled.get('cpu', False):
        # one float32 kernel in PyTorch: its steps here must not be autocast each
        input, tau, other = autocast_args('fp32', input, tau, other)
        with _autocast_off():
            return ormqr(input, tau, other, left, transpose)
    _tensors('ormqr', input, tau, other)
    _no_half('ormqr_cpu', input, tau, other)
    m = input.shape[-2]
    k = tau.shape[-1]
    reflectors = input[..., :, :k]
    if k < m:
        pad = zeros(tuple(input.shape[:-2]) + (m, m - k), dtype=input.dtype)
        reflectors = cat([reflectors, pad], -1)
    Q = householder_product(reflectors, tau)
    if transpose:
        Q = Q.mT
    return matmul(Q, other) if left else matmul(other, Q)


TOP_LEVEL.update({'geqrf': geqrf, 'ormqr': ormqr})


# -- LU with partial pivoting ---------------------------------------------------------------

_lu_factor = namedtuple('linalg_lu_factor', ['LU', 'pivots'])
_lu_factor_ex = namedtuple('linalg_lu_factor_ex', ['LU', 'pivots', 'info'])
_lu = namedtuple('linalg_lu', ['P', 'L', 'U'])
_lu_unpack = namedtuple('lu_unpack', ['P', 'L', 'U'])


def _getrf(a):
    """LAPACK getrf on a batch (``a`` is overwritten): Doolittle with partial pivoting, one
    column step at a time over every matrix of the batch. Returns 1-based pivots (row k was
    exchanged with row pivots[k]) and getrf's info (first zero pivot, 1-based, or 0)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    flat = a.reshape((-1, m, n))
    pivots = xp.zeros((flat.shape[0], k), dtype=np.int32)
    info = xp.zeros(flat.shape[0], dtype=np.int32)
    rows = xp.arange(flat.shape[0])
    for j in range(k):
        p = j + xp.argmax(xp.abs(flat[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        swap = flat[rows, p, :].copy()
        flat[rows, p, :] = flat[:, j, :]
        flat[:, j, :] = swap
        d = flat[:, j, j]
        zero = d == 0
        info = xp.where((info == 0) & zero, j + 1, info)
        safe = xp.where(zero, 1, d)
        flat[:, j + 1:, j] /= safe[:, None]
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j:j + 1] * flat[:, j:j + 1, j + 1:]
    return pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(pivots, m, dtype):
    """P with A = P L U from getrf's sequential row exchanges."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((-1, pivots.shape[-1]))
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    for j in range(flat.shape[1]):
        p = flat[:, j] - 1
        r = xp.arange(flat.shape[0])
        a, b = perm[r, j].copy(), perm[r, p].copy()
        perm[r, j], perm[r, p] = b, a
    P = xp.zeros((flat.shape[0], m, m), dtype)
    P[xp.arange(flat.shape[0])[:, None], perm, xp.arange(m)[None, :]] = 1
    return P.reshape(batch + (m, m))


class LuFactor(Op):
    """``(LU, pivots)``: L (unit diagonal, below) and U (on and above) in one matrix."""
    node_name = 'LinalgLuFactorExBackward0'

    def forward(self, A):
        lu = A.astype(A.dtype, copy=True)
        pivots, info = _getrf(lu)
        self.info = info
        self.save_for_backward(lu)
        self.pivots = pivots
        return lu, pivots

    def backward(self, g_lu, g_piv=None):
        lu, = self.saved_tensors
        m, n = lu.shape[-2:]
        if m != n:
            raise NotImplementedError('linalg.lu_factor: the derivative of a non-square '
                                      'LU factorisation is not implemented')
        P = _permutation(self.pivots, m, lu.dtype if hasattr(lu, 'dtype') else None)
        if hasattr(lu, '_data'):
            P = wrap(P)
        eye_n = xp.eye(n, dtype=P.dtype if not hasattr(P, '_data') else P._data.dtype)
        L = _tril(lu, -1) + eye_n
        U = _triu(lu)
        gL, gU = _tril(g_lu, -1), _triu(g_lu)
        # A = P L U: gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T
        inner = _tril(L.mT @ gL, -1) + _triu(gU @ U.mT)
        x = _dec.Solve.run(L.mT, inner, vector=False)            # L^-T inner
        y = _dec.Solve.run(U, x.mT, vector=False).mT             # ... U^-T
        return P @ y


def _tril(x, k=0):
    return x.tril(k) if hasattr(x, '_data') else xp.tril(x, k)


def _triu(x, k=0):
    return x.triu(k) if hasattr(x, '_data') else xp.triu(x, k)


def _check_lu(op, A, pivot):
    _tensors(op, A)
    _no_half('lu_cpu', A)
    _check_float(op, A)
    if A.ndim < 2:
        raise RuntimeError(f'torch.{op}: Expected tensor with 2 or more dimensions. Got size: '
                           f'{list(A.shape)} instead')
    if not pivot:
        raise RuntimeError(f'{op}: LU without pivoting is not implemented on the CPU')


@vmap_function('physical')
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    _check_lu('linalg.lu_factor_ex', A, pivot)
    node_out = LuFactor.apply(A)
    LU, pivots = node_out
    info = _getrf(A._data.copy())[1]
    if check_errors and info.any():
        raise _dec.LinAlgError(f'torch.linalg.lu_factor_ex: U[{int(info.max())},'
                               f'{int(info.max())}] is zero and using it on lu_solve would '
                               'result in a division by zero. If you still want to perform the '
                               'factorization, consider calling linalg.lu(A, pivot) or '
                               'linalg.lu_factor_ex(A, pivot)')
    return _lu_factor_ex(LU, pivots, wrap(xp.asarray(info)))


@vmap_function('physical')
def lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` of ``A = P L U`` (LAPACK's getrf); raises for a singular matrix."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    if info._data.any():
        bad = int(info._data.reshape(-1)[info._data.reshape(-1) != 0][0])
        raise _dec.LinAlgError(f'torch.linalg.lu_factor: U[{bad},{bad}] is zero and using it on '
                               'lu_solve would result in a division by zero. If you still want '
                               'to perform the factorization, consider calling linalg.lu(A, '
                               'pivot) or linalg.lu_factor_ex(A, pivot)')
    return _lu_factor(LU, pivots)


@vmap_function('physical')
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``lu_factor``'s compact result."""
    _tensors('lu_unpack', LU_data, LU_pivots)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype)
        U = LU_data[..., :k, :].triu()
    else:
        L = zeros((0,), dtype=LU_data.dtype)
        U = zeros((0,), dtype=LU_data.dtype)
    if unpack_pivots:
        P = wrap(_permutation(LU_pivots._data, m, LU_data._data.dtype))
    else:
        P = zeros((0,), dtype=LU_data.dtype)
    return _lu_unpack(P, L, U)


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return _lu(*lu_unpack(LU, pivots))


@vmap_function('physical')
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """``X`` with ``A X = B`` (``A^T``, or from the right) from ``lu_factor``'s result."""
    _tensors('linalg.lu_solve', LU, pivots, B)
    if autocast_state.active and autocast_thread_state.enabled.get('cpu', False):
        with _autocast_off():       # one kernel in PyTorch, not autocast
            return lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
    n = LU.shape[-1]
    P = wrap(_permutation(pivots._data, n, LU._data.dtype))
    if left and not adjoint:       # P L U X = B
        Y = solve_triangular(LU, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(LU, Y, upper=True)
    if left:                       # U^T L^T P^T X = B
        Y = solve_triangular(LU.mT, B, upper=False)
        Z = solve_triangular(LU.mT, Y, upper=True, unitriangular=True)
        return P @ Z
    # X P L U = B  <=>  U^T L^T P^T X^T = B^T ; adjoint: X (P L U)^T = B
    if not adjoint:
        return lu_solve(LU, pivots, B.mT, left=True, adjoint=True).mT
    return lu_solve(LU, pivots, B.mT, left=True, adjoint=False).mT


def legacy_lu(A, pivot=True, get_infos=False):
    warnings.warn('torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.'
                  'lu_factor_ex and will be removed in a future PyTorch release.\nLU, pivots = '
                  'torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = torch.'
                  'linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, '
                  'compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = '
                  'torch.linalg.lu_factor_ex(A, compute_pivots)', UserWarning, stacklevel=2)
    if autocast_state.active:       # (_lu_with_info is on autocast's float32 list)
        A, = autocast_args('fp32', A)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def legacy_lu_solve(b, LU_data, LU_pivots):
    warnings.warn('torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be '
                  'removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has '
                  'its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be '
                  'replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)', UserWarning,
                  stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b)


TOP_LEVEL.update({'lu': legacy_lu, 'lu_solve': legacy_lu_solve, 'lu_unpack': lu_unpack})
method('lu')(legacy_lu)
method('lu_solve')(legacy_lu_solve)


# -- LDL^T (Bunch-Kaufman), as LAPACK's sytrf/sytrs: SciPy's LAPACK wrappers ----------------

_ldl_factor = namedtuple('linalg_ldl_factor', ['LD', 'pivots'])
_ldl_factor_ex = namedtuple('linalg_ldl_factor_ex', ['LD', 'pivots', 'info'])


def _lapack(name):
    from ..autograd.device_dispatch import current_device_type
    if current_device_type() == 'meta':
        from .._meta import LAPACK
        return LAPACK
    try:
        from scipy.linalg import lapack
    except ImportError:
        raise ModuleNotFoundError(
            f"dynagrad.linalg.{name} runs LAPACK's sytrf/sytrs through SciPy, which is not "
            "installed: pip install 'dynagrad[special]' (or pip install scipy)") from None
    return lapack


class LdlFactor(Op):
    """``(LD, pivots, info)`` of symmetric ``A`` (its lower triangle), as sytrf leaves them."""
    node_name = 'LinalgLdlFactorExBackward0'

    def forward(self, A):
        lapack = _lapack('ldl_factor')
        flat = A.reshape((-1,) + A.shape[-2:])
        fn = lapack.dsytrf if A.dtype == np.float64 else lapack.ssytrf
        lds, pivs, infos = [], [], []
        for m in flat:
            ldu, ipiv, info = fn(m, lower=1)
            lds.append(xp.tril(ldu))
            pivs.append(ipiv)
            infos.append(info)
        n = A.shape[-1]
        LD = xp.stack(lds).reshape(A.shape) if lds else A.copy()
        piv = (xp.stack(pivs).astype(np.int32).reshape(A.shape[:-1]) if pivs else
               xp.zeros(A.shape[:-1], np.int32))
        info = xp.asarray(infos, np.int32).reshape(A.shape[:-2]) if infos else \
            xp.zeros(A.shape[:-2], np.int32)
        del n
        return LD.astype(A.dtype, copy=False), piv, info

    def backward(self, *grads):
        raise RuntimeError('derivative for aten::linalg_ldl_factor_ex is not implemented')


@vmap_function('physical')
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    _tensors('linalg.ldl_factor_ex', A)
    _no_half('ldl_factor_kernel_cpu', A)
    _check_square('linalg.ldl_factor_ex', A)
    LD, pivots, info = LdlFactor.apply(A)
    if check_errors and info._data.any():
        raise LinAlgError('torch.linalg.ldl_factor_ex: The factorization could not be '
                          'completed because the input is not invertible.')
    return _ldl_factor_ex(LD, pivots, info)


@vmap_function('physical')
def ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)``: the compact LDL^T factorisation of symmetric A."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if info._data.any():
        raise LinAlgError('torch.linalg.ldl_factor: The factorization could not be completed '
                          'because the input is not invertible.')
    return _ldl_factor(LD, pivots)


class LdlSolve(Op):
    node_name = 'LinalgLdlSolveBackward0'

    def forward(self, LD, pivots, B):
        lapack = _lapack('ldl_solve')
        fn = lapack.dsytrs if LD.dtype == np.float64 else lapack.ssytrs
        batch = xp.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
        LDb = xp.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
        Pb = xp.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1, pivots.shape[-1]))
        Bb = xp.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
        out = [fn(ld, p, b, lower=1)[0] for ld, p, b in zip(LDb, Pb, Bb)]
        return (xp.stack(out).reshape(batch + B.shape[-2:]) if out else
                xp.zeros(batch + B.shape[-2:], B.dtype)).astype(B.dtype, copy=False)

    def backward(self, g):
        raise RuntimeError('derivative for aten::linalg_ldl_solve is not implemented')


@vmap_function('physical')
def ldl_solve(LD, pivots, B, *, hermitian=False):
    """``X`` with ``A X = B`` from ``ldl_factor``'s result."""
    _tensors('linalg.ldl_solve', LD, pivots, B)
    _no_half('linalg_ldl_solve_cpu', LD, B)
    return LdlSolve.apply(LD, pivots, B)


# PyTorch's top-level forms of these take out= (see out_args)
give_out(TOP_LEVEL, 'cholesky_solve cholesky_inverse')
give_out(TOP_LEVEL, 'triangular_solve cholesky svd qr orgqr nuclear_norm geqrf ormqr lu_solve '
                    'lu_unpack', EXACT)
