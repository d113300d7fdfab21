"""torch.linalg's inverses, determinants, solvers and decompositions (inv, det, slogdet,
solve, cholesky, qr, svd, eigh, pinv, lstsq, matrix_rank) and matrix_power, batched over
leading dimensions. Where a backward formula needs another of these ops (an inverse, a
solve, a decomposition) it runs it through ``SomeOp.run``: on arrays the op's forward, on
tensors the recorded op, whose own backward gives the next order.

Limits (as PyTorch's): gradients of ``svd``/``eigh`` need distinct singular values /
eigenvalues; ``det``'s double backward and ``slogdet``'s backward need an invertible
matrix (``det``'s first backward also handles singular ones through the SVD); real
dtypes only. Re-exported by ``ops/linalg.py``."""
from collections import namedtuple

import numpy as np

from ..autograd.batched import vmap_function
from ..backend import xp
from ..autograd.function import Op
from ..autograd.autocast import autocast_args, autocast_state
from ..tensor import method, wrap
from .formula import is_array, zeros_like as _zeros_like
from ._linalg_common import (
    LinAlgError, _eye, _np_dtype, _tname, _diag_embed, _shape, _check_square,
    _check_matrices, _first_bad, _singular_error)
from .linalg_products import _mm, _check_tensor, matmul


# -- torch.linalg: inverses, determinants, solvers ------------------------------------------

class Inv(Op):
    node_name = 'LinalgInvExBackward0'

    def forward(self, A):
        try:
            out = xp.linalg.inv(A)
        except np.linalg.LinAlgError:
            raise _singular_error('linalg.inv', A, 'The diagonal element is zero, the inversion '
                                  'could not be completed because the input matrix is '
                                  'singular.') from None
        self.save_for_backward(out)
        return out

    def backward(self, g):
        Ai, = self.saved_tensors
        AiT = Ai.mT
        return -_mm(_mm(AiT, g), AiT)


@method('inverse')
def inv(A):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.inv', A)
    _check_square('linalg.inv', A, complex_ok=True)    # holomorphic: its real formula serves
    return Inv.apply(A)


def _adjugate_T(A):
    """The transposed adjugate (the gradient of det) through the SVD: defined for singular A."""
    U, S, Vh = xp.linalg.svd(A)
    n = S.shape[-1]
    others = xp.where(xp.eye(n, dtype=bool), 1, S[..., None, :])    # S_j, with 1 on j == i
    prods = others.prod(-1)                                        # prod_{j != i} S_j
    sign = xp.linalg.det(U) * xp.linalg.det(Vh)
    if A.dtype.kind == 'c':     # adj(A)^T = det(U) det(Vh) conj(U) diag(prods) conj(Vh)
        U, Vh = U.conj(), Vh.conj()
    return sign[..., None, None] * ((U * prods[..., None, :]) @ Vh)


class Det(Op):
    node_name = 'LinalgDetBackward0'

    def forward(self, A):
        with np.errstate(over='ignore'):         # an overflowing det is inf, as in torch
            d = xp.asarray(xp.linalg.det(A), A.dtype)
        self.save_for_backward(A, d)
        return d

    def backward(self, g):
        A, d = self.saved_tensors
        if is_array(g):
            try:
                return (g * d)[..., None, None] * xp.linalg.inv(A).mT
            except np.linalg.LinAlgError:
                return g[..., None, None] * _adjugate_T(A)
        return (g * d)[..., None, None] * Inv.run(A).mT


@method
def det(A):
    _check_tensor('linalg.det', A)
    _check_square('linalg.det', A, complex_ok=True)    # holomorphic: its real formula serves
    return Det.apply(A)


_slogdet_result = namedtuple('linalg_slogdet', ['sign', 'logabsdet'])
_slogdet_result_torch = namedtuple('slogdet', ['sign', 'logabsdet'])


