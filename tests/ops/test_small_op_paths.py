"""The per-token ops of a sampling loop on their short paths: ``multinomial`` with its native
kernels (``dynagrad/native/random.py``) and with NumPy's, ``arange``'s fast path for int
bounds, ``cat``'s one-pass checks.

multinomial runs three ways after the same seed: dynagrad with the native kernels, with the
NumPy kernels, and torch; the samples must be torch's exactly, the stream read on after
them (``rand``) must be torch's too, and both kernel modes must leave the generator in the
same state. The draws start at several positions of the twister's 624-word block, so that
a 64-bit draw straddles a generation step.
"""
import numpy as np
import pytest
import torch

import dynagrad
from native_support import MODES, NUMBA_MISSING, kernels_counted

KERNELS = ('multinomial_race', 'multinomial_with_replacement')
# words drawn before: none, an odd position, the last word of a block, a later block
BEFORE = [0, 1, 623, 1001]


def _probabilities(shape, dtype, seed, zeros):
    p = np.random.default_rng(seed).random(shape).astype(dtype)
    if zeros:
        p[..., ::3] = 0        # categories that must never be drawn
    return p


def _three_ways(p, num_samples, replacement, before, seed=11, generator=False):
    """Samples and the 64 uniforms after them: native kernels, NumPy kernels, torch; the two
    dynagrad generator states; the native kernels' call counts."""
    got, states = {}, {}
    for mode in ('native', 'numpy'):
        if mode == 'native' and NUMBA_MISSING is not None:
            continue
        with kernels_counted(mode, KERNELS) as calls:
            g = dynagrad.Generator().manual_seed(seed) if generator else None
            if not generator:
                dynagrad.manual_seed(seed)
            dynagrad.rand(before, generator=g)
            out = dynagrad.multinomial(dynagrad.tensor(p), num_samples, replacement,
                                       generator=g).numpy()
            got[mode] = (out, dynagrad.rand(64, generator=g).numpy())
            states[mode] = (g or dynagrad.default_generator).get_state().numpy()
        if mode == 'native':
            native_calls = calls
    g = torch.Generator().manual_seed(seed)
    torch.rand(before, generator=g)
    out = torch.multinomial(torch.tensor(p), num_samples, replacement, generator=g).numpy()
    got['torch'] = (out, torch.rand(64, generator=g).numpy())
    return got, states, native_calls if 'native' in got else None


def _assert_torch(got, states):
    want, after = got['torch']
    for mode in ('native', 'numpy'):
        if mode not in got:
            continue
        out, stream = got[mode]
        assert out.dtype == np.int64 and out.shape == want.shape, mode
        assert np.array_equal(out, want), f'{mode}: samples differ from torch'
        assert stream.tobytes() == after.tobytes(), f'{mode}: the stream after differs'
    if len(states) == 2:
        assert np.array_equal(states['native'], states['numpy']), 'generator states differ'


def _as_torch(run, errors):
    """``run(dynagrad)`` and ``run(torch)``: None where torch raised one of ``errors`` and
    dynagrad raised the same type, else the pair of results."""
    def outcome(L):
        try:
            return run(L)
        except errors as e:
            return type(e)
    a, b = outcome(dynagrad), outcome(torch)
    if isinstance(b, type):
        assert a is b
        return None
    return a, b


CASES = [   # (shape, num_samples, replacement)
    ((1, 65), 1, False), ((65,), 1, False), ((1, 65), 1, True), ((4, 65), 1, False),
    ((3, 7), 3, False), ((3, 7), 7, False), ((2, 10), 5, True), ((10,), 20, True),
    ((2, 1000), 4, False), ((1, 1), 1, False), ((1, 1), 3, True), ((20, 9), 5, True),
]


def test_search_row_by_row_is_the_vectorised_search(monkeypatch):
    """The NumPy path's two searches for sampling with replacement (searchsorted row by
    row for few rows, a binary search over all rows at once) agree, ties and ends too."""
    from dynagrad.ops import random as dg_random
    rng = np.random.default_rng(0)
    p = rng.integers(0, 3, (12, 40)).astype(np.float64)
    p[:, 0] = 1
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    cdf[:, -1] = 1.0
    u = np.concatenate([rng.random((12, 50)), cdf[:, ::4], np.zeros((12, 1))], axis=1)
    few = dg_random._first_at_least(cdf, u)
    monkeypatch.setattr(dg_random, '_SEARCH_ROW_BY_ROW', 0)
    many = dg_random._first_at_least(cdf, u)
    assert few.dtype == many.dtype == np.int64
    assert np.array_equal(few, many)
    want = np.array([[np.flatnonzero(cdf[r] >= x)[0] for x in u[r]] for r in range(12)])
    assert np.array_equal(few, want)


