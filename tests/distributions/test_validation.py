"""Argument and sample validation: the same ValueErrors (type and text) as torch, the
default switch, lazily converted parameters, and the constructors' own errors."""
import re

import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.distributions as D
import torch.distributions as TD


def _same_error(make_torch, make_dg, exc=ValueError):
    with pytest.raises(exc) as t:
        make_torch()
    with pytest.raises(exc) as d:
        make_dg()
    assert str(d.value) == str(t.value).replace('torch.', 'dynagrad.')


@pytest.mark.parametrize('build', [
    lambda L, T: L.Normal(0., -1.),
    lambda L, T: L.Normal(T.zeros(2), T.tensor([1., -1.])),
    lambda L, T: L.Normal(T.zeros(1), T.tensor([-1.])),
    lambda L, T: L.Bernoulli(T.tensor([0.5, 1.5])),
    lambda L, T: L.Categorical(T.tensor([0.5, -0.5])),
    lambda L, T: L.Gamma(T.tensor([1.0]), T.tensor([0.0])),
    lambda L, T: L.Dirichlet(T.tensor([1.0, -2.0])),
    lambda L, T: L.Uniform(1.0, 0.0),
    lambda L, T: L.Uniform(T.tensor([0., 2.]), T.tensor([1., 1.])),
    lambda L, T: L.Binomial(T.tensor([2.5]), T.tensor([0.5])),
    lambda L, T: L.MultivariateNormal(T.zeros(2), T.tensor([[1., 2.], [2., 1.]])),
    lambda L, T: L.Poisson(T.tensor([-1.0])),
    lambda L, T: L.Geometric(T.tensor([0.0, 0.5])),
    lambda L, T: L.Beta(T.tensor([1.0]), T.tensor([-1.0])),
    lambda L, T: L.Exponential(T.tensor([0.0])),
    lambda L, T: L.LowRankMultivariateNormal(T.zeros(2), T.ones(2, 1), T.tensor([1., -1.])),
    lambda L, T: L.VonMises(T.zeros(2), T.tensor([1., -1.])),
    lambda L, T: L.Wishart(T.tensor(4.), T.tensor([[1., 2.], [2., 1.]])),
    lambda L, T: L.Wishart(T.tensor(4.), scale_tril=T.tensor([[1., 0.], [2., -1.]])),
    lambda L, T: L.ContinuousBernoulli(T.tensor([0.5, 1.5]), validate_args=True),
])
def test_parameter_errors_match_torch(build):
    _same_error(lambda: build(TD, torch), lambda: build(D, dg))


@pytest.mark.parametrize('build,value', [
    (lambda L, T: L.Normal(0., 1.), lambda T: 1.0),
    (lambda L, T: L.Normal(T.zeros(2), 1.), lambda T: T.zeros(3)),
    (lambda L, T: L.MultivariateNormal(T.zeros(2), T.eye(2)), lambda T: T.zeros(3)),
    (lambda L, T: L.Bernoulli(0.5), lambda T: T.tensor(0.5)),
    (lambda L, T: L.Normal(T.zeros(2), 1.), lambda T: T.tensor([1., float('nan')])),
    (lambda L, T: L.Categorical(T.ones(3)), lambda T: T.tensor([3])),
    (lambda L, T: L.Dirichlet(T.ones(3)), lambda T: T.tensor([0.5, 0.5, 0.5])),
    (lambda L, T: L.Gamma(1., 1.), lambda T: T.tensor([-1.])),
    (lambda L, T: L.Poisson(T.tensor([1.])), lambda T: T.tensor([1.5])),
    (lambda L, T: L.Uniform(0., 1.), lambda T: T.tensor(2.0)),
    (lambda L, T: L.Independent(L.Normal(T.zeros(2, 3), 1.), 1), lambda T: T.zeros(4)),
    (lambda L, T: L.ContinuousBernoulli(T.tensor([0.3])), lambda T: T.tensor([1.5])),
    (lambda L, T: L.VonMises(T.zeros(2), 1.), lambda T: T.tensor([0., float('nan')])),
    (lambda L, T: L.LKJCholesky(2, 1.), lambda T: T.tensor([[1., 0.], [0.5, 0.5]])),
    (lambda L, T: L.Wishart(5., T.eye(2)), lambda T: T.tensor([[1., 2.], [2., 1.]])),
    (lambda L, T: L.Wishart(5., T.eye(2)), lambda T: T.eye(3)),
])
def test_sample_errors_match_torch(build, value):
    _same_error(lambda: build(TD, torch).log_prob(value(torch)),
                lambda: build(D, dg).log_prob(value(dg)))


