"""Randomized and iterative spectral methods: ``torch.svd_lowrank``, ``torch.pca_lowrank``
and ``torch.lobpcg`` (top-level names, as in PyTorch).

``svd_lowrank`` is Halko, Martinsson and Tropp's randomized range finder (their Algorithm
4.4: a Gaussian sketch, ``niter`` rounds of subspace iteration re-orthonormalized by QR)
followed by the SVD of the small projected matrix (Algorithm 5.1). It is written with
dynagrad's ``matmul``, ``linalg.qr`` and ``linalg.svd``, so its gradient is theirs, as in
PyTorch. For an input of exact rank ``q`` and ``niter >= 1`` that gradient does not depend
on the random sketch and equals the truncated SVD's; otherwise it is the gradient of the
randomized approximation actually computed. ``pca_lowrank`` centers the columns and calls it.

``lobpcg`` is Knyazev's locally optimal block preconditioned conjugate gradient method for
the extreme eigenpairs of a symmetric (generalized) eigenproblem ``A x = lambda B x``:
``method='basic'`` is the original scheme (the search basis B-orthonormalized through a
Cholesky factor at each Rayleigh-Ritz step), ``method='ortho'`` (the default) keeps the basis
B-orthonormal with Stathopoulos and Wu's SVQB-based orthogonalization, the robust variant of
Duersch, Shao, Yang and Gu (2018). Converged leading pairs are locked, a pair counts as
converged once its backward-stable relative residual is below ``tol``. It runs on NumPy
arrays inside one op, whose backward is the eigenvector-sensitivity formula of a partial
eigenspace (a shifted solve on the orthogonal complement per eigenpair), as PyTorch's is;
like PyTorch it symmetrizes ``A`` first when it needs a gradient, and refuses a backward
through a given ``B``.
"""
import math

import numpy as np

from .. import _dtype
from ..backend import xp
from ..autograd.function import Op
from ..tensor import Tensor, wrap
from ._linalg_common import LinAlgError, _eye, _np_dtype, _diag_embed
from .linalg_products import _mm, matmul, dtype_mismatch
from .linalg_decompositions import Solve, qr, svd
from .linalg_solvers import _no_half
from .random import randn

__all__ = ['svd_lowrank', 'pca_lowrank', 'lobpcg']

_FLOATS = (_dtype.float16, _dtype.float32, _dtype.float64)


def _floating_dtype(A):
    """The dtype PyTorch draws its random matrices in: A's for float16/32/64, else float32
    (so an integer or bfloat16 input then meets a dtype mismatch in the first product)."""
    return A.dtype if A.dtype in _FLOATS else _dtype.float32


# -- randomized SVD and PCA --------------------------------------------------------------