def _with_zeros(cases):
    """Each case without and with zero-probability categories (every third), where that
    makes a case: a single category cannot be zero, and without replacement no more
    samples than nonzero categories (beyond, the zero categories are drawn after the
    others, and torch orders those ties by its topk where dynagrad takes index order)."""
    for shape, num_samples, replacement in cases:
        yield shape, num_samples, replacement, False
        nonzero = shape[-1] - len(range(0, shape[-1], 3))
        if shape[-1] > 1 and (replacement or num_samples <= nonzero):
            yield shape, num_samples, replacement, True


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shape,num_samples,replacement,zeros', list(_with_zeros(CASES)))
@pytest.mark.parametrize('before', BEFORE)
def test_multinomial_matches_torch_bit_for_bit(shape, num_samples, replacement, dtype,
                                               zeros, before):
    p = _probabilities(shape, dtype, before + shape[-1], zeros)
    got, states, calls = _three_ways(p, num_samples, replacement, before)
    _assert_torch(got, states)
    if calls is not None:
        name = KERNELS[1] if replacement and num_samples > 1 else KERNELS[0]
        assert calls == {name: 1}
    if zeros:
        for mode in got:
            assert not np.isin(got[mode][0], np.arange(0, shape[-1], 3)).any()


@pytest.mark.parametrize('replacement', [False, True])
def test_multinomial_own_generator_and_many_calls(replacement):
    """A sampling loop: 700 calls in a row (the draws cross generation steps) from a
    Generator of its own."""
    p = _probabilities((1, 65), 'float32', 3, False)
    results = {}
    modes = ('numpy',) if NUMBA_MISSING is not None else ('native', 'numpy')
    for mode in modes:
        with kernels_counted(mode, KERNELS):
            g = dynagrad.Generator().manual_seed(5)
            t = dynagrad.tensor(p)
            results[mode] = np.concatenate(
                [dynagrad.multinomial(t, 2, replacement, generator=g).numpy()
                 for _ in range(700)])
            results[mode + ' state'] = g.get_state().numpy()
    g = torch.Generator().manual_seed(5)
    t = torch.tensor(p)
    want = np.concatenate([torch.multinomial(t, 2, replacement, generator=g).numpy()
                           for _ in range(700)])
    assert np.array_equal(results['numpy'], want)
    if 'native' in results:
        assert np.array_equal(results['native'], want)
        assert np.array_equal(results['native state'], results['numpy state'])


@pytest.mark.parametrize('kernels', MODES, indirect=True)
def test_multinomial_half_and_strided_inputs(kernels):
    """float16 keeps the NumPy path (the kernels take float32/64); a transposed p is read
    in its logical order."""
    for make in (lambda L: L.tensor([[1., 2, 3], [0, 5, 1]], dtype=L.float16),
                 lambda L: L.tensor(np.arange(1., 13.).reshape(3, 4).astype(np.float32)).mT):
        for n, replacement in ((1, False), (2, False), (4, True)):
            dynagrad.manual_seed(2)
            torch.manual_seed(2)
            a = dynagrad.multinomial(make(dynagrad), n, replacement).numpy()
            b = torch.multinomial(make(torch), n, replacement).numpy()
            assert np.array_equal(a, b)
            assert np.array_equal(dynagrad.rand(8).numpy(), torch.rand(8).numpy())


ERRORS = {
    'nan': [1., float('nan')], 'inf': [1., float('inf')], '-inf': [float('-inf'), 1.],
    'negative': [1., -0.5], 'zeros': [0., 0.], 'zero_row': [[1., 2], [0, 0]],
    'nan_row': [[1., 2], [0, float('nan')]], 'negative_zero': [[0., -0.0]],
}


@pytest.mark.parametrize('kernels', MODES, indirect=True)
@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
@pytest.mark.parametrize('case', sorted(ERRORS))
def test_multinomial_errors_as_torch(kernels, dtype, case):
    def run(L):
        L.manual_seed(0)
        try:
            L.multinomial(L.tensor(ERRORS[case], dtype=getattr(L, dtype)), 1)
        except RuntimeError as e:
            return str(e)
        return None
    dg, th = run(dynagrad), run(torch)
    assert th is not None and dg is not None
    for words in ('inf', 'sum of probabilities'):
        assert (words in dg) == (words in th), (dg, th)
    # a refused call draws nothing
    torch.manual_seed(0)
    assert np.array_equal(dynagrad.rand(4).numpy(), torch.rand(4).numpy())


