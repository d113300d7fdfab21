"""Discrete Fourier transforms (``dynagrad.fft``, PyTorch's ``torch.fft``) on NumPy's
pocketfft, with gradients.

Three ops, as PyTorch has them (and named as its nodes are): complex to complex
(``FftC2C``), real to complex (``FftR2C``, the whole spectrum or its one-sided half) and
complex to real (``FftC2R``, from a one-sided half spectrum). Every public function is one of
them, sometimes conjugated (``hfft``, ``ihfft``).

The transforms are linear, so each gradient is the adjoint transform. The adjoint of the
unnormalised DFT is its inverse times n, which is the inverse transform with the
normalisation mode swapped ('backward' <-> 'forward', 'ortho' stays): the backward formulas
are the ops themselves, run on the gradient, so higher derivatives come free. Zero-padding
or trimming to ``n``/``s`` is undone on the gradient (trimmed, or padded with zeros).
"""
import warnings

import numpy as np

from .. import _dtype
from ..backend import xp
from ..autograd.function import Op
from ..autograd.autocast import autocast_args, autocast_state
from ..tensor import Tensor, method, wrap
from . import formula as fm
from .shape import _wrap, roll

_SWAP = {'backward': 'forward', 'forward': 'backward', 'ortho': 'ortho'}
_COMPLEX_OF = _dtype.COMPLEX_NUMPY


def _resize(a, shape, dims):
    """``a`` (array or tensor) trimmed or zero-padded at the end of ``dims`` to ``shape``."""
    for d in dims:
        have, want = a.shape[d], shape[d]
        if have > want:
            key = (slice(None),) * d + (slice(0, want),)
            a = a[key]
        elif have < want:
            pad_shape = a.shape[:d] + (want - have,) + a.shape[d + 1:]
            if isinstance(a, Tensor):
                from .creation import zeros
                from .shape import cat
                a = cat([a, zeros(pad_shape, dtype=a.dtype)], d)
            else:
                a = xp.concatenate([a, xp.zeros(pad_shape, a.dtype)], d)
    return a


class _Spectral(Op):
    """What the three transforms share: linear (their own forward-mode derivative), written
    with their complex adjoints (so not by the real-formula rule of ``Op.holomorphic``)."""
    holomorphic = False
    supports_complex = True
    linear = True


class FftC2C(_Spectral):
    """``fftn`` (``forward=True``) or ``ifftn`` of a complex tensor over ``dims``, the input
    first resized to ``sizes``."""

    def forward(self, z, sizes, dims, norm, forward):
        self.in_shape, self.dims, self.norm, self.forward_ = z.shape, dims, norm, forward
        transform = xp.fft.fftn if forward else xp.fft.ifftn
        return transform(z, s=sizes, axes=dims, norm=norm).astype(z.dtype, copy=False)

    def backward(self, g):
        adjoint = FftC2C.run(g, sizes=None, dims=self.dims, norm=_SWAP[self.norm],
                             forward=not self.forward_)
        return _resize(adjoint, self.in_shape, self.dims)


class FftR2C(_Spectral):
    """The DFT of a real tensor over ``dims``: the whole spectrum, or (``onesided``) its
    first ``n // 2 + 1`` frequencies along the last of ``dims``."""

    def forward(self, x, sizes, dims, norm, onesided):
        self.in_shape, self.dims, self.norm, self.onesided = x.shape, dims, norm, onesided
        transform = xp.fft.rfftn if onesided else xp.fft.fftn
        out = transform(x, s=sizes, axes=dims, norm=norm)
        last = dims[-1]
        self.full_shape = out.shape[:last] + (
            x.shape[last] if sizes is None else sizes[-1],) + out.shape[last + 1:]
        return out.astype(_COMPLEX_OF[x.dtype], copy=False)

    def backward(self, g):
        # the one-sided half's adjoint: the missing frequencies had no gradient (zeros)
        full = _resize(g, self.full_shape, self.dims[-1:]) if self.onesided else g
        adjoint = FftC2C.run(full, sizes=None, dims=self.dims, norm=_SWAP[self.norm],
                             forward=False)
        return _resize(adjoint.real, self.in_shape, self.dims)


