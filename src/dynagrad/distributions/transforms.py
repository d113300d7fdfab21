"""Transforms: invertible (or not) maps between constrained spaces, with the log absolute
determinant of their Jacobians, as ``torch.distributions.transforms``."""
import functools
import math
import operator
import weakref
from numbers import Number, Real

import numpy as np

import dynagrad as dg
from ..tensor import Tensor
from . import constraints
from .utils import broadcast_all, sum_rightmost, vec_to_tril_matrix, tril_matrix_to_vec

__all__ = ['AbsTransform', 'AffineTransform', 'CatTransform', 'ComposeTransform',
           'CorrCholeskyTransform', 'CumulativeDistributionTransform', 'ExpTransform',
           'IndependentTransform', 'LowerCholeskyTransform', 'PositiveDefiniteTransform',
           'PowerTransform', 'ReshapeTransform', 'SigmoidTransform', 'SoftplusTransform',
           'TanhTransform', 'SoftmaxTransform', 'StackTransform', 'StickBreakingTransform',
           'Transform', 'identity_transform']


def _shape_of(x):
    return tuple(x.shape) if isinstance(x, Tensor) else ()


def _broadcast_shapes(*shapes):
    return dg.Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _equal_within_kind(cls):
    """For a transform without parameters: any two of ``cls`` are equal (as PyTorch's), and
    hashing stays by identity."""
    def __eq__(self, other):
        return isinstance(other, cls)

    __eq__.__qualname__ = f'{cls.__qualname__}.__eq__'
    cls.__eq__ = __eq__
    cls.__hash__ = object.__hash__
    return cls


class Transform:
    """Base class: ``y = t(x)``, ``x = t.inv(y)``, ``t.log_abs_det_jacobian(x, y)``.

    ``cache_size=1`` remembers the latest pair, so ``t.inv(t(x))`` returns ``x`` itself
    (what makes log_prob of a TransformedDistribution's own samples exact)."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError('cache_size must be 0 or 1')
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state['_inv'] = None
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError('Please use either .domain.event_dim or .codomain.event_dim')

    @property
    def inv(self):
        """The inverse transform (``t.inv.inv is t``)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """+1 or -1: whether this (bijective, monotone) transform increases or decreases."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f'{type(self)}.with_cache is not implemented')

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| at ``x`` (with ``y = t(x)``), summed over the event dimensions."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + '()'

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f'{self.__class__.__name__}({self._inv!r})'

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # how many dimensions of the input make one event for the whole chain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim -= part.codomain.event_dim
            event_dim += part.domain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim -= part.domain.event_dim
            event_dim += part.codomain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return dg.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x, y in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(x, y),
                                       event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return (self.__class__.__name__ + '(\n    '
                + ',\n    '.join(repr(p) for p in self.parts) + '\n)')


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dimensions in its event
    (its log-det is summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError('Too few dimensions on input')
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError('Too few dimensions on input')
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f'{self.__class__.__name__}({self.base_transform!r}, '
                f'{self.reinterpreted_batch_ndims})')

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dimensions into ``out_shape``."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = dg.Size(in_shape)
        self.out_shape = dg.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError('in_shape, out_shape have different numbers of elements')
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError('Too few dimensions on input')
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f'Shape mismatch: expected {shape[cut:]} but got {self.in_shape}')
        return dg.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError('Too few dimensions on input')
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f'Shape mismatch: expected {shape[cut:]} but got {self.out_shape}')
        return dg.Size(tuple(shape[:cut]) + tuple(self.in_shape))


@_equal_within_kind
class ExpTransform(Transform):
    """y = exp(x)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.exponent))

    def inverse_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.exponent))


def _clipped_sigmoid(x):
    finfo = dg.finfo(x.dtype)
    return dg.clamp(dg.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


@_equal_within_kind
class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), kept strictly inside (0, 1)."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = dg.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = dg.nn.functional.softplus
        return -softplus(-x) - softplus(x)


@_equal_within_kind
class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return dg.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -dg.nn.functional.softplus(-x)


