"""Continuous univariate families: Uniform, Laplace, Cauchy, HalfCauchy, Gumbel, StudentT,
Weibull, Pareto, and LogisticNormal (on the simplex)."""
import math
from numbers import Number

import dynagrad as dg
from . import constraints
from .distribution import Distribution
from .gamma import Chi2, Exponential
from .normal import Normal
from .transformed_distribution import FoldedAtZero, TransformedDistribution
from .transforms import (AffineTransform, ExpTransform, PowerTransform,
                         StickBreakingTransform)
from .utils import broadcast_all, euler_constant, standard_normal

__all__ = ['Uniform', 'Laplace', 'Cauchy', 'HalfCauchy', 'Gumbel', 'StudentT', 'Weibull',
           'Pareto', 'LogisticNormal', 'FisherSnedecor', 'Kumaraswamy', 'GeneralizedPareto']


class Uniform(Distribution):
    """Uniform on the half-open interval [``low``, ``high``)."""
    has_rsample = True

    @property
    def arg_constraints(self):
        # each bound is checked against the other
        return {'low': constraints.less_than(self.high),
                'high': constraints.greater_than(self.low)}

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Uniform, batch_shape, _instance, ('low', 'high'))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        rand = dg.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return dg.log(lb.mul(ub)) - dg.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return dg.log(self.high - self.low)


class Laplace(Distribution):
    """Laplace (double exponential) with location ``loc`` and scale ``scale``."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Laplace, batch_shape, _instance, ('loc', 'scale'))

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = dg.finfo(self.loc.dtype).eps
        with dg.no_grad():
            u = dg.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * dg.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -dg.log(2 * self.scale) - dg.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * dg.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * dg.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + dg.log(2 * self.scale)


class Cauchy(Distribution):
    """Cauchy (Lorentz) with median ``loc`` and half width ``scale``."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance, ('loc', 'scale'))

    @property
    def mean(self):
        return dg.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return dg.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with dg.no_grad():
            eps = dg.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return dg.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return dg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(FoldedAtZero):
    """|X| for X ~ Cauchy(0, scale)."""
    arg_constraints = {'scale': constraints.positive}

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return dg.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        # unlike HalfNormal, a number is taken too (as PyTorch's HalfCauchy does)
        return super().log_prob(dg.as_tensor(value, dtype=self.base_dist.scale.dtype))


