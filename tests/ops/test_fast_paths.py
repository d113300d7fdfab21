"""The fast paths of issue 15 (blocked kernels, fused formulas) against PyTorch, at sizes
that take them: several blocks with a remainder, non-contiguous inputs, special values.

The conformance table checks every op on small samples; these add the large-array and
layout cases where a fast path differs from the plain formula.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad.ops import blocked


def _pair(a, requires_grad=True):
    return (dg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def test_run_blocked_covers_every_element_once_with_a_short_last_block():
    n = 2 * blocked.BLOCK + 123
    x = np.arange(n, dtype=np.float32).reshape(-1, 1)
    calls = []

    def kernel(out, a, scratch):
        calls.append(out.size)
        np.multiply(a, 2, out=out)
        scratch[...] = -1          # scratch may be overwritten freely
    out = blocked.run_blocked(kernel, (x,), np.dtype(np.float32), scratch=1)
    assert out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_array_equal(out, 2 * x)
    assert calls == [blocked.BLOCK, blocked.BLOCK, 123]


def test_horner_matches_numpy_polyval():
    t = np.linspace(-2, 2, 101)
    p = np.empty_like(t)
    coefficients = (0.5, -1.25, 3.0, 0.75)
    blocked.horner_(p, t, coefficients)
    np.testing.assert_allclose(p, np.polyval(coefficients, t), rtol=1e-12)


@pytest.mark.parametrize('layout', ['contiguous', 'transposed'])
def test_gelu_float32_over_several_blocks_matches_torch(layout):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 300, 251)) * 4).astype(np.float32)   # 3.5 blocks
    if layout == 'transposed':
        a = a.transpose(2, 1, 0)
    x, tx = _pair(a)
    y, ty = F.gelu(x), TF.gelu(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=2e-6, atol=2e-6)
    g = rng.standard_normal(a.shape).astype(np.float32)
    y.backward(dg.tensor(g))
    ty.backward(torch.tensor(g))
    assert x.grad.dtype == dg.float32
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-6, atol=2e-6)


def test_gelu_float32_accuracy_against_float64_reference():
    """Within a few float32 ulps of the exact value everywhere; relative accuracy in the
    negative tail is that of ``1 + erf``, as in PyTorch's float32 kernel (better, here)."""
    a = np.linspace(-12, 12, 200_001, dtype=np.float32)
    exact = TF.gelu(torch.tensor(a, dtype=torch.float64)).numpy()
    mine = F.gelu(dg.tensor(a)).numpy().astype(np.float64)
    theirs = TF.gelu(torch.tensor(a)).numpy().astype(np.float64)
    err = np.abs(mine - exact)
    assert (err <= 4 * np.finfo(np.float32).eps * np.maximum(1, np.abs(exact))).all()
    assert err.max() <= np.abs(theirs - exact).max()
    central = a > -3
    assert (err[central] / np.maximum(np.abs(exact[central]), 1e-3)).max() < 2e-5


def test_gelu_float32_special_values():
    a = np.array([0.0, -0.0, np.inf, np.nan, 1e30, -1e30, 1e-30, -1e-30], np.float32)
    x = dg.tensor(a, requires_grad=True)
    y = F.gelu(x)
    expected = np.array([0.0, -0.0, np.inf, np.nan, 1e30, -0.0, 5e-31, -5e-31], np.float32)
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    assert np.signbit(y.detach().numpy()[1])
    y.backward(dg.ones(len(a)))
    # torch gives 0.5 at zero, 1 and 0 at the ends, nan for nan (and for inf)
    np.testing.assert_array_equal(x.grad.numpy()[[0, 1, 3, 4, 5, 6, 7]],
                                  np.array([0.5, 0.5, np.nan, 1, 0, 0.5, 0.5], np.float32))


