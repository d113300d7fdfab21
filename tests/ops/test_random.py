"""Random sampling checked against torch: everything around the values.

The values themselves equal torch's bit for bit for the samplers that follow PyTorch's CPU
streams (tests/test_random_streams.py); here, what must match torch besides is checked
against torch: shapes, dtypes, requires_grad,
grad_fn names, gradients (zero), version counters, error types, and the values wherever
the parameters make a sample deterministic (std=0, p in {0, 1}, from == to). Distributions
are checked statistically on large seeded samples (never flaky: every draw is seeded).
"""
import pickle

import numpy as np
import pytest
import torch

import dynagrad as dg

LIBS = (dg, torch)


def outcome(fn):
    try:
        return fn()
    except Exception as e:    # noqa: BLE001 - the type is what is compared
        return type(e)


def dname(d):
    return str(d).split('.')[-1]


def node(t):
    fn = t.grad_fn
    return None if fn is None else fn.name().replace('torch::autograd::', '')


def meta(t):
    return (dname(t.dtype), tuple(t.shape), t.requires_grad, node(t), t.is_leaf)


def same_meta(build):
    """build(lib) on both libraries: the same exception type, or tensors alike in all but
    their values; returns the two results."""
    a, b = outcome(lambda: build(dg)), outcome(lambda: build(torch))
    if isinstance(b, type):
        assert a is b, f'torch raised {b.__name__}, dynagrad gave {a!r}'
        return a, b
    assert not isinstance(a, type), f'dynagrad raised {a.__name__}, torch did not'
    if isinstance(b, torch.Tensor):
        assert meta(a) == meta(b)
    return a, b


def same_values(build):
    a, b = same_meta(build)
    if not isinstance(b, type):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def T(lib, values, dtype='float32', rg=False):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=rg)


def nonleaf(lib, shape=(3,), dtype='float32'):
    return lib.zeros(*shape, dtype=getattr(lib, dtype), requires_grad=True) * 2


# -- constructors: shapes, dtypes, requires_grad, errors --------------------------------------

CONSTRUCTORS = {
    'rand_varargs': lambda L: L.rand(2, 3),
    'rand_tuple': lambda L: L.rand((2, 3)),
    'rand_list': lambda L: L.rand([4]),
    'rand_size_kw': lambda L: L.rand(size=(2, 3)),
    'rand_0dim': lambda L: L.rand(()),
    'rand_empty': lambda L: L.rand(0, 3),
    'rand_f64': lambda L: L.rand(3, dtype=L.float64),
    'rand_f16': lambda L: L.rand(3, dtype=L.float16),
    'rand_rg': lambda L: L.rand(3, requires_grad=True),
    'rand_gen': lambda L: L.rand(3, generator=L.Generator().manual_seed(1)),
    'rand_int_dtype': lambda L: L.rand(3, dtype=L.int64),
    'rand_negative': lambda L: L.rand(-1),
    'rand_float_size': lambda L: L.rand(2.5),
    'rand_float_in_tuple': lambda L: L.rand((2, 2.5)),
    'rand_none': lambda L: L.rand(None),
    'rand_bad_generator': lambda L: L.rand(3, generator=5),
    'randn_varargs': lambda L: L.randn(2, 3),
    'randn_f16': lambda L: L.randn(3, dtype=L.float16),
    'randn_f64_rg': lambda L: L.randn(2, dtype=L.float64, requires_grad=True),
    'randn_size_kw': lambda L: L.randn(size=(2,)),
    'randn_bool': lambda L: L.randn(2, dtype=L.bool),
    'randn_negative': lambda L: L.randn(2, -3),
    'randint_high': lambda L: L.randint(10, (3,)),
    'randint_low_high': lambda L: L.randint(3, 10, (2, 2)),
    'randint_kw': lambda L: L.randint(low=1, high=3, size=(2,)),
    'randint_high_kw': lambda L: L.randint(high=3, size=(2,)),
    'randint_0dim': lambda L: L.randint(0, 3, ()),
    'randint_int32': lambda L: L.randint(5, (2,), dtype=L.int32),
    'randint_bool': lambda L: L.randint(0, 2, (3,), dtype=L.bool),
    'randint_float_rg': lambda L: L.randint(0, 2, (3,), dtype=L.float32, requires_grad=True),
    'randint_int_rg': lambda L: L.randint(0, 2, (3,), requires_grad=True),
    'randint_int64_full': lambda L: L.randint(0, 2 ** 63 - 1, (3,)),
    'randint_low_ge_high': lambda L: L.randint(5, 2, (2,)),
    'randint_uint8_overflow': lambda L: L.randint(0, 300, (3,), dtype=L.uint8),
    'randint_int8_underflow': lambda L: L.randint(-200, 3, (3,), dtype=L.int8),
    'randint_float_bounds': lambda L: L.randint(0.5, 2.7, (3,)),
    'randint_int_size': lambda L: L.randint(0, 3, 3),
    'randint_negative_size': lambda L: L.randint(0, 3, (-1,)),
    'randint_no_size': lambda L: L.randint(3),
    'randperm': lambda L: L.randperm(5),
    'randperm_0': lambda L: L.randperm(0),
    'randperm_f32_rg': lambda L: L.randperm(4, dtype=L.float32, requires_grad=True),
    'randperm_int_rg': lambda L: L.randperm(4, requires_grad=True),
    'randperm_uint8_256': lambda L: L.randperm(256, dtype=L.uint8),
    'randperm_uint8_300': lambda L: L.randperm(300, dtype=L.uint8),
    'randperm_int8_129': lambda L: L.randperm(129, dtype=L.int8),
    'randperm_f16_3000': lambda L: L.randperm(3000, dtype=L.float16),
    'randperm_bool': lambda L: L.randperm(2, dtype=L.bool),
    'randperm_negative': lambda L: L.randperm(-1),
    'randperm_float': lambda L: L.randperm(2.0),
    'rand_like': lambda L: L.rand_like(L.zeros(2, 3)),
    'rand_like_f64': lambda L: L.rand_like(L.zeros(2, dtype=L.float64)),
    'rand_like_dtype': lambda L: L.rand_like(L.zeros(2), dtype=L.float16),
    'rand_like_rg': lambda L: L.rand_like(L.zeros(2), requires_grad=True),
    'rand_like_int': lambda L: L.rand_like(L.zeros(2, dtype=L.int64)),
    'rand_like_gen': lambda L: L.rand_like(L.zeros(2), generator=L.Generator()),
    'randn_like': lambda L: L.randn_like(L.zeros(3, 1, dtype=L.float64)),
    'randn_like_int': lambda L: L.randn_like(L.zeros(2, dtype=L.int32)),
    'randint_like_high': lambda L: L.randint_like(L.zeros(2, 2), 5),
    'randint_like_low_high': lambda L: L.randint_like(L.zeros(2, dtype=L.int32), 2, 5),
    'randint_like_kw': lambda L: L.randint_like(L.zeros(2), low=2, high=5),
    'randint_like_bool': lambda L: L.randint_like(L.zeros(2, dtype=L.bool), 2),
    'randint_like_uint8_overflow': lambda L: L.randint_like(L.zeros(2, dtype=L.uint8), 300),
    'randint_like_float_rg': lambda L: L.randint_like(L.zeros(2), 5, requires_grad=True),
    'randint_like_int_rg': lambda L: L.randint_like(L.zeros(2, dtype=L.int64), 5,
                                                    requires_grad=True),
    'randint_like_no_high': lambda L: L.randint_like(L.zeros(2)),
    'randint_like_zero_high': lambda L: L.randint_like(L.zeros(2), 0),
    'randint_like_high_kw': lambda L: L.randint_like(L.zeros(2), high=3),
}


