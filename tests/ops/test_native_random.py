"""The native dropout and Bernoulli-mask kernels (``dynagrad/native/random.py``): the same
masks as the NumPy path and as PyTorch's CPU generator, bit for bit, and the generator
left where both leave it.

Each case runs three ways after the same seed: dynagrad with the native kernels, dynagrad
with the NumPy kernels, and torch. The draws start at several positions of the Mersenne
Twister's 624-word block (float32 ``rand`` takes one word per element, so an odd count
leaves the next 64-bit draw straddling a generation step), and the stream is read on after
them (``rand``) to show that it continued where PyTorch's did.
"""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
import dynagrad.ops.random as dg_random
from native_support import kernels_counted, needs_numba

pytestmark = needs_numba

DTYPES = ['float32', 'float64']
# sizes that are not multiples of 4, of 312 (draws per block) or of 624
SIZES = [1, 7, 311, 313, 1001, 12 * 64 * 5 + 3]
# words drawn before: none, one (odd position), 623 (the first draw straddles a block),
# then a later odd position
BEFORE = [0, 1, 623, 1001]


def kernels(mode):
    """Run with ``mode``'s kernels; yields the count of each random kernel's calls."""
    return kernels_counted(mode, ('dropout', 'bernoulli_mask'))


def _three_ways(run, before=0, seed=7):
    """``run(lib)``'s arrays with native kernels, NumPy kernels and torch, each followed by
    100 float32 uniforms (the stream after it); and the native kernels' call counts."""
    got = {}
    for mode in ('native', 'numpy'):
        with kernels(mode) as calls:
            dynagrad.manual_seed(seed)
            dynagrad.rand(before)
            values = [v.detach().numpy() for v in run(dynagrad)]
            got[mode] = (values + [dynagrad.rand(100).numpy()],
                         dynagrad.get_rng_state().numpy())
        if mode == 'native':
            native_calls = calls
    torch.manual_seed(seed)
    torch.rand(before)
    values = [v.detach().numpy() for v in run(torch)]
    got['torch'] = values + [torch.rand(100).numpy()]
    return got, native_calls


