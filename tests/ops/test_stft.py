"""stft and istft against torch: spectra, round trips, gradients in the signal and in the
window, PyTorch's warnings and errors."""
import warnings
import zlib

import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')


def _window(L):
    return L.tensor(np.hanning(12) + 0.1, requires_grad=True)


CASES = [
    ('basic', lambda L, x, w: L.stft(x, 16, return_complex=True)),
    ('window', lambda L, x, w: L.stft(x, 16, hop_length=5, win_length=12, window=w,
                                      return_complex=True)),
    ('no_center_normalized', lambda L, x, w: L.stft(x[0], 16, center=False, normalized=True,
                                                    return_complex=True)),
    ('constant_two_sided', lambda L, x, w: L.stft(x, 16, pad_mode='constant', onesided=False,
                                                  return_complex=True)),
    ('replicate', lambda L, x, w: L.stft(x, 10, pad_mode='replicate', return_complex=True)),
    ('circular', lambda L, x, w: L.stft(x, 10, pad_mode='circular', return_complex=True)),
    ('real_view', lambda L, x, w: L.stft(x, 16, return_complex=False)),
    ('method', lambda L, x, w: x.stft(8, window=L.hann_window(8, dtype=L.float64), return_complex=True)),
    ('round_trip', lambda L, x, w: L.istft(
        L.stft(x, 16, hop_length=4, win_length=12, window=w, return_complex=True), 16,
        hop_length=4, win_length=12, window=w)),
    ('round_trip_length', lambda L, x, w: L.istft(
        L.stft(x, 16, window=L.hann_window(16, dtype=L.float64), return_complex=True), 16,
        window=L.hann_window(16, dtype=L.float64), length=45)),
    ('round_trip_no_center', lambda L, x, w: L.istft(
        L.stft(x, 16, window=L.hann_window(16, dtype=L.float64) + 0.1, center=False, normalized=True,
               return_complex=True), 16, window=L.hann_window(16, dtype=L.float64) + 0.1, center=False,
        normalized=True)),
    ('istft_two_sided', lambda L, x, w: L.istft(
        L.stft(x, 16, window=L.hann_window(16, dtype=L.float64), onesided=False, return_complex=True), 16,
        window=L.hann_window(16, dtype=L.float64), onesided=False)),
]


def _run(L, fn, x, w_values):
    xt = L.tensor(x, requires_grad=True)
    wt = L.tensor(w_values, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out = fn(L, xt, wt)
    magnitude = out.abs() if out.is_complex() else out
    weights = L.tensor(np.cos(np.arange(magnitude.numel())).reshape(tuple(magnitude.shape)))
    gx, gw = L.autograd.grad((magnitude * weights).sum(), (xt, wt), allow_unused=True)
    return out.detach().numpy(), gx.numpy(), None if gw is None else gw.numpy()


@pytest.mark.parametrize('name,fn', CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x, w = rng.standard_normal((2, 50)), np.hanning(12) + 0.1
    ours, theirs = _run(dynagrad, fn, x, w), _run(torch, fn, x, w)
    assert ours[0].shape == theirs[0].shape
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-8)
    assert (ours[2] is None) == (theirs[2] is None)
    if ours[2] is not None:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-8, atol=1e-8)


def test_round_trip_recovers_the_signal_and_gradcheck():
    x = dynagrad.tensor(np.random.default_rng(0).standard_normal(40), requires_grad=True)
    w = dynagrad.hann_window(8, dtype=dynagrad.float64)
    y = dynagrad.istft(dynagrad.stft(x, 8, window=w, return_complex=True), 8, window=w,
                       length=40)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), atol=1e-12)
    short = dynagrad.tensor(np.random.default_rng(1).standard_normal(12), requires_grad=True)
    assert dynagrad.autograd.gradcheck(
        lambda t: dynagrad.stft(t, 4, window=dynagrad.hann_window(4, dtype=dynagrad.float64),
                                return_complex=True).abs(), (short,))


def test_warnings_match_torch():
    # (torch warns once per process, so only dynagrad is checked, with torch's texts)
    with pytest.warns(UserWarning, match='A window was not provided. A rectangular window '
                                         'will be applied'):
        dynagrad.stft(dynagrad.ones(20), 8, return_complex=True)
    with pytest.warns(UserWarning, match='stft with return_complex=False is deprecated'):
        dynagrad.stft(dynagrad.ones(20), 8, window=dynagrad.ones(8), return_complex=False)


ERRORS = [
    ('return_complex', lambda L: L.stft(L.ones(2, 50), 16, window=L.ones(16))),
    ('hop', lambda L: L.stft(L.ones(2, 50), 16, hop_length=0, window=L.ones(16),
                             return_complex=True)),
    ('win_length', lambda L: L.stft(L.ones(2, 50), 16, win_length=20, return_complex=True)),
    ('three_dims', lambda L: L.stft(L.ones(2, 2, 50), 16, window=L.ones(16),
                                    return_complex=True)),
    ('window_size', lambda L: L.stft(L.ones(2, 50), 16, window=L.ones(8),
                                     return_complex=True)),
    ('pad_mode', lambda L: L.stft(L.ones(2, 50), 16, window=L.ones(16), pad_mode='bad',
                                  return_complex=True)),
    ('pad_too_long', lambda L: L.stft(L.ones(2, 50), 100, window=L.ones(100),
                                      return_complex=True)),
    ('istft_real_input', lambda L: L.istft(L.ones(9, 5), 16)),
    ('istft_zero_window', lambda L: L.istft(L.ones(9, 5, dtype=L.complex64), 16,
                                            window=L.zeros(16))),
]


@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(Exception) as theirs:
            fn(torch)
        with pytest.raises(type(theirs.value)) as ours:
            fn(dynagrad)
    expected = str(theirs.value).split(' (Triggered')[0]
    # after PyTorch's call prefix ('stft(torch.FloatTensor[...], n_fft=...) : ')
    searchable = expected.split(') : ')[-1].split('\n')[0]
    if name == 'istft_zero_window':     # torch prints a boolean tensor where its minimum goes
        searchable = 'window overlap add min'
    assert searchable in str(ours.value), (str(ours.value), expected)
