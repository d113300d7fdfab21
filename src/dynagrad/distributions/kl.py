"""``kl_divergence(p, q)`` and ``register_kl``: KL(p || q) looked up by the pair of types,
the most specific registered pair winning (memoised per pair of concrete types)."""
import math
import warnings
from functools import total_ordering

import dynagrad as dg
from .continuous import Cauchy, Gumbel, Laplace, Pareto, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical,
                       Poisson)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Exponential, Gamma
from .independent import Independent
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import HalfNormal, Normal
from .transformed_distribution import TransformedDistribution
from .utils import euler_constant, sum_rightmost

__all__ = ['register_kl', 'kl_divergence']

_KL_REGISTRY = {}   # (type_p, type_q) -> function, as registered
_KL_MEMOIZE = {}    # (type_p, type_q) -> function, as dispatched


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for ``p`` of ``type_p`` and ``q``
    of ``type_q`` (subclasses included, the most specific registration winning)."""
    # torch's check, kept as it is: any class registers (pyro registers KLs for its own
    # Distribution class, which is no subclass of this one) and a non-class fails in
    # issubclass with Python's TypeError
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f'Expected type_p to be a Distribution subclass but got {type_p}')
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f'Expected type_q to be a Distribution subclass but got {type_q}')

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()   # a new registration can change any dispatch
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered so that the more specific pair sorts first
    (lexicographically: the first type decides unless both are the same)."""
    __slots__ = ['types']

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f'Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). '
                      f'Please register_kl({left_p.__name__}, {right_q.__name__})',
                      RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], over the batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f'No KL(p || q) is implemented for p type '
                                  f'{p.__class__.__name__} and q type {q.__class__.__name__}')
    return fun(p, q)


def _infinite_like(tensor):
    return dg.full_like(tensor, math.inf)


def _set_where(x, mask, value):
    return dg.where(mask, dg.full_like(x, value), x)


def _x_log_x(tensor):
    return dg.xlogy(tensor, tensor)   # 0 at 0


def _batch_trace_XXT(bmat):
    """The trace of X X^T (squared Frobenius norm) over batches."""
    n = bmat.size(-1)
    m = bmat.size(-2)
    flat_trace = bmat.reshape(tuple(bmat.shape[:-2]) + (n * m,)).pow(2).sum(-1)
    return flat_trace