def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns whose span approximates the range of A - M (M is
    subtracted product by product, never formed as A - M)."""
    niter = 2 if niter is None else niter

    def times(X, transpose=False):
        AX = matmul(A.mH if transpose else A, X)
        if M is not None:
            AX = AX - matmul(M.mH if transpose else M, X)
        return AX

    Q = qr(times(randn(A.shape[-1], q, dtype=_floating_dtype(A)))).Q
    for _ in range(niter):
        Q = qr(times(Q, transpose=True)).Q
        Q = qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~= U diag(S) V^H``: a randomized rank-``q`` SVD."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if A.dtype == _dtype.float16:
        _no_half('geqrf_cpu', A)
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:        # the range finder works on the tall one of A and A^H
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = svd(B, full_matrices=False)
    U, V = matmul(Q, U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: the randomized SVD of A with its column means removed (``center``)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f'q(={q}) must be non-negative integer and not greater than '
                         f'min(m, n)={min(m, n)}')
    if not niter >= 0:
        raise ValueError(f'niter(={niter}) must be non-negative integer')
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A, q, niter=niter)


# -- LOBPCG ------------------------------------------------------------------------------

def _ritz(T, largest):
    """Eigenpairs of the small symmetric T, the wanted end of the spectrum first."""
    E, Z = xp.linalg.eigh((T + T.T) * 0.5)
    return (E[::-1], Z[:, ::-1]) if largest else (E, Z)


def _not_positive_definite(G):
    order = next(j for j in range(1, G.shape[0] + 1)
                 if not xp.linalg.det(G[:j, :j]) > 0)
    return LinAlgError('linalg.cholesky: The factorization could not be completed because '
                       f'the input is not positive-definite (the leading minor of order '
                       f'{order} is not positive-definite).')


class LOBPCG:
    """One LOBPCG run on one matrix: the object a ``tracker`` is called with after each
    step. As in PyTorch it holds the parameters (``iparams``, ``fparams``, ``bparams``),
    the iteration variables (``ivars``: ``istep``, ``converged_count``, ...; ``fvars``,
    ``bvars``, ``tvars['rerr']``), the inputs ``A``, ``B``, ``iK`` and the iterates ``E``,
    ``X``, ``S`` (the search basis), ``R`` (the residuals), as tensors that share the
    worker's memory (copy them to keep them). A tracker setting
    ``bvars['force_stop'] = True`` stops the run."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self._A, self._B, self._iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams['m'], iparams['n']
        self._X = X.copy()
        self._E = xp.zeros(n, X.dtype)
        self._R = xp.zeros((m, n), X.dtype)
        self._S = xp.zeros((m, 3 * n), X.dtype)
        self.ivars = {'istep': 0}
        self.fvars = {'_': 0.0}
        self.bvars = {'_': False}
        self.tvars = {}

    A = property(lambda self: wrap(self._A))
    B = property(lambda self: None if self._B is None else wrap(self._B))
    iK = property(lambda self: None if self._iK is None else wrap(self._iK))
    E = property(lambda self: wrap(self._E))
    X = property(lambda self: wrap(self._X))
    S = property(lambda self: wrap(self._S))
    R = property(lambda self: wrap(self._R))

    def __str__(self):
        names = ('iparams', 'fparams', 'bparams', 'ivars', 'fvars', 'bvars', 'tvars', 'A', 'B',
                 'iK', 'X', 'E')
        return 'LOBPCG:\n' + ''.join(f'  {k}={getattr(self, k)}\n' for k in names)

    # -- products with B and the preconditioner (None: the identity)
    def _Bx(self, U):
        return U if self._B is None else self._B @ U

    def _Kx(self, U):
        return U if self._iK is None else self._iK @ U

    def run(self):
        self.update()
        if self.tracker is not None:
            self.tracker(self)
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.tracker(self)

    def stop_iteration(self):
        return (self.bvars.get('force_stop', False) or self.ivars['iterations_left'] == 0
                or self.ivars['converged_count'] >= self.iparams['k'])

    def update(self):
        if self.ivars['istep'] == 0:
            # scales of A and B for the backward-stable residual test, from the first guess
            x_norm = float(xp.linalg.norm(self._X))
            inv_norm = x_norm ** -1     # k=0 (an empty X) ends here, with Python's error
            self.fvars['X_norm'] = x_norm
            self.fvars['A_norm'] = float(xp.linalg.norm(self._A @ self._X)) * inv_norm
            self.fvars['B_norm'] = float(xp.linalg.norm(self._Bx(self._X))) * inv_norm
            self.ivars['iterations_left'] = self.iparams['niter']
            self.ivars['converged_count'] = 0
            self.ivars['converged_end'] = 0
        self._step(ortho=self.method == 'ortho')
        self.ivars['iterations_left'] -= 1
        self.ivars['istep'] += 1

    def _step(self, ortho):
        n = self.iparams['n']
        nc = self.ivars['converged_count']
        largest = self.bparams['largest']
        first = self.ivars['istep'] == 0
        # the active part of the search basis: unconverged X, then P, then W
        S = self._X if first else self._S[:, nc:self.ivars['converged_end']]
        a = n if first else n - nc
        C = self._rr_transform(S) if first or not ortho else None
        T = S.T @ (self._A @ S)
        if C is not None:
            T = C.T @ T @ C
        E, Z = _ritz(T, largest)
        Y = Z if C is None else C @ Z      # coefficients of the Ritz vectors in S
        self._X[:, n - a:] = S @ Y[:, :a]
        self._E[n - a:] = E[:a]
        if first:
            P = S[:, :0]
        elif ortho:
            # the part of span(S) B-orthogonal to the new X that carries the step taken
            # outside the old X (Knyazev's P, B-orthonormalized inside the Ritz basis)
            basis = xp.linalg.qr(Z[a:, a:].T @ Z[a:, :a])[0]
            P = S @ (Z[:, a:] @ basis)
        else:
            P = S[:, a:] @ Y[a:, :a]
        self._R = self._A @ self._X - self._Bx(self._X) * self._E
        nc = self._count_converged()
        np_ = P.shape[-1]
        self._S[:, :n] = self._X
        self._S[:, n:n + np_] = P
        W = self._Kx(self._R[:, nc:])
        if ortho:
            W = self._ortho(W, self._S[:, :n + np_])
        end = n + np_ + W.shape[-1]
        self._S[:, n + np_:end] = W
        self.ivars['converged_end'] = end

    def _rr_transform(self, S):
        """C with C^T (S^T B S) C = I: Rayleigh-Ritz on span(S) as a standard problem."""
        G = S.T @ self._Bx(S)
        d = xp.diagonal(G) ** -0.5
        G = G * d[:, None] * d
        try:
            L = xp.linalg.cholesky(G)
        except np.linalg.LinAlgError:
            raise _not_positive_definite(G) from None
        return d[:, None] * xp.linalg.inv(L.T)

    def _count_converged(self):
        f = self.fvars
        X, E = self._X, self._E
        rerr = (xp.linalg.norm(self._R, axis=0)
                / (xp.linalg.norm(X, axis=0) * (f['A_norm'] + xp.abs(E) * f['B_norm'])))
        ok = rerr < self.fparams['tol']
        # only a leading run counts, so the returned pairs stay in order
        count = int(ok.argmin()) if not ok.all() else ok.size
        self.ivars['converged_count'] = count
        self.tvars['rerr'] = wrap(rerr)
        return count

    def _svqb(self, U, drop, tau):
        """U B-orthonormalized through the eigendecomposition of its scaled Gram matrix;
        directions with eigenvalues below tau (relative) are dropped or lifted to it."""
        if U.size == 0:
            return U
        d = xp.einsum('ij,ij->j', U, self._Bx(U))
        if not d.all():             # exact zero columns (possible with crafted inputs)
            U = U[:, d != 0]
            if U.size == 0:
                return U
        G = U.T @ self._Bx(U)
        s = xp.diagonal(G) ** -0.5
        E, Z = xp.linalg.eigh(G * s[:, None] * s)
        t = tau * xp.abs(E).max()
        if drop:
            keep = E > t
            E, Z = E[keep], Z[:, keep]
        else:
            E = xp.maximum(E, t)
        return (U * s) @ (Z * E ** -0.5)

    def _ortho(self, U, V):
        """U B-orthonormalized and B-orthogonal to V (itself B-orthonormal): projections
        repeated up to ``ortho_i_max`` times, each followed by up to ``ortho_j_max`` SVQB
        passes, until the relative errors fall below ``ortho_tol``; with
        ``ortho_use_drop`` the passes after the first drop nearly dependent directions."""
        ip, fp = self.iparams, self.fparams
        for key in [k for k in self.fvars if k.startswith('ortho_') and k.endswith('_rerr')]:
            del self.fvars[key]
        self.ivars.pop('ortho_i', None)
        self.ivars.pop('ortho_j', None)
        bv_norm = xp.linalg.norm(self._Bx(V))
        VBU = V.T @ self._Bx(U)
        i = j = 0
        for i in range(ip['ortho_i_max']):
            U = U - V @ VBU
            for j in range(ip['ortho_j_max']):
                if self.bparams['ortho_use_drop']:
                    U = self._svqb(U, j > 0, fp['ortho_tol_replace' if j else 'ortho_tol_drop'])
                else:
                    U = self._svqb(U, False, fp['ortho_tol_replace'])
                if U.size == 0:     # U lay in span(V)
                    self.ivars['ortho_i'], self.ivars['ortho_j'] = i, j
                    return U
                BU = self._Bx(U)
                err = (xp.linalg.norm(U.T @ BU - xp.eye(U.shape[-1], dtype=U.dtype))
                       / (xp.linalg.norm(BU) * xp.linalg.norm(U)))
                self.fvars[f'ortho_UBUmI_rerr[{i}, {j}]'] = float(err)
                if err < fp['ortho_tol']:
                    break
            VBU = V.T @ BU
            err = xp.linalg.norm(VBU) / (bv_norm * xp.linalg.norm(U))
            self.fvars[f'ortho_VBU_rerr[{i}]'] = float(err)
            if err < fp['ortho_tol']:
                break
            if ip['m'] < U.shape[-1] + V.shape[-1]:
                raise ValueError(f"Overdetermined shape of U: #B-cols(={ip['m']}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must "
                                 'hold')
        self.ivars['ortho_i'], self.ivars['ortho_j'] = i, j
        return U