@pytest.mark.parametrize('name', sorted(CONSTRUCTORS))
def test_constructor_matches_torch(name):
    same_meta(CONSTRUCTORS[name])


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_rand_is_in_unit_interval_and_uniform(dtype):
    g = dg.Generator().manual_seed(11)
    x = dg.rand(200_000, dtype=getattr(dg, dtype), generator=g).numpy().astype(np.float64)
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.003 and abs(x.var() - 1 / 12) < 0.002
    counts = np.histogram(x, bins=10, range=(0, 1))[0]
    assert np.all(np.abs(counts / len(x) - 0.1) < 0.004)


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_randn_moments(dtype):
    g = dg.Generator().manual_seed(12)
    x = dg.randn(200_000, dtype=getattr(dg, dtype), generator=g).numpy().astype(np.float64)
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.005


def test_randint_covers_range_uniformly():
    dg.manual_seed(13)
    x = dg.randint(-3, 4, (70_000,)).numpy()
    assert x.min() == -3 and x.max() == 3
    freq = np.bincount(x + 3) / len(x)
    assert np.all(np.abs(freq - 1 / 7) < 0.006)


def test_randint_full_int64_and_randint_like_ranges():
    dg.manual_seed(14)
    big = dg.randint(-2 ** 63, 2 ** 63 - 1, (1000,)).numpy()
    assert big.min() < -2 ** 61 and big.max() > 2 ** 61
    r = dg.randint_like(dg.zeros(500, dtype=dg.uint8), 250, 256)
    assert r.dtype is dg.uint8 and set(r.numpy().tolist()) == set(range(250, 256))


@pytest.mark.parametrize('n,dtype', [(10, 'int64'), (256, 'uint8'), (2049, 'float16'),
                                     (1000, 'float32'), (1, 'int32'), (0, 'int64')])
def test_randperm_is_a_permutation(n, dtype):
    dg.manual_seed(15)
    p = dg.randperm(n, dtype=getattr(dg, dtype))
    assert dname(p.dtype) == dtype and p.shape == (n,)
    assert sorted(p.numpy().astype(np.int64).tolist()) == list(range(n))


def test_randperm_positions_are_uniform():
    g = dg.Generator().manual_seed(16)
    first = np.array([dg.randperm(4, generator=g)[0].item() for _ in range(8000)])
    assert np.all(np.abs(np.bincount(first, minlength=4) / 8000 - 0.25) < 0.02)


# -- generator, seeds and state ---------------------------------------------------------------

CALLS = {
    'rand': lambda g: dg.rand(5, generator=g),
    'randn': lambda g: dg.randn(5, generator=g),
    'randint': lambda g: dg.randint(0, 100, (5,), generator=g),
    'randperm': lambda g: dg.randperm(10, generator=g),
    'normal': lambda g: dg.normal(0.0, 1.0, (5,), generator=g),
    'normal_t': lambda g: dg.normal(dg.zeros(5), dg.ones(5), generator=g),
    'bernoulli': lambda g: dg.bernoulli(dg.full((20,), 0.5), generator=g),
    'bernoulli_p': lambda g: dg.bernoulli(dg.zeros(20), 0.5, generator=g),
    'multinomial': lambda g: dg.multinomial(dg.ones(10), 5, generator=g),
    'multinomial_repl': lambda g: dg.multinomial(dg.ones(2, 10), 5, True, generator=g),
    'poisson': lambda g: dg.poisson(dg.full((10,), 3.0), generator=g),
    'uniform_': lambda g: dg.zeros(5).uniform_(-1, 1, generator=g),
    'normal_': lambda g: dg.zeros(5).normal_(generator=g),
    'bernoulli_': lambda g: dg.zeros(20).bernoulli_(0.5, generator=g),
    'bernoulli_t': lambda g: dg.zeros(20).bernoulli_(dg.full((20,), 0.5), generator=g),
    'random_': lambda g: dg.zeros(5).random_(generator=g),
    'exponential_': lambda g: dg.zeros(5).exponential_(generator=g),
    'geometric_': lambda g: dg.zeros(5).geometric_(0.3, generator=g),
    'log_normal_': lambda g: dg.zeros(5).log_normal_(generator=g),
    'cauchy_': lambda g: dg.zeros(5).cauchy_(generator=g),
    'rand_like': lambda g: dg.rand_like(dg.zeros(5), generator=g),
    'randn_like': lambda g: dg.randn_like(dg.zeros(5), generator=g),
    'randint_like': lambda g: dg.randint_like(dg.zeros(5), 100, generator=g),
}


@pytest.mark.parametrize('name', sorted(CALLS))
def test_seeding_repeats_exactly(name):
    fn = CALLS[name]
    dg.manual_seed(1234)
    a = fn(None).tolist()
    dg.manual_seed(1234)
    assert fn(None).tolist() == a
    assert fn(None).tolist() != a                        # the stream moves on
    dg.manual_seed(1234)
    state = dg.get_rng_state()
    b = fn(None).tolist()
    dg.set_rng_state(state)
    assert fn(None).tolist() == b
    # a private generator seeded alike gives the same stream, and leaves the default alone
    dg.manual_seed(1234)
    before = dg.get_rng_state()
    assert fn(dg.Generator().manual_seed(1234)).tolist() == a
    assert dg.get_rng_state().tolist() == before.tolist()