ARANGE = [(0, 64), (64,), (0,), (5, 5), (10, 0, -3), (0, 10, 3), (-7, 5, 2), (3, -4, -1),
          (2 ** 62 - 5, 2 ** 62 - 1), (-2 ** 63, -2 ** 63 + 3), (0, 5, 0), (0, -1), (5, 0),
          (0, 5, -1), (True, 4), (0, 5, 2.5), (np.int64(3), 9)]


@pytest.mark.parametrize('dtype', [None, 'long', 'int32', 'float32', 'float64'])
@pytest.mark.parametrize('args', ARANGE, ids=str)
def test_arange_as_torch(args, dtype):
    def run(L):
        return L.arange(*args, **({} if dtype is None else {'dtype': getattr(L, dtype)}))
    outcome = _as_torch(run, (RuntimeError, ValueError, TypeError))
    if outcome is None:
        return
    a, b = outcome
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1]
    assert a.device.type == 'cpu' and not a.requires_grad
    assert np.array_equal(a.numpy(), b.numpy())


def test_arange_keywords_take_the_full_path():
    t = dynagrad.arange(0, 4, requires_grad=True, dtype=dynagrad.float32)
    assert t.requires_grad and t.dtype == dynagrad.float32
    out = dynagrad.empty(3, dtype=dynagrad.long)
    dynagrad.arange(3, out=out)
    assert out.tolist() == [0, 1, 2]
    assert dynagrad.arange(3, device='cpu').tolist() == [0, 1, 2]


CAT = [
    [(1, 64), (1, 1)], [(2, 3), (2, 0), (2, 4)], [(0,), (2, 3)], [(3,), (0,), (2,)],
    [(0,), (0,)], [(2, 3), (3, 3)], [(2, 3), (2, 4, 1)], [(2, 3), (2,)], [(2, 3), ()],
]


@pytest.mark.parametrize('dim', [0, 1, -1, -3, 2])
@pytest.mark.parametrize('shapes', CAT, ids=str)
def test_cat_as_torch(shapes, dim):
    arrays = [np.arange(int(np.prod(s)), dtype=np.int64).reshape(s) + 10 * k
              for k, s in enumerate(shapes)]

    outcome = _as_torch(lambda L: L.cat(tuple(L.tensor(a) for a in arrays), dim=dim),
                        (RuntimeError, IndexError, ValueError))
    if outcome is None:
        return
    a, b = outcome
    assert a.dtype == dynagrad.int64 and a.shape == tuple(b.shape)
    assert np.array_equal(a.numpy(), b.numpy())


def test_cat_gradients_and_promotion():
    x = dynagrad.ones(2, 3, requires_grad=True)
    y = dynagrad.ones(2, 1, dtype=dynagrad.float64, requires_grad=True)
    out = dynagrad.cat((x, y), dim=1)
    assert out.dtype == dynagrad.float64 and type(out.grad_fn).__name__ == 'CatBackward0'
    (out * dynagrad.arange(4.)).sum().backward()
    assert x.grad.tolist() == [[0, 1, 2]] * 2 and y.grad.tolist() == [[3]] * 2


@pytest.mark.skipif(NUMBA_MISSING is not None, reason=f'numba does not load: {NUMBA_MISSING}')
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_race_keys_are_the_numpy_paths_bit_for_bit(dtype):
    """Every key ``p / E`` of 50,000 draws (not only the winners): the kernel's log1p is
    the C library's, as the NumPy path's is, and E is rounded to p's dtype before the
    division as there."""
    from dynagrad import native
    from dynagrad.ops import random as dg_random
    p = _probabilities((50, 1000), dtype, 1, True)
    g = dynagrad.Generator().manual_seed(3)
    dynagrad.rand(311, generator=g)
    reference = g.clone_state()
    keys = np.empty_like(p)
    winners = np.empty(50, np.int64)
    assert dg_random.native_draw(g, native.load('multinomial_race'), p, keys, winners) \
        is not False
    exponentials = dg_random._exponential(reference, p.shape, 1.0)
    want = p / exponentials.astype(dtype)
    assert keys.tobytes() == want.tobytes()
    assert np.array_equal(winners, np.argmax(want, axis=1))
    assert np.array_equal(g.get_state().numpy(), reference.get_state().numpy())
