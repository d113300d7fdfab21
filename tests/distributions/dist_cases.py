"""The distribution cases the tests share: each builds the same distribution in torch and in
dynagrad from the same float64 parameters (leaves that require grad)."""
import numpy as np
import torch

import dynagrad as dg


def leaf(lib, a, grad=True):
    a = np.asarray(a)
    if lib is torch:
        t = torch.tensor(a)
    else:
        t = dg.tensor(a)
    if grad and a.dtype.kind == 'f':
        t.requires_grad_(True)
    return t


SPD = np.array([[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.0]])
TRIL = np.linalg.cholesky(SPD)
W = np.array([[0.5, -0.2], [0.1, 0.4], [-0.3, 0.6]])
SPD2 = np.array([[1.2, -0.5, 0.1], [-0.5, 2.5, 0.7], [0.1, 0.7, 0.9]])


def _corr_cholesky(corr):
    return np.linalg.cholesky(np.asarray(corr))


LKJ_VALUE = np.stack([_corr_cholesky([[1, 0.3, -0.2], [0.3, 1, 0.5], [-0.2, 0.5, 1]]),
                      _corr_cholesky([[1, -0.6, 0.1], [-0.6, 1, 0.0], [0.1, 0.0, 1]]),
                      _corr_cholesky(np.eye(3))])


def _mvn(kind):
    def make(D, P):
        kw = {kind: P[kind]}
        return D.MultivariateNormal(P['loc'], **kw)
    return make