class Slogdet(Op):
    node_name = 'LinalgSlogdetBackward0'

    def forward(self, A):
        sign, lad = xp.linalg.slogdet(A)
        self.save_for_backward(A)
        return xp.asarray(sign, A.dtype), xp.asarray(lad, A.dtype)

    def backward(self, g_sign=None, g_lad=None):
        A, = self.saved_tensors
        if g_lad is None:
            return _zeros_like(A)
        if is_array(g_lad):
            try:
                return g_lad[..., None, None] * xp.linalg.inv(A).mT
            except np.linalg.LinAlgError:
                raise _singular_error('linalg.slogdet', A, 'the gradient of logabsdet is not '
                                      'defined for a singular matrix') from None
        return g_lad[..., None, None] * Inv.run(A).mT


def linalg_slogdet(A):
    _check_tensor('linalg.slogdet', A)
    _check_square('linalg.slogdet', A)
    return _slogdet_result(*Slogdet.apply(A))


@method
def slogdet(input):
    _check_tensor('slogdet', input)
    _check_square('linalg.slogdet', input)
    return _slogdet_result_torch(*Slogdet.apply(input))


@method
def logdet(input):
    """log(det(A)): NaN where det < 0, -inf where det == 0."""
    _check_tensor('logdet', input)
    _check_square('linalg.slogdet', input)
    sign, lad = Slogdet.apply(input)
    from .pointwise import where
    return where(sign < 0, float('nan'), lad)


class Solve(Op):
    """X with A X = B (B a batch of matrices, or of vectors when ``vector``)."""
    node_name = 'LinalgSolveExBackward0'

    def forward(self, A, B, vector=False):
        self.vector = vector
        if vector:
            B = B[..., None]
        try:
            X = xp.linalg.solve(A, B)
        except np.linalg.LinAlgError:
            raise _singular_error('torch.linalg.solve', A, 'The solver failed because the input '
                                  'matrix is singular.') from None
        need_a, need_b = self.needs_input_grad[:2]
        out = X[..., 0] if vector else X
        self.save_for_backward(A if (need_a or need_b) else None, out if need_a else None)
        return out

    def backward(self, g):
        A, X = self.saved_tensors
        gB = Solve.run(A.mT, g, vector=self.vector)
        gA = None
        if X is not None:
            gA = -(gB[..., :, None] * X[..., None, :]) if self.vector else -_mm(gB, X.mT)
        return gA, (gB if self.needs_input_grad[1] else None)


def solve(A, B, *, left=True):
    if autocast_state.active:
        A, B = autocast_args('fp32', A, B)
    _check_tensor('linalg.solve', A, B)
    _check_square('linalg.solve', A, complex_ok=True)
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f'linalg.solve: Expected A and B to have the same dtype, but found A '
                           f'of type {_tname(A)} and B of type {_tname(B)} instead')
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    rows = B.shape[-1] if vector else (B.shape[-2] if B.ndim >= 2 else None)
    if rows != n:
        bs = 'x'.join(str(d) for d in B.shape[-2:]) if B.ndim >= 2 else str(B.shape[0])
        raise RuntimeError(f'linalg.solve: Incompatible shapes of A and B for the equation AX = '
                           f'B ({n}x{n} and {bs})')
    try:
        xp.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1 if vector else -2]))
    except ValueError:
        raise RuntimeError(f'linalg.solve: the batch dimensions of A {_shape(A)} and B '
                           f'{_shape(B)} do not broadcast') from None
    return Solve.apply(A, B, vector=vector)


# -- decompositions -----------------------------------------------------------------------

def _tril_mask(n, dtype, k=0):
    return xp.tril(xp.ones((n, n), dtype), k)


class Cholesky(Op):
    node_name = 'LinalgCholeskyExBackward0'

    def forward(self, A, upper=False):
        self.upper = upper
        try:
            L = xp.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise _cholesky_error(A) from None
        out = L.mT.copy() if upper else L
        self.save_for_backward(out)
        return out

    def backward(self, g):
        L, = self.saved_tensors
        if self.upper:
            L, g = L.mT, g.mT
        n = L.shape[-1]
        dtype = _np_dtype(L)
        phi = _tril_mask(n, dtype, -1) + 0.5 * _eye(n, dtype)
        P = _mm(L.mT, g * _tril_mask(n, dtype)) * phi
        Li = Inv.run(L)
        S = _mm(_mm(Li.mT, P), Li)
        return (S + S.mT) * 0.5


