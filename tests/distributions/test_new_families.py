"""What the shared cases cannot check for ContinuousBernoulli, VonMises, LKJCholesky and
Wishart: the Taylor band's edges, log I0 far beyond torch's approximation, circular
moments of the draws, LKJ's marginals and normaliser, Wishart's singular-draw retries and
reparameterised gradient."""
import math
import warnings

import mpmath
import numpy as np
import pytest
import scipy.special as sp
import torch

import dynagrad as dg
import dynagrad.distributions as D
import torch.distributions as TD


def _np(t):
    return t.detach().numpy()


# -- ContinuousBernoulli -------------------------------------------------------------------

@pytest.mark.parametrize('lims', [(0.499, 0.501), (0.4, 0.6)])
def test_continuous_bernoulli_band_edges_match_torch(lims):
    # lims[0] itself is outside the band (exact formulas), lims[1] itself inside (Taylor)
    probs = np.array([lims[0], lims[1], 0.5, lims[0] + 1e-4, lims[1] + 1e-4, 0.05])
    value = np.linspace(0.1, 0.9, probs.size)
    t = TD.ContinuousBernoulli(torch.tensor(probs), lims=lims)
    d = D.ContinuousBernoulli(dg.tensor(probs), lims=lims)
    for what in ('mean', 'variance', 'stddev'):
        np.testing.assert_allclose(_np(getattr(d, what)), getattr(t, what).numpy(),
                                   rtol=1e-9, err_msg=what)
    for what, arg in (('log_prob', value), ('cdf', value), ('icdf', value)):
        np.testing.assert_allclose(_np(getattr(d, what)(dg.tensor(arg))),
                                   getattr(t, what)(torch.tensor(arg)).numpy(),
                                   rtol=1e-9, atol=1e-12, err_msg=what)
    np.testing.assert_allclose(_np(d.entropy()), t.entropy().numpy(), rtol=1e-9, atol=1e-12)


def test_continuous_bernoulli_density_integrates_to_one_and_cdf_inverts():
    d = D.ContinuousBernoulli(dg.tensor([0.05, 0.3, 0.4995, 0.7, 0.99], dtype=dg.float64))
    x = (np.arange(20000) + 0.5) / 20000
    dens = np.exp(_np(d.log_prob(dg.tensor(x[:, None]))))
    np.testing.assert_allclose(dens.mean(0), 1.0, rtol=1e-6)
    np.testing.assert_allclose((dens * x[:, None]).mean(0), _np(d.mean), rtol=1e-6)
    u = dg.tensor(np.array([[0.1], [0.5], [0.9]]))
    np.testing.assert_allclose(_np(d.cdf(d.icdf(u))), np.broadcast_to(_np(u), (3, 5)),
                               rtol=1e-9)


def test_continuous_bernoulli_keeps_lims_and_validates_only_when_asked():
    d = D.ContinuousBernoulli(dg.tensor([0.3, 0.6]), lims=(0.2, 0.8)).expand((3, 2))
    assert d._lims == (0.2, 0.8) and tuple(d.batch_shape) == (3, 2)
    np.testing.assert_allclose(
        _np(d.mean), TD.ContinuousBernoulli(torch.tensor([0.3, 0.6]),
                                            lims=(0.2, 0.8)).expand((3, 2)).mean.numpy(),
        rtol=1e-6)
    # as in PyTorch, probs outside [0, 1] are clamped silently unless validate_args is given
    assert torch.isfinite(TD.ContinuousBernoulli(torch.tensor([1.5])).mean).all()
    assert bool(dg.isfinite(D.ContinuousBernoulli(dg.tensor([1.5])).mean).all())
    # (and given as False it still checks them, before the clamp)
    with pytest.raises(ValueError, match='The parameter probs has invalid values'):
        TD.ContinuousBernoulli(torch.tensor([1.5]), validate_args=False)
    with pytest.raises(ValueError, match='The parameter probs has invalid values'):
        D.ContinuousBernoulli(dg.tensor([1.5]), validate_args=False)
    assert tuple(D.ContinuousBernoulli(0.3).batch_shape) == ()


