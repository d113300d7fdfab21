"""Parametrizations built on ``parametrize``: ``weight_norm``, ``spectral_norm`` and
``orthogonal``."""
from ..module import Module
from .. import functional as F
from ... import ops, _dtype
from ...backend import xp
from ...ops.linalg_solvers import geqrf, householder_product, matrix_exp
from ...ops.linalg_decompositions import solve
from ...tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from . import parametrize
from ._norms import norm_except_dim, weight_norm_value, reshape_weight_to_matrix, spectral_dim

__all__ = ['orthogonal', 'spectral_norm', 'weight_norm']


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name='weight', dim=0):
    """Reparametrize ``module.<name>`` as magnitude ``original0`` (g) times direction
    ``original1`` (v): ``w = g * v / ||v||``, the norm over every dimension but ``dim``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module._register_load_state_dict_pre_hook(_WeightNormCompatHook(name))
    return module


class _WeightNormCompatHook:
    """Loads a state dict saved under the legacy ``weight_norm``'s keys: ``<name>_g`` and
    ``<name>_v`` become ``parametrizations.<name>.original0`` and ``original1``."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        g_key, v_key = f'{prefix}{self.name}_g', f'{prefix}{self.name}_v'
        if g_key in state_dict and v_key in state_dict:
            new_prefix = f'{prefix}parametrizations.{self.name}.'
            state_dict[new_prefix + 'original0'] = state_dict.pop(g_key)
            state_dict[new_prefix + 'original1'] = state_dict.pop(v_key)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [-{ndim}, '
                             f'{ndim - 1}] but got {dim})')
        if n_power_iterations <= 0:
            raise ValueError(f'Expected n_power_iterations to be positive, but got '
                             f'n_power_iterations={n_power_iterations}')
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = reshape_weight_to_matrix(weight.detach(), self.dim)
            h, w = weight_mat.shape
            u = ops.randn(h, dtype=weight.dtype)
            v = ops.randn(w, dtype=weight.dtype)
            self.register_buffer('_u', F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer('_v', F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place, as the buffers PyTorch keeps.
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ops.mv(weight_mat.t(), self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ops.vdot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (one
    step per training forward; buffers ``_u``/``_v`` hold the singular vectors)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = spectral_dim(module, dim)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal ------------------------------------------------------------------------------
# A matrix (or batch) with orthonormal columns (rows, when wider than tall) as the image of an
# unconstrained one under a map: 'matrix_exp' and 'cayley' take a skew-Hermitian matrix built
# from the lower triangle to the unitary group, 'householder' reads the lower triangle as
# Householder reflectors. With the trivialization (the default) the result is ``base @ map(X)``
# and assigning a matrix Q stores Q (completed and orthogonalised) as ``base`` and sets X so
# that map(X) is the identity: training then moves around the assigned matrix.

_ORTHOGONAL_MAPS = ('matrix_exp', 'cayley', 'householder')


def _orthonormalised(A):
    """The Q of A = QR with R's diagonal real and positive (unique for a full-rank A, so
    independent of how the factorisation chose its signs); real or complex."""
    Q, R = xp.linalg.qr(A._data)
    diagonal = xp.diagonal(R, axis1=-2, axis2=-1)
    signs = xp.where(diagonal == 0, 1, diagonal / xp.where(diagonal == 0, 1, xp.abs(diagonal)))
    return wrap((Q * signs[..., None, :]).astype(A._data.dtype))


def _has_orthonormal_columns(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = ops.eye(k, dtype=Q.dtype)
    tolerance = 10.0 * n * _dtype.finfo(Q.dtype).eps
    return bool(ops.allclose(Q.mH @ Q, eye, atol=tolerance))


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == 'householder':
            raise ValueError('The householder parametrization does not support complex tensors.')
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer('base', None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        wide = n < k
        if wide:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ('matrix_exp', 'cayley'):
            X = X.tril()
            if n != k:      # square up with zero columns: the skew part of an n x n matrix
                X = ops.cat([X, X.new_zeros(X.shape[:-1] + (n - k,))], -1)
            A = X - X.mH
            if self.orthogonal_map == 'matrix_exp':
                Q = matrix_exp(A)
            else:
                eye = ops.eye(n, dtype=A.dtype)
                Q = solve(eye - A * 0.5, eye + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            reflectors = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(dim=-2))
            Q = householder_product(reflectors, tau)
            # the diagonal's signs (as integers) choose each column's sign
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if getattr(self, 'base', None) is not None:
            Q = self.base @ Q
        return Q.mT if wide else Q

    @no_grad()
    def right_inverse(self, Q):
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f'Expected a matrix or batch of matrices of shape {self.shape}. '
                             f'Got a tensor of shape {Q.shape}.')
        original = Q
        n, k = Q.shape[-2], Q.shape[-1]
        wide = n < k
        if wide:
            Q = Q.mT
            n, k = k, n
        if 'base' not in self._buffers:
            if self.orthogonal_map != 'householder':
                raise NotImplementedError(
                    'It is not possible to assign to the matrix exponential or the Cayley '
                    'parametrizations when use_trivialization=False.')
            factors, tau = geqrf(Q)
            # X with geqrf's reflectors below the diagonal and the signs of R's diagonal on
            # it (a zero tau means no reflection: that column's sign flips back)
            signs = factors.diagonal(dim1=-2, dim2=-1).sign()
            X = factors.tril(diagonal=-1)
            X.diagonal(dim1=-2, dim2=-1).copy_(ops.where(tau == 0, -signs, signs))
            return X.mT if wide else X
        if n == k:
            Q = Q.clone() if _has_orthonormal_columns(Q) else _orthonormalised(Q)
        else:
            completion = ops.randn(Q.shape[:-2] + (n, n - k), dtype=Q.dtype)
            Q = _orthonormalised(ops.cat([Q, completion], -1))
        self.base = Q
        minus_identity = ops.zeros_like(original)
        minus_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return minus_identity


def orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to have orthonormal columns
    (or rows), as ``torch.nn.utils.parametrizations.orthogonal``. ``orthogonal_map``:
    'matrix_exp' (the default for square or complex matrices), 'cayley' or 'householder'
    (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError('Expected a matrix or batch of matrices. Got a tensor of '
                         f'{weight.ndim} dimensions.')
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = 'matrix_exp' if square or weight.is_complex() else 'householder'
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, orthogonal_map, use_trivialization), unsafe=True)
    return module