def _cholesky_error(A):
    n = A.shape[-1]
    bad = xp.zeros(A.shape[:-2], bool)
    order = xp.full(A.shape[:-2], n + 1)
    for k in range(n, 0, -1):                 # leading minors (error path only)
        fails = ~(xp.linalg.det(A[..., :k, :k]) > 0)
        order = xp.where(fails, k, order)
        bad |= fails
    where = _first_bad(bad)
    first = int(xp.ravel(order)[xp.argmax(xp.ravel(bad))]) if bad.any() else 1
    return LinAlgError(f'linalg.cholesky: {where}The factorization could not be completed '
                       f'because the input is not positive-definite (the leading minor of '
                       f'order {first} is not positive-definite).')


def cholesky(A, *, upper=False):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.cholesky', A)
    _check_square('linalg.cholesky', A)
    return Cholesky.apply(A, upper=upper)


_qr_result = namedtuple('linalg_qr', ['Q', 'R'])


def _copy_upper(M):
    """The symmetric matrix with M's upper triangle (diagonal included)."""
    n = M.shape[-1]
    dtype = _np_dtype(M)
    up = xp.triu(xp.ones((n, n), dtype))
    strict = xp.triu(xp.ones((n, n), dtype), 1)
    return M * up + (M * strict).mT


def _qr_back_tall(Q, R, gQ, gR):
    """gA for A = QR with Q (m, n), R (n, n) square upper triangular."""
    M = _mm(gR, R.mT) - _mm(Q.mT, gQ)
    b = gQ + _mm(Q, _copy_upper(M))
    return Solve.run(R, b.mT).mT              # b R^{-T}


class Qr(Op):
    node_name = 'LinalgQrBackward0'

    def forward(self, A, mode='reduced'):
        self.mode = mode
        self.mn = A.shape[-2:]
        if mode == 'r':
            R = xp.linalg.qr(A, mode='r')
            return xp.empty((0,), A.dtype), xp.asarray(R)
        Q, R = xp.linalg.qr(A, mode=mode)
        self.save_for_backward(Q, R)
        return Q, R

    def backward(self, gQ=None, gR=None):
        m, n = self.mn
        if self.mode == 'r':
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if self.mode == 'complete' and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        Q, R = self.saved_tensors
        if gQ is None:
            gQ = _zeros_like(Q)
        if gR is None:
            gR = _zeros_like(R)
        if m >= n:
            return _qr_back_tall(Q, R, gQ, gR)
        from .indexing import IndexScatter
        R1, R2 = R[..., :, :m], R[..., :, m:]
        gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
        Y = _mm(Q, R2)
        gX = _qr_back_tall(Q, R1, gQ + _mm(Y, gR2.mT), gR1)
        gY = _mm(Q, gR2)
        shape = tuple(Q.shape[:-2]) + (m, n)
        return (IndexScatter.run(gX, key=(Ellipsis, slice(0, m)), shape=shape)
                + IndexScatter.run(gY, key=(Ellipsis, slice(m, n)), shape=shape))


def qr(A, mode='reduced'):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.qr', A)
    if mode not in ('reduced', 'complete', 'r'):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrices('linalg.qr', A)
    return _qr_result(*Qr.apply(A, mode=mode))


_svd_result = namedtuple('linalg_svd', ['U', 'S', 'Vh'])


def _svd_back(U, S, Vh, gU, gS, gVh):
    """gA for A = U diag(S) Vh (reduced: U (m, k), S (k), Vh (k, n)); needs distinct S."""
    if gU is None and gVh is None:
        if gS is None:
            return None
        return _mm(U * gS[..., None, :], Vh)
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    dtype = _np_dtype(S)
    eye = _eye(k, dtype)
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None] + eye          # E_ij = S_j^2 - S_i^2, 1 on the diag
    inner = 0
    if gU is not None:
        UhgU = _mm(U.mT, gU)
        inner = (UhgU - UhgU.mT) / E * S[..., None, :]
    if gVh is not None:
        VhgV = _mm(Vh, gVh.mT)
        inner = inner + S[..., :, None] * ((VhgV - VhgV.mT) / E)
    if gS is not None:
        inner = inner + _diag_embed(gS)
    gA = _mm(_mm(U, inner), Vh)
    if gU is not None and m > k:
        gA = gA + _mm((gU - _mm(U, UhgU)) / S[..., None, :], Vh)
    if gVh is not None and n > k:
        gA = gA + _mm(U, (gVh - _mm(VhgV.mT, Vh)) / S[..., :, None])
    return gA