def test_generator_api_like_torch():
    for L in LIBS:
        g = L.Generator()
        assert g.initial_seed() == 67280421310721
        assert g.manual_seed(3) is g and g.initial_seed() == 3
        assert str(g.device) == 'cpu'
        assert L.Generator('cpu').initial_seed() == 67280421310721
        assert L.Generator(device='cpu').device.type == 'cpu'
        assert L.manual_seed(5) is L.default_generator and L.initial_seed() == 5
        s = L.seed()
        assert isinstance(s, int) and L.initial_seed() == s
        state = g.get_state()
        assert state.dtype is L.uint8 and state.ndim == 1 and not state.requires_grad
        assert g.set_state(state) is g
        # the state carries the seed
        g.manual_seed(5)
        st = g.get_state()
        g.manual_seed(9)
        g.set_state(st)
        assert g.initial_seed() == 5


@pytest.mark.parametrize('seed,expected', [(-1, 2 ** 64 - 1), (2 ** 64 - 1, 2 ** 64 - 1),
                                           (-2 ** 63, 2 ** 63), (0, 0)])
def test_seed_range_wraps_like_torch(seed, expected):
    for L in LIBS:
        assert L.Generator().manual_seed(seed).initial_seed() == expected
        assert L.manual_seed(seed).initial_seed() == expected
    assert dg.Generator().manual_seed(-1).get_state().tolist() == \
        dg.Generator().manual_seed(2 ** 64 - 1).get_state().tolist()


@pytest.mark.parametrize('build', [
    lambda L: L.Generator().manual_seed(2 ** 64),
    lambda L: L.Generator().manual_seed(-2 ** 63 - 1),
    lambda L: L.Generator().manual_seed(1.5),
    lambda L: L.Generator().manual_seed('1'),
    lambda L: L.Generator().manual_seed(L.tensor(3)),
    lambda L: L.manual_seed(1.5).initial_seed(),         # int(seed): 1
    lambda L: L.manual_seed('3').initial_seed(),
    lambda L: L.Generator().set_state(L.zeros(10, dtype=L.uint8)),
    lambda L: L.Generator().set_state(L.zeros(L.Generator().get_state().numel())),
    lambda L: L.Generator().set_state([1, 2]),
    lambda L: L.set_rng_state(L.zeros(10, dtype=L.uint8)),
    lambda L: L.set_rng_state(L.zeros(L.get_rng_state().numel())),
    lambda L: L.Generator('cuda'),
], ids=['2**64', '-2**63-1', 'float', 'str', 'tensor', 'torch_manual_seed_float',
        'torch_manual_seed_str', 'state_size', 'state_dtype', 'state_list', 'rng_state_size',
        'rng_state_dtype', 'cuda'])
def test_generator_errors_like_torch(build):
    a, b = outcome(lambda: build(dg)), outcome(lambda: build(torch))
    if isinstance(b, type):
        assert a is b
    else:
        assert a == b


def test_state_roundtrip_mid_stream_and_odd_draws():
    g = dg.Generator().manual_seed(21)
    dg.randn(3, generator=g)                      # leaves a cached normal in the state
    st = g.get_state()
    a = [dg.rand(7, generator=g).tolist(), dg.randint(0, 2 ** 40, (3,), generator=g).tolist()]
    g.manual_seed(0)
    g.set_state(st)
    assert [dg.rand(7, generator=g).tolist(),
            dg.randint(0, 2 ** 40, (3,), generator=g).tolist()] == a
    h = g.clone_state() if hasattr(g, 'clone_state') else None
    assert dg.rand(3, generator=h).tolist() == dg.rand(3, generator=g).tolist()
    st.zero_()                                     # get_state returns a copy
    g2 = pickle.loads(pickle.dumps(g))
    assert dg.rand(3, generator=g2).tolist() == dg.rand(3, generator=g).tolist()


def test_random_module_like_torch():
    import dynagrad.random as dr
    for name in ['manual_seed', 'seed', 'initial_seed', 'get_rng_state', 'set_rng_state',
                 'fork_rng', 'Generator', 'default_generator']:
        assert hasattr(torch.random, name) and hasattr(dr, name), name
    assert dg.random is dr
    dr.manual_seed(3)
    assert dg.initial_seed() == 3
    before = dg.get_rng_state().tolist()
    with dr.fork_rng():
        dg.manual_seed(99)
        dg.rand(10)
    assert dg.get_rng_state().tolist() == before and dg.initial_seed() == 3
    a = dg.rand(3).tolist()
    dg.set_rng_state(dg.tensor(before, dtype=dg.uint8))
    with dr.fork_rng(enabled=False):
        assert dg.rand(3).tolist() == a
    with pytest.raises(KeyError):             # restored even when the block raises
        with dr.fork_rng():
            dg.rand(5)
            raise KeyError
    assert dg.rand(0).shape == (0,)


# -- normal ------------------------------------------------------------------------------------