def test_continuous_bernoulli_exponential_family_parts_match_torch():
    for logits in ([-2.0, 0.3, 1.5], [-0.6, -0.5005, 0.7]):
        t = TD.ContinuousBernoulli(logits=torch.tensor(logits))
        d = D.ContinuousBernoulli(logits=dg.tensor(logits, dtype=dg.float64))
        np.testing.assert_allclose(_np(d._log_normalizer(d.logits)),
                                   t._log_normalizer(t.logits).numpy(), rtol=1e-6)
        np.testing.assert_allclose(_np(D.ExponentialFamily.entropy(d)),
                                   TD.ExponentialFamily.entropy(t).detach().numpy(),
                                   rtol=1e-5, atol=1e-7)


# -- VonMises ------------------------------------------------------------------------------

KAPPAS = np.array([1e-8, 1e-3, 0.5, 3.74, 3.76, 40.0, 699.0, 701.0, 5e3, 1e6])


def test_von_mises_log_i0_is_accurate_over_the_whole_range():
    # log I0(k) = k + log(i0e(k)); torch's polynomial approximation is good to about 1e-7
    # relative, and this one to rounding
    kappa = dg.tensor(KAPPAS, requires_grad=True)
    d = D.VonMises(dg.zeros(KAPPAS.size, dtype=dg.float64), kappa)
    lp = d.log_prob(dg.zeros(KAPPAS.size, dtype=dg.float64))
    from dynagrad.distributions.von_mises import log_i0
    mpmath.mp.dps = 40
    exact = np.array([float(mpmath.log(mpmath.besseli(0, mpmath.mpf(k)))) for k in KAPPAS])
    np.testing.assert_allclose(log_i0(KAPPAS), exact, rtol=4e-16)
    expected = -math.log(2 * math.pi) - np.log(sp.i0e(KAPPAS))
    # (k - log I0(k) rounds at the scale of k: 1e-10 at k = 1e6)
    np.testing.assert_allclose(_np(lp), expected, rtol=1e-13, atol=1e-16 * KAPPAS.max() * 4)
    lp.sum().backward()
    # d/dk [k cos 0 - log I0(k)] = 1 - I1(k) / I0(k)
    ratio = sp.i1e(KAPPAS) / sp.i0e(KAPPAS)
    np.testing.assert_allclose(_np(kappa.grad), 1 - ratio, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_np(d.variance), 1 - ratio, rtol=1e-12, atol=1e-15)
    t = TD.VonMises(torch.zeros(4, dtype=torch.float64), torch.tensor(KAPPAS[2:6]))
    # (torch's polynomial approximations are good to a few 1e-7 there)
    np.testing.assert_allclose(_np(d.variance[2:6]), t.variance.numpy(), atol=1e-6)


def test_von_mises_second_derivative_of_the_normaliser():
    kappa = dg.tensor(np.array([0.0, 0.3, 2.0, 30.0, 900.0]), requires_grad=True)
    lp = D.VonMises(0.0, kappa, validate_args=False).log_prob(dg.tensor(0.0, dtype=dg.float64))
    g, = dg.autograd.grad(lp.sum(), kappa, create_graph=True)
    g2, = dg.autograd.grad(g.sum(), kappa)
    k = _np(kappa)
    r = np.where(k == 0, 0.0, sp.i1e(k) / sp.i0e(k))
    # -(I1/I0)' = -(1 - r / k - r^2), which is -1/2 at k = 0
    expected = -np.where(k == 0, 0.5, 1 - r / np.where(k == 0, 1, k) - r * r)
    np.testing.assert_allclose(_np(g2), expected, rtol=1e-9, atol=1e-15)


def _circular_mean_and_variance(x):
    c, s = np.cos(x).mean(0), np.sin(x).mean(0)
    return np.arctan2(s, c), 1 - np.hypot(c, s)