class Svd(Op):
    node_name = 'LinalgSvdBackward0'

    def forward(self, A, full_matrices=True):
        U, S, Vh = xp.linalg.svd(A, full_matrices=full_matrices)
        self.save_for_backward(U, S, Vh)
        self.k = S.shape[-1]
        return U, S, Vh

    def backward(self, gU=None, gS=None, gVh=None):
        U, S, Vh = self.saved_tensors
        k = self.k
        if U.shape[-1] != k:
            U = U[..., :, :k]
            gU = gU[..., :, :k] if gU is not None else None
        if Vh.shape[-2] != k:
            Vh = Vh[..., :k, :]
            gVh = gVh[..., :k, :] if gVh is not None else None
        return _svd_back(U, S, Vh, gU, gS, gVh)


class Svdvals(Op):
    node_name = 'LinalgSvdBackward0'

    def forward(self, A):
        if self.needs_input_grad[0]:
            U, S, Vh = xp.linalg.svd(A, full_matrices=False)
            self.save_for_backward(A, U, Vh)
            return S
        return xp.linalg.svd(A, compute_uv=False)

    def backward(self, gS):
        A, U, Vh = self.saved_tensors
        if not is_array(gS):                 # recompute U, Vh as functions of A
            U, _, Vh = Svd.run(A, full_matrices=False)
        return _mm(U * gS[..., None, :], Vh)


def svd(A, full_matrices=True, *, driver=None):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.svd', A)
    _check_matrices('linalg.svd', A)
    return _svd_result(*Svd.apply(A, full_matrices=full_matrices))


def svdvals(A, *, driver=None):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.svdvals', A)
    _check_matrices('linalg.svdvals', A)
    return Svdvals.apply(A)


_eigh_result = namedtuple('linalg_eigh', ['eigenvalues', 'eigenvectors'])


def _eigh_back(L, V, gL, gV):
    """gA (symmetric) for A = V diag(L) V^T; needs distinct eigenvalues when gV is given."""
    inner = _diag_embed(gL) if gL is not None else 0
    if gV is not None:
        n = L.shape[-1]
        dtype = _np_dtype(L)
        eye = _eye(n, dtype)
        VtgV = _mm(V.mT, gV)
        E = L[..., None, :] - L[..., :, None] + eye       # E_ij = L_j - L_i, 1 on the diag
        inner = inner + (VtgV - VtgV.mT) * 0.5 / E * (1 - eye)
    return _mm(_mm(V, inner), V.mT)


class Eigh(Op):
    node_name = 'LinalgEighBackward0'

    def forward(self, A, UPLO='L'):
        L, V = xp.linalg.eigh(A, UPLO=UPLO)
        self.save_for_backward(L, V)
        return L, V

    def backward(self, gL=None, gV=None):
        L, V = self.saved_tensors
        return _eigh_back(L, V, gL, gV)


class Eigvalsh(Op):
    node_name = 'LinalgEighBackward0'

    def forward(self, A, UPLO='L'):
        self.UPLO = UPLO
        if self.needs_input_grad[0]:
            L, V = xp.linalg.eigh(A, UPLO=UPLO)
            self.save_for_backward(A, V)
            return L
        return xp.linalg.eigvalsh(A, UPLO=UPLO)

    def backward(self, gL):
        A, V = self.saved_tensors
        if not is_array(gL):
            _, V = Eigh.run(A, UPLO=self.UPLO)
        return _mm(V * gL[..., None, :], V.mT)


def _check_uplo(UPLO):
    if UPLO not in ('L', 'U', 'l', 'u'):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def eigh(A, UPLO='L'):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.eigh', A)
    UPLO = _check_uplo(UPLO)
    _check_square('linalg.eigh', A)
    return _eigh_result(*Eigh.apply(A, UPLO=UPLO))


def eigvalsh(A, UPLO='L'):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.eigvalsh', A)
    UPLO = _check_uplo(UPLO)
    _check_square('linalg.eigvalsh', A)
    return Eigvalsh.apply(A, UPLO=UPLO)