class FftC2R(_Spectral):
    """The real signal of a one-sided spectrum (``irfftn``): ``sizes`` is the output's size
    along ``dims`` (the last one ``n``, read from ``n // 2 + 1`` input frequencies)."""

    def forward(self, z, sizes, dims, norm):
        self.in_shape, self.dims, self.norm, self.sizes = z.shape, dims, norm, sizes
        real = z.real.dtype
        return xp.fft.irfftn(z, s=sizes, axes=dims, norm=norm).astype(real, copy=False)

    def backward(self, g):
        # The output reads every frequency but the first (and n/2 for an even n) twice, once
        # as itself and once as its conjugate mirror: their gradients count twice.
        n = self.sizes[-1]
        half = FftR2C.run(g, sizes=None, dims=self.dims, norm=_SWAP[self.norm], onesided=True)
        twice = xp.full(n // 2 + 1, 2.0, dtype=fm.unwrap(half).real.dtype)
        twice[0] = 1.0
        if n % 2 == 0:
            twice[-1] = 1.0
        shape = [1] * len(half.shape)
        shape[self.dims[-1]] = n // 2 + 1
        twice = twice.reshape(shape)
        return _resize(half * (twice if fm.is_array(half) else wrap(twice)), self.in_shape,
                       self.dims)


# -- argument checks, as PyTorch words them ---------------------------------------------------

def _check_norm(norm):
    if norm is None:
        return 'backward'
    if norm not in _SWAP:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _check_points(n):
    if n < 1:
        raise RuntimeError(f'Invalid number of data points ({n}) specified')


# The transforms on autocast's float32 list (PyTorch's CPU list lacks the n-dimensional
# Hermitian ones, which then refuse bfloat16 as outside autocast)
_AUTOCAST_FP32 = {'fft', 'ifft', 'fft2', 'ifft2', 'fftn', 'ifftn', 'rfft', 'irfft', 'rfft2',
                  'irfft2', 'rfftn', 'irfftn', 'hfft', 'ihfft', 'stft'}


def _input(op, input, want_real=False):
    """The input as a tensor of a dtype the transforms compute in (integers become the
    default float dtype), refusing what PyTorch refuses."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f'{type(input).__name__}')
    if autocast_state.active and op in _AUTOCAST_FP32:
        input, = autocast_args('fp32', input)
    d = input._data.dtype
    if d.kind in 'fV' and d not in _COMPLEX_OF:
        raise RuntimeError(f'Unsupported dtype {_dtype.type_name(input.dtype)}')
    if d.kind == 'c':
        if want_real:
            raise RuntimeError(f'{op} expects a real input tensor, but got '
                               f'{_dtype.type_name(input.dtype)}')
        return input.resolve_conj()
    if d.kind != 'f':
        input = input.to(_dtype.get_default_dtype())
    return input


def _dims_and_sizes(input, s, dim, default_dims):
    """PyTorch's rules for ``s`` and ``dim`` of the n-dimensional transforms."""
    ndim = input.ndim
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError('FFT dims must be unique')
        if s is not None and len(s) != len(dims):
            raise RuntimeError('When given, dim and shape arguments must have the same length')
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f'Got shape with {len(s)} values but input tensor only has '
                               f'{ndim} dimensions.')
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = [_wrap(d, ndim) for d in default_dims] if default_dims is not None \
            else list(range(ndim))
    if s is not None:
        sizes = [input.shape[d] if n == -1 else int(n) for n, d in zip(s, dims)]
    else:
        sizes = [input.shape[d] for d in dims]
    for n in sizes:
        _check_points(n)
    return tuple(dims), tuple(sizes)