class Lobpcg(Op):
    """LOBPCG on each matrix of a batch (forward); the partial-eigenspace gradient for A."""
    node_name = 'LOBPCGAutogradFunctionBackward'

    def forward(self, A, B, X=None, iK=None, k=None, iparams=None, fparams=None,
                bparams=None, method=None, tracker=None):
        m, n = A.shape[-1], X.shape[-1]
        batch = A.shape[:-2]
        count = math.prod(batch)
        flatA = A.reshape((count, m, m))
        flatB = None if B is None else B.reshape((count, m, m))
        flatX = X.reshape((count, m, n))
        Es, Us = [], []
        for i in range(count):
            if batch:
                iparams['batch_index'] = i
            worker = LOBPCG(flatA[i], None if B is None else flatB[i], flatX[i], iK,
                            iparams, fparams, bparams, method, tracker)
            worker.run()
            Es.append(worker._E[:k])
            Us.append(worker._X[:, :k])
        k = min(k, n)       # a k above n returns the n pairs computed
        E = xp.stack(Es).reshape(batch + (k,)) if count else xp.zeros(batch + (k,), X.dtype)
        U = xp.stack(Us).reshape(batch + (m, k)) if count else xp.zeros(batch + (m, k), X.dtype)
        self.has_B = B is not None
        if self.needs_input_grad[0] or self.needs_input_grad[1]:
            self.save_for_backward(A, E, U)
        return E, U

    def backward(self, gE=None, gU=None):
        if self.has_B:
            raise ValueError('lobpcg.backward does not support backward with B != I yet.')
        A, E, U = self.saved_tensors
        return _partial_eigh_back(A, E, U, gE, gU), None


