"""kl_divergence for every registered pair against torch (values and gradients), dispatch
to the most specific pair, register_kl, and the errors."""
import math
import re

import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.distributions as D
from dynagrad.distributions import kl as dkl
from dist_cases import CASES, leaf, to_np

CASE_OF = {'Bernoulli': 'Bernoulli_probs', 'Categorical': 'Categorical_logits',
           'Binomial': 'Binomial_probs', 'MultivariateNormal': 'MultivariateNormal_tril',
           'TransformedDistribution': 'TransformedDistribution'}


def _perturb(key, value, shift):
    a = np.asarray(value, dtype=float)
    if not shift:
        return a
    if key in ('probs',):
        return a[..., ::-1].copy() if a.ndim > 1 else 1 - a
    if key in ('loc', 'logits', 'low'):
        return a - 0.4
    if key == 'high':
        return a + 0.7
    if key == 'n':
        return a + 1
    if key in ('scale_tril', 'W'):
        return a * 1.2
    return a * 1.3


def _make(name, lib, shift):
    params, make, _, _ = CASES[name]
    Dl = torch.distributions if lib is torch else dg.distributions
    P = {k: leaf(lib, _perturb(k, v, shift)) for k, v in params.items()}
    return make(Dl, P), P


def _pairs():
    out = []
    for (tp, tq), fn in sorted(dkl._KL_REGISTRY.items(),
                               key=lambda kv: (kv[0][0].__name__, kv[0][1].__name__)):
        names = [CASE_OF.get(t.__name__, t.__name__) for t in (tp, tq)]
        if all(n in CASES for n in names):
            out.append(tuple(names))
    return out


PAIRS = _pairs()


def test_most_registered_pairs_are_exercised():
    assert len(PAIRS) >= 45


@pytest.mark.parametrize('p_name,q_name', PAIRS)
def test_kl_against_torch(p_name, q_name):
    tp, tPp = _make(p_name, torch, False)
    tq, tPq = _make(q_name, torch, True)
    dp, dPp = _make(p_name, dg, False)
    dq, dPq = _make(q_name, dg, True)
    try:
        expected = torch.distributions.kl_divergence(tp, tq)
    except (NotImplementedError, ValueError) as e:
        with pytest.raises(type(e)):
            D.kl_divergence(dp, dq)
        return
    got = D.kl_divergence(dp, dq)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(to_np(got), to_np(expected), rtol=1e-6, atol=1e-9)
    mask = np.isfinite(to_np(expected))
    if not mask.any() or not expected.requires_grad:
        return
    expected[torch.tensor(mask)].sum().backward()
    got[dg.tensor(mask)].sum().backward()
    for side, tP, dP in (('p', tPp, dPp), ('q', tPq, dPq)):
        for k in tP:
            tg, dgrad = tP[k].grad, dP[k].grad
            if tg is None:
                continue
            assert dgrad is not None, f'{side}.{k}: no gradient'
            np.testing.assert_allclose(to_np(dgrad), to_np(tg), rtol=1e-5, atol=1e-8,
                                       err_msg=f'{side}.{k}')


def test_bregman_divergence_matches_the_closed_form():
    p = D.Normal(dg.tensor([0.3, -1.0]), dg.tensor([0.5, 2.0]))
    q = D.Normal(dg.tensor([0.0, 1.0]), dg.tensor([1.5, 0.7]))
    np.testing.assert_allclose(to_np(dkl._kl_expfamily_expfamily(p, q)),
                               to_np(dkl._kl_normal_normal(p, q)), rtol=1e-5)
    p, q = D.Poisson(dg.tensor([2.0, 0.4])), D.Poisson(dg.tensor([1.0, 3.0]))
    np.testing.assert_allclose(to_np(dkl._kl_expfamily_expfamily(p, q)),
                               to_np(dkl._kl_poisson_poisson(p, q)), rtol=1e-5)


def test_errors_match_torch():
    with pytest.raises(NotImplementedError) as t:
        torch.distributions.kl_divergence(torch.distributions.Normal(0., 1.),
                                          torch.distributions.Categorical(torch.ones(2)))
    with pytest.raises(NotImplementedError, match=re.escape(str(t.value))):
        D.kl_divergence(D.Normal(0., 1.), D.Categorical(dg.ones(2)))
    with pytest.raises(NotImplementedError) as t:
        torch.distributions.kl_divergence(torch.distributions.Normal(0., 1.),
                                          torch.distributions.Poisson(1.))
    with pytest.raises(NotImplementedError) as d:
        D.kl_divergence(D.Normal(0., 1.), D.Poisson(1.))
    assert str(d.value) == str(t.value)
    with pytest.raises(ValueError, match='different event shapes'):
        D.kl_divergence(D.MultivariateNormal(dg.zeros(2), dg.eye(2)),
                        D.MultivariateNormal(dg.zeros(3), dg.eye(3)))
    # torch registers any class (pyro's Distribution is no torch subclass) and refuses a
    # non-class through issubclass
    assert callable(D.register_kl(int, D.Normal)) and callable(
        torch.distributions.register_kl(int, torch.distributions.Normal))
    for m in (D, torch.distributions):
        with pytest.raises(TypeError, match='issubclass'):
            m.register_kl(3, m.Normal)


def test_register_kl_dispatches_on_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    np.testing.assert_allclose(float(D.kl_divergence(p, q)),
                               float(dkl._kl_normal_normal(p, q)))
    try:
        @D.register_kl(MyNormal, D.Normal)
        def _mine(p, q):
            return dg.tensor(42.0)

        assert float(D.kl_divergence(p, q)) == 42.0          # the memo was cleared
        assert float(D.kl_divergence(q, p)) != 42.0          # (Normal, MyNormal) is not it
    finally:
        dkl._KL_REGISTRY.pop((MyNormal, D.Normal))
        dkl._KL_MEMOIZE.clear()


def test_ambiguous_registration_warns():
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    try:
        D.register_kl(A, D.Normal)(lambda p, q: dg.tensor(1.0))
        D.register_kl(D.Normal, B)(lambda p, q: dg.tensor(2.0))
        with pytest.warns(RuntimeWarning, match='Ambiguous kl_divergence'):
            D.kl_divergence(A(0., 1.), B(0., 1.))
    finally:
        dkl._KL_REGISTRY.pop((A, D.Normal))
        dkl._KL_REGISTRY.pop((D.Normal, B))
        dkl._KL_MEMOIZE.clear()


def test_kl_infinite_where_support_is_not_covered():
    assert math.isinf(float(D.kl_divergence(D.Uniform(0., 2.), D.Uniform(0., 1.))))
    assert math.isinf(float(D.kl_divergence(D.Normal(0., 1.), D.Exponential(1.))))


def test_exponential_family_entropy_from_the_log_normalizer():
    for d in [D.Normal(dg.tensor([0.3, -1.0]), dg.tensor([0.5, 2.0])),
              D.Gamma(dg.tensor([0.5, 3.0]), dg.tensor([1.0, 2.0])),
              D.Bernoulli(dg.tensor([0.2, 0.6])),
              D.Exponential(dg.tensor([0.5, 2.0]))]:
        np.testing.assert_allclose(to_np(D.ExponentialFamily.entropy(d)), to_np(d.entropy()),
                                   rtol=1e-5, atol=1e-6, err_msg=type(d).__name__)