class Gumbel(TransformedDistribution):
    """Gumbel (type-I extreme value): loc - scale * log(-log U)."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = dg.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(dg.full_like(self.loc, finfo.tiny),
                                dg.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-dg.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        self._expand_params(new, batch_shape, ('loc', 'scale'))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real,
                       'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return dg.where(self.df <= 1, dg.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        m = dg.where(self.df > 2, finite, dg.full_like(finite, math.inf))
        return dg.where(self.df <= 1, dg.full_like(finite, math.nan), m)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(StudentT, batch_shape, _instance, ('df', 'loc', 'scale'))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    def rsample(self, sample_shape=dg.Size()):
        # X / sqrt(Z / df) with X standard normal and Z ~ Chi2(df)
        shape = self._extended_shape(sample_shape)
        X = standard_normal(shape, self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        Y = X * dg.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + dg.lgamma(0.5 * self.df) - dg.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * dg.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = (dg.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - dg.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (dg.digamma(0.5 * (self.df + 1))
                                         - dg.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class Weibull(TransformedDistribution):
    """Weibull with ``scale`` and shape ``concentration``."""
    arg_constraints = {'scale': constraints.positive,
                       'concentration': constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(dg.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        self._expand_params(new, batch_shape, ('scale', 'concentration'))
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * dg.exp(dg.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self):
        return self.scale.pow(2) * (dg.exp(dg.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - dg.exp(2 * dg.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + dg.log(self.scale * self.concentration_reciprocal) + 1)


class Pareto(TransformedDistribution):
    """Pareto type 1 with ``scale`` (the minimum) and tail index ``alpha``."""
    arg_constraints = {'alpha': constraints.positive, 'scale': constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        self._expand_params(new, batch_shape, ('scale', 'alpha'))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        # infinite for alpha <= 1; the safe stand-in keeps nan out of the gradients there
        finite = self.alpha > 1
        a = dg.where(finite, self.alpha, dg.full_like(self.alpha, 2.0))
        return dg.where(finite, a * self.scale / (a - 1), dg.full_like(a, math.inf))

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        finite = self.alpha > 2     # infinite for alpha <= 2
        a = dg.where(finite, self.alpha, dg.full_like(self.alpha, 3.0))
        variance = self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))
        return dg.where(finite, variance, dg.full_like(variance, math.inf))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of a Normal vector: a distribution on the simplex."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


class FisherSnedecor(Distribution):
    """Fisher-Snedecor (F) with ``df1`` and ``df2`` degrees of freedom."""
    arg_constraints = {'df1': constraints.positive, 'df2': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        from .gamma import Gamma
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(FisherSnedecor, batch_shape, _instance, ('df1', 'df2'))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = dg.where(self.df2 <= 2, dg.full_like(self.df2, math.nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return dg.where(self.df1 <= 2, dg.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df2 = dg.where(self.df2 <= 4, dg.full_like(self.df2, math.nan), self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        # X1 / X2 with X_i ~ Gamma(df_i / 2, df_i), i.e. (Chi2(df1)/df1) / (Chi2(df2)/df2)
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = dg.finfo(X2.dtype).tiny
        return (X1 / X2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * dg.log(value)
        t3 = (ct1 + ct2) * dg.log1p(ct3 * value)
        return t1 + t2 - t3


def _kumaraswamy_moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = dg.lgamma(arg1) + dg.lgamma(b) - dg.lgamma(arg1 + b)
    return b * dg.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(a = ``concentration1``, b = ``concentration0``) on (0, 1):
    (1 - (1 - U)^(1/b))^(1/a)."""
    arg_constraints = {'concentration1': constraints.positive,
                       'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(dg.zeros_like(self.concentration0),
                            dg.ones_like(self.concentration0), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        self._expand_params(new, batch_shape, ('concentration1', 'concentration0'))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a), defined for a, b >= 1
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return dg.where((a < 1) | (b < 1), dg.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        return (_kumaraswamy_moment(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = dg.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - dg.log(self.concentration1) - dg.log(self.concentration0)


class GeneralizedPareto(Distribution):
    """Generalized Pareto with ``loc``, ``scale`` and shape ``concentration`` (xi): support
    [loc, inf) for xi >= 0, [loc, loc - scale / xi] for xi < 0."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive,
                       'concentration': constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance,
                              ('loc', 'scale', 'concentration'))

    def _xi(self):
        """(xi is zero, xi with zeros replaced by 1): the xi = 0 limit is taken separately,
        and the stand-in keeps 0/0 out of values and gradients."""
        zero = self.concentration == 0
        return zero, dg.where(zero, dg.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=dg.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = dg.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._xi()
        general = -(1 + 1 / xi) * dg.log1p(xi * z)
        return dg.where(zero, -z, general) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._xi()
        general = -dg.log1p(xi * z) / xi
        return -dg.expm1(dg.where(zero, -z, general))

    def icdf(self, value):
        zero, xi = self._xi()
        log1m = dg.log1p(-value)
        general = dg.expm1(-xi * log1m) / xi
        return self.loc + self.scale * dg.where(zero, -log1m, general)

    @property
    def mean(self):
        xi = self.concentration
        finite = xi < 1
        safe = dg.where(finite, xi, dg.zeros_like(xi))
        return dg.where(finite, self.loc + self.scale / (1 - safe),
                        dg.full_like(self.loc, math.inf))

    @property
    def variance(self):
        xi = self.concentration
        finite = xi < 0.5
        safe = dg.where(finite, xi, dg.zeros_like(xi))
        var = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return dg.where(finite, var, dg.full_like(var, math.inf))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        negative = self.concentration < 0
        safe = dg.where(negative, self.concentration, -dg.ones_like(self.concentration))
        upper = dg.where(negative, self.loc - self.scale / safe,
                         dg.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