def _partial_eigh_back(A, E, U, gE, gU):
    """gA for k eigenpairs (E, U) of a symmetric A, not symmetrized (the caller's
    symmetrization of A does that). Inside span(U) it is the eigh formula; the part in the
    orthogonal complement (projector P) is -x_i u_i^T per pair, where x_i solves
    (A - E_i) x_i = P gU_i on the complement: one batched solve with the shifted,
    compressed matrices P (A - E_i) P + U U^T (the identity on span(U))."""
    k, m = E.shape[-1], A.shape[-1]
    dtype = _np_dtype(E)
    inner = 0 if gE is None else _diag_embed(gE)
    gA = 0
    if gU is not None:
        eye = _eye(k, dtype)
        gap = E[..., None, :] - E[..., :, None] + eye       # [j, i] = E_i - E_j
        inner = inner + _mm(U.mT, gU) / gap * (1 - eye)
        if k < m:
            UUt = _mm(U, U.mT)
            P = _eye(m, dtype) - UUt
            PAP = _mm(_mm(P, A), P)
            shifted = (PAP[..., None, :, :] - E[..., :, None, None] * P[..., None, :, :]
                       + UUt[..., None, :, :])
            x = Solve.run(shifted, _mm(P, gU).mT[..., None])[..., 0]    # (..., k, m)
            gA = -_mm(_mm(P, x.mT), U.mT)
    return gA + _mm(_mm(U, inner), U.mT)


_FEPS = {_dtype.float32: 1.2e-07, _dtype.float64: 2.23e-16}


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (or smallest) eigenpairs of the symmetric positive definite
    generalized problem ``A x = lambda B x`` by LOBPCG; returns ``(E, X)``."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f'A must be square, got shape {A.shape}')
    if B is not None and A.shape != B.shape:
        raise AssertionError(f'A and B must have same shape, got {A.shape} vs {B.shape}')
    dtype = _floating_dtype(A)
    if tol is None:
        tol = _FEPS[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f'LOBPCG algorithm is not applicable when the number of A rows (={m})'
                         f' is smaller than 3 x the number of requested eigenpairs (={n})')
    method = 'ortho' if method is None else method
    iparams = {'m': m, 'n': n, 'k': k, 'niter': 1000 if niter is None else niter}
    fparams = {'tol': tol}
    bparams = {'largest': True if largest is None else largest}
    if method == 'ortho':
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault('ortho_i_max', 3)
        iparams.setdefault('ortho_j_max', 3)
        for key in ('ortho_tol', 'ortho_tol_drop', 'ortho_tol_replace'):
            fparams.setdefault(key, tol)
        bparams.setdefault('ortho_use_drop', False)
    batch = tuple(A.shape[:-2])
    if X is None:
        X = randn(batch + (m, n), dtype=dtype)
    elif batch:
        X = X.reshape((-1,) + tuple(X.shape[-2:]))
        if tuple(X.shape[-2:]) != (m, n):
            raise AssertionError(f'X_ shape mismatch: got {X.shape[1:]}, expected {(m, n)}')
        X = X.reshape(batch + (m, n))
    elif X.ndim != 2 or tuple(X.shape) != (m, n):
        raise AssertionError(f'X shape mismatch: got {X.shape}, expected {(m, n)}')
    _check_lobpcg_dtypes(A, X, tol)
    if A.requires_grad or (B is not None and B.requires_grad):
        # A (and B) are assumed symmetric but their gradients need not be: symmetrizing
        # first makes them so, and keeps A - t * A.grad symmetric
        A = (A + A.mT) / 2
        B = None if B is None else (B + B.mT) / 2
    return Lobpcg.apply(A, B, X=X.detach()._data, iK=None if iK is None else iK._data, k=k,
                        iparams=iparams, fparams=fparams, bparams=bparams, method=method,
                        tracker=tracker)


def _check_lobpcg_dtypes(A, X, tol):
    if not X.dtype.is_floating_point:
        raise RuntimeError('linalg.vector_norm: Expected a floating point or complex tensor '
                           f'as input. Got {X.dtype.legacy_name[:-6]}')
    if A.dtype != X.dtype:
        raise dtype_mismatch(A._data.dtype, X._data.dtype)
    if A.dtype == _dtype.float16:
        _no_half('cholesky_cpu', A)