NORMAL = {
    'floats_size': lambda L: L.normal(1.0, 2.0, (2, 3)),
    'floats_size_list': lambda L: L.normal(0.0, 1.0, [2]),
    'floats_size_kw': lambda L: L.normal(0.0, 1.0, size=(2,)),
    'ints_size': lambda L: L.normal(0, 1, (2,)),
    'floats_dtype': lambda L: L.normal(1.0, 2.0, (2,), dtype=L.float64),
    'floats_rg': lambda L: L.normal(1.0, 2.0, (2,), requires_grad=True),
    'floats_int_dtype': lambda L: L.normal(0.0, 1.0, (2,), dtype=L.int64),
    'floats_no_size': lambda L: L.normal(1.0, 2.0),
    'floats_int_size': lambda L: L.normal(1.0, 2.0, 2),
    'floats_neg_std': lambda L: L.normal(1.0, -2.0, (2,)),
    'floats_nan_std': lambda L: L.normal(1.0, float('nan'), (2,)),
    'tt': lambda L: L.normal(T(L, [0., 1, 2], rg=True), T(L, [1., 2, 3], rg=True)),
    'tt_broadcast': lambda L: L.normal(L.zeros(2, 1, requires_grad=True), L.ones(3)),
    'tt_f64_f32': lambda L: L.normal(L.zeros(3, dtype=L.float64), L.ones(3)),
    'tt_f32_f64': lambda L: L.normal(L.zeros(3, requires_grad=True), L.ones(3, dtype=L.float64)),
    'tt_f16': lambda L: L.normal(L.zeros(3, dtype=L.float16), L.ones(3, dtype=L.float64)),
    'tt_std_int': lambda L: L.normal(L.zeros(3), L.ones(3, dtype=L.int64)),
    'tt_mean_int': lambda L: L.normal(L.zeros(3, dtype=L.int64), L.ones(3)),
    'tt_mismatch': lambda L: L.normal(L.zeros(2, 3), L.ones(6)),
    'tt_neg_std': lambda L: L.normal(L.zeros(3), T(L, [1., -1, 1])),
    'tt_nan_std': lambda L: L.normal(L.zeros(1), T(L, [float('nan')])),
    'tt_empty': lambda L: L.normal(L.zeros(0), L.ones(0)),
    'tt_0dim': lambda L: L.normal(L.tensor(0.), L.tensor(1.)),
    'tt_kw': lambda L: L.normal(mean=L.zeros(2), std=L.ones(2)),
    'tt_noncontig': lambda L: L.normal(L.zeros(3, 2, requires_grad=True).mT,
                                       L.ones(4, 3)[::2]),
    'tf': lambda L: L.normal(L.zeros(3, requires_grad=True), 2.0),
    'tf_default_std': lambda L: L.normal(L.zeros(3, requires_grad=True)),
    'tf_std_kw': lambda L: L.normal(L.zeros(3), std=2.0),
    'tf_std0': lambda L: L.normal(L.zeros(3, requires_grad=True), 0.0),
    'tf_0dim': lambda L: L.normal(L.zeros((), requires_grad=True), 1.0),
    'tf_neg_std': lambda L: L.normal(L.zeros(3), -1.0),
    'tf_int': lambda L: L.normal(L.zeros(3, dtype=L.int64), 1.0),
    'tf_size': lambda L: L.normal(L.zeros(3), 1.0, size=(3,)),
    'ft': lambda L: L.normal(1.0, L.ones(2, requires_grad=True)),
    'ft_f64': lambda L: L.normal(1.0, L.ones(2, dtype=L.float64)),
    'ft_int': lambda L: L.normal(0.0, L.ones(3, dtype=L.int64)),
    'ft_neg': lambda L: L.normal(0.0, T(L, [-1.0])),
}


@pytest.mark.parametrize('name', sorted(NORMAL))
def test_normal_matches_torch(name):
    same_meta(NORMAL[name])


@pytest.mark.parametrize('name', ['tt', 'tt_broadcast', 'tt_f32_f64', 'tf', 'tf_0dim', 'ft',
                                  'tt_noncontig', 'tf_std0'])
def test_normal_gradients_are_zero_like_torch(name):
    grads = []
    for L in LIBS:
        L.manual_seed(0)
        out = NORMAL[name](L)
        leaves = [t for t in _leaves(out) if t.requires_grad]
        g = L.autograd.grad(out.sum(), leaves, allow_unused=True)
        grads.append([(dname(x.dtype), tuple(x.shape), x.abs().sum().item()) for x in g])
    assert grads[0] == grads[1]


def _leaves(out):
    """The leaves one graph level below ``out`` (enough for these one-op graphs)."""
    found = []
    for fn, _ in out.grad_fn.next_functions:
        if fn is None:
            continue
        if hasattr(fn, 'variable'):
            found.append(fn.variable)
        else:                          # a view (mT) of a leaf
            found += [f.variable for f, _ in fn.next_functions if f is not None]
    return found


def test_normal_double_backward_is_zero():
    for L in LIBS:
        m = L.tensor([0.5, 1.0], dtype=L.float64, requires_grad=True)
        s = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        out = L.normal(m * m, s * m)
        gm, = L.autograd.grad(out.sum(), [m], create_graph=True)
        assert gm.tolist() == [0.0, 0.0]
        if gm.requires_grad:
            (ggm,) = L.autograd.grad(gm.sum(), [m], allow_unused=True)
            assert ggm is None or ggm.abs().sum().item() == 0


def test_normal_std0_is_mean_exactly():
    same_values(lambda L: L.normal(T(L, [1.5, -2.0, 3.25]), 0.0))
    same_values(lambda L: L.normal(T(L, [[1.5], [-2.0]]), L.zeros(3)))
    same_values(lambda L: L.normal(2.5, L.zeros(2, dtype=L.float64)))
    same_values(lambda L: L.normal(-1.0, 0.0, (2, 2)))


def test_normal_moments():
    g = dg.Generator().manual_seed(31)
    x = dg.normal(3.0, 2.0, (200_000,), generator=g).numpy().astype(np.float64)
    assert abs(x.mean() - 3) < 0.02 and abs(x.std() - 2) < 0.02
    m = dg.tensor([-5.0, 0.0, 5.0]).reshape(3, 1)
    s = dg.tensor([0.5, 1.0, 2.0]).reshape(3, 1)
    y = dg.normal(m.expand(3, 100_000), s.expand(3, 100_000), generator=g).numpy()
    np.testing.assert_allclose(y.mean(1), [-5, 0, 5], atol=0.02)
    np.testing.assert_allclose(y.std(1), [0.5, 1, 2], rtol=0.01)
    z = dg.normal(dg.full((100_000,), 1.0), 3.0, generator=g).numpy()
    assert abs(z.mean() - 1) < 0.03 and abs(z.std() - 3) < 0.03


# -- bernoulli, poisson -------------------------------------------------------------------------

