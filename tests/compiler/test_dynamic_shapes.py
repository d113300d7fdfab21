"""One compiled program for a varying batch dimension: after two batch sizes (PyTorch's
automatic dynamic shapes) the program is made once and serves every other batch size without
a new capture, with eager's values and gradients; what a batch symbol cannot explain keeps a
program per batch size; dynamic=False never shares."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
from benchmarks import workloads as W


def _mlp():
    dg.manual_seed(0)
    return dg.nn.Sequential(dg.nn.Linear(10, 32), dg.nn.Tanh(), dg.nn.Linear(32, 32),
                            dg.nn.ReLU(), dg.nn.Linear(32, 4))


def _events(run):
    compiled = run.__dict__['_compiled'] if isinstance(run, dg.nn.Module) else run
    return [what for _, what in compiled.events]


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def test_one_program_serves_every_batch_size_with_eagers_values_and_gradients():
    model = _mlp()
    run = dg.compile(model)
    rng = np.random.default_rng(0)
    for batch in (8, 5, 7, 3, 16, 2, 7):
        x = dg.tensor(rng.standard_normal((batch, 10)), dtype=dg.float32)
        y = dg.tensor(rng.integers(0, 4, batch))
        model.zero_grad()
        loss = dg.nn.functional.cross_entropy(run(x), y)
        loss.backward()
        compiled_grads = _grads(model)
        model.zero_grad()
        expected = dg.nn.functional.cross_entropy(model(x), y)
        expected.backward()
        assert loss.item() == expected.item()
        for got, want in zip(compiled_grads, _grads(model)):
            np.testing.assert_array_equal(got, want)
    events = _events(run)
    # batch 8 and 5's captures made the program; each later batch size was captured once,
    # checked against it, and reused it (7 twice: the second call replayed)
    assert sum('captured' in e for e in events) == 6, events
    assert sum('reused the program for any batch size' in e for e in events) == 4, events
    assert len(run.__dict__['_compiled'].programs()) == 1


def test_python_deciding_on_the_batch_size_gets_its_own_program():
    def f(x):
        if x.shape[0] > 4:          # a decision no guard sees: each batch size is checked
            return (x * 2).sum(0)
        return (x + 1).sum(0)

    cf = dg.compile(f)
    for batch in (8, 6, 3, 3, 3, 9, 2, 2, 2):
        x = dg.randn(batch, 3)
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    events = _events(cf)
    assert sum('records another program' in e for e in events) == 2, events    # 3 and 2
    assert any('reused the program for any batch size at batch 9' in e for e in events)


def test_batch_dependent_views_and_sums_become_symbols():
    def f(x, w):
        B = x.shape[0]
        h = (x.view(B, 2, 5) * w).sum(1).reshape(B * 5)
        return h.view(B, 5).mean(0)

    cf = dg.compile(f)
    w = dg.randn(5, requires_grad=True)
    for batch in (4, 6, 9, 3):
        x = dg.randn(batch, 10, requires_grad=True)
        out = cf(x, w)
        gx, gw = dg.autograd.grad(out.sum(), (x, w))
        ex, ew = dg.autograd.grad(f(x, w).sum(), (x, w))
        assert tuple(out.shape) == (5,)
        np.testing.assert_array_equal(out.detach().numpy(), f(x, w).detach().numpy())
        np.testing.assert_array_equal(gx.numpy(), ex.numpy())
        np.testing.assert_array_equal(gw.numpy(), ew.numpy())
    code = dg.compiler.show_code(cf)
    assert 'B = v0.shape[0]' in code and '_inst(' in code


def test_a_constant_the_size_of_the_batch_keeps_a_program_per_batch_size():
    def f(x):
        return x * 2 + dg.ones(x.shape[0], 1)     # made outside the ops: a constant

    cf = dg.compile(f)
    for batch in (4, 4, 4, 6, 6, 6):
        x = dg.randn(batch, 3)
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    events = _events(cf)
    assert any(e.startswith('no dynamic program') and 'changed with the batch' in e
               for e in events), events
    assert len(cf.programs()) == 2


def test_batches_of_one_keep_their_own_program():
    model = _mlp()
    run = dg.compile(model)
    for batch in (1, 4, 6, 1, 1, 9):
        x = dg.randn(batch, 10)
        np.testing.assert_allclose(run(x).detach().numpy(), model(x).detach().numpy(),
                                   rtol=0, atol=0)
    compiled = run.__dict__['_compiled']
    dynamic = [p for p in compiled.programs() if p.batch_slot is not None]
    assert len(dynamic) == 1
    assert len(compiled.programs()) == 2        # batch 1's own, and the dynamic one


def test_random_draws_sized_by_the_batch_replay_the_generator_as_eager():
    def f(x):
        return x + dg.randn(x.shape[0], 3) * 0.1

    cf = dg.compile(f)
    for batch in (4, 5, 7, 8):
        x = dg.ones(batch, 3)
        dg.manual_seed(batch)
        got = cf(x).numpy()
        dg.manual_seed(batch)
        np.testing.assert_array_equal(got, f(x).numpy())
    assert any('any batch size' in e for e in _events(cf))


def test_dynamic_false_keeps_one_program_per_shape_up_to_the_cache_limit():
    cf = dg.compile(lambda x: (x * 3).sin(), dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for n in range(1, 12):
            for _ in range(2):
                cf(dg.ones(n))
    assert any('cache size limit' in str(w.message) for w in caught)
    assert not any('any batch size' in e for e in _events(cf))
    shared = dg.compile(lambda x: (x * 3).sin())
    with warnings.catch_warnings():
        warnings.simplefilter('error')     # a varying batch never reaches the limit
        for n in range(2, 30):
            np.testing.assert_array_equal(shared(dg.ones(n)).numpy(), np.sin(np.ones(n) * 3,
                                                                           dtype=np.float32))
    assert len(shared.programs()) == 1


@pytest.mark.parametrize('dynamic', [None, True])
def test_gpt_trains_at_varying_batch_sizes_as_eager(dynamic):
    sizes = W.GPT_SIZES['smoke']

    def trajectory(compiled):
        model = W.gpt_model(dg, sizes, use_sdpa=False)
        run = dg.compile(model, dynamic=dynamic) if compiled else model
        opt = dg.optim.Adam(model.parameters(), lr=1e-2)
        dg.manual_seed(3)
        losses = []
        for k, batch in enumerate((4, 3, 4, 2, 5, 3)):
            r = np.random.default_rng(k)
            x = dg.tensor(r.integers(0, 65, (batch, 16)))
            y = dg.tensor(r.integers(0, 65, (batch, 16)))
            opt.zero_grad()
            loss = run(x, y)[1]
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, run

    eager, _ = trajectory(False)
    compiled, run = trajectory(True)
    assert compiled == eager
    assert any('any batch size' in e for e in _events(run)), _events(run)