# name: (params, builder(D, P), values, icdf probabilities or None)
CASES = {
    'Normal': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
               lambda D, P: D.Normal(P['loc'], P['scale']), [0.1, 1.5], [0.3, 0.8]),
    'LogNormal': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
                  lambda D, P: D.LogNormal(P['loc'], P['scale']), [0.4, 2.5], [0.3, 0.8]),
    'HalfNormal': ({'scale': [0.5, 2.0]}, lambda D, P: D.HalfNormal(P['scale']),
                   [0.3, 1.1], [0.3, 0.8]),
    'Bernoulli_probs': ({'probs': [0.2, 0.7]}, lambda D, P: D.Bernoulli(probs=P['probs']),
                        [0.0, 1.0], None),
    'Bernoulli_logits': ({'logits': [-0.3, 1.2]},
                         lambda D, P: D.Bernoulli(logits=P['logits']), [1.0, 0.0], None),
    'Categorical_probs': ({'probs': [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]},
                          lambda D, P: D.Categorical(probs=P['probs']), np.array([2, 0]),
                          None),
    'Categorical_logits': ({'logits': [[0.2, -1.3, 0.5], [1.1, 0.6, -0.3]]},
                           lambda D, P: D.Categorical(logits=P['logits']), np.array([1, 2]),
                           None),
    'OneHotCategorical': ({'probs': [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]},
                          lambda D, P: D.OneHotCategorical(probs=P['probs']),
                          [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], None),
    'Uniform': ({'low': [0.0, -1.0], 'high': [1.0, 2.0]},
                lambda D, P: D.Uniform(P['low'], P['high']), [0.5, 0.3], [0.3, 0.8]),
    'Beta': ({'c1': [0.5, 2.0], 'c0': [1.5, 3.0]}, lambda D, P: D.Beta(P['c1'], P['c0']),
             [0.3, 0.6], None),
    'Gamma': ({'c': [0.5, 2.5], 'r': [1.0, 3.0]}, lambda D, P: D.Gamma(P['c'], P['r']),
              [0.4, 1.2], None),
    'Chi2': ({'df': [1.5, 4.0]}, lambda D, P: D.Chi2(P['df']), [0.4, 3.2], None),
    'Dirichlet': ({'c': [[0.5, 1.0, 2.0], [3.0, 1.0, 0.5]]},
                  lambda D, P: D.Dirichlet(P['c']), [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], None),
    'Exponential': ({'rate': [0.5, 2.0]}, lambda D, P: D.Exponential(P['rate']),
                    [0.4, 1.2], [0.3, 0.8]),
    'Laplace': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
                lambda D, P: D.Laplace(P['loc'], P['scale']), [0.1, -3.0], [0.3, 0.8]),
    'Poisson': ({'rate': [0.5, 4.0]}, lambda D, P: D.Poisson(P['rate']), [0.0, 3.0], None),
    'Binomial_probs': ({'n': [5.0, 5.0], 'probs': [0.3, 0.6]},
                       lambda D, P: D.Binomial(P['n'], probs=P['probs']), [2.0, 5.0], None),
    'Binomial_logits': ({'n': [4.0, 7.0], 'logits': [-0.3, 0.6]},
                        lambda D, P: D.Binomial(P['n'], logits=P['logits']), [0.0, 3.0],
                        None),
    'Multinomial': ({'probs': [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]},
                    lambda D, P: D.Multinomial(5, probs=P['probs']),
                    [[1.0, 1.0, 3.0], [0.0, 5.0, 0.0]], None),
    'MultivariateNormal_tril': ({'loc': [0.1, -0.2, 0.3], 'scale_tril': TRIL},
                                _mvn('scale_tril'), [[0.5, 0.1, -0.3], [1.0, -1.0, 0.0]],
                                None),
    'MultivariateNormal_cov': ({'loc': [0.1, -0.2, 0.3], 'covariance_matrix': SPD},
                               _mvn('covariance_matrix'), [[0.5, 0.1, -0.3]], None),
    'MultivariateNormal_prec': ({'loc': [0.1, -0.2, 0.3], 'precision_matrix': SPD},
                                _mvn('precision_matrix'), [[0.5, 0.1, -0.3]], None),
    'LowRankMultivariateNormal': (
        {'loc': [[0.1, -0.2, 0.3], [0.0, 0.5, -0.5]], 'W': W, 'D': [0.5, 1.0, 0.7]},
        lambda D, P: D.LowRankMultivariateNormal(P['loc'], P['W'], P['D']),
        [[0.5, 0.1, -0.3], [1.0, -1.0, 0.0]], None),
    'Independent': ({'loc': [[0.3, -1.2], [0.0, 1.0]], 'scale': [0.5, 2.0]},
                    lambda D, P: D.Independent(D.Normal(P['loc'], P['scale']), 1),
                    [0.1, 1.5], None),
    'MixtureSameFamily': (
        {'probs': [0.2, 0.5, 0.3], 'loc': [-1.0, 0.0, 2.0], 'scale': [0.5, 1.0, 0.8]},
        lambda D, P: D.MixtureSameFamily(D.Categorical(P['probs']),
                                         D.Normal(P['loc'], P['scale'])),
        [0.3, -1.1], None),
    'TransformedDistribution': (
        {'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
        lambda D, P: D.TransformedDistribution(
            D.Normal(P['loc'], P['scale']),
            [D.transforms.ExpTransform(), D.transforms.AffineTransform(1.0, 2.0)]),
        [1.5, 4.0], [0.3, 0.8]),
    'Cauchy': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
               lambda D, P: D.Cauchy(P['loc'], P['scale']), [0.1, 1.5], [0.3, 0.8]),
    'HalfCauchy': ({'scale': [0.5, 2.0]}, lambda D, P: D.HalfCauchy(P['scale']), [0.3, 1.1],
                   [0.3, 0.8]),
    'Gumbel': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
               lambda D, P: D.Gumbel(P['loc'], P['scale']), [0.1, 1.5], None),
    'StudentT': ({'df': [0.8, 1.5, 5.0], 'loc': [0.3, -1.2, 0.0], 'scale': [0.5, 2.0, 1.0]},
                 lambda D, P: D.StudentT(P['df'], P['loc'], P['scale']), [0.1, 1.5, -0.4],
                 None),
    'Weibull': ({'scale': [0.5, 2.0], 'c': [1.5, 0.7]},
                lambda D, P: D.Weibull(P['scale'], P['c']), [0.4, 1.5], [0.3, 0.8]),
    'Pareto': ({'scale': [0.5, 2.0], 'alpha': [1.5, 3.0]},
               lambda D, P: D.Pareto(P['scale'], P['alpha']), [0.7, 2.5], [0.3, 0.8]),
    'Geometric': ({'probs': [0.2, 0.7]}, lambda D, P: D.Geometric(P['probs']), [0.0, 3.0],
                  None),
    'NegativeBinomial': ({'n': [3.0, 0.5], 'probs': [0.2, 0.7]},
                         lambda D, P: D.NegativeBinomial(P['n'], P['probs']), [0.0, 3.0],
                         None),
    'LogisticNormal': ({'loc': [0.3, -1.2], 'scale': [0.5, 2.0]},
                       lambda D, P: D.LogisticNormal(P['loc'], P['scale']),
                       [0.2, 0.3, 0.5], None),
    'FisherSnedecor': ({'df1': [1.5, 5.0, 3.0], 'df2': [1.5, 3.0, 9.0]},
                       lambda D, P: D.FisherSnedecor(P['df1'], P['df2']), [0.4, 1.5, 2.0],
                       None),
    'Kumaraswamy': ({'a': [0.5, 2.0, 3.0], 'b': [1.5, 3.0, 0.7]},
                    lambda D, P: D.Kumaraswamy(P['a'], P['b']), [0.3, 0.6, 0.9], [0.3, 0.8, 0.5]),
    'RelaxedBernoulli': ({'t': 0.7, 'probs': [0.2, 0.7]},
                         lambda D, P: D.RelaxedBernoulli(P['t'], probs=P['probs']),
                         [0.3, 0.9], None),
    'RelaxedOneHotCategorical': ({'t': 0.7, 'logits': [[0.2, -1.3, 0.5], [1.1, 0.6, -0.3]]},
                                 lambda D, P: D.RelaxedOneHotCategorical(P['t'],
                                                                         logits=P['logits']),
                                 [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], None),
    'GeneralizedPareto': ({'loc': [0.0, 1.0, 0.5], 'scale': [1.0, 2.0, 0.5],
                           'xi': [0.3, -0.2, 0.0]},
                          lambda D, P: D.GeneralizedPareto(P['loc'], P['scale'], P['xi']),
                          [0.5, 2.0, 1.5], [0.3, 0.8, 0.5]),
    'InverseGamma': ({'c': [1.5, 3.0], 'r': [1.0, 2.0]},
                     lambda D, P: D.InverseGamma(P['c'], P['r']), [0.4, 1.2], None),
    'ContinuousBernoulli': ({'probs': [0.2, 0.5004]},
                            lambda D, P: D.ContinuousBernoulli(probs=P['probs']),
                            [0.3, 0.6], [0.3, 0.8]),
    # probs inside the band (Taylor expansions), just outside it on both sides, far out
    'ContinuousBernoulli_band': ({'probs': [0.4995, 0.496, 0.5012, 0.93]},
                                 lambda D, P: D.ContinuousBernoulli(probs=P['probs']),
                                 [0.3, 0.6, 0.1, 0.95], [0.3, 0.8, 0.5, 0.1]),
    'ContinuousBernoulli_logits': ({'logits': [-1.3, 0.0005, 2.5]},
                                   lambda D, P: D.ContinuousBernoulli(logits=P['logits']),
                                   [0.3, 0.6, 0.95], [0.3, 0.8, 0.1]),
    'VonMises': ({'loc': [0.3, -1.2, 2.5], 'concentration': [0.5, 2.0, 8.0]},
                 lambda D, P: D.VonMises(P['loc'], P['concentration']), [0.1, 1.5, -2.9],
                 None),
    'LKJCholesky': ({'concentration': [0.5, 1.0, 3.0]},
                    lambda D, P: D.LKJCholesky(3, P['concentration']), LKJ_VALUE, None),
    'Wishart_tril': ({'df': [4.0, 6.5], 'scale_tril': TRIL},
                     lambda D, P: D.Wishart(P['df'], scale_tril=P['scale_tril']),
                     [SPD, SPD2], None),
    'Wishart_cov': ({'df': 3.5, 'covariance_matrix': SPD},
                    lambda D, P: D.Wishart(P['df'], covariance_matrix=P['covariance_matrix']),
                    [SPD2], None),
    'Wishart_prec': ({'df': [3.2], 'precision_matrix': SPD},
                     lambda D, P: D.Wishart(P['df'], precision_matrix=P['precision_matrix']),
                     [SPD2], None),
}


# torch 2.13's GeneralizedPareto mixes float32 into float64 computations (and fails there)
CASE_DTYPE = {'GeneralizedPareto': np.float32}


def build(name, lib):
    params, make, values, probs = CASES[name]
    D = torch.distributions if lib is torch else dg.distributions
    dt = CASE_DTYPE.get(name, np.float64)
    P = {k: leaf(lib, np.asarray(v, dt)) for k, v in params.items()}
    return make(D, P), P, leaf(lib, np.asarray(values, dt if np.asarray(values).dtype.kind
                                                == 'f' else None), grad=False), \
        (None if probs is None else leaf(lib, np.asarray(probs, dt), grad=False))


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return t.detach().numpy()
