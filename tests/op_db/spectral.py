"""Rows for ``dynagrad.fft`` (and ``stft``/``istft``): the table's arrays are real, so a
complex result is compared through ``view_as_real`` and a complex input is made by
``view_as_complex`` of real pairs (both views, so the gradients checked are the
transforms' own). tests/ops/test_fft.py checks complex tensors directly."""
from ._core import *  # noqa: F401,F403
from .linalg import composite


def _fft(name, complex_in=False, complex_out=True):
    def fn(lib, x, *args, **kwargs):
        if complex_in:
            x = lib.view_as_complex(x)
        out = getattr(lib.fft, name)(x, *args, **kwargs)
        return lib.view_as_real(out.resolve_conj()) if complex_out else out
    fn.__name__ = name
    return fn


def _pairs(rng, *shape):
    """Real arrays of shape ``shape + (2,)``: complex numbers as (real, imaginary)."""
    return R(rng, *shape, 2)


def real_in_samples(rng):
    return [Sample((R(rng, 3, 8),), desc='2d'),
            Sample((R(rng, 5),), desc='1d'),
            Sample((R(rng, 3, 6), ), {'n': 10, 'dim': 0, 'norm': 'ortho'}, desc='padded_dim0'),
            Sample((R(rng, 2, 7).astype(np.float64),), {'n': 4, 'norm': 'forward'},
                   desc='f64_trimmed'),
            Sample((nc(R(rng, 8, 3), TR),), desc='noncontig')]


def real_in_nd_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 4),), {'dim': (0, 2)}, desc='dims'),
            Sample((R(rng, 3, 4).astype(np.float64),), {'s': (4, 6), 'norm': 'ortho'},
                   desc='f64_s')]


def complex_in_samples(rng):
    return [Sample((_pairs(rng, 3, 5),), desc='2d'),
            Sample((_pairs(rng, 6),), {'n': 8, 'norm': 'ortho'}, desc='1d_padded'),
            Sample((_pairs(rng, 4, 3).astype(np.float64),), {'dim': 0, 'norm': 'forward'},
                   desc='f64_dim0')]


def complex_in_nd_samples(rng):
    return [Sample((_pairs(rng, 3, 4),), desc='2d'),
            Sample((_pairs(rng, 2, 3, 4).astype(np.float64),), {'s': (3, 6)},
                   desc='f64_s')]


def shift_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 5),), {'dim': (0, 2)}, desc='dims'),
            Sample((R(rng, 5).astype(np.float64),), {'dim': 0}, desc='f64')]


def stft_samples(rng):
    return [Sample((R(rng, 40), 8), {'window': np.hanning(8).astype(np.float32),
                                     'return_complex': True}, desc='hann'),
            Sample((R(rng, 2, 30).astype(np.float64), 8),
                   {'hop_length': 3, 'window': np.hanning(6) + 0.1, 'win_length': 6,
                    'center': False, 'return_complex': True}, desc='f64_batch')]


def istft_samples(rng):
    return [Sample((_pairs(rng, 5, 9), 8), {'window': np.hanning(8).astype(np.float32) + 0.1},
                   desc='hann'),
            Sample((_pairs(rng, 2, 5, 7).astype(np.float64), 8),
                   {'window': np.hanning(8) + 0.1, 'length': 20}, desc='f64_length')]


def _stft(lib, x, n_fft, **kwargs):
    return lib.view_as_real(lib.stft(x, n_fft, **kwargs))


def _istft(lib, x, n_fft, **kwargs):
    return lib.istft(lib.view_as_complex(x), n_fft, **kwargs)


OPS = [
    OpInfo('fft.fft', _fft('fft'), real_in_samples),
    OpInfo('fft.ifft', _fft('ifft', complex_in=True), complex_in_samples),
    OpInfo('fft.fft_complex', _fft('fft', complex_in=True), complex_in_samples),
    OpInfo('fft.rfft', _fft('rfft'), real_in_samples),
    OpInfo('fft.irfft', _fft('irfft', complex_in=True, complex_out=False), complex_in_samples),
    OpInfo('fft.hfft', _fft('hfft', complex_in=True, complex_out=False), complex_in_samples),
    OpInfo('fft.ihfft', _fft('ihfft'), real_in_samples),
    OpInfo('fft.fft2', _fft('fft2'), real_in_nd_samples),
    OpInfo('fft.fftn', _fft('fftn', complex_in=True), complex_in_nd_samples),
    OpInfo('fft.ifftn', _fft('ifftn', complex_in=True), complex_in_nd_samples),
    OpInfo('fft.rfft2', _fft('rfft2'), real_in_nd_samples),
    OpInfo('fft.rfftn', _fft('rfftn'), real_in_nd_samples),
    OpInfo('fft.irfftn', _fft('irfftn', complex_in=True, complex_out=False),
           complex_in_nd_samples),
    OpInfo('fft.hfftn', _fft('hfftn', complex_in=True, complex_out=False),
           complex_in_nd_samples),
    OpInfo('fft.ihfftn', _fft('ihfftn'), real_in_nd_samples),
    OpInfo('fft.fftshift', _fft('fftshift', complex_out=False), shift_samples),
    OpInfo('fft.ifftshift', _fft('ifftshift', complex_out=False), shift_samples),
    OpInfo('stft', _stft, composite(stft_samples)),
    OpInfo('istft', _istft, composite(istft_samples)),
]