def _one_dim(input, n, dim):
    d = _wrap(dim, input.ndim)
    size = input.shape[d] if n is None else int(n)
    _check_points(size)
    return (d,), (size,)


# -- the transforms ------------------------------------------------------------------------

def _c2c(input, dims, sizes, norm, forward, op):
    norm = _check_norm(norm)
    x = _input(op, input)
    if not x.is_complex():
        if forward:
            return FftR2C.apply(x, sizes=sizes, dims=dims, norm=norm, onesided=False)
        x = x.to(_dtype.FROM_NUMPY[_COMPLEX_OF[x._data.dtype]])
    return FftC2C.apply(x, sizes=sizes, dims=dims, norm=norm, forward=forward)


def _r2c(input, dims, sizes, norm, op):
    norm = _check_norm(norm)
    x = _input(op, input, want_real=True)
    return FftR2C.apply(x, sizes=sizes, dims=dims, norm=norm, onesided=True)


def _c2r(input, dims, sizes, norm, op):
    """``sizes``: the output's sizes, None entries filled from the input."""
    norm = _check_norm(norm)
    x = _input(op, input)
    if not x.is_complex():
        x = x.to(_dtype.FROM_NUMPY[_COMPLEX_OF[x._data.dtype]])
    sizes = list(sizes)
    if sizes[-1] is None:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    _check_points(sizes[-1])
    return FftC2R.apply(x, sizes=tuple(sizes), dims=dims, norm=norm)


def fft(input, n=None, dim=-1, norm=None):
    dims, sizes = _one_dim(input, n, dim)
    return _c2c(input, dims, sizes, norm, True, 'fft')


def ifft(input, n=None, dim=-1, norm=None):
    dims, sizes = _one_dim(input, n, dim)
    return _c2c(input, dims, sizes, norm, False, 'ifft')


def fftn(input, s=None, dim=None, norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, True, 'fftn')


def ifftn(input, s=None, dim=None, norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, False, 'ifftn')


def fft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, (-2, -1))
    return _c2c(input, dims, sizes, norm, True, 'fft2')


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, (-2, -1))
    return _c2c(input, dims, sizes, norm, False, 'ifft2')


def rfft(input, n=None, dim=-1, norm=None):
    dims, sizes = _one_dim(input, n, dim)
    return _r2c(input, dims, sizes, norm, 'rfft')


def rfftn(input, s=None, dim=None, norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _r2c(input, dims, sizes, norm, 'rfftn')


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, (-2, -1))
    return _r2c(input, dims, sizes, norm, 'rfft2')


def _c2r_sizes(input, s, dim, default_dims):
    """The n-dimensional inverse real transforms read ``s`` as output sizes: the last one
    defaults to 2 * (m - 1) for m input frequencies."""
    if s is None:
        dims, _ = _dims_and_sizes(input, None, dim, default_dims)
        sizes = [input.shape[d] for d in dims[:-1]] + [None]
        return dims, sizes
    dims, _ = _dims_and_sizes(input, [1] * len(s), dim, default_dims)
    sizes = [input.shape[d] if n == -1 else int(n) for n, d in zip(s, dims)]
    if s[-1] == -1:
        sizes[-1] = None
    for n in sizes:
        if n is not None:
            _check_points(n)
    return dims, sizes


def irfft(input, n=None, dim=-1, norm=None):
    dims = (_wrap(dim, input.ndim),)
    return _c2r(input, dims, (n,), norm, 'irfft')


def irfftn(input, s=None, dim=None, norm=None):
    dims, sizes = _c2r_sizes(input, s, dim, None)
    return _c2r(input, dims, sizes, norm, 'irfftn')


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _c2r_sizes(input, s, dim, (-2, -1))
    return _c2r(input, dims, sizes, norm, 'irfft2')


# The Hermitian transforms are the real ones with the signal conjugated and the
# normalisation swapped: hfft is the forward transform of a Hermitian-symmetric signal
# given by its half, ihfft the half spectrum of the inverse transform of a real signal.