BERNOULLI = {
    'p_tensor': lambda L: L.bernoulli(L.full((3,), 0.5, requires_grad=True)),
    'p_tensor_f64': lambda L: L.bernoulli(L.full((2, 2), 0.5, dtype=L.float64)),
    'p_tensor_f16': lambda L: L.bernoulli(L.full((2,), 0.5, dtype=L.float16)),
    'p_tensor_0dim': lambda L: L.bernoulli(L.tensor(0.3)),
    'p_tensor_empty': lambda L: L.bernoulli(L.zeros(0, 2)),
    'p_tensor_int': lambda L: L.bernoulli(L.ones(3, dtype=L.int64)),
    'p_tensor_bool': lambda L: L.bernoulli(L.ones(3, dtype=L.bool)),
    'p_tensor_out_of_range': lambda L: L.bernoulli(T(L, [0.5, 1.5])),
    'p_tensor_nan': lambda L: L.bernoulli(T(L, [float('nan')])),
    'p_float': lambda L: L.bernoulli(L.zeros(3), 0.3),
    'p_float_kw': lambda L: L.bernoulli(L.zeros(3), p=0.3),
    'p_float_rg': lambda L: L.bernoulli(L.zeros(3, requires_grad=True), 0.3),
    'p_float_int_input': lambda L: L.bernoulli(L.zeros(3, dtype=L.int64), 0.5),
    'p_float_bool_input': lambda L: L.bernoulli(L.zeros(3, dtype=L.bool), 0.5),
    'p_float_bad': lambda L: L.bernoulli(L.zeros(3), 1.5),
    'p_float_negative': lambda L: L.bernoulli(L.zeros(3), -0.5),
    'method': lambda L: L.full((3,), 0.5, requires_grad=True).bernoulli(),
    'method_p': lambda L: L.zeros(3).bernoulli(0.5),
    'method_p_kw': lambda L: L.zeros(3).bernoulli(p=1.0),
    'method_p_tensor': lambda L: L.zeros(3).bernoulli(L.ones(3)),
    'not_a_tensor': lambda L: L.bernoulli([0.5]),
    'poisson': lambda L: L.poisson(T(L, [1., 2, 0], rg=True)),
    'poisson_f64': lambda L: L.poisson(T(L, [1., 2], 'float64')),
    'poisson_f16': lambda L: L.poisson(T(L, [1., 2], 'float16')),
    'poisson_0dim': lambda L: L.poisson(L.tensor(3.)),
    'poisson_0dim_f64': lambda L: L.poisson(L.tensor(3., dtype=L.float64)),
    'poisson_empty': lambda L: L.poisson(L.zeros(0)),
    'poisson_gen': lambda L: L.poisson(T(L, [1.]), L.Generator()),
    'poisson_negative': lambda L: L.poisson(T(L, [-1., 2])),
    'poisson_nan': lambda L: L.poisson(T(L, [float('nan')])),
    'poisson_int': lambda L: L.poisson(L.ones(2, dtype=L.int64)),
}


@pytest.mark.parametrize('name', sorted(BERNOULLI))
def test_bernoulli_poisson_match_torch(name):
    same_meta(BERNOULLI[name])


def test_bernoulli_poisson_gradients():
    for L in LIBS:
        p = L.tensor([0.2, 0.7], requires_grad=True)
        L.bernoulli(p).sum().backward()
        assert p.grad.tolist() == [0.0, 0.0]
        r = L.tensor([1.0, 3.0], dtype=L.float64, requires_grad=True)
        L.poisson(r * 2).sum().backward()
        assert r.grad.tolist() == [0.0, 0.0]
        x = L.zeros(2, requires_grad=True)
        with pytest.raises(RuntimeError, match='derivative for aten::bernoulli is not impl'):
            L.bernoulli(x, 0.5).sum().backward()


def test_bernoulli_deterministic_ends_match_torch():
    same_values(lambda L: L.bernoulli(T(L, [[0., 1., 1.], [1., 0., 0.]])))
    same_values(lambda L: L.bernoulli(L.zeros(2, 3, dtype=L.int32), 1.0))
    same_values(lambda L: L.bernoulli(L.ones(4, dtype=L.float64), 0.0))
    same_values(lambda L: L.poisson(L.zeros(3)))


def test_bernoulli_rates():
    g = dg.Generator().manual_seed(41)
    p = dg.tensor([0.0, 0.1, 0.5, 0.9, 1.0]).reshape(5, 1).expand(5, 100_000)
    x = dg.bernoulli(p, generator=g).numpy()
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(x.mean(1), [0, 0.1, 0.5, 0.9, 1], atol=0.005)
    y = dg.bernoulli(dg.zeros(100_000, dtype=dg.int64), 0.25, generator=g).numpy()
    assert y.dtype == np.int64 and abs(y.mean() - 0.25) < 0.005


def test_poisson_moments():
    g = dg.Generator().manual_seed(42)
    rates = dg.tensor([0.5, 4.0, 30.0], dtype=dg.float64).reshape(3, 1).expand(3, 100_000)
    x = dg.poisson(rates, g).numpy()
    assert np.all(x == np.round(x)) and x.min() >= 0
    np.testing.assert_allclose(x.mean(1), [0.5, 4, 30], rtol=0.01)
    np.testing.assert_allclose(x.var(1), [0.5, 4, 30], rtol=0.03)


# -- multinomial --------------------------------------------------------------------------------

MULTINOMIAL = {
    '1d': lambda L: L.multinomial(T(L, [0.1, 0.2, 0.7]), 2),
    '1d_all': lambda L: L.multinomial(T(L, [0.1, 0.2, 0.7]), 3),
    '2d': lambda L: L.multinomial(L.rand(2, 3), 2),
    'replacement': lambda L: L.multinomial(T(L, [0.1, 0.2, 0.7]), 5, True),
    'replacement_kw': lambda L: L.multinomial(L.ones(2, 3), 5, replacement=True),
    'f64': lambda L: L.multinomial(T(L, [1., 2], 'float64'), 1),
    'f16': lambda L: L.multinomial(T(L, [1., 2], 'float16'), 1),
    'requires_grad': lambda L: L.multinomial(T(L, [1., 2], rg=True), 1),
    'method': lambda L: T(L, [1., 2]).multinomial(2),
    'empty_rows': lambda L: L.multinomial(L.zeros(0, 3), 1),
    'empty_rows_repl': lambda L: L.multinomial(L.zeros(0, 3), 4, True),
    'noncontig': lambda L: L.multinomial(L.ones(3, 4).mT, 2),
    'too_many': lambda L: L.multinomial(T(L, [0.1, 0.2, 0.7]), 4),
    'too_many_2d': lambda L: L.multinomial(L.ones(2, 3), 4),
    'zero_sum': lambda L: L.multinomial(L.zeros(3), 1),
    'zero_row': lambda L: L.multinomial(T(L, [[1., 2], [0, 0]]), 1),
    'negative': lambda L: L.multinomial(T(L, [-1., 0.2, 0.7]), 1),
    'inf': lambda L: L.multinomial(T(L, [float('inf'), 0.2]), 1),
    'nan': lambda L: L.multinomial(T(L, [float('nan'), 0.2]), 1),
    '3d': lambda L: L.multinomial(L.ones(2, 2, 3), 1),
    '0d': lambda L: L.multinomial(L.tensor(1.), 1),
    'int': lambda L: L.multinomial(L.tensor([1, 2]), 1),
    'zero_samples': lambda L: L.multinomial(L.ones(2), 0),
    'negative_samples': lambda L: L.multinomial(L.ones(2), -1),
    'float_samples': lambda L: L.multinomial(L.ones(3), 2.0),
    'empty_categories': lambda L: L.multinomial(L.zeros(0), 1),
    'empty_categories_repl': lambda L: L.multinomial(L.zeros(0), 1, True),
}