@pytest.mark.parametrize('build', [
    lambda L, T: L.Bernoulli(),
    lambda L, T: L.Bernoulli(0.5, 0.1),
    lambda L, T: L.Categorical(T.tensor(0.5)),
    lambda L, T: L.Categorical(logits=T.tensor(0.5)),
    lambda L, T: L.Dirichlet(T.tensor(1.0)),
    lambda L, T: L.MultivariateNormal(T.zeros(2)),
    lambda L, T: L.MultivariateNormal(T.tensor(0.), T.eye(2)),
    lambda L, T: L.MultivariateNormal(T.zeros(2), scale_tril=T.ones(2)),
    lambda L, T: L.LowRankMultivariateNormal(T.zeros(2), T.ones(3, 1), T.ones(2)),
    lambda L, T: L.LowRankMultivariateNormal(T.zeros(2), T.ones(2, 1), T.ones(3)),
    lambda L, T: L.Independent(L.Normal(T.zeros(2), 1.), 2),
    lambda L, T: L.TransformedDistribution(L.Normal(0., 1.), 3),
    lambda L, T: L.TransformedDistribution(L.Normal(0., 1.), [3]),
    lambda L, T: L.MixtureSameFamily(L.Categorical(T.ones(2)), L.Normal(T.zeros(3), 1.)),
    lambda L, T: L.MixtureSameFamily(L.Categorical(T.ones(2, 2)),
                                     L.Normal(T.zeros(3, 2), 1.)),
    lambda L, T: L.Multinomial(2.5, T.ones(2)),
    lambda L, T: L.ContinuousBernoulli(),
    lambda L, T: L.ContinuousBernoulli(0.3, 0.2),
    lambda L, T: L.LKJCholesky(1),
    lambda L, T: L.Wishart(T.tensor(4.)),
    lambda L, T: L.Wishart(T.tensor(4.), T.eye(2), scale_tril=T.eye(2)),
    lambda L, T: L.Wishart(T.tensor(4.), T.ones(2)),
    lambda L, T: L.Wishart(T.tensor([1.5, 3.0]), T.eye(3)),
    lambda L, T: L.Wishart(1.0, precision_matrix=T.eye(3)),
])
def test_constructor_errors_match_torch(build):
    try:
        build(TD, torch)
    except Exception as e:   # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e), match=re.escape(str(e).replace('torch.', 'dynagrad.'))):
            build(D, dg)
    else:
        raise AssertionError('torch accepted it')


def test_mixture_type_errors():
    with pytest.raises(ValueError, match='instance of dynagrad.distributions.Categorical'):
        D.MixtureSameFamily(D.Normal(0., 1.), D.Normal(dg.zeros(2), 1.))
    with pytest.raises(ValueError, match='instance of dynagrad.distributions.Distribution'):
        D.MixtureSameFamily(D.Categorical(dg.ones(2)), 3)


def test_validate_args_false_and_the_default_switch():
    D.Normal(0., -1., validate_args=False)   # no error
    assert D.Normal(0., 1., validate_args=False).log_prob(dg.tensor(float('nan'))).isnan()
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(2)
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(0., -1.)
        assert not d._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0., -1.)


def test_lazy_probs_and_logits():
    logits = dg.tensor([0.2, -1.0, 0.5], requires_grad=True)
    c = D.Categorical(logits=logits)
    assert 'probs' not in c.__dict__
    with dg.no_grad():
        p = c.probs                    # computed with grad on, and stored
    assert 'probs' in c.__dict__ and p.requires_grad
    p.sum().backward()
    b = D.Bernoulli(probs=dg.tensor([0.25]))
    np.testing.assert_allclose(b.logits.numpy(), np.log([1 / 3]), rtol=1e-6)
    assert isinstance(D.Bernoulli.__dict__['logits'], D.utils.lazy_property)
    assert isinstance(D.Bernoulli.logits, property)


def test_expand_needs_an_override_in_subclasses_with_their_own_init():
    class MyNormal(D.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match='must also define a custom .expand'):
        MyNormal(dg.zeros(2)).expand((3, 2))


def test_reinforce_points_at_distributions():
    from dynagrad.autograd import Variable
    with pytest.raises(RuntimeError, match='Use dynagrad.distributions instead'):
        Variable(dg.ones(2)).reinforce(1.0)
    with pytest.raises(RuntimeError, match='m = dynagrad.distributions.Categorical'):
        dg.ones(2).reinforce(1.0)


def test_private_helpers_libraries_import():
    """pyro imports torch.distributions.utils' private _standard_normal and _sum_rightmost."""
    import torch.distributions.utils as tdu
    import dynagrad.distributions.utils as ddu
    v = np.arange(24.0).reshape(2, 3, 4)
    for dim in (0, 1, 2):
        np.testing.assert_array_equal(ddu._sum_rightmost(dg.tensor(v), dim).numpy(),
                                      tdu._sum_rightmost(torch.tensor(v), dim).numpy())
    z = ddu._standard_normal((2, 3), dtype=dg.float64, device='cpu')
    t = tdu._standard_normal((2, 3), dtype=torch.float64, device='cpu')
    assert tuple(z.shape) == tuple(t.shape) and z.dtype == dg.float64
