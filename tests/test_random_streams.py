"""dynagrad's random streams are PyTorch's CPU streams: after the same seed (the global one
or an explicit Generator) every sampler gives PyTorch's values bit for bit, and the
generator's state advances as PyTorch's does (interleaved calls stay in step)."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.nn.functional as F

FLOATS = ['float32', 'float64']
# below 16 elements normal samples come one pair at a time, from 16 in blocks (plus a
# redone last block when the size is not a multiple of 16)
SIZES = [1, 5, 15, 16, 17, 33, 1000, 4099]


def _array(x):
    if isinstance(x, torch.Tensor):
        return x.detach().float().numpy() if x.dtype == torch.bfloat16 else x.detach().numpy()
    a = np.asarray(x.detach()._data)
    return a.astype(np.float32) if str(x.dtype).endswith('bfloat16') else a


def assert_same(a, b):
    a, b = _array(a), _array(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True), f'{(a != b).sum()} of {a.size} values differ'


def both(fn, seed=123):
    """``fn(lib)`` under ``manual_seed(seed)`` in torch and dynagrad, compared bit for bit."""
    torch.manual_seed(seed)
    expected = fn(torch)
    dg.manual_seed(seed)
    got = fn(dg)
    if isinstance(expected, (list, tuple)):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            assert_same(e, g)
    else:
        assert_same(expected, got)


def dt(lib, name):
    return getattr(lib, name)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('n', SIZES)
def test_rand_randn(dtype, n):
    both(lambda t: [t.rand(n, dtype=dt(t, dtype)), t.randn(n, dtype=dt(t, dtype))])


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('n', SIZES)
def test_in_place_fillers(dtype, n):
    def fills(t):
        return [t.empty(n, dtype=dt(t, dtype)).uniform_(-0.37, 1.9),
                t.empty(n, dtype=dt(t, dtype)).normal_(0.3, 1.7),
                t.empty(n, dtype=dt(t, dtype)).bernoulli_(0.3),
                t.empty(n, dtype=dt(t, dtype)).exponential_(2.5)]
    both(fills)


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
@pytest.mark.parametrize('n', [5, 16, 17, 40])
def test_half_types(dtype, n):
    both(lambda t: [t.rand(n, dtype=dt(t, dtype)), t.randn(n, dtype=dt(t, dtype)),
                    t.empty(n, dtype=dt(t, dtype)).uniform_(-2, 3),
                    t.empty(n, dtype=dt(t, dtype)).normal_(0.3, 1.7)])


@pytest.mark.parametrize('dtype', FLOATS)
def test_many_values(dtype):
    # enough draws to meet the rare roundings (fused multiply-add, libm's last bit)
    both(lambda t: [t.randn(200_003, dtype=dt(t, dtype)),
                    t.empty(100_000, dtype=dt(t, dtype)).normal_(-0.1, 0.37),
                    t.empty(100_000, dtype=dt(t, dtype)).uniform_(-1 / 3, 2.1)], seed=7)


@pytest.mark.parametrize('dtype,low,high', [('float32', 1e6, 1e6 + 1), ('float64', 1e15, 1e15 + 1),
                                            ('float16', 0, 1)])
def test_uniform_never_reaches_to(dtype, low, high):
    both(lambda t: t.empty(50_000, dtype=dt(t, dtype)).uniform_(low, high), seed=11)


@pytest.mark.parametrize('dtype', FLOATS)
def test_interleaved_calls_stay_in_step(dtype):
    def calls(t):
        d = dt(t, dtype)
        return [t.randn(3, dtype=d), t.rand(2, dtype=d), t.randn(5, dtype=d),
                t.randn(20, dtype=d), t.randn(1, dtype=d), t.randint(0, 9, (4,)),
                t.randperm(6), t.empty(7, dtype=d).normal_(), t.rand(3, dtype=d)]
    both(calls)


def test_explicit_generators():
    def calls(t):
        g = t.Generator().manual_seed(77)
        h = t.Generator().manual_seed(78)
        return [t.rand(5, generator=g), t.randn(20, generator=h), t.randn(3, generator=g),
                t.randint(0, 9, (4,), generator=g), t.randperm(7, generator=h),
                t.empty(8).uniform_(-1, 1, generator=g), t.empty(3).normal_(generator=h),
                t.empty(30).normal_(generator=g), t.empty(9).bernoulli_(0.4, generator=h),
                t.multinomial(t.ones(2, 9), 4, generator=g), t.rand(4)]
    both(calls)


def test_default_seed_of_a_new_generator():
    both(lambda t: [t.rand(5, generator=t.Generator()), t.randn(20, generator=t.Generator())])


@pytest.mark.parametrize('seed', [0, 1, 2 ** 32 + 1, -5, 2 ** 64 - 1])
def test_seeds(seed):
    both(lambda t: t.rand(4), seed=seed)


@pytest.mark.parametrize('low,high', [(0, 10), (-5, 7), (0, 2 ** 40), (-2 ** 62, 2 ** 62)])
def test_randint(low, high):
    both(lambda t: t.randint(low, high, (50,)))


@pytest.mark.parametrize('dtype', ['int64', 'int32', 'int16', 'int8', 'uint8', 'float32',
                                   'float64'])
def test_random_(dtype):
    both(lambda t: [t.empty(9, dtype=dt(t, dtype)).random_(),
                    t.empty(9, dtype=dt(t, dtype)).random_(5),
                    t.empty(9, dtype=dt(t, dtype)).random_(1, 100)])


@pytest.mark.parametrize('n', [0, 1, 2, 10, 1000])
def test_randperm(n):
    both(lambda t: t.randperm(n))


@pytest.mark.parametrize('dtype', FLOATS)
def test_bernoulli_with_probabilities(dtype):
    p = np.random.default_rng(0).random((6, 7))
    both(lambda t: [t.bernoulli(t.tensor(p, dtype=dt(t, dtype))),
                    t.empty(6, 7, dtype=dt(t, dtype)).bernoulli_(t.tensor(p, dtype=t.float32)),
                    t.empty(6, 7, dtype=dt(t, dtype)).bernoulli_(t.tensor(p[0])),
                    t.bernoulli(t.empty(9, dtype=dt(t, dtype)), 0.4)])


@pytest.mark.parametrize('dtype', FLOATS)
def test_normal_with_tensors(dtype):
    m = np.random.default_rng(2).standard_normal((4, 5))
    s = np.abs(np.random.default_rng(3).standard_normal((1, 5))) + 0.1
    both(lambda t: [t.normal(t.tensor(m, dtype=dt(t, dtype)), t.tensor(s, dtype=dt(t, dtype))),
                    t.normal(t.tensor(m, dtype=dt(t, dtype)), 0.7),
                    t.normal(0.3, t.tensor(s, dtype=dt(t, dtype))),
                    t.normal(0.3, 2.0, (30,), dtype=dt(t, dtype)),
                    t.randn_like(t.empty(7, 3, dtype=dt(t, dtype))),
                    t.rand_like(t.empty(7, 3, dtype=dt(t, dtype)))])


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('num_samples,replacement', [(1, False), (9, False), (1, True),
                                                     (50, True)])
def test_multinomial(dtype, num_samples, replacement):
    p = np.random.default_rng(0).random((4, 30))
    p[1, 3] = 0
    both(lambda t: [t.multinomial(t.tensor(p, dtype=dt(t, dtype)), num_samples, replacement),
                    t.multinomial(t.tensor(p[2], dtype=dt(t, dtype)), num_samples, replacement)])


X = np.random.default_rng(1).standard_normal((12, 64, 32)).astype(np.float32)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('p', [0.1, 0.5, 0.7])
def test_dropout(dtype, p):
    both(lambda t: [t.nn.functional.dropout(t.tensor(X, dtype=dt(t, dtype)), p),
                    t.nn.Dropout(p)(t.tensor(X, dtype=dt(t, dtype))),
                    t.nn.functional.dropout2d(t.tensor(X.reshape(12, 64, 4, 8),
                                                       dtype=dt(t, dtype)), p),
                    t.nn.functional.alpha_dropout(t.tensor(X, dtype=dt(t, dtype)), p, True)])


def test_dropout_gradient_uses_the_same_mask():
    def run(t):
        x = t.tensor(X, requires_grad=True)
        y = t.nn.functional.dropout(x, 0.3)
        y.sum().backward()
        return [y, x.grad]
    both(run)


INITS = [('uniform_', dict(a=-0.5, b=0.7)), ('normal_', dict(mean=0.1, std=0.3)),
         ('xavier_uniform_', {}), ('xavier_normal_', dict(gain=1.3)),
         ('kaiming_uniform_', dict(a=5 ** 0.5)), ('kaiming_normal_', dict(mode='fan_out')),
         ('trunc_normal_', dict(std=0.02)),
         ('trunc_normal_', dict(mean=0., std=1., a=-0.5, b=0.5)),   # redraws the outside ones
         ('trunc_normal_', dict(mean=0., std=1., a=1., b=3.))]      # uniform proposals


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(3, 4), (64, 33), (8, 4, 3, 3)])
@pytest.mark.parametrize('name,kw', INITS)
def test_init(name, kw, shape, dtype):
    both(lambda t: getattr(t.nn.init, name)(t.empty(shape, dtype=dt(t, dtype)), **kw))


@pytest.mark.parametrize('dtype', FLOATS)
def test_init_with_generator_and_sparse(dtype):
    def run(t):
        g = t.Generator().manual_seed(3)
        return [t.nn.init.kaiming_uniform_(t.empty(5, 6, dtype=dt(t, dtype)), generator=g),
                t.nn.init.normal_(t.empty(20, dtype=dt(t, dtype)), generator=g),
                t.nn.init.sparse_(t.empty(20, 7, dtype=dt(t, dtype)), 0.3)]
    both(run)


def test_orthogonal_draws_the_same_matrix():
    # the same Gaussian matrix; the QR factorisation (LAPACK) agrees only to rounding
    torch.manual_seed(5)
    expected = torch.nn.init.orthogonal_(torch.empty(6, 10, dtype=torch.float64)).numpy()
    after = torch.rand(3).numpy()
    dg.manual_seed(5)
    got = dg.nn.init.orthogonal_(dg.empty(6, 10, dtype=dg.float64)).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert np.array_equal(dg.rand(3).numpy(), after)


@pytest.mark.parametrize('module', ['Conv2d', 'LSTM', 'Embedding'])
def test_module_initialisation(module):
    args = {'Conv2d': (3, 8, 3), 'LSTM': (10, 20), 'Embedding': (10, 20)}[module]
    both(lambda t: [p.detach() for p in getattr(t.nn, module)(*args).parameters()])


def test_state_round_trip_keeps_the_cached_normal():
    def run(t):
        t.randn(3)                       # leaves the second value of a pair cached
        state = t.get_rng_state()
        a = t.randn(5)
        t.set_rng_state(state)
        return [a, t.randn(5)]
    both(run)


def test_manual_seed_clears_the_cached_normal():
    def run(t):
        t.randn(3)
        t.manual_seed(5)
        return t.randn(3)
    both(run)


def test_dropout_speed_stays_reasonable():
    # the mask costs one float64 uniform per element, as PyTorch's; a loose bound
    import time
    x = dg.randn(12, 64, 512)
    F.dropout(x, 0.1)
    start = time.perf_counter()
    F.dropout(x, 0.1)
    assert time.perf_counter() - start < 1.0


def test_no_warning_from_the_fills():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        dg.manual_seed(0)
        dg.randn(1000)
        dg.empty(1000).exponential_()
        dg.empty(1000).uniform_(0, 1e-40)


@pytest.mark.parametrize('dtype', FLOATS + ['float16'])
@pytest.mark.parametrize('n', [1, 5, 17, 3000])
def test_other_fillers(dtype, n):
    both(lambda t: [t.empty(n, dtype=dt(t, dtype)).log_normal_(0.1, 0.7),
                    t.empty(n, dtype=dt(t, dtype)).cauchy_(0.3, 1.7),
                    t.empty(n, dtype=dt(t, dtype)).geometric_(0.37),
                    t.empty(n, dtype=t.int64).geometric_(0.2),
                    t.randn(3, dtype=dt(t, dtype)),   # shares the normal cache
                    t.empty(n, dtype=dt(t, dtype)).log_normal_()])


def _strided(t, kind, dtype='float32'):
    base = t.zeros(6, 40, dtype=dt(t, dtype))
    return base, (base.t() if kind == 'transposed' else base[:, ::2])


@pytest.mark.parametrize('kind', ['transposed', 'sliced'])
@pytest.mark.parametrize('dtype', FLOATS)
def test_fills_of_strided_views_walk_memory_order(kind, dtype):
    # PyTorch walks a view in memory order, and draws normals one by one when it is not
    # contiguous
    fills = [lambda v: v.uniform_(-1, 2), lambda v: v.normal_(0.2, 1.5),
             lambda v: v.bernoulli_(0.3), lambda v: v.random_(0, 7),
             lambda v: v.exponential_(), lambda v: v.log_normal_(), lambda v: v.cauchy_(),
             lambda v: v.geometric_(0.4)]

    def run(t):
        out = []
        for fill in fills:
            base, view = _strided(t, kind, dtype)
            fill(view)
            out.append(base)
        base, view = _strided(t, kind, dtype)
        view.bernoulli_(t.full(view.shape[-1:], 0.6, dtype=dt(t, dtype)))
        return out + [base]
    both(run)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_seeded_layers_start_from_torchs_weights(dtype):
    """A seeded model built layer by layer draws PyTorch's values in PyTorch's order."""
    def build(lib):
        lib.manual_seed(11)
        dt = getattr(lib, dtype)
        return [lib.nn.Linear(7, 5, dtype=dt), lib.nn.Bilinear(3, 4, 2, dtype=dt),
                lib.nn.Conv2d(3, 4, 3, dtype=dt), lib.nn.Embedding(6, 3, dtype=dt),
                lib.nn.Linear(5, 1, bias=False, dtype=dt)]
    for t, d in zip(build(torch), build(dg)):
        for (name, tp), (_, dp) in zip(t.named_parameters(), d.named_parameters()):
            assert np.array_equal(tp.detach().numpy(), dp.detach().numpy()), name


def test_seeded_shuffling_visits_data_in_torchs_order():
    from torch.utils.data import DataLoader as TorchLoader, RandomSampler as TorchSampler
    from dynagrad.utils.data import DataLoader, RandomSampler
    torch.manual_seed(5)
    dg.manual_seed(5)
    for _ in range(2):      # two epochs: the loaders' draws keep the streams in step
        t = [b.tolist() for b in TorchLoader(list(range(20)), batch_size=6, shuffle=True)]
        d = [b.tolist() for b in DataLoader(list(range(20)), batch_size=6, shuffle=True)]
        assert d == t
    assert list(RandomSampler(range(10), replacement=True, num_samples=40)) == \
        list(TorchSampler(range(10), replacement=True, num_samples=40))
    g_t, g_d = torch.Generator().manual_seed(3), dg.Generator().manual_seed(3)
    assert list(RandomSampler(range(10), generator=g_d)) == \
        list(TorchSampler(range(10), generator=g_t))


@pytest.mark.parametrize('mode', ['LSTM', 'GRU', 'RNN'])
def test_dropout_between_recurrent_layers_draws_torchs_masks(mode):
    torch.manual_seed(0)
    t = getattr(torch.nn, mode)(4, 5, num_layers=3, dropout=0.4)
    d = getattr(dg.nn, mode)(4, 5, num_layers=3, dropout=0.4)
    d.load_state_dict({k: dg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 2, 4)).astype(np.float32)
    torch.manual_seed(7)
    dg.manual_seed(7)
    np.testing.assert_allclose(d(dg.tensor(x))[0].detach().numpy(),
                               t(torch.tensor(x))[0].detach().numpy(), atol=1e-6)


@pytest.mark.parametrize('causal', [False, True])
def test_attention_dropout_draws_torchs_masks(causal):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    torch.manual_seed(3)
    dg.manual_seed(3)
    t = torch.nn.functional.scaled_dot_product_attention(
        *map(torch.tensor, (q, k, v)), dropout_p=0.3, is_causal=causal)
    d = F.scaled_dot_product_attention(*map(dg.tensor, (q, k, v)), dropout_p=0.3,
                                       is_causal=causal)
    np.testing.assert_allclose(d.numpy(), t.numpy(), atol=1e-5)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('hard', [False, True])
def test_gumbel_softmax_draws_torchs_noise(dtype, hard):
    """PyTorch's noise is ``-log`` of ``exponential_()`` over the logits' shape: the same
    argmax (hard: the same one-hot, bit for bit), softmax values to rounding (the softmax
    and float32 log kernels round differently), and the stream left in step."""
    logits = np.random.default_rng(0).standard_normal((4, 37)).astype(dtype)

    def run(lib):
        y = lib.nn.functional.gumbel_softmax(lib.tensor(logits), tau=0.5, hard=hard)
        return y, lib.rand(5)

    torch.manual_seed(11)
    ty, tnext = run(torch)
    dg.manual_seed(11)
    dy, dnext = run(dg)
    assert_same(tnext, dnext)
    np.testing.assert_allclose(_array(dy), _array(ty), rtol=1e-5, atol=1e-6)
    assert np.array_equal(_array(dy).argmax(-1), _array(ty).argmax(-1))
    if hard:
        assert_same(ty, dy)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('n,shape', [(2, (2, 3, 11, 9)), (2, (3, 11, 9)),
                                     (3, (2, 2, 9, 8, 10)), (3, (2, 9, 8, 10))])
def test_fractional_max_pool_draws_torchs_windows(dtype, n, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)

    def run(lib):
        pool = getattr(lib.nn.functional, f'fractional_max_pool{n}d')
        out, idx = pool(lib.tensor(x), 2, output_ratio=(0.5,) * n, return_indices=True)
        return out, idx, lib.rand(3)

    both(run, seed=7)