def _pinv_back(A, P, gP):
    """gA for P = pinv(A) (constant rank): Golub and Pereyra's formula."""
    m, n = A.shape[-2], A.shape[-1]
    dtype = _np_dtype(A)
    PT = P.mT
    gA = -_mm(_mm(PT, gP), PT)
    gA = gA + _mm(_mm(_eye(m, dtype) - _mm(A, P), gP.mT), _mm(P, PT))
    gA = gA + _mm(_mm(PT, P), _mm(gP.mT, _eye(n, dtype) - _mm(P, A)))
    return gA


def _pinv_array(A, atol, rtol, hermitian):
    if hermitian:
        L, V = xp.linalg.eigh(A)
        absL = xp.abs(L)
        top = absL.max(-1, keepdims=True, initial=0)
        keep = absL > xp.maximum(atol, rtol * top)
        Linv = xp.where(keep, 1 / xp.where(keep, L, 1), 0)
        return (V * Linv[..., None, :]) @ V.mT
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    top = S.max(-1, keepdims=True, initial=0)
    keep = S > xp.maximum(atol, rtol * top)
    Sinv = xp.where(keep, 1 / xp.where(keep, S, 1), 0)
    return (Vh.mT * Sinv[..., None, :]) @ U.mT


class Pinv(Op):
    node_name = 'LinalgPinvBackward0'

    def forward(self, A, atol=0.0, rtol=0.0, hermitian=False):
        P = _pinv_array(A, atol, rtol, hermitian).astype(A.dtype, copy=False)
        self.save_for_backward(A, P)
        return P

    def backward(self, g):
        A, P = self.saved_tensors
        return _pinv_back(A, P, g)


def _tolerances(A, atol, rtol):
    if hasattr(atol, '_data'):
        atol = atol._data
    if hasattr(rtol, '_data'):
        rtol = rtol._data
    if rtol is None:
        eps = np.finfo(A._data.dtype).eps
        rtol = 0.0 if (atol is not None and xp.any(xp.asarray(atol) > 0)) else \
            eps * max(A.shape[-2], A.shape[-1])
    if atol is None:
        atol = 0.0
    return (xp.asarray(atol)[..., None] if xp.ndim(atol) else atol,
            xp.asarray(rtol)[..., None] if xp.ndim(rtol) else rtol)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    _check_tensor('linalg.pinv', A)
    if A.ndim < 2 or A._data.dtype.kind != 'f' or A._data.dtype == np.float16:
        raise RuntimeError(f'linalg.pinv({_tname(A)}{{{_shape(A)}}}): expected a tensor with 2 '
                           'or more dimensions of float, double, cfloat or cdouble types')
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol)
    return Pinv.apply(A, atol=atol, rtol=rtol, hermitian=hermitian)


@method
def pinverse(input, rcond=1e-15):
    if autocast_state.active:
        input, = autocast_args('fp32', input)
    return pinv(input, rtol=rcond)


@vmap_function('physical')
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_tensor('linalg.matrix_rank', A)
    _check_matrices('linalg.matrix_rank', A)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    a = A._data
    if hermitian:
        S = xp.abs(xp.linalg.eigvalsh(a))
    else:
        S = xp.linalg.svd(a, compute_uv=False)
    top = S.max(-1, keepdims=True, initial=0)
    rank = (S > xp.maximum(atol, rtol * top)).sum(-1).astype(np.int64)
    return wrap(xp.asarray(rank))


_lstsq_result = namedtuple('linalg_lstsq', ['solution', 'residuals', 'rank', 'singular_values'])