@_equal_within_kind
class TanhTransform(Transform):
    """y = tanh(x)."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return dg.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written without the cancellation near |x| large
        return 2.0 * (math.log(2.0) - x - dg.nn.functional.softplus(-2.0 * x))


@_equal_within_kind
class AbsTransform(Transform):
    """y = |x| (not invertible: the inverse picks the positive root)."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, with ``event_dim`` rightmost dimensions per event."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not bool((dg.as_tensor(mine) == dg.as_tensor(theirs)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, Real):
            result = dg.full_like(x, math.log(abs(scale)))
        else:
            result = dg.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.size()[:result.dim() - self.event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.loc), _shape_of(self.scale))

    def inverse_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.loc), _shape_of(self.scale))


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length D*(D-1)/2 to Cholesky factors of D x D correlation
    matrices: tanh to partial correlations in (-1, 1), then the stick-breaking rows of
    unit norm."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = dg.tanh(x)
        eps = dg.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # row i: z_ij * sqrt(1 - sum_{k<j} y_ik^2) via cumulative products of sqrt(1 - z^2)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + dg.eye(r.shape[-1], dtype=r.dtype)
        ones = dg.ones(tuple(z1m_cumprod_sqrt.shape[:-1]) + (1,), dtype=r.dtype)
        shifted = dg.cat([ones, z1m_cumprod_sqrt[..., :-1]], -1)
        return r * shifted

    def _inverse(self, y):
        y_cumsum = 1 - dg.cumsum(y * y, dim=-1)
        ones = dg.ones(tuple(y_cumsum.shape[:-1]) + (1,), dtype=y.dtype)
        y_cumsum_shifted = dg.cat([ones, y_cumsum[..., :-1]], -1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return dg.atanh(t)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * (y1m_cumsum_tril).log().sum(-1)
        tanh_logdet = -2 * (x + dg.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError('Too few dimensions on input')
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError('Input is not a flattend lower-diagonal number')
        return dg.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError('Too few dimensions on input')
        if shape[-2] != shape[-1]:
            raise ValueError('Input is not square')
        d = shape[-1]
        return dg.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


@_equal_within_kind
class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by softmax (not bijective; the inverse is log)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError('Too few dimensions on input')
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError('Too few dimensions on input')
        return shape


@_equal_within_kind
class StickBreakingTransform(Transform):
    """Unconstrained vectors of length K-1 to the K-simplex by stick breaking (bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _offset(self, n, like):
        # log(K - i) shifts each logit so that x = 0 maps to the simplex's centre
        return dg.arange(n, 0, -1, dtype=like.dtype)

    def _call(self, x):
        offset = self._offset(x.shape[-1], x)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        ones = dg.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype)
        return dg.cat([z, ones], -1) * dg.cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = self._offset(y_crop.shape[-1], y)
        sf = 1 - y_crop.cumsum(-1)
        # probabilities too close to 1 would give log(0) below
        sf = dg.clamp(sf, min=dg.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = self._offset(x.shape[-1], x)
        x = x - offset.log()
        return (-x + dg.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError('Too few dimensions on input')
        return dg.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError('Too few dimensions on input')
        return dg.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


@_equal_within_kind
class LowerCholeskyTransform(Transform):
    """Square matrices to lower triangular ones with a positive diagonal (exp of it)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + dg.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + dg.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


@_equal_within_kind
class PositiveDefiniteTransform(Transform):
    """Square matrices to positive definite ones: L L^T of their LowerCholeskyTransform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.transpose(-2, -1)

    def _inverse(self, y):
        y = dg.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)


class CatTransform(Transform):
    """``tseq[i]`` applied to the ``lengths[i]``-long piece of dimension ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError('CatTransform expects a sequence of Transform objects')
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f'CatTransform: {len(self.transforms)} transforms but '
                             f'{len(self.lengths)} lengths')
        self.dim = dim

    @functools.cached_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @functools.cached_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, x, fn):
        if not -x.dim() <= self.dim < x.dim():
            raise IndexError(f'CatTransform: dim {self.dim} out of range for {x.dim()} dims')
        if x.size(self.dim) != self.length:
            raise ValueError(f'CatTransform: size {x.size(self.dim)} along dim {self.dim} '
                             f'differs from the sum of lengths {self.length}')
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, x.narrow(self.dim, start, length)))
            start += length
        return out

    def _call(self, x):
        return dg.cat(self._pieces(x, lambda t, v: t(v)), dim=self.dim)

    def _inverse(self, y):
        return dg.cat(self._pieces(y, lambda t, v: t.inv(v)), dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        logdetjacs, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            xs, ys = x.narrow(self.dim, start, length), y.narrow(self.dim, start, length)
            logdetjac = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                logdetjac = sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start += length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return dg.cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to slice ``i`` of dimension ``dim``."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError('StackTransform expects a sequence of Transform objects')
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, z):
        if not -z.dim() <= self.dim < z.dim():
            raise IndexError(f'StackTransform: dim {self.dim} out of range for {z.dim()} dims')
        if z.size(self.dim) != len(self.transforms):
            raise ValueError(f'StackTransform: size {z.size(self.dim)} along dim {self.dim} '
                             f'differs from the {len(self.transforms)} transforms')

    def _call(self, x):
        self._check(x)
        return dg.stack([t(v) for v, t in zip(self._slices(x), self.transforms)], self.dim)

    def _inverse(self, y):
        self._check(y)
        return dg.stack([t.inv(v) for v, t in zip(self._slices(y), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        return dg.stack([t.log_abs_det_jacobian(a, b) for a, b, t in
                         zip(self._slices(x), self._slices(y), self.transforms)], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): values of a distribution to the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