@pytest.mark.parametrize('name', sorted(MULTINOMIAL))
def test_multinomial_matches_torch(name):
    same_meta(MULTINOMIAL[name])


def test_multinomial_without_replacement_never_repeats():
    g = dg.Generator().manual_seed(51)
    p = dg.rand(500, 8, generator=g) + 0.01
    idx = dg.multinomial(p, 8, generator=g).numpy()
    assert np.all(np.sort(idx, axis=1) == np.arange(8))
    idx = dg.multinomial(p, 5, generator=g).numpy()
    assert np.all(np.diff(np.sort(idx, axis=1), axis=1) > 0)
    # zero-probability categories only come once the others are used up, as in torch
    z = dg.multinomial(dg.tensor([[0., 0.2, 0.7, 0.1]] * 200), 4, generator=g).numpy()
    assert np.all(z[:, 3] == 0) and np.all(np.sort(z[:, :3], 1) == [1, 2, 3])


def test_multinomial_frequencies():
    g = dg.Generator().manual_seed(52)
    probs = np.array([0.0, 0.1, 0.2, 0.0, 0.7])
    x = dg.multinomial(dg.tensor(probs * 3), 200_000, True, generator=g).numpy()
    np.testing.assert_allclose(np.bincount(x, minlength=5) / x.size, probs, atol=0.003)
    rows = dg.tensor([[1., 1, 2], [0, 5, 5], [3, 0, 0]], dtype=dg.float64)
    y = dg.multinomial(rows, 100_000, True, generator=g).numpy()
    freq = np.stack([np.bincount(r, minlength=3) / r.size for r in y])
    np.testing.assert_allclose(freq, [[0.25, 0.25, 0.5], [0, 0.5, 0.5], [1, 0, 0]], atol=0.005)
    # without replacement: the first draw follows p, the second p renormalised without it
    w = dg.multinomial(dg.tensor([[0.5, 0.3, 0.2]]).expand(100_000, 3), 2,
                       generator=g).numpy()
    np.testing.assert_allclose(np.bincount(w[:, 0], minlength=3) / len(w), [0.5, 0.3, 0.2],
                               atol=0.006)
    second_given_0 = w[w[:, 0] == 0, 1]
    np.testing.assert_allclose(np.bincount(second_given_0, minlength=3)[1:] /
                               len(second_given_0), [0.6, 0.4], atol=0.01)


# -- in-place fillers ---------------------------------------------------------------------------

INPLACE = {
    'uniform_': lambda x, L: x.uniform_(),
    'uniform_ab': lambda x, L: x.uniform_(-2, 3),
    'uniform_kw': lambda x, L: x.uniform_(**{'from': 1, 'to': 2}),
    'normal_': lambda x, L: x.normal_(),
    'normal_kw': lambda x, L: x.normal_(mean=1, std=2),
    'bernoulli_': lambda x, L: x.bernoulli_(),
    'bernoulli_p': lambda x, L: x.bernoulli_(0.3),
    'bernoulli_t': lambda x, L: x.bernoulli_(L.full(x.shape[-1:], 0.5)),
    'bernoulli_t_rg': lambda x, L: x.bernoulli_(L.full(x.shape[-1:], 0.5, requires_grad=True)),
    'random_': lambda x, L: x.random_(),
    'random_to': lambda x, L: x.random_(10),
    'random_from_to': lambda x, L: x.random_(2, 10),
    'random_from_none': lambda x, L: x.random_(2, None),
    'random_kw': lambda x, L: x.random_(**{'from': 2, 'to': 5}),
    'random_to_kw': lambda x, L: x.random_(to=5),
    'exponential_': lambda x, L: x.exponential_(),
    'exponential_kw': lambda x, L: x.exponential_(lambd=2),
    'geometric_': lambda x, L: x.geometric_(0.3),
    'geometric_kw': lambda x, L: x.geometric_(p=0.2),
    'log_normal_': lambda x, L: x.log_normal_(),
    'log_normal_kw': lambda x, L: x.log_normal_(mean=0, std=1),
    'cauchy_': lambda x, L: x.cauchy_(),
    'cauchy_kw': lambda x, L: x.cauchy_(median=2, sigma=1),
}


