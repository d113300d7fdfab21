"""The Generator API next to PyTorch's (seeds, state round trips, pickling, errors) and
binomial, which draws from the same stream."""
import pickle

import numpy as np
import pytest
import torch

import dynagrad as dg


def test_generator_methods_match_torch():
    for name in ('manual_seed', 'initial_seed', 'seed', 'get_state', 'set_state',
                 'clone_state', 'device'):
        assert hasattr(torch.Generator(), name) and hasattr(dg.Generator(), name)
    assert str(dg.Generator().device) == str(torch.Generator().device) == 'cpu'
    assert dg.Generator().initial_seed() == torch.Generator().initial_seed()


@pytest.mark.parametrize('seed', [0, 7, -5, 2 ** 63, 2 ** 64 - 1])
def test_initial_seed_as_torch(seed):
    assert (dg.Generator().manual_seed(seed).initial_seed()
            == torch.Generator().manual_seed(seed).initial_seed())
    dg.manual_seed(seed)
    torch.manual_seed(seed)
    assert dg.initial_seed() == torch.initial_seed()


def test_seed_reseeds_with_the_returned_seed():
    g = dg.Generator()
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    a = dg.rand(6, generator=g).numpy()
    t = torch.Generator().manual_seed(s)
    assert np.array_equal(a, torch.rand(6, generator=t).numpy())


def test_state_round_trips_mid_stream():
    g = dg.Generator().manual_seed(9)
    dg.randn(3, generator=g)              # a normal value is left cached
    dg.rand(5, generator=g)
    state = g.get_state()
    assert state.dtype == dg.uint8 and state.dim() == 1
    first = [dg.randn(7, generator=g).numpy(), dg.randint(0, 50, (9,), generator=g).numpy()]
    h = dg.Generator().set_state(state)   # another generator continues the same stream
    assert h.initial_seed() == 9
    again = [dg.randn(7, generator=h).numpy(), dg.randint(0, 50, (9,), generator=h).numpy()]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    # and the stream is still PyTorch's
    t = torch.Generator().manual_seed(9)
    torch.randn(3, generator=t)
    torch.rand(5, generator=t)
    assert np.array_equal(torch.randn(7, generator=t).numpy(), first[0])


def test_get_rng_state_and_fork_rng():
    dg.manual_seed(3)
    state = dg.get_rng_state()
    a = dg.randn(20).numpy()
    dg.set_rng_state(state)
    assert np.array_equal(dg.randn(20).numpy(), a)
    dg.manual_seed(3)
    with dg.random.fork_rng():
        dg.rand(100)
    assert np.array_equal(dg.randn(20).numpy(), a)


def test_clone_state_and_pickle():
    g = dg.Generator().manual_seed(11)
    dg.randn(1, generator=g)
    for copy in (g.clone_state(), pickle.loads(pickle.dumps(g))):
        assert copy.initial_seed() == 11
        assert np.array_equal(copy.get_state().numpy(), g.get_state().numpy())
        assert np.array_equal(dg.randn(5, generator=copy).numpy(),
                              dg.randn(5, generator=g.clone_state()).numpy())


def test_bad_states_are_refused_before_anything_changes():
    g = dg.Generator().manual_seed(1)
    before = g.get_state().numpy().copy()
    with pytest.raises(TypeError, match='ByteTensor'):
        g.set_state(dg.zeros(10))
    with pytest.raises(RuntimeError, match='input RNG state size to be 10'):
        g.set_state(dg.zeros(10, dtype=dg.uint8))
    bad = before.copy()
    bad[8 + 4 * 624:8 + 4 * 624 + 8] = np.frombuffer(np.int64(9999).tobytes(), np.uint8)
    with pytest.raises(RuntimeError, match='position 9999'):
        g.set_state(dg.tensor(bad))
    assert np.array_equal(g.get_state().numpy(), before)


def test_binomial_shapes_dtypes_and_seeding():
    count = dg.tensor([[10.0, 5.0, 0.0]], dtype=dg.float64)
    prob = dg.tensor([[0.5], [0.2], [1.0]], dtype=dg.float64)
    dg.manual_seed(2)
    a = dg.binomial(count, prob)
    dg.manual_seed(2)
    b = dg.binomial(count, prob)
    assert a.shape == (3, 3) and a.dtype == dg.float64
    assert np.array_equal(a.numpy(), b.numpy())
    assert (a.numpy() >= 0).all() and (a.numpy() <= count.numpy()).all()
    assert np.array_equal(a.numpy()[2], count.numpy()[0])     # prob 1: every trial succeeds
    big = dg.binomial(dg.full((20000,), 40.0), dg.full((20000,), 0.25)).numpy()
    assert abs(big.mean() - 10) < 0.1 and abs(big.var() - 7.5) < 0.4


def test_binomial_autograd_and_errors_like_torch():
    c = dg.tensor([10.0, 5.0], requires_grad=True)
    y = dg.binomial(c, dg.tensor([0.5, 0.2]))
    ty = torch.binomial(torch.tensor([10.0, 5.0], requires_grad=True), torch.tensor([0.5, 0.2]))
    assert y.requires_grad == ty.requires_grad and type(y.grad_fn).__name__ == 'NotImplemented'
    with pytest.raises(RuntimeError, match='derivative for aten::binomial is not implemented'):
        y.sum().backward()
    cases = [((dg.tensor([10, 5]), dg.tensor([0.5, 0.2])),
              (torch.tensor([10, 5]), torch.tensor([0.5, 0.2]))),
             ((dg.tensor([10.0]), dg.tensor([0.5], dtype=dg.float64)),
              (torch.tensor([10.0]), torch.tensor([0.5], dtype=torch.float64))),
             ((dg.tensor([10.0, 5.0, 3.0]), dg.tensor([0.5, 0.2])),
              (torch.tensor([10.0, 5.0, 3.0]), torch.tensor([0.5, 0.2]))),
             ((dg.tensor([10.0]), 0.5), (torch.tensor([10.0]), 0.5))]
    for ours, theirs in cases:
        with pytest.raises(Exception) as want:
            torch.binomial(*theirs)
        with pytest.raises(want.type) as got:
            dg.binomial(*ours)
        assert str(want.value).split(' (')[0][:40] in str(got.value)
    with pytest.raises(RuntimeError, match='prob in \\[0, 1\\]'):
        dg.binomial(dg.tensor([3.0]), dg.tensor([1.5]))
    with pytest.raises(RuntimeError, match='count >= 0'):
        dg.binomial(dg.tensor([-3.0]), dg.tensor([0.5]))


def test_random_module_names():
    import dynagrad.random as dr
    import torch.random as tr
    for name in tr.__all__:
        assert hasattr(dr, name), name
    assert dr.thread_safe_generator() is None and tr.thread_safe_generator() is None


def test_offsets_and_graph_safe_states_are_refused_on_the_cpu_as_torch():
    for lib in (torch, dg):
        g = lib.Generator()
        with pytest.raises(RuntimeError, match='CPU Generator does not use offset'):
            g.get_offset()
        with pytest.raises(RuntimeError, match='CPU Generator does not use offset'):
            g.set_offset(3)
        with pytest.raises(NotImplementedError, match='graphsafe_get_state is not supported'):
            g.graphsafe_get_state()
        with pytest.raises(TypeError, match='expected a Generator'):
            g.graphsafe_set_state(0)
        with pytest.raises(NotImplementedError, match='graphsafe_set_state is not supported'):
            g.graphsafe_set_state(lib.Generator())
