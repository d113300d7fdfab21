"""Functions that read their inputs' values in eager mode (dropout draws a mask, embedding
and cross_entropy check indices, layer_norm computes statistics before its op) are recorded
by their capture rules as ops that do that work themselves: a replay redraws, rechecks and
recomputes at every call, as eager does, without an eager island."""
import numpy as np
import pytest

import dynagrad as dg


def _steps(cf):
    (program,) = cf.programs()
    return [s.cls.__qualname__ for s in program.steps]


def _replayed(fn, *args):
    cf = dg.compile(fn)
    for _ in range(3):
        cf(*args)
    return cf


def test_dropout_is_one_op_drawing_eagers_masks():
    x = dg.randn(6, 5, requires_grad=True)
    f = lambda x: dg.nn.functional.dropout(x.tanh(), 0.4).sum(0)   # noqa: E731
    cf = _replayed(f, x)
    assert 'DropoutDraw' in _steps(cf) and 'Island' not in _steps(cf)
    dg.manual_seed(11)
    got = cf(x)
    (gx,) = dg.autograd.grad(got.sum(), x)
    dg.manual_seed(11)
    want = f(x)
    (ex,) = dg.autograd.grad(want.sum(), x)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(gx.numpy(), ex.numpy())


def test_dropout_outside_training_stays_an_identity():
    x = dg.randn(4, 3)
    cf = _replayed(lambda x: dg.nn.functional.dropout(x, 0.5, training=False) * 2, x)
    np.testing.assert_array_equal(cf(x).numpy(), (x * 2).numpy())


def test_cross_entropy_checks_each_calls_targets():
    logits = dg.randn(5, 4, requires_grad=True)
    f = dg.nn.functional.cross_entropy
    cf = _replayed(f, logits, dg.tensor([0, 1, 2, 3, 0]))
    assert _steps(cf) == ['CrossEntropyOfTensor']
    target = dg.tensor([3, 2, 1, 0, 1])
    got = cf(logits, target)
    want = f(logits, target)
    assert got.item() == want.item() and got.grad_fn.name() == 'ReplayBackward'
    (g,), (e,) = dg.autograd.grad(got, logits), dg.autograd.grad(want, logits)
    np.testing.assert_array_equal(g.numpy(), e.numpy())
    with pytest.raises(IndexError, match='Target 7 is out of bounds'):
        cf(logits, dg.tensor([0, 7, 1, 1, 1]))


def test_embedding_checks_each_calls_indices():
    emb = dg.nn.Embedding(10, 3)
    cf = _replayed(emb, dg.tensor([[1, 2], [3, 4]]))
    (program,) = cf.__dict__['_compiled'].programs()
    assert [s.cls.__qualname__ for s in program.steps] == ['EmbeddingOfTensor']
    idx = dg.tensor([[9, 0], [0, 5]])
    np.testing.assert_array_equal(cf(idx).detach().numpy(), emb(idx).detach().numpy())
    cf(idx).sum().backward()
    got = emb.weight.grad.numpy().copy()
    emb.weight.grad = None
    emb(idx).sum().backward()
    np.testing.assert_array_equal(got, emb.weight.grad.numpy())
    with pytest.raises(IndexError, match='index out of range in self'):
        cf(dg.tensor([[1, 10], [0, 0]]))


def test_layer_norm_computes_its_statistics_at_every_call():
    ln = dg.nn.LayerNorm(6)
    x = dg.randn(3, 6, requires_grad=True)
    cf = _replayed(ln, x)
    (program,) = cf.__dict__['_compiled'].programs()
    assert [s.cls.__qualname__ for s in program.steps] == ['LayerNormOp']
    y = dg.randn(3, 6, requires_grad=True) * 3 + 1       # other statistics
    got, want = cf(y), ln(y)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    grads = [dg.autograd.grad(o.square().sum(), (y, ln.weight, ln.bias)) for o in (got, want)]
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_basic_indexing_is_recorded_and_tensor_keys_stay_islands():
    x = dg.randn(4, 6, 5, requires_grad=True)
    f = lambda x: x[1:, ..., ::2][:, -1] * 2      # noqa: E731
    cf = _replayed(f, x)
    assert _steps(cf) == ['BasicIndex', 'BasicIndex', 'Mul']
    np.testing.assert_array_equal(cf(x).detach().numpy(), f(x).detach().numpy())
    (g,), (e,) = dg.autograd.grad(cf(x).sum(), x), dg.autograd.grad(f(x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), e.numpy())
    idx = dg.tensor([2, 0])
    cg = _replayed(lambda x, i: x[i] + 1, x, idx)
    assert _steps(cg)[0] == 'Island'
    np.testing.assert_array_equal(cg(x, dg.tensor([3, 1])).detach().numpy(),
                                  (x[dg.tensor([3, 1])] + 1).detach().numpy())