@pytest.mark.parametrize('name', sorted(INPLACE))
def test_inplace_on_nonleaf_records_zero_grad_like_torch(name):
    results = []
    for L in LIBS:
        L.manual_seed(0)
        leaf = L.ones(2, 3, requires_grad=True)
        x = leaf * 2
        v = x._version
        out = INPLACE[name](x, L)
        assert out is x and x._version == v + 1
        x.sum().backward()
        results.append((meta(x), leaf.grad.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize('name', sorted(INPLACE))
def test_inplace_on_leaf_requiring_grad(name):
    for L in LIBS:
        L.manual_seed(0)
        leaf = L.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match='a leaf Variable that requires grad'):
            INPLACE[name](leaf, L)
        assert leaf._version == 0 and leaf.tolist() == [[1.0] * 3] * 2
        with L.no_grad():                          # how nn.init fills parameters
            INPLACE[name](leaf, L)
        assert leaf._version == 1 and leaf.requires_grad and leaf.is_leaf


@pytest.mark.parametrize('name', sorted(INPLACE))
def test_inplace_on_view_writes_through(name):
    results = []
    for L in LIBS:
        L.manual_seed(0)
        leaf = L.zeros(3, 4, requires_grad=True)
        base = leaf * 1
        view = base[:, 1::2]
        INPLACE[name](view, L)
        assert base._version == view._version == 1
        (base * L.arange(12.).reshape(3, 4)).sum().backward()
        # (the view's own node name is left out: torch regenerates it as AsStridedBackward0)
        results.append((meta(base), meta(view)[:3], leaf.grad.tolist(),
                        base[:, ::2].tolist()))
    assert results[0] == results[1]
    assert results[0][2] == [[0.0, 1, 0, 3], [4, 5, 6, 7], [8, 9, 10, 11]] or \
        results[0][2] == [[0.0, 0, 2, 0], [4, 0, 6, 0], [8, 0, 10, 0]]


def test_inplace_fillers_deterministic_values_match_torch():
    same_values(lambda L: L.zeros(2, 3).uniform_(1.5, 1.5))
    same_values(lambda L: L.zeros(2, 3, dtype=L.float64).normal_(2, 0))
    same_values(lambda L: L.zeros(4, dtype=L.int32).bernoulli_(1.0))
    same_values(lambda L: L.ones(4, dtype=L.bool).bernoulli_(0))
    same_values(lambda L: L.zeros(2, 3).bernoulli_(T(L, [[1.], [0.]])))
    same_values(lambda L: L.zeros(5).random_(3, 4))
    same_values(lambda L: L.zeros(5, dtype=L.uint8).random_(255, None))
    same_values(lambda L: L.zeros(3).exponential_(float('inf')))


DTYPES = ['float16', 'float32', 'float64', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool']


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('name', ['uniform_', 'normal_', 'bernoulli_', 'bernoulli_p',
                                  'bernoulli_t', 'random_', 'random_to', 'random_from_to',
                                  'random_from_none', 'exponential_', 'geometric_',
                                  'log_normal_', 'cauchy_'])
def test_inplace_dtypes_match_torch(name, dtype):
    def build(L):
        x = L.zeros(2, 3, dtype=getattr(L, dtype))
        return INPLACE[name](x, L)
    a, b = same_meta(build)
    if isinstance(b, torch.Tensor) and name.startswith('random_to'):
        assert a.numpy().astype(np.float64).max() < 10


@pytest.mark.parametrize('shape', [(), (0, 3)], ids=['0dim', 'empty'])
@pytest.mark.parametrize('name', sorted(INPLACE))
def test_inplace_0dim_and_empty_match_torch(name, shape):
    def build(L):
        x = L.zeros(shape, requires_grad=True) * 1
        return INPLACE[name](x, L) if 'bernoulli_t' not in name else \
            x.bernoulli_(L.full(shape[-1:], 0.5))
    same_meta(build)


INPLACE_ERRORS = {
    'uniform_from_gt_to': lambda L: L.zeros(3).uniform_(2, 1),
    'uniform_inf': lambda L: L.zeros(3).uniform_(0, float('inf')),
    'uniform_nan': lambda L: L.zeros(3).uniform_(0, float('nan')),
    'uniform_neg_inf': lambda L: L.zeros(3).uniform_(float('-inf'), 0),
    'uniform_span_overflow': lambda L: L.zeros(3).uniform_(-3e38, 3e38),
    'uniform_f16_bound': lambda L: L.zeros(3, dtype=L.float16).uniform_(0, 1e5),
    'uniform_tensor_bound': lambda L: L.zeros(3).uniform_(L.zeros(2), 1),
    'normal_neg_std': lambda L: L.zeros(3).normal_(1, -2),
    'normal_nan_std': lambda L: L.zeros(3).normal_(0, float('nan')),
    'bernoulli_bad_p': lambda L: L.zeros(3).bernoulli_(1.5),
    'bernoulli_t_bad_p': lambda L: L.zeros(3).bernoulli_(L.full((3,), 1.5)),
    'bernoulli_t_int_p': lambda L: L.zeros(3).bernoulli_(L.ones(3, dtype=L.int64)),
    'bernoulli_t_bad_shape': lambda L: L.zeros(2, 3).bernoulli_(L.full((2,), 0.5)),
    'bernoulli_t_too_big': lambda L: L.zeros(3).bernoulli_(L.full((2, 3), 0.5)),
    'bernoulli_t_same_numel': lambda L: L.zeros(2, 3).bernoulli_(L.full((6,), 0.5)),
    'random_from_ge_to': lambda L: L.zeros(4).random_(10, 2),
    'random_negative_to': lambda L: L.zeros(4).random_(-1),
    'random_zero_to': lambda L: L.zeros(4).random_(0),
    'random_uint8_to': lambda L: L.zeros(4, dtype=L.uint8).random_(300),
    'random_uint8_from': lambda L: L.zeros(4, dtype=L.uint8).random_(-5, 5),
    'random_bool_to': lambda L: L.zeros(4, dtype=L.bool).random_(0, 3),
    'random_f16_from': lambda L: L.zeros(1, dtype=L.float16).random_(-2 ** 40, 2 ** 40),
    'random_int32_from': lambda L: L.zeros(1, dtype=L.int32).random_(-2 ** 40, 2 ** 40),
    'random_huge_to': lambda L: L.zeros(1).random_(0, 2 ** 70),
    'random_from_none_too_big': lambda L: L.zeros(5, dtype=L.uint8).random_(300, None),
    'random_from_none_f32_top': lambda L: L.zeros(5).random_(2 ** 24, None),
    'random_float_arg': lambda L: L.zeros(4).random_(2.5),
    'random_bool_arg': lambda L: L.zeros(4).random_(True),
    'exponential_zero': lambda L: L.zeros(3).exponential_(0),
    'exponential_neg': lambda L: L.zeros(3).exponential_(-1),
    'exponential_nan': lambda L: L.zeros(3).exponential_(float('nan')),
    'geometric_zero': lambda L: L.zeros(3).geometric_(0),
    'geometric_one': lambda L: L.zeros(3).geometric_(1),
    'geometric_nan': lambda L: L.zeros(3).geometric_(float('nan')),
    'geometric_missing_p': lambda L: L.zeros(3).geometric_(),
    'log_normal_zero_std': lambda L: L.zeros(3).log_normal_(0, 0),
    'log_normal_neg_std': lambda L: L.zeros(3).log_normal_(0, -1),
    'cauchy_zero_sigma': lambda L: L.zeros(3).cauchy_(0, 0),
    'cauchy_neg_sigma': lambda L: L.zeros(3).cauchy_(0, -1),
    'bad_generator': lambda L: L.zeros(3).normal_(generator=3),
}


@pytest.mark.parametrize('name', sorted(INPLACE_ERRORS))
def test_inplace_errors_match_torch(name):
    _, b = same_meta(INPLACE_ERRORS[name])
    assert isinstance(b, type), 'torch accepted this'


def test_failed_fill_leaves_target_untouched():
    x = dg.ones(2, 3)
    for bad in [lambda: x.uniform_(2, 1), lambda: x.normal_(0, -1), lambda: x.bernoulli_(2.0),
                lambda: x.random_(5, 1), lambda: x.exponential_(0), lambda: x.geometric_(1),
                lambda: x.log_normal_(0, 0), lambda: x.cauchy_(0, 0),
                lambda: x.bernoulli_(dg.full((4,), 0.5))]:
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            bad()
        assert x._version == 0 and x.tolist() == [[1.0] * 3] * 2


def test_random_warns_beyond_float_precision_like_torch():
    for L in LIBS:
        with pytest.warns(UserWarning, match='out of bounds'):
            L.zeros(2).random_(0, 2 ** 25)


# -- distributions of the fillers ---------------------------------------------------------------

N = 200_000


def _fill(method, *args, dtype=dg.float64, **kw):
    g = dg.Generator().manual_seed(61)
    return getattr(dg.zeros(N, dtype=dtype), method)(*args, generator=g, **kw).numpy()


def test_uniform_fill():
    x = _fill('uniform_', -2, 3)
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean() - 0.5) < 0.02 and abs(x.var() - 25 / 12) < 0.02
    h = _fill('uniform_', 0, 1, dtype=dg.float16)
    assert h.max() < 1 and abs(h.astype(np.float64).mean() - 0.5) < 0.003
    tight = dg.zeros(N, dtype=dg.float16).uniform_(1, 1.01)   # rounding must not reach `to`
    assert tight.numpy().min() == 1 and tight.numpy().max() < np.float16(1.01)
    assert len(np.unique(tight.numpy())) == 10           # every float16 in [1, 1.01)


def test_normal_fill():
    x = _fill('normal_', 3, 0.5)
    assert abs(x.mean() - 3) < 0.005 and abs(x.std() - 0.5) < 0.005


def test_bernoulli_fill():
    assert abs(_fill('bernoulli_', 0.3).mean() - 0.3) < 0.004
    x = _fill('bernoulli_', dtype=dg.bool)
    assert x.dtype == np.bool_ and abs(x.mean() - 0.5) < 0.004
    g = dg.Generator().manual_seed(62)
    p = dg.tensor([0.1, 0.9])
    y = dg.zeros(N // 2, 2).bernoulli_(p, generator=g).numpy()
    np.testing.assert_allclose(y.mean(0), [0.1, 0.9], atol=0.005)


@pytest.mark.parametrize('dtype,top', [('float16', 2 ** 11), ('float32', 2 ** 24),
                                       ('float64', 2 ** 53), ('int8', 127), ('uint8', 255),
                                       ('int16', 2 ** 15 - 1), ('int32', 2 ** 31 - 1),
                                       ('int64', 2 ** 63 - 1), ('bool', 1)])
def test_random_fill_ranges(dtype, top):
    x = _fill('random_', dtype=getattr(dg, dtype)).astype(np.float64)
    assert x.min() >= 0 and x.max() <= top
    assert abs(x.mean() / top - 0.5) < 0.01
    y = _fill('random_', 3, 7, dtype=getattr(dg, dtype) if dtype != 'bool' else dg.int64)
    assert set(y.astype(np.int64).tolist()) == {3, 4, 5, 6}
    assert np.all(np.abs(np.bincount(y.astype(np.int64))[3:] / N - 0.25) < 0.005)


def test_exponential_geometric_log_normal_cauchy_fills():
    e = _fill('exponential_', 2.0)
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.005 and abs(e.std() - 0.5) < 0.005
    g = _fill('geometric_', 0.25)
    assert g.min() >= 1 and np.all(g == np.round(g))
    assert abs(g.mean() - 4) < 0.03 and abs(np.mean(g == 1) - 0.25) < 0.004
    gi = _fill('geometric_', 0.5, dtype=dg.int32)
    assert gi.dtype == np.int32 and abs(gi.mean() - 2) < 0.02
    ln = _fill('log_normal_', 0.5, 0.25)
    assert ln.min() > 0
    assert abs(np.log(ln).mean() - 0.5) < 0.003 and abs(np.log(ln).std() - 0.25) < 0.003
    c = _fill('cauchy_', 1.0, 2.0)
    assert abs(np.median(c) - 1) < 0.03
    q1, q3 = np.percentile(c, [25, 75])
    assert abs((q3 - q1) / 2 - 2) < 0.05                # half the IQR is the scale


# -- autograd and version-counter interplay -----------------------------------------------------

def test_random_output_used_in_graph_and_saved_tensor_checks():
    for L in LIBS:
        w = L.ones(3, requires_grad=True)
        noise = L.zeros(3)
        y = (w * noise).sum()
        noise.normal_()                       # noise was saved by mul: backward must refuse
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            y.backward()


def test_rand_requires_grad_leaf_trains():
    for L in LIBS:
        L.manual_seed(0)
        w = L.randn(3, 2, requires_grad=True)
        assert w.is_leaf and w.grad_fn is None
        (w * 3).sum().backward()
        assert w.grad.tolist() == [[3.0, 3.0]] * 3


def test_default_seed_differs_per_process_as_in_torch_2():
    import subprocess
    import sys
    code = 'import {0}; print({0}.initial_seed(), {0}.Generator().initial_seed())'
    for lib in ('torch', 'dynagrad'):
        runs = [subprocess.run([sys.executable, '-c', code.format(lib)], capture_output=True,
                               text=True, timeout=120, check=True).stdout.split()
                for _ in range(2)]
        assert runs[0][0] != runs[1][0], lib                  # fresh entropy each process
        assert runs[0][1] == runs[1][1] == '67280421310721', lib   # Generator() stays fixed


def test_import_leaves_numpy_random_to_the_first_draw():
    """The default generator's twister is made at its first draw: ``import dynagrad``
    imports numpy.random only where ``import numpy`` already does (NumPy 1.x), and the
    first draw then gives the seeded stream."""
    import subprocess
    import sys
    code = ('import sys, numpy; before = "numpy.random" in sys.modules\n'
            'import dynagrad; after = "numpy.random" in sys.modules\n'
            'dynagrad.manual_seed(0); print(before, after, dynagrad.rand(2).tolist())')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=2)
    assert out[0] == out[1]
    torch.manual_seed(0)
    assert out[2].strip() == str(torch.rand(2).tolist())