def test_gelu_float64_keeps_the_exact_path_for_gradcheck():
    x = dg.tensor(np.linspace(-3, 3, 7), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(F.gelu, (x,))
    assert dg.autograd.gradgradcheck(F.gelu, (x,))


def test_linear_on_batched_input_matches_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5, 6, 8)).astype(np.float32)
    w = rng.standard_normal((3, 8)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    (x, tx), (wd, tw), (bd, tb) = _pair(a), _pair(w), _pair(b)
    y, ty = F.linear(x, wd, bd), TF.linear(tx, tw, tb)
    assert y.shape == ty.shape
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(dg.tensor(g))
    ty.backward(torch.tensor(g))
    for mine, ref in ((x, tx), (wd, tw), (bd, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_bias_of_another_dtype_raises_as_torch():
    with pytest.raises(RuntimeError):
        TF.linear(torch.ones(2, 3, 4), torch.ones(5, 4), torch.ones(5, dtype=torch.float64))
    with pytest.raises(RuntimeError, match='same dtype'):
        F.linear(dg.ones(2, 3, 4), dg.ones(5, 4), dg.ones(5, dtype=dg.float64))


def _check_grads(pairs, y, ty, rng, rtol=1e-4, atol=1e-5):
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(dg.tensor(g))
    ty.backward(torch.tensor(g))
    for mine, ref in pairs:
        assert mine.grad.dtype == dg.float32
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize('affine', [True, False])
@pytest.mark.parametrize('normalized', [(128,), (6, 20)])
def test_layer_norm_rows_backward_matches_torch(affine, normalized):
    rng = np.random.default_rng(2)
    x, tx = _pair((rng.standard_normal((7, 11) + normalized) * 3 + 1).astype(np.float32))
    pairs = [(x, tx)]
    w = b = tw = tb = None
    if affine:
        (w, tw), (b, tb) = (_pair(rng.standard_normal(normalized).astype(np.float32))
                            for _ in range(2))
        pairs += [(w, tw), (b, tb)]
    y = F.layer_norm(x, normalized, w, b)
    ty = TF.layer_norm(tx, normalized, tw, tb)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    _check_grads(pairs, y, ty, rng)


def test_layer_norm_double_backward_still_matches_torch():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5)).astype(np.float64)
    x = dg.tensor(a, requires_grad=True)
    w = dg.tensor(rng.standard_normal(5), requires_grad=True)
    assert dg.autograd.gradgradcheck(lambda x, w: F.layer_norm(x, (5,), w), (x, w))


@pytest.mark.parametrize('scale_grad_by_freq', [False, True])
def test_embedding_backward_with_repeated_indices_matches_torch(scale_grad_by_freq):
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 9, (12, 64))          # a small table: the sorted-segments path
    (w, tw) = _pair(rng.standard_normal((9, 16)).astype(np.float32))
    y = F.embedding(dg.tensor(idx), w, padding_idx=3, scale_grad_by_freq=scale_grad_by_freq)
    ty = TF.embedding(torch.tensor(idx), tw, padding_idx=3,
                      scale_grad_by_freq=scale_grad_by_freq)
    _check_grads([(w, tw)], y, ty, rng)
    assert not w.grad.numpy()[3].any()


def test_embedding_backward_with_a_large_table_matches_torch():
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 500, (4, 8))          # more rows than indices: np.add.at
    w, tw = _pair(rng.standard_normal((500, 8)).astype(np.float32))
    _check_grads([(w, tw)], F.embedding(dg.tensor(idx), w), TF.embedding(torch.tensor(idx), tw),
                 rng)


@pytest.mark.parametrize('fn', ['softmax', 'log_softmax'])
@pytest.mark.parametrize('dim', [-1, 1])
def test_softmax_with_a_causal_mask_matches_torch(fn, dim):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4, 16, 16)).astype(np.float32)
    a[..., np.triu_indices(16, 1)[0], np.triu_indices(16, 1)[1]] = -np.inf
    x, tx = _pair(a)
    y, ty = getattr(F, fn)(x, dim=dim), getattr(TF, fn)(tx, dim=dim)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(a.shape).astype(np.float32)
    if fn == 'log_softmax':
        g[np.isinf(ty.detach().numpy())] = 0    # no gradient flows into -inf outputs
    y.backward(dg.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_gelu_float32_double_backward_matches_torch():
    """Under create_graph the backward formula runs on tensors, not the kept Phi."""
    rng = np.random.default_rng(7)
    x, tx = _pair(rng.standard_normal(1000).astype(np.float32) * 2)
    (gx,) = dg.autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad(TF.gelu(tx).sum(), tx, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-5, atol=1e-6)
    (ggx,) = dg.autograd.grad(gx.sum(), x)
    (tggx,) = torch.autograd.grad(tgx.sum(), tx)
    np.testing.assert_allclose(ggx.numpy(), tggx.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('momentum', [0.0, 0.9])
def test_sgd_on_a_large_parameter_matches_torch(momentum):
    """The blocked update (a parameter larger than two blocks): the same arithmetic as the
    plain ``p -= lr * g``, bit for bit, and PyTorch's result to its fused multiply-add."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal(2 * blocked.BLOCK + 77).astype(np.float32)
    mine, ref = dg.nn.Parameter(dg.tensor(a)), torch.nn.Parameter(torch.tensor(a))
    plain = a.copy()
    opt = dg.optim.SGD([mine], lr=0.01, momentum=momentum)
    topt = torch.optim.SGD([ref], lr=0.01, momentum=momentum)
    buf = None
    for _ in range(3):
        g = rng.standard_normal(a.shape).astype(np.float32)
        mine.grad, ref.grad = dg.tensor(g), torch.tensor(g)
        opt.step()
        topt.step()
        if momentum:
            buf = g.copy() if buf is None else buf * np.float32(momentum) + g
            g = buf
        plain -= np.float32(0.01) * g
    np.testing.assert_array_equal(mine.detach().numpy(), plain)
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), rtol=1e-6,
                               atol=1e-7)


def test_gelu_releases_its_kept_phi_with_the_saved_tensors(monkeypatch):
    # the NumPy path's Phi (the native kernel recomputes it in backward, keeping nothing)
    monkeypatch.setattr(dg.backend._kernels, 'on', False)
    x = dg.randn(1000, requires_grad=True)
    y = F.gelu(x)
    node = y.grad_fn
    assert any(s is not None and not hasattr(s, 'version') for s in node._saved)   # Phi
    y.sum().backward()
    assert node._saved is None      # released by the engine, Phi included
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        y.sum().backward()