# -- same family ---------------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = dg.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _set_where(t1, q.probs == 0, math.inf)
    t1 = _set_where(t1, p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _set_where(t2, q.probs == 1, math.inf)
    t2 = _set_where(t2, p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * dg.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * dg.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * dg.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError('KL between Binomials where q.total_count > p.total_count '
                                  'is not implemented')
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _set_where(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _set_where(t, (q.probs == 0).expand_as(t), math.inf)
    t = _set_where(t, (p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = sum_p_concentration.lgamma() - sum_q_concentration.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p_concentration.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if not type(p) == type(q):
        raise NotImplementedError('The cross KL-divergence between different exponential '
                                  'families cannot                             be computed '
                                  'using Bregman divergences')
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    with dg.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = dg.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        term = (qnp - pnp) * g
        result = result - sum_rightmost(term, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * dg.log(p.rate / q.rate)
    t2 = dg.lgamma(q.concentration) - dg.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * dg.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = dg.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - dg.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * dg.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _scale_tril_of(d):
    if isinstance(d, MultivariateNormal):
        return d._unbroadcasted_scale_tril
    return d.scale_tril


def _kl_gaussians(p, q, message):
    if p.event_shape != q.event_shape:
        raise ValueError(message)
    from .multivariate_normal import _batch_mahalanobis, _solve_lower
    Lp, Lq = _scale_tril_of(p), _scale_tril_of(q)
    half_term1 = (Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term2 = _batch_trace_XXT(_solve_lower(Lq, Lp))
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    return _kl_gaussians(p, q, 'KL-divergence between two Multivariate Normals with '
                               'different event shapes cannot be computed')


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussians(p, q, 'KL-divergence between two Low Rank Multivariate Normals '
                               'with different event shapes cannot be computed')


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussians(p, q, 'KL-divergence between two (Low Rank) Multivariate Normals '
                               'with different event shapes cannot be computed')


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    return _kl_gaussians(p, q, 'KL-divergence between two (Low Rank) Multivariate Normals '
                               'with different event shapes cannot be computed')


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return _set_where(result, p.scale < q.scale, math.inf)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set_where(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


# -- across families: -H(p) - E_p[log q], from p's moments ---------------------------------

def _expected_log_x(p):
    """E_p[log x] for the positive families below."""
    if isinstance(p, Pareto):
        return p.scale.log() + p.alpha.reciprocal()
    if isinstance(p, Exponential):
        return -euler_constant - p.rate.log()
    if isinstance(p, Gamma):
        return dg.digamma(p.concentration) - p.rate.log()
    if isinstance(p, Beta):
        return (dg.digamma(p.concentration1)
                - dg.digamma(p.concentration1 + p.concentration0))
    raise TypeError(type(p).__name__)


def _kl_to_normal(p, q):
    """E_p[log q] for q Normal needs only p's mean and variance."""
    var_q = q.scale.pow(2)
    mean, var = p.mean, p.variance
    # infinite moments (Pareto's) give inf, through finite stand-ins so no 0 * inf reaches
    # the gradients
    finite = dg.isfinite(mean) & dg.isfinite(var)
    mean = dg.where(finite, mean, dg.zeros_like(mean))
    var = dg.where(finite, var, dg.zeros_like(var))
    expected_log_q = (-q.scale.log() - 0.5 * math.log(2 * math.pi)
                      - (var + (mean - q.loc).pow(2)) / (2 * var_q))
    result = -p.entropy() - expected_log_q
    return dg.where(finite, result, dg.full_like(result, math.inf))


for _p in (Beta, Exponential, Gamma, Gumbel, Laplace, Pareto):
    register_kl(_p, Normal)(_kl_to_normal)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


def _kl_to_gamma(p, q):
    expected_log_q = (q.concentration * q.rate.log()
                      + (q.concentration - 1) * _expected_log_x(p)
                      - q.rate * p.mean - dg.lgamma(q.concentration))
    return -p.entropy() - expected_log_q


for _p in (Beta, Exponential, Pareto):
    register_kl(_p, Gamma)(_kl_to_gamma)


def _kl_to_exponential(p, q):
    return -p.entropy() - (q.rate.log() - q.rate * p.mean)


for _p in (Beta, Gamma, Pareto):
    register_kl(_p, Exponential)(_kl_to_exponential)


def _gumbel_mgf_term(p, t):
    """E_p[exp(t x)] for t < 0, the families below."""
    if isinstance(p, Exponential):
        return p.rate / (p.rate - t)
    if isinstance(p, Gamma):
        return (p.rate / (p.rate - t)).pow(p.concentration)
    return ((t * p.high).exp() - (t * p.low).exp()) / (t * (p.high - p.low))


def _kl_to_gumbel(p, q):
    # log q(x) = -log s - z - exp(-z) with z = (x - loc) / s
    z_mean = (p.mean - q.loc) / q.scale
    exp_term = (q.loc / q.scale).exp() * _gumbel_mgf_term(p, -1 / q.scale)
    return -p.entropy() + q.scale.log() + z_mean + exp_term


for _p in (Exponential, Gamma, Uniform):
    register_kl(_p, Gumbel)(_kl_to_gumbel)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _set_where(result, (q.low > p.support.lower_bound)
                      | (q.high < p.support.upper_bound), math.inf)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = dg.log(common_term)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) \
        / common_term
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low)
                                   + common_term) / common_term
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    return _set_where(result, (p.high > q.support.upper_bound)
                      | (p.low < q.support.lower_bound), math.inf)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t = t - (q.alpha + 1) * (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) \
        / support_uniform
    return _set_where(-t, p.low < q.support.lower_bound, math.inf)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) \
        / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = dg.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * dg.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * dg.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = dg.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # -H(p) - E_p[log q] with log q(x) = -rate + x log(rate) for x in {0, 1}
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


# -- ContinuousBernoulli: log q(x) = x logits + log(1 - probs) + log C(probs) -----------------

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + dg.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - dg.log1p(-q.probs)
    return t1 + t2 + t3


def _expected_log_continuous_bernoulli(p, q):
    return p.mean * q.logits + dg.log1p(-q.probs) + q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - _expected_log_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - _expected_log_continuous_bernoulli(p, q)
    # as PyTorch has it: infinite unless [low, high) lies strictly inside (0, 1)
    return _set_where(result, (p.high >= q.support.upper_bound)
                      | (p.low <= q.support.lower_bound), math.inf)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - dg.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + dg.square(q.loc / q.scale)) + dg.log(q.scale)
    t3 = (p.variance + dg.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * dg.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # as PyTorch has it: infinite unless [low, high) strictly contains [0, 1]
    return _set_where(result, (q.low >= p.support.lower_bound)
                      | (q.high <= p.support.upper_bound), math.inf)


# -- infinite: p puts mass where q has none ------------------------------------------------

def _kl_infinite(p, q):
    return _infinite_like(p.mean if not isinstance(p, (Bernoulli, Categorical))
                          else p.probs)


for _p, _q in [(Beta, Pareto), (Exponential, Pareto), (Exponential, Beta),
               (Exponential, Uniform), (Gamma, Beta), (Gamma, Uniform), (Pareto, Beta),
               (Pareto, Uniform),
               (Gamma, Pareto), (Gumbel, Beta), (Gumbel, Exponential), (Gumbel, Gamma),
               (Gumbel, Pareto), (Gumbel, Uniform), (Laplace, Beta), (Laplace, Exponential),
               (Laplace, Gamma), (Laplace, Pareto), (Laplace, Uniform), (Normal, Beta),
               (Normal, Exponential), (Normal, Gamma), (Normal, Pareto), (Normal, Uniform),
               (Poisson, Bernoulli), (Poisson, Binomial),
               (ContinuousBernoulli, Pareto), (Exponential, ContinuousBernoulli),
               (Gamma, ContinuousBernoulli), (Gumbel, ContinuousBernoulli),
               (Laplace, ContinuousBernoulli), (Normal, ContinuousBernoulli),
               (Pareto, ContinuousBernoulli)]:
    register_kl(_p, _q)(_kl_infinite)
