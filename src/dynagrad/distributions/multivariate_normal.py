"""MultivariateNormal (by covariance, precision or Cholesky factor) and
LowRankMultivariateNormal (covariance W W^T + diag(D))."""
import math

import dynagrad as dg
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, lazy_property, standard_normal

__all__ = ['MultivariateNormal', 'LowRankMultivariateNormal']


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dimensions."""
    return dg.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _solve_lower(L, B):
    """L^{-1} B for lower-triangular L (only its lower triangle is read, so gradients
    reach only that), batch dimensions broadcast."""
    L = L.tril()
    shape = broadcast_shape(L.shape[:-2], B.shape[:-2])
    return dg.linalg.solve(L.expand(tuple(shape) + tuple(L.shape[-2:])),
                           B.expand(tuple(shape) + tuple(B.shape[-2:])))


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^{-1} x for the factor ``bL`` of each batch, i.e. |L^{-1} x|^2."""
    y = _solve_lower(bL, bx.unsqueeze(-1)).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    return dg.linalg.cholesky(dg.linalg.inv(P))


class MultivariateNormal(Distribution):
    """Gaussian vectors with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor of the covariance)."""
    arg_constraints = {'loc': constraints.real_vector,
                       'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite,
                       'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError('Exactly one of covariance_matrix or precision_matrix or '
                             'scale_tril may be specified.')
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError('scale_tril matrix must be at least two-dimensional, with '
                                 'optional leading batch dimensions')
            batch_shape = broadcast_shape(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError('covariance_matrix must be at least two-dimensional, with '
                                 'optional leading batch dimensions')
            batch_shape = broadcast_shape(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError('precision_matrix must be at least two-dimensional, with '
                                 'optional leading batch dimensions')
            batch_shape = broadcast_shape(precision_matrix.shape[:-2], loc.shape[:-1])
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = dg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance,
                             ('loc', 'covariance_matrix', 'scale_tril', 'precision_matrix'))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return dg.matmul(L, L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return dg.linalg.inv(dg.matmul(L, L.transpose(-2, -1))).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=dg.Size()):
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


def _batch_capacitance_tril(W, D):
    """Cholesky factor of the capacitance matrix I + W^T D^{-1} W."""
    m = W.size(-1)
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    K = dg.matmul(Wt_Dinv, W) + dg.eye(m, dtype=W.dtype)
    return dg.linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^{-1} x by the Woodbury identity."""
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """Gaussian vectors with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``
    (determinants and solves cost O(n m^2) rather than O(n^3))."""
    arg_constraints = {'loc': constraints.real_vector,
                       'cov_factor': constraints.independent(constraints.real, 2),
                       'cov_diag': constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError('cov_factor must be at least two-dimensional, with optional '
                             'leading batch dimensions')
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f'cov_factor must be a batch of matrices with shape '
                             f'{event_shape[0]} x m')
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f'cov_diag must be a batch of vectors with shape {event_shape}')
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            batch = broadcast_shape(loc_.shape[:-1], cov_factor.shape[:-1],
                                    cov_diag_.shape[:-1])
        except RuntimeError as e:
            raise ValueError(f'Incompatible batch shapes: loc {loc.shape}, cov_factor '
                             f'{cov_factor.shape}, cov_diag {cov_diag.shape}') from e
        self.loc = loc.expand(tuple(batch))
        self.cov_factor = cov_factor.expand(tuple(batch) + (cov_factor.shape[-1],))
        self.cov_diag = cov_diag.expand(tuple(batch))
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LowRankMultivariateNormal, batch_shape, _instance,
                             ('loc', 'cov_diag', 'cov_factor'))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
                    tuple(self._batch_shape) + tuple(self._event_shape))

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return dg.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance_matrix = dg.matmul(W, W.transpose(-2, -1)) + dg.diag_embed(
            self._unbroadcasted_cov_diag)
        return covariance_matrix.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W (I + W^T D^-1 W)^-1 W^T D^-1
        W = self._unbroadcasted_cov_factor
        D = self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
        A = _solve_lower(self._capacitance_tril, Wt_Dinv)
        precision_matrix = dg.diag_embed(D.reciprocal()) - dg.matmul(A.transpose(-2, -1), A)
        return precision_matrix.expand(self._matrix_shape())

    def rsample(self, sample_shape=dg.Size()):
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = standard_normal(W_shape, self.loc.dtype)
        eps_D = standard_normal(shape, self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
