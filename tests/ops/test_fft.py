"""dynagrad.fft against torch.fft: one table of transforms, each row checked for values,
result dtype, node name and gradients (a random cotangent) at float32 and float64, with
gradcheck and gradgradcheck on float64/complex128; then frequencies, shifts and errors."""
import zlib

import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')

R, C = 'r', 'c'
ROWS = [
    ('fft', lambda L, a: L.fft.fft(a), R),
    ('fft_complex_n_ortho', lambda L, a: L.fft.fft(a, n=8, norm='ortho'), C),
    ('fft_trim_dim0', lambda L, a: L.fft.fft(a, n=3, dim=0), C),
    ('ifft', lambda L, a: L.fft.ifft(a, n=3, dim=0), C),
    ('ifft_real_forward', lambda L, a: L.fft.ifft(a, norm='forward'), R),
    ('rfft', lambda L, a: L.fft.rfft(a), R),
    ('rfft_n', lambda L, a: L.fft.rfft(a, n=7), R),
    ('irfft', lambda L, a: L.fft.irfft(a), C),
    ('irfft_odd_forward', lambda L, a: L.fft.irfft(a, n=7, norm='forward'), C),
    ('irfft_padded', lambda L, a: L.fft.irfft(a, n=14, dim=0), C),
    ('irfft_real_input', lambda L, a: L.fft.irfft(a, n=5), R),
    ('hfft', lambda L, a: L.fft.hfft(a), C),
    ('hfft_ortho', lambda L, a: L.fft.hfft(a, n=9, norm='ortho'), C),
    ('ihfft', lambda L, a: L.fft.ihfft(a), R),
    ('fft2', lambda L, a: L.fft.fft2(a, s=(5, 3)), C),
    ('ifft2', lambda L, a: L.fft.ifft2(a, norm='ortho'), C),
    ('fftn_dims', lambda L, a: L.fft.fftn(a, dim=(1, 0)), R),
    ('ifftn', lambda L, a: L.fft.ifftn(a, s=(3, -1)), C),
    ('rfft2', lambda L, a: L.fft.rfft2(a), R),
    ('irfft2', lambda L, a: L.fft.irfft2(a, s=(4, 9)), C),
    ('rfftn', lambda L, a: L.fft.rfftn(a, norm='ortho'), R),
    ('irfftn', lambda L, a: L.fft.irfftn(a), C),
    ('hfftn', lambda L, a: L.fft.hfftn(a), C),
    ('hfft2', lambda L, a: L.fft.hfft2(a, s=(3, 5)), C),
    ('ihfftn', lambda L, a: L.fft.ihfftn(a), R),
    ('ihfft2', lambda L, a: L.fft.ihfft2(a, s=(2, 4)), R),
    ('fftshift', lambda L, a: L.fft.fftshift(a) * 2, R),
    ('ifftshift_dim', lambda L, a: L.fft.ifftshift(a, dim=1) * 2, C),
    ('spectral_loss', lambda L, a: L.fft.rfft(a).abs().pow(2).sum(), R),
]
# torch's node differs where it composes differently (same values and gradients)
NODE_DIFFERS = {'ihfftn', 'ihfft2', 'ifft_real_forward', 'fftn_dims'}


def _array(kind, rng, shape=(4, 6)):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if kind == C else x


def _dtype(kind, precision):
    if kind == C:
        return np.complex64 if precision == 'single' else np.complex128
    return np.float32 if precision == 'single' else np.float64


def _name(d):
    return str(d).split('.')[-1]


@pytest.mark.parametrize('precision', ['single', 'double'])
@pytest.mark.parametrize('row', ROWS, ids=[r[0] for r in ROWS])
def test_transform_matches_torch(row, precision):
    name, fn, kind = row
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    a = _array(kind, rng).astype(_dtype(kind, precision))
    ours = dynagrad.tensor(a, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    out, expected = fn(dynagrad, ours), fn(torch, theirs)
    assert _name(out.dtype) == _name(expected.dtype)
    if name not in NODE_DIFFERS:
        assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__
    tol = dict(rtol=1e-4, atol=1e-4) if precision == 'single' else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.detach().resolve_conj().numpy(),
                               expected.detach().resolve_conj().numpy(), **tol)
    v = _array(C if expected.is_complex() else R, rng, tuple(expected.shape))
    v = v.astype(expected.detach().resolve_conj().numpy().dtype)
    g, = dynagrad.autograd.grad(out, ours, dynagrad.tensor(v))
    e, = torch.autograd.grad(expected, theirs, torch.tensor(v))
    assert _name(g.dtype) == _name(e.dtype)
    np.testing.assert_allclose(g.resolve_conj().numpy(), e.resolve_conj().numpy(), **tol)


@pytest.mark.parametrize('row', ROWS, ids=[r[0] for r in ROWS])
def test_gradcheck_and_gradgradcheck(row):
    name, fn, kind = row
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = dynagrad.tensor(_array(kind, rng, (3, 4)), requires_grad=True)
    assert dynagrad.autograd.gradcheck(lambda t: fn(dynagrad, t), (x,))
    assert dynagrad.autograd.gradgradcheck(lambda t: fn(dynagrad, t), (x,))


def test_forward_mode_is_the_transform_itself():
    import dynagrad.autograd.forward_ad as fwad
    x, t = np.random.default_rng(0).standard_normal((2, 4, 6))
    with fwad.dual_level():
        y = dynagrad.fft.rfft(fwad.make_dual(dynagrad.tensor(x), dynagrad.tensor(t)))
        tangent = fwad.unpack_dual(y).tangent
    np.testing.assert_allclose(tangent.numpy(), np.fft.rfft(t), rtol=1e-12)


@pytest.mark.parametrize('expr', [
    'fft.fftfreq(5)', 'fft.fftfreq(4, d=0.1, dtype=lib.float64)', 'fft.rfftfreq(6, d=0.5)',
    'fft.rfftfreq(7)', 'fft.fftshift(lib.arange(5))', 'fft.ifftshift(lib.arange(6).reshape(2, 3))',
    'fft.fftshift(lib.arange(12).reshape(3, 4), dim=(0,))', 'fft.fft(lib.arange(4))',
    'fft.rfft(lib.tensor([1, 2, 3], dtype=lib.int32))',
])
def test_frequencies_shifts_and_promotion_match_torch(expr):
    ours = eval('lib.' + expr, {'lib': dynagrad})
    theirs = eval('lib.' + expr, {'lib': torch})
    assert _name(ours.dtype) == _name(theirs.dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


ERRORS = [
    ('half', lambda L: L.fft.fft(L.ones(4, dtype=L.float16))),
    ('norm', lambda L: L.fft.fft(L.ones(4), norm='bad')),
    ('n_zero', lambda L: L.fft.fft(L.ones(4), n=0)),
    ('dim', lambda L: L.fft.fft(L.ones(4), dim=3)),
    ('irfft_one_point', lambda L: L.fft.irfft(L.ones(1, dtype=L.complex64))),
    ('fft2_of_a_vector', lambda L: L.fft.fft2(L.ones(3))),
    ('s_too_long', lambda L: L.fft.fftn(L.ones(4), s=(2, 3))),
    ('rfft_complex', lambda L: L.fft.rfft(L.ones(3, dtype=L.complex64))),
    ('ihfft_complex', lambda L: L.fft.ihfft(L.ones(3, dtype=L.complex64))),
]


@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(dynagrad)
    assert str(theirs.value).split(' (Triggered')[0] in str(ours.value)