def hfft(input, n=None, dim=-1, norm=None):
    dims = (_wrap(dim, input.ndim),)
    return _c2r(_input('hfft', input).conj(), dims, (n,), _SWAP[_check_norm(norm)], 'hfft')


def hfftn(input, s=None, dim=None, norm=None):
    dims, sizes = _c2r_sizes(input, s, dim, None)
    return _c2r(_input('hfftn', input).conj(), dims, sizes, _SWAP[_check_norm(norm)], 'hfftn')


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _c2r_sizes(input, s, dim, (-2, -1))
    return _c2r(_input('hfft2', input).conj(), dims, sizes, _SWAP[_check_norm(norm)], 'hfft2')


def ihfft(input, n=None, dim=-1, norm=None):
    dims, sizes = _one_dim(input, n, dim)
    _input('ihfft', input, want_real=True)
    return _r2c(input, dims, sizes, _SWAP[_check_norm(norm)], 'ihfft').conj()


def ihfftn(input, s=None, dim=None, norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    _input('ihfftn', input, want_real=True)
    return _r2c(input, dims, sizes, _SWAP[_check_norm(norm)], 'ihfftn').conj()


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    dims, sizes = _dims_and_sizes(input, s, dim, (-2, -1))
    _input('ihfft2', input, want_real=True)
    return _r2c(input, dims, sizes, _SWAP[_check_norm(norm)], 'ihfft2').conj()


# -- frequencies and shifts ----------------------------------------------------------------

def _frequencies(values, dtype, requires_grad):
    from .creation import tensor
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    return tensor(values, dtype=d, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of ``fft(x, n)``: [0, 1, ..., -(n // 2), ..., -1] / (d * n)."""
    return _frequencies(xp.fft.fftfreq(int(n), d), dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of ``rfft(x, n)``: [0, 1, ..., n // 2] / (d * n)."""
    return _frequencies(xp.fft.rfftfreq(int(n), d), dtype, requires_grad)


def _shift(input, dim, sign):
    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [_wrap(d, input.ndim) for d in dims]
    if not dims:
        return input
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the middle: a roll by n // 2 along ``dim`` (all dims)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by -(n // 2)."""
    return _shift(input, dim, -1)


# -- short-time Fourier transforms ------------------------------------------------------------
# Composed of recorded ops (padding by index_select, frames by unfold, the transforms above,
# overlap-add by index_add), so their gradients, in the signal and in the window, come free.

_PAD_MODES = ('reflect', 'constant', 'replicate', 'circular')


def _call(name, input, n_fft, hop_length, win_length, window, extra):
    """PyTorch's prefix for the argument errors of stft and istft."""
    shape = ', '.join(str(n) for n in input.shape)
    win = 'None' if window is None else f'torch.FloatTensor{{[{", ".join(map(str, window.shape))}]}}'
    return (f'{name}(torch.{_dtype.type_name(input.dtype)}Tensor[{shape}], n_fft={n_fft}, '
            f'hop_length={hop_length}, win_length={win_length}, window={win}{extra}) : ')


def _common_dtype(input, window):
    """The signal and the window in their promoted dtype, as PyTorch computes them."""
    if window is None or not isinstance(window, Tensor) or not isinstance(input, Tensor):
        return input, window
    common = _dtype.promote_types(input.dtype, window.dtype)
    window_dtype = common.to_real() if not window.is_complex() else common
    return (input if input.dtype is common else input.to(common),
            window if window.dtype is window_dtype else window.to(window_dtype))


def _stft_window(window, win_length, n_fft, like, prefix):
    """The window (ones when None) zero-padded on both sides to ``n_fft``, centred."""
    from .creation import ones, zeros
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real())
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f'{prefix}expected a 1D window tensor of size equal to '
                           f'win_length={win_length}, but got window with size '
                           f'{list(window.shape)}')
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        from .shape import cat
        window = cat([zeros(left, dtype=window.dtype), window,
                      zeros(n_fft - win_length - left, dtype=window.dtype)])
    return window


def _pad_signal(x, pad, mode):
    """``x`` (..., L) padded by ``pad`` on both ends of its last dimension."""
    from .indexing import index_select
    from .creation import zeros
    from .shape import cat
    n = x.shape[-1]
    if mode not in _PAD_MODES:
        raise NotImplementedError(f'Unrecognised padding mode {mode}')
    if mode == 'constant':
        side = zeros(x.shape[:-1] + (pad,), dtype=x.dtype)
        return cat([side, x, side], -1)
    if mode == 'reflect' and pad >= n:
        raise RuntimeError(f'Argument #4: Padding size should be less than the corresponding '
                           f'input dimension, but got: padding ({pad}, {pad}) at dimension '
                           f'{x.ndim} of input {[1] + list(x.shape)}')
    positions = xp.arange(-pad, n + pad)
    if mode == 'reflect':
        period = 2 * (n - 1)
        positions = xp.abs(positions) % period
        positions = xp.where(positions >= n, period - positions, positions)
    elif mode == 'replicate':
        positions = xp.clip(positions, 0, n - 1)
    else:
        positions = positions % n
    return index_select(x, -1, wrap(positions.astype(np.int64)))


@method
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode='reflect', normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform: ``(n_freq, n_frames)`` (a batch in front for a 2-D
    input), frames ``hop_length`` apart, each multiplied by ``window``."""
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    is_complex = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None and not is_complex:
        raise RuntimeError('stft requires the return_complex parameter be given for real '
                           'inputs, and will further require that return_complex=True in a '
                           'future PyTorch release.')
    if window is None:
        warnings.warn('A window was not provided. A rectangular window will be applied,which '
                      'is known to cause spectral leakage. Other windows such as '
                      'torch.hann_window or torch.hamming_window are recommended to reduce '
                      'spectral leakage.To suppress this warning and use a rectangular window, '
                      'explicitly set `window=torch.ones(n_fft, device=<device>)`.',
                      UserWarning, stacklevel=2)
    input, window = _common_dtype(input, window)
    x = _input('stft', input)
    if center:
        if x.ndim not in (1, 2):
            raise RuntimeError(_call('stft', x, n_fft, hop_length, win_length, window,
                                     ', normalized=...') + 'expected a 1D or 2D tensor')
        x = _pad_signal(x, n_fft // 2, pad_mode)
    prefix = _call('stft', x, n_fft, hop_length, win_length, window,
                   f', normalized={int(bool(normalized))}, onesided={onesided}, '
                   f'return_complex={int(bool(return_complex))}, align_to_window=None')
    if x.ndim not in (1, 2):
        raise RuntimeError(prefix + 'expected a 1D or 2D tensor')
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(prefix + f'expected 0 < n_fft < {length}, but got n_fft={n_fft}')
    if hop_length <= 0:
        raise RuntimeError(prefix + f'expected hop_length > 0, but got hop_length={hop_length}')
    if not 0 < win_length <= n_fft:
        raise RuntimeError(prefix + f'expected 0 < win_length <= n_fft, but got '
                           f'win_length={win_length}')
    window = _stft_window(window, win_length, n_fft, x, prefix)
    frames = x.unfold(-1, n_fft, hop_length) * window          # (..., n_frames, n_fft)
    onesided = not is_complex if onesided is None else onesided
    norm = 'ortho' if normalized else 'backward'
    spectrum = (rfft(frames, dim=-1, norm=norm) if onesided
                else fft(frames, dim=-1, norm=norm)).transpose(-1, -2)
    if return_complex:
        return spectrum
    warnings.warn('stft with return_complex=False is deprecated. In a future pytorch release, '
                  'stft will return complex tensors for all inputs, and return_complex=False '
                  'will raise an error.\nNote: you can still call torch.view_as_real on the '
                  'complex output to recover the old return format.', UserWarning,
                  stacklevel=2)
    from .complex_numbers import view_as_real
    return view_as_real(spectrum)


@method
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: frames inverse-transformed, windowed and overlap-added,
    divided by the overlap-added squared window."""
    from .creation import zeros
    from .indexing import index_add
    if not isinstance(input, Tensor) or not input.is_complex():
        raise RuntimeError('istft requires a complex-valued input tensor matching the output '
                           'from stft with return_complex=True.')
    input, window = _common_dtype(input, window)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    prefix = _call('istft', input, n_fft, hop_length, win_length, window,
                   f', center={int(bool(center))}, normalized={int(bool(normalized))}, '
                   f'onesided={onesided}, length={length}, '
                   f'return_complex={int(bool(return_complex))}')
    if input.ndim not in (2, 3):
        raise RuntimeError(prefix + f'expected a tensor with 2 or 3 dimensions of complex '
                           f'dtype, but got {input.ndim}')
    if hop_length <= 0 or not 0 < win_length <= n_fft:
        raise RuntimeError(prefix + 'expected 0 < hop_length <= win_length <= n_fft')
    n_freq = input.shape[-2]
    onesided = n_freq != n_fft if onesided is None else onesided
    expected = n_fft // 2 + 1 if onesided else n_fft
    if n_freq != expected:
        raise RuntimeError(prefix + f'expected the frequency dimension (3rd to the last) of '
                           f'the input tensor to match n_fft / 2 + 1 when onesided=True, but '
                           f'got {n_freq}' if onesided else prefix + 'expected the frequency '
                           f'dimension (3rd to the last) of the input tensor to match n_fft '
                           f'when onesided=False, but got {n_freq}')
    window = _stft_window(window, win_length, n_fft, input, prefix)
    norm = 'ortho' if normalized else 'backward'
    spectra = input.transpose(-1, -2)                           # (..., n_frames, n_freq)
    if onesided:
        frames = irfft(spectra, n=n_fft, dim=-1, norm=norm)
    else:
        frames = ifft(spectra, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    frames = frames * window
    n_frames = frames.shape[-2]
    total = n_fft + hop_length * (n_frames - 1)
    positions = (xp.arange(n_frames)[:, None] * hop_length + xp.arange(n_fft)).reshape(-1)
    positions = wrap(positions.astype(np.int64))
    batch = frames.shape[:-2]
    signal = index_add(zeros(batch + (total,), dtype=frames.dtype), -1, positions,
                       frames.reshape(batch + (n_frames * n_fft,)))
    squares = (window * window.conj() if window.is_complex() else window * window)
    envelope = index_add(zeros(total, dtype=squares.dtype), 0, positions,
                         squares.expand(n_frames, n_fft).reshape(n_frames * n_fft))
    start = n_fft // 2 if center else 0
    end = total if length is None and not center else (
        start + length if length is not None else total - n_fft // 2)
    end = min(end, total)
    signal, envelope = signal[..., start:end], envelope[start:end]
    low = float(xp.abs(envelope._data).min()) if envelope.shape[0] else 1.0
    if low < 1e-11:
        raise RuntimeError(prefix + f'window overlap add min: {low:g}')
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        warnings.warn('The length of signal is shorter than the length parameter. Result is '
                      'being padded with zeros in the tail. Please check your center and '
                      'hop_length settings.', UserWarning, stacklevel=2)
        signal = _resize(signal, signal.shape[:-1] + (length,), (signal.ndim - 1,))
    return signal


TOP_LEVEL = ['stft', 'istft']

__all__ = ['fft', 'ifft', 'fft2', 'ifft2', 'fftn', 'ifftn', 'rfft', 'irfft', 'rfft2',
           'irfft2', 'rfftn', 'irfftn', 'hfft', 'ihfft', 'hfft2', 'ihfft2', 'hfftn', 'ihfftn',
           'fftfreq', 'rfftfreq', 'fftshift', 'ifftshift']