def _assert_same(got):
    native_values, native_state = got['native']
    numpy_values, numpy_state = got['numpy']
    for k, (a, b, c) in enumerate(zip(native_values, numpy_values, got['torch'])):
        assert a.dtype == b.dtype == c.dtype
        assert a.tobytes() == b.tobytes(), f'value {k}: native differs from the NumPy path'
        assert a.tobytes() == c.tobytes(), f'value {k}: native differs from torch'
    assert np.array_equal(native_state, numpy_state), 'generator states differ'


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('p', [0.1, 0.5, 0.9])
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('before', BEFORE)
def test_dropout_three_calls(dtype, p, n, before):
    """F.dropout and nn.Dropout, three calls in a row: outputs, then the stream after."""
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)

    def run(lib):
        t = lib.tensor(x)
        return [lib.nn.functional.dropout(t, p), lib.nn.Dropout(p)(t),
                lib.nn.functional.dropout(t.reshape(1, n), p)]
    got, calls = _three_ways(run, before)
    _assert_same(got)
    assert calls == {'dropout': 3}


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('p', [0.1, 0.5, 0.9])
def test_dropout_gradient(dtype, p):
    """Forward and the input's gradient (the same noise) on a (12, 64, 33) input."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 64, 33)).astype(dtype)
    g = rng.standard_normal((12, 64, 33)).astype(dtype)

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.dropout(t, p)
        y.backward(lib.tensor(g))
        return [y, t.grad]
    got, calls = _three_ways(run, before=311)
    _assert_same(got)
    assert calls == {'dropout': 1}


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('before', BEFORE)
def test_bernoulli_scalar_p_and_masks(dtype, n, before):
    """bernoulli_(p), dropout1d's channel masks, alpha dropout's and in-place dropout's
    masks: the mask kernel."""
    x = np.random.default_rng(n).standard_normal((n, 2, 3)).astype(dtype)

    def run(lib):
        f = lib.nn.functional
        return [lib.empty(n, dtype=getattr(lib, dtype)).bernoulli_(0.3),
                f.dropout1d(lib.tensor(x), 0.4),
                f.alpha_dropout(lib.tensor(x), 0.2, True),
                f.dropout(lib.tensor(x), 0.6, inplace=True)]
    got, calls = _three_ways(run, before)
    _assert_same(got)
    assert calls == {'bernoulli_mask': 4}


def test_noncontiguous_input_takes_the_mask_kernel():
    """A transposed input: its mask drawn by the mask kernel in the NumPy path's order,
    the product by NumPy (so the output's layout is the NumPy path's too)."""
    x = np.random.default_rng(0).standard_normal((40, 31)).astype(np.float32)
    out = {}
    for mode in ('native', 'numpy'):
        with kernels(mode) as calls:
            dynagrad.manual_seed(3)
            t = dynagrad.tensor(x).t()
            y = F.dropout(t, 0.25)
            out[mode] = (y.numpy(), y.stride(), dynagrad.get_rng_state().numpy())
        if mode == 'native':
            assert calls == {'bernoulli_mask': 1}
    assert out['native'][0].tobytes() == out['numpy'][0].tobytes()
    assert out['native'][1] == out['numpy'][1]
    assert np.array_equal(out['native'][2], out['numpy'][2])


def test_state_restored_and_generators():
    """set_rng_state after native draws repeats them; a Generator object's own stream
    (generator=) reaches the kernel with its own state, the default one untouched."""
    x = dynagrad.ones(5000)
    with kernels('native') as calls:
        dynagrad.manual_seed(1)
        state = dynagrad.get_rng_state()
        a = F.dropout(x, 0.3).numpy()
        dynagrad.set_rng_state(state)
        b = F.dropout(x, 0.3).numpy()
        assert a.tobytes() == b.tobytes()
        before = dynagrad.get_rng_state().numpy()
        g = dynagrad.Generator().manual_seed(9)
        mine = dynagrad.empty(777, dtype=dynagrad.float64).bernoulli_(0.45, generator=g)
        mine = np.concatenate([mine.numpy(), dynagrad.rand(10, generator=g).numpy()])
        assert np.array_equal(dynagrad.get_rng_state().numpy(), before)
        # a state set on the generator replaces the memory the kernel draws from
        g.set_state(dynagrad.Generator().manual_seed(9).get_state())
        again = dynagrad.empty(777, dtype=dynagrad.float64).bernoulli_(0.45, generator=g)
        assert again.numpy().tobytes() == mine[:777].tobytes()
    assert calls == {'dropout': 2, 'bernoulli_mask': 2}
    tg = torch.Generator().manual_seed(9)
    expect = np.concatenate([torch.empty(777, dtype=torch.float64).bernoulli_(
        0.45, generator=tg).numpy(), torch.rand(10, generator=tg).numpy()])
    assert mine.tobytes() == expect.tobytes()


def test_unreachable_state_falls_back():
    """Where the twister's memory does not read as 625 words (marked so on the generator),
    the NumPy path draws."""
    with kernels('native') as calls:
        dynagrad.manual_seed(4)
        dg_random.default_generator._bits   # the twister is made at the first draw
        dg_random.default_generator._words = False
        y = F.dropout(dynagrad.ones(1000), 0.5).numpy()
        m = dynagrad.empty(50).bernoulli_(0.5).numpy()
    torch.manual_seed(4)
    assert y.tobytes() == torch.nn.functional.dropout(torch.ones(1000), 0.5).numpy().tobytes()
    assert m.tobytes() == torch.empty(50).bernoulli_(0.5).numpy().tobytes()
    assert calls == {}
    dynagrad.manual_seed(4)
    assert dg_random.default_generator._words is None     # a new bit generator, not marked


def test_the_kernels_draw_from_numpys_state():
    """The words are the generator's live state: NumPy's own draws move them."""
    g = dynagrad.Generator().manual_seed(2)
    words = dg_random.native_draw(g, lambda words: words)
    state = g._bits.state['state']
    assert words.dtype == np.uint32 and words.shape == (625,)
    assert np.array_equal(words[:624], state['key']) and words[624] == state['pos']
    g._bits.random_raw(5)
    assert words[624] == g._bits.state['state']['pos']
    assert dg_random.native_draw(g, lambda words: words) is words


def test_empty_and_edge_probabilities():
    """p = 0 and p = 1 (no draw or no kernel), an empty input: as the NumPy path."""
    for p in (0.0, 1.0):
        with kernels('native') as calls:
            dynagrad.manual_seed(0)
            y = F.dropout(dynagrad.ones(10), p).numpy()
            assert calls == {}
        torch.manual_seed(0)
        assert y.tobytes() == torch.nn.functional.dropout(torch.ones(10), p).numpy().tobytes()
    with kernels('native') as calls:
        assert dynagrad.empty(0).bernoulli_(0.5).shape == (0,)
        assert F.dropout(dynagrad.ones(0, 3), 0.5).shape == (0, 3)
    assert calls == {}