def test_von_mises_draws_have_the_circular_moments():
    dg.manual_seed(11)
    loc = np.array([0.3, -1.2, 3.0, 0.0])
    kappa = np.array([0.5, 2.0, 8.0, 1e-7])
    d = D.VonMises(dg.tensor(loc), dg.tensor(kappa))
    s = _np(d.sample((40000,)))
    assert s.shape == (40000, 4) and s.min() >= -math.pi and s.max() < math.pi
    mean, var = _circular_mean_and_variance(s)
    np.testing.assert_allclose(var, _np(d.variance), atol=0.012)
    ok = kappa > 0.1     # (the circular mean of a nearly uniform law is anywhere)
    np.testing.assert_allclose(mean[ok], loc[ok], atol=0.03)
    # and a histogram against the density, for the concentrated one
    hist, edges = np.histogram(s[:, 2], bins=40, range=(-math.pi, math.pi), density=True)
    mid = dg.tensor((edges[:-1] + edges[1:]) / 2)
    dens = np.exp(_np(D.VonMises(3.0, 8.0).log_prob(mid.to(dg.float32))))
    np.testing.assert_allclose(hist, dens, atol=0.06)


def test_von_mises_draws_repeat_and_keep_the_dtype():
    d = D.VonMises(dg.zeros(3), dg.full((3,), 2.0))
    dg.manual_seed(3)
    a = d.sample((5,))
    dg.manual_seed(3)
    b = d.sample((5,))
    assert a.dtype == dg.float32 and tuple(a.shape) == (5, 3)
    np.testing.assert_array_equal(_np(a), _np(b))
    with pytest.raises(NotImplementedError):
        d.rsample()


# -- LKJCholesky ---------------------------------------------------------------------------