class Lstsq(Op):
    """The minimum-norm least-squares solution ``pinv(A) @ B`` (A of any rank) and, when
    ``residuals``, the squared residual norms of its columns."""
    node_name = 'LinalgLstsqBackward0'

    def forward(self, A, B, rtol, vector=False, residuals=False):
        self.rtol, self.vector, self.residuals = rtol, vector, residuals
        B_ = B[..., None] if vector else B
        P = _pinv_array(A, 0.0, rtol, False).astype(A.dtype, copy=False)
        X = P @ B_
        if residuals:
            res = ((A @ X - B_) ** 2).sum(-2)           # (..., k): k = 1 for a vector B
        else:
            res = xp.zeros((0,), A.dtype)
        X = X[..., 0] if vector else X
        self.save_for_backward(A, B, X, P)
        return X, res

    def backward(self, gX=None, gres=None):
        A, B, X, P = self.saved_tensors
        if self.vector:
            B, X = B[..., None], X[..., None]
            gX = gX[..., None] if gX is not None else None

        gA = gB = 0
        if gX is not None:
            if not is_array(gX):               # P as a function of A, for the next order
                P = Pinv.run(A, atol=0.0, rtol=self.rtol)
            gB = _mm(P.mT, gX)
            if self.needs_input_grad[0]:
                gA = _pinv_back(A, P, _mm(gX, B.mT))
        if self.residuals and gres is not None:
            # X minimises the residual, so only the explicit dependence on A and B remains
            r = (_mm(A, X) - B) * (2 * gres[..., None, :])
            gA = gA + _mm(r, X.mT)
            gB = gB - r
        if self.vector and not isinstance(gB, int):
            gB = gB[..., 0]
        return (gA if self.needs_input_grad[0] and not isinstance(gA, int) else None,
                gB if self.needs_input_grad[1] and not isinstance(gB, int) else None)


@vmap_function('loop')
def lstsq(A, B, rcond=None, *, driver=None):
    if autocast_state.active:
        A, B = autocast_args('fp32', A, B)
    _check_tensor('linalg.lstsq', A, B)
    _check_matrices('linalg.lstsq', A)
    if driver not in (None, 'gels', 'gelsy', 'gelsd', 'gelss'):
        raise RuntimeError(f'torch.linalg.lstsq: parameter `driver` should be one of (gels, '
                           f'gelsy, gelsd, gelss), but got {driver}')
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f'torch.linalg.lstsq: Expected input and other to have the same '
                           f'dtype, but got input\'s dtype {_tname(A)} and other\'s dtype '
                           f'{_tname(B)}')
    vector = B.ndim == A.ndim - 1
    m, n = A.shape[-2:]
    rows = B.shape[-1] if vector else (B.shape[-2] if B.ndim >= 2 else None)
    if rows != m:
        raise RuntimeError(f'torch.linalg.lstsq: input.size(-2) should match other.size(-2) '
                           f'(got {m} and {rows})')
    driver = driver or 'gelsy'
    eps = np.finfo(A._data.dtype).eps
    rtol = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    a = A._data
    S = xp.linalg.svd(a, compute_uv=False) if a.size else xp.zeros(a.shape[:-2] + (0,), a.dtype)
    top = S.max(-1, keepdims=True, initial=0)
    rank = (S > rtol * top).sum(-1).astype(np.int64)
    with_res = driver != 'gelsy' and m > n and bool(xp.all(rank == n))
    X, res = Lstsq.apply(A, B, rtol=rtol, vector=vector, residuals=with_res)
    sv = S if driver in ('gelsd', 'gelss') else xp.zeros((0,), a.dtype)
    rank_t = wrap(xp.asarray(rank)) if driver != 'gels' else wrap(xp.zeros((0,), np.int64))
    return _lstsq_result(X, res, rank_t, wrap(xp.asarray(sv)))


# -- matrix powers ----------------------------------------------------------------------

class _PowerZero(Op):
    """``A ** 0``: identity matrices, with a zero gradient (torch records a copy)."""
    node_name = 'CopyBackwards'

    def forward(self, A):
        return xp.broadcast_to(_eye(A.shape[-1], A.dtype), A.shape).copy()

    def backward(self, g):
        return g * 0


@method
def matrix_power(input, n):
    _check_tensor('matrix_power', input)
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        if input.ndim < 2:
            raise RuntimeError('linalg.matrix_power: The input tensor A must have at least 2 '
                               'dimensions.')
        raise RuntimeError(f'linalg.matrix_power: A must be batches of square matrices, but '
                           f'they are {input.shape[-2]} by {input.shape[-1]} matrices')
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f'matrix_power(): argument \'n\' must be int, not {type(n).__name__}')
    if n == 0:
        return _PowerZero.apply(input)
    a = input
    if n < 0:
        a = inv(input)
        if n == -1:
            return a
        n = -n
    if n == 1:
        return a.clone()
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result
