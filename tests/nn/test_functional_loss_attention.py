"""Checks of losses, attention and distances that the op table cannot express, against torch."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as DF
import torch.nn.functional as TF


def pair(array, requires_grad=True):
    array = np.asarray(array)
    return (dynagrad.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


# -- attention dropout: the same masks as torch's after the same seed --------------------------

@pytest.mark.parametrize('p', [0.3, 0.7])
def test_sdpa_dropout_matches_mask(p):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)),
               rng.standard_normal((2, 5, 6)))
    dq, tq = pair(q)
    dk, tk = pair(k)
    dv, tv = pair(v)
    dynagrad.manual_seed(7)
    out = DF.scaled_dot_product_attention(dq, dk, dv, dropout_p=p)
    torch.manual_seed(7)
    ref = TF.scaled_dot_product_attention(tq, tk, tv, dropout_p=p)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    g = rng.standard_normal(out.shape)
    out.backward(dynagrad.tensor(g))
    ref.backward(torch.tensor(g))
    for d, t in ((dq, tq), (dk, tk), (dv, tv)):
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_sdpa_dropout_repeats_with_seed_and_drops_fraction():
    q = dynagrad.ones(4, 64, 8)
    dynagrad.manual_seed(3)
    a = DF.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    dynagrad.manual_seed(3)
    b = DF.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert np.array_equal(a.numpy(), b.numpy())
    # uniform attention over 64 keys of ones: output = fraction kept / (1 - p) ~ 1
    assert abs(a.numpy().mean() - 1.0) < 0.05


def test_sdpa_dropout_one_gives_zeros():
    q = dynagrad.randn(2, 3, 4, requires_grad=True)
    out = DF.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert not out.detach().numpy().any()


def test_sdpa_double_backward_matches_torch():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5))]
    d, t = zip(*(pair(a) for a in arrays))
    outs = []
    for lib, F, xs in ((dynagrad, DF, d), (torch, TF, t)):
        o = F.scaled_dot_product_attention(xs[0], xs[1], xs[2], attn_mask=xs[3])
        gs = lib.autograd.grad((o * o).sum(), xs, create_graph=True)
        total = sum((g * g).sum() for g in gs)
        outs.append(lib.autograd.grad(total, xs))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-10)


def test_sdpa_causal_double_backward_gradgradcheck():
    rng = np.random.default_rng(2)
    xs = [dynagrad.tensor(rng.standard_normal((1, 3, 2)), requires_grad=True) for _ in range(3)]
    f = lambda q, k, v: DF.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    assert dynagrad.autograd.gradgradcheck(f, xs)


def test_sdpa_large_matches_torch():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((8, 128, 64)).astype(np.float32) for _ in range(3))
    d = [dynagrad.tensor(a, requires_grad=True) for a in (q, k, v)]
    t = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    od = DF.scaled_dot_product_attention(*d)
    ot = TF.scaled_dot_product_attention(*t)
    np.testing.assert_allclose(od.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    od.sum().backward()
    ot.sum().backward()
    for a, b in zip(d, t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-4)


# -- arguments torch refuses to differentiate -----------------------------------------------

@pytest.mark.parametrize('fn,kw', [
    ('binary_cross_entropy', 'weight'),
    ('binary_cross_entropy_with_logits', 'weight'),
    ('binary_cross_entropy_with_logits', 'pos_weight'),
])
def test_weight_requiring_grad_raises(fn, kw):
    x = np.full((2, 3), 0.4)
    for lib, F in ((dynagrad, DF), (torch, TF)):
        w = lib.ones(3, dtype=lib.float64, requires_grad=True)
        inp = lib.tensor(x, requires_grad=True)
        with pytest.raises(RuntimeError, match='is not differentiable with respect to argument'):
            getattr(F, fn)(inp, lib.tensor(x), **{kw: w})


def test_soft_margin_target_requiring_grad_raises():
    for lib, F in ((dynagrad, DF), (torch, TF)):
        t = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="argument 'target'"):
            F.soft_margin_loss(lib.zeros(3, requires_grad=True), t)


# -- CTC ------------------------------------------------------------------------------------

def test_ctc_double_backward_raises_as_torch():
    rng = np.random.default_rng(4)
    lp = rng.standard_normal((5, 2, 4))
    for lib, F in ((dynagrad, DF), (torch, TF)):
        x = lib.tensor(lp, requires_grad=True)
        loss = F.ctc_loss(F.log_softmax(x, 2), lib.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2])
        g, = lib.autograd.grad(loss, [x], create_graph=True)
        with pytest.raises(RuntimeError, match='_ctc_loss_backward is not implemented'):
            g.sum().backward()


def test_ctc_raw_log_probs_gradient_is_torchs():
    """Without a log_softmax in front, torch's gradient is exp(lp) - gamma; so is ours."""
    rng = np.random.default_rng(5)
    lp = rng.standard_normal((6, 2, 5))
    d, t = pair(lp)
    tg = np.array([[1, 2, 2], [3, 1, 0]])
    ld = DF.ctc_loss(d, dynagrad.tensor(tg), [6, 5], [3, 2], reduction='sum')
    lt = TF.ctc_loss(t, torch.tensor(tg), [6, 5], [3, 2], reduction='sum')
    np.testing.assert_allclose(ld.item(), lt.item(), rtol=1e-10)
    ld.backward()
    lt.backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_ctc_longer_batch_matches_torch():
    rng = np.random.default_rng(6)
    T, N, C, L = 40, 8, 12, 10
    logits = rng.standard_normal((T, N, C)).astype(np.float32)
    tl = rng.integers(1, L + 1, N)
    il = rng.integers(2 * L + 1, T + 1, N)
    tg = rng.integers(1, C, (N, L))
    d, t = pair(logits)
    ld = DF.ctc_loss(DF.log_softmax(d, 2), dynagrad.tensor(tg), dynagrad.tensor(il),
                     dynagrad.tensor(tl))
    lt = TF.ctc_loss(TF.log_softmax(t, 2), torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    np.testing.assert_allclose(ld.item(), lt.item(), rtol=1e-5)
    ld.backward()
    lt.backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


# -- distances --------------------------------------------------------------------------------

def test_cdist_mm_gradient_at_zero_distance_is_zero():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((30, 3))
    b = a[:4].copy()
    d1, t1 = pair(a)
    d2, t2 = pair(b)
    DF.cdist(d1, d2).sum().backward()
    torch.cdist(t1, t2).sum().backward()
    assert np.isfinite(d1.grad.numpy()).all()
    np.testing.assert_allclose(d1.grad.numpy(), t1.grad.numpy(), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d2.grad.numpy(), t2.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_cdist_double_backward():
    rng = np.random.default_rng(8)
    xs = [dynagrad.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 2), (2, 2))]
    for p in (1.5, 2.0, 3.0):
        assert dynagrad.autograd.gradgradcheck(lambda a, b: DF.cdist(a, b, p), xs)


def test_pdist_double_backward():
    x = dynagrad.tensor(np.random.default_rng(9).standard_normal((3, 2)), requires_grad=True)
    for p in (1.5, 2.0, 3.0):
        assert dynagrad.autograd.gradgradcheck(lambda a: DF.pdist(a, p), [x])


def test_legacy_flags_warn():
    x = dynagrad.zeros(2, 3)
    with pytest.warns(UserWarning, match='size_average and reduce args will be deprecated'):
        out = DF.mse_loss(x, x, size_average=False)
    assert out.shape == ()