@pytest.mark.parametrize('concentration', [1.0, 3.0, 0.6])
def test_lkj_draws_have_the_known_marginal_correlations(concentration):
    # under LKJ(eta) in dimension d each correlation is 2 B - 1, B ~ Beta(a, a) with
    # a = eta - 1 + d / 2: mean 0 and variance 1 / (2 a + 1) (torch 2.13's draws fail
    # this from the second row on: see LKJCholesky._onion_beta)
    dg.manual_seed(12)
    dim = 4
    L = D.LKJCholesky(dim, concentration).sample((20000,))
    assert bool(D.constraints.corr_cholesky.check(L).all())
    C = _np(dg.matmul(L, L.transpose(-2, -1)))
    rows, cols = np.tril_indices(dim, -1)
    r = C[:, rows, cols]
    a = concentration - 1 + dim / 2
    np.testing.assert_allclose(r.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(r.var(0), 1 / (2 * a + 1), rtol=0.05)


@pytest.mark.parametrize('concentration', [0.7, 1.0, 2.5])
def test_lkj_density_in_two_dimensions_integrates_to_one(concentration):
    # for dim 2, L = [[1, 0], [r, sqrt(1 - r^2)]] has one free coordinate r in (-1, 1)
    r = np.cos(np.pi * (np.arange(40000) + 0.5) / 40000)   # Chebyshev nodes: end weights
    L = np.zeros((r.size, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    lp = D.LKJCholesky(2, concentration, validate_args=False).log_prob(dg.tensor(L))
    weights = np.pi / r.size * np.sqrt(1 - r * r)
    np.testing.assert_allclose((np.exp(_np(lp)) * weights).sum(), 1.0, rtol=1e-4)


def test_lkj_bad_concentration_fails_in_its_beta_like_torch():
    # both libraries find it when building the onion method's Beta (a Dirichlet inside);
    # the values printed differ where the Beta's first parameter does (see _onion_beta)
    with pytest.raises(ValueError) as t:
        TD.LKJCholesky(3, torch.tensor([0.5, 0.0]))
    with pytest.raises(ValueError) as d:
        D.LKJCholesky(3, dg.tensor([0.5, 0.0]))
    head = str(t.value).split('but found invalid values')[0]
    assert str(d.value).startswith(head.replace('torch.', 'dynagrad.'))


def test_lkj_expand_and_dtype():
    d = D.LKJCholesky(3, dg.tensor([0.5, 2.0])).expand((4, 2))
    assert tuple(d.batch_shape) == (4, 2) and tuple(d.event_shape) == (3, 3)
    assert d.dim == 3
    dg.manual_seed(0)
    s = d.sample((2,))
    assert tuple(s.shape) == (2, 4, 2, 3, 3) and s.dtype == dg.float32
    assert not D.LKJCholesky(3).has_rsample
    assert repr(D.LKJCholesky(3, 2.0)) == repr(TD.LKJCholesky(3, 2.0))


# -- Wishart -------------------------------------------------------------------------------

SIGMA = np.array([[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.0]])


def test_wishart_low_df_warns_like_torch():
    with pytest.warns(UserWarning, match='Low df values detected'):
        TD.Wishart(torch.tensor(2.5), torch.eye(3))
    with pytest.warns(UserWarning, match='Low df values detected'):
        D.Wishart(dg.tensor(2.5), dg.eye(3))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        D.Wishart(3.0, dg.eye(3))


def test_wishart_singular_draws_are_drawn_again():
    d = D.Wishart(dg.tensor([4.0, 5.0], dtype=dg.float64), dg.eye(3, dtype=dg.float64))
    good = d._bartlett_sampling((3,))
    singular = good.clone()
    singular[1, 0] = 0.0          # draw 1 of batch member 0 is singular
    draws = iter([singular, good * 2, good * 3])
    d._bartlett_sampling = lambda shape: next(draws)
    with pytest.warns(UserWarning, match='Singular sample detected.'):
        s = d.rsample((3,))
    expected = _np(good).copy()
    expected[1] *= 2              # the whole draw 1 (every batch member) was redrawn
    np.testing.assert_allclose(_np(s), expected)
    # with no retries allowed it comes back as it is
    d._bartlett_sampling = lambda shape: singular
    with pytest.warns(UserWarning, match='Singular sample detected.'):
        s = d.rsample((3,), max_try_correction=0)
    assert not bool(d.support.check(s).all())
    # and a regular draw warns of nothing (torch 2.13 warns on every draw: its test is
    # inverted, see Wishart.rsample's docstring)
    d = D.Wishart(dg.tensor(6.0), dg.eye(3))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        d.rsample((4,))


def test_wishart_reparameterised_gradient_of_the_mean():
    # E[X] = df * Sigma, so d/d df of the average draw tends to Sigma, and d/d L of the
    # average of tr(X) to 2 df L
    dg.manual_seed(13)
    df = dg.tensor(5.5, dtype=dg.float64, requires_grad=True)
    L = dg.tensor(np.linalg.cholesky(SIGMA), requires_grad=True)
    X = D.Wishart(df, scale_tril=L).rsample((20000,))
    X.mean(0).sum().backward()
    np.testing.assert_allclose(float(df.grad), SIGMA.sum(), rtol=0.05)
    L.grad = None
    df.grad = None
    X = D.Wishart(df, scale_tril=L).rsample((20000,))
    X.diagonal(dim1=-2, dim2=-1).sum(-1).mean().backward()
    np.testing.assert_allclose(np.tril(_np(L.grad)), 2 * 5.5 * np.linalg.cholesky(SIGMA),
                               rtol=0.05, atol=0.05)


def test_wishart_log_prob_matches_torch_in_a_batch_and_expands():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 4, 3, 3))
    values = A @ np.swapaxes(A, -1, -2) + np.eye(3)
    tril = np.stack([np.linalg.cholesky(SIGMA), np.eye(3)])
    df = np.array([3.5, 7.0])
    t = TD.Wishart(torch.tensor(df), scale_tril=torch.tensor(tril))
    d = D.Wishart(dg.tensor(df), scale_tril=dg.tensor(tril))
    v = np.swapaxes(values, 0, 1)   # (4, 2, 3, 3): samples first, then the batch
    np.testing.assert_allclose(_np(d.log_prob(dg.tensor(v))),
                               t.log_prob(torch.tensor(v)).numpy(), rtol=1e-10)
    e_t, e_d = t.expand((5, 2)), d.expand((5, 2))
    np.testing.assert_allclose(_np(e_d.entropy()), e_t.entropy().numpy(), rtol=1e-10)
    np.testing.assert_allclose(_np(e_d.precision_matrix), e_t.precision_matrix.numpy(),
                               rtol=1e-10)
    assert tuple(e_d.sample().shape) == (5, 2, 3, 3)
    np.testing.assert_allclose(_np(D.ExponentialFamily.entropy(d)), _np(d.entropy()),
                               rtol=1e-8)
