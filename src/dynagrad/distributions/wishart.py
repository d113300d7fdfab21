"""Wishart: sums of ``df`` outer products of Gaussian vectors, given by the covariance,
precision or lower Cholesky factor of those vectors."""
import math
import warnings
from numbers import Number

import dynagrad as dg
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import broadcast_shape, lazy_property

__all__ = ['Wishart']

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_{i < p} digamma(x - i / 2)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError('Wrong domain for multivariate digamma function.')
    half_steps = dg.arange(p, dtype=x.dtype) / 2
    return dg.digamma(x.unsqueeze(-1) - half_steps).sum(-1)


def _cholesky_inverse(L):
    """(L L^T)^{-1} for lower-triangular L, batch dimensions kept. L is used whole (not
    its lower triangle), so its upper entries get the gradient of (L L^T)^{-1} as well,
    as from PyTorch's cholesky_solve."""
    eye = dg.eye(L.shape[-1], dtype=L.dtype).expand(tuple(L.shape))
    L_inv = dg.linalg.solve(L, eye)
    return dg.matmul(L_inv.transpose(-2, -1), L_inv)


class Wishart(ExponentialFamily):
    """The Wishart distribution over positive definite ``p`` x ``p`` matrices, with ``df``
    degrees of freedom (> p - 1) and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (all computations go through the latter)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {'covariance_matrix': constraints.positive_definite,
                'precision_matrix': constraints.positive_definite,
                'scale_tril': constraints.lower_cholesky,
                'df': constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise AssertionError('Exactly one of covariance_matrix or precision_matrix or '
                                 'scale_tril may be specified.')
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError('scale_tril must be at least two-dimensional, with optional '
                             'leading batch dimensions')
        if isinstance(df, Number):
            batch_shape = dg.Size(param.shape[:-2])
            self.df = dg.tensor(df, dtype=param.dtype)
        else:
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(tuple(batch_shape))
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f'Value of df={df} expected to be greater than ndim - 1 = '
                             f'{p - 1}.')
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool(self.df.lt(p).any()):
            warnings.warn('Low df values detected. Singular samples are highly likely to '
                          'occur for ndim - 1 < df < ndim.', stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = dg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        """The Bartlett factor's squared diagonal: entry i ~ Chi2(df - i)."""
        p = self._event_shape[-1]
        steps = dg.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(self._batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Wishart, batch_shape, _instance,
                             ('covariance_matrix', 'scale_tril', 'precision_matrix'))
        cov_shape = tuple(batch_shape) + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        new._dist_chi2 = new._bartlett_chi2()
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return dg.matmul(L, L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self, df=None):
        df = self.df if df is None else df
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        # no mode (the density is unbounded at the boundary) unless df > p + 1
        factor = dg.where(factor <= 0, dg.full_like(factor, math.nan), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=dg.Size()):
        """L A A^T L^T with A lower triangular: sqrt(Chi2(df - i)) on the diagonal, standard
        normals below it (Bartlett's decomposition)."""
        p = self._event_shape[-1]
        eps = dg.finfo(self._unbroadcasted_scale_tril.dtype).eps
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = dg.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p, p),
                         dtype=diag.dtype).tril(-1)
        chol = dg.matmul(self._unbroadcasted_scale_tril, dg.diag_embed(diag) + below)
        return dg.matmul(chol, chol.transpose(-2, -1))

    def rsample(self, sample_shape=dg.Size(), max_try_correction=None):
        """Bartlett draws. A draw that comes out singular (likely when df < p) is drawn
        again, up to ``max_try_correction`` times (10 by default), with a warning; one
        still singular after that is returned as it is (its log_prob is -inf).

        PyTorch 2.13 documents this but tests the draws the other way round (a positive
        definite draw counts as singular): it warns on every call and redraws the regular
        draws while keeping singular ones. This does what its documentation says."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = dg.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn('Singular sample detected.', stacklevel=2)
            for _ in range(max_try_correction):
                redraw = self._bartlett_sampling(sample_shape)
                where = is_singular.reshape(tuple(is_singular.shape)
                                            + (1,) * (sample.dim() - is_singular.dim()))
                sample = dg.where(where, redraw, sample)
                is_singular = is_singular & self._singular(redraw)
                if not bool(is_singular.any()):
                    break
        return sample

    def _singular(self, sample):
        """Per draw (over the sample shape, all batch members together): not positive
        definite somewhere."""
        bad = ~self.support.check(sample)
        return bad.amax(self._batch_dims) if self._batch_shape else bad

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 value) as an elementwise product (trace(A B) = sum(A * B^T))
        trace = (_cholesky_inverse(L) * value.transpose(-2, -1)).sum((-2, -1))
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - dg.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * dg.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + dg.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-dg.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + dg.mvlgamma(y + (p + 1) / 2, p))
