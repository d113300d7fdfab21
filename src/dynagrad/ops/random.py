"""Random sampling: the generator, random constructors, sampling ops and in-place fillers.

Every draw goes through a ``Generator`` (NumPy's PCG64 underneath): the one passed as
``generator=``, else ``default_generator``, which ``dynagrad.manual_seed`` seeds. A
generator's state is a small uint8 tensor (``get_state``/``set_state``) that restores the
stream exactly, seed included. The values differ from PyTorch's (another bit generator),
by design; shapes, dtypes, argument checks, errors and autograd behaviour follow it.

Autograd follows PyTorch: a sample is not a differentiable function of its parameters,
so ``normal(mean, std)``, ``bernoulli(p)`` and ``poisson(rates)`` record a node whose
gradients are zero, and the in-place fillers (``uniform_``, ``normal_``, ...) on a
non-leaf replace its history with a node that sends zero back; on a leaf that requires
grad they raise unless run under ``no_grad`` (as ``nn.init`` does).
"""
import contextlib
import warnings

import numpy as np

from .. import _dtype
from ..backend import xp
from ..autograd.function import Op
from ..tensor import Tensor, as_device, check_device, CPU, method, wrap
from .formula import zeros_like

_U64 = 1 << 64
_DEFAULT_SEED = 67280421310721
_STATE_WORDS = 7     # seed, PCG64 state (2 words), increment (2 words), has_uint32, uinteger
_STATE_BYTES = 8 * _STATE_WORDS


# -- the generator -----------------------------------------------------------------------

def _check_seed(seed):
    if isinstance(seed, Tensor) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f'manual_seed expected a long, but got {type(seed).__name__}')
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError(f'Overflow when unpacking long long: manual_seed takes a seed in '
                         f'[-2**63, 2**64 - 1], got {seed}')
    return seed % _U64   # negative seeds wrap, as in PyTorch


class Generator:
    """A seeded source of random numbers for the sampling functions' ``generator=``.

    ``Generator().manual_seed(s)`` gives the same stream as ``dynagrad.manual_seed(s)``
    gives the default generator. NumPy's PCG64 underneath, so values differ from PyTorch's.
    """

    def __init__(self, device='cpu'):
        kind = as_device(device).type
        if kind != 'cpu':
            # PyTorch's words on a build without the device's library; dynagrad has none.
            raise RuntimeError(f'Cannot get {kind.upper()} generator without ATen_{kind} '
                               f'library: dynagrad has no {kind} backend; use '
                               f"Generator('cpu')")
        self._reseed(_DEFAULT_SEED)

    def _reseed(self, seed):
        self._seed = seed
        self._bits = np.random.PCG64(seed)
        self._rng = np.random.Generator(self._bits)

    @property
    def device(self):
        return CPU

    def manual_seed(self, seed):
        """Seed the generator (an int in [-2**63, 2**64 - 1]; negative seeds wrap). Returns it."""
        self._reseed(_check_seed(seed))
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Seed from the operating system's entropy; return the seed."""
        seed = int(np.random.SeedSequence().entropy) % _U64
        self._reseed(seed)
        return seed

    def get_state(self):
        """The state as a uint8 tensor; ``set_state`` of it repeats the stream exactly."""
        st = self._bits.state
        mask = _U64 - 1
        s, inc = st['state']['state'], st['state']['inc']
        words = xp.array([self._seed, s & mask, s >> 64, inc & mask, inc >> 64,
                          st['has_uint32'], st['uinteger']], dtype='<u8')
        return wrap(words.view(np.uint8).copy())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f'expected a dynagrad.ByteTensor, but got {type(new_state).__name__}')
        if new_state._data.dtype != np.uint8:
            raise TypeError(f'RNG state must be a dynagrad.ByteTensor (uint8, as get_state() '
                            f'returns), got {new_state.dtype}')
        if new_state._data.size != _STATE_BYTES:
            raise RuntimeError(f'Expected a dynagrad generator state of size {_STATE_BYTES} but '
                               f'found the input RNG state size to be {new_state._data.size} '
                               f'(pass a tensor from get_state() / get_rng_state())')
        w = [int(v) for v in xp.ascontiguousarray(new_state._data).reshape(-1).view('<u8')]
        bits = np.random.PCG64()
        bits.state = {'bit_generator': 'PCG64',
                      'state': {'state': w[1] | (w[2] << 64), 'inc': w[3] | (w[4] << 64)},
                      'has_uint32': w[5], 'uinteger': w[6]}
        self._seed = w[0]
        self._bits = bits
        self._rng = np.random.Generator(bits)
        return self

    def clone_state(self):
        """A new generator in this one's state."""
        return Generator().set_state(self.get_state())

    def __reduce__(self):
        return (_rebuild_generator, (bytes(self.get_state()._data),))


def _rebuild_generator(state):
    g = Generator()
    return g.set_state(wrap(xp.frombuffer(state, np.uint8).copy()))


default_generator = Generator()
# As PyTorch 2.x: the default generator starts from fresh entropy in every process, so two
# runs differ unless the program calls manual_seed (Generator() objects keep the fixed seed).
default_generator.seed()


def manual_seed(seed):
    """Seed the default generator (``int(seed)``, as PyTorch does); returns it."""
    return default_generator.manual_seed(int(seed))


def initial_seed():
    return default_generator.initial_seed()


def seed():
    """Seed the default generator non-deterministically; returns the 64-bit seed."""
    return default_generator.seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller='fork_rng', _devices_kw='devices',
             device_type='cuda'):
    """Run a block with the default generator's state restored afterwards."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def array_rng(generator):
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(f'generator must be a dynagrad.Generator, not {type(generator).__name__}')
    return generator._rng


# -- shared checks -----------------------------------------------------------------------

_KERNEL_TYPE = {'float16': 'Half', 'bfloat16': 'BFloat16', 'float32': 'Float',
                'float64': 'Double', 'int8': 'Char',
                'int16': 'Short', 'int32': 'Int', 'int64': 'Long', 'uint8': 'Byte',
                'bool': 'Bool'}
_C_TYPE = {'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16', 'float32': 'float',
           'float64': 'double', 'int8': 'signed char',
           'int16': 'short int', 'int32': 'int', 'int64': 'long int', 'uint8': 'unsigned char',
           'bool': 'bool'}
_MANTISSA = {'float16': 11, 'bfloat16': 8, 'float32': 24, 'float64': 53}


def _name(np_dtype):
    return _dtype.FROM_NUMPY[np.dtype(np_dtype)].name


def _float_only(np_dtype, kernel):
    if np_dtype.kind not in 'fV':
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_KERNEL_TYPE[_name(np_dtype)]}'")
    return np_dtype


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or _dtype.get_default_dtype()).numpy
    return _dtype.to_dtype(dtype).numpy


def _num(x):
    """A number as C++ prints a double: 2.0 -> '2', 1.5 -> '1.5'."""
    return f'{x:g}' if isinstance(x, float) else str(x)


def _scalar(x, fn, arg):
    if isinstance(x, Tensor):
        if x._data.ndim:
            raise TypeError(f"{fn}(): argument '{arg}' must be a number, not a "
                            f'{x._data.ndim}-d tensor')
        x = x.item()
    if not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}(): argument '{arg}' must be a number, not {type(x).__name__}")
    return float(x)


def _int_arg(x, fn, arg):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(x).__name__}")
    x = int(x)
    if not -(1 << 63) <= x < (1 << 63):
        raise ValueError(f'Overflow when unpacking long long: {fn}() takes 64-bit integer '
                         f"bounds, got {arg}={x}")
    return x


def _size(args, size, fn):
    """Sizes as varargs, one tuple/list/Size, or ``size=``; checked like PyTorch's."""
    if size is not None:
        if args:
            raise TypeError(f'{fn}() got multiple values for argument \'size\'')
        args = (size,)
    if not args:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    shape = []
    for i, s in enumerate(args):
        if isinstance(s, Tensor) and s._data.ndim == 0 and s._data.dtype.kind in 'iu':
            s = s.item()
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, but found element "
                            f'of type {type(s).__name__} at pos {i}')
        shape.append(int(s))
    for s in shape:
        if s < 0:
            raise RuntimeError(f'Trying to create tensor with negative dimension {s}: {shape} '
                               f'({fn})')
    return tuple(shape)


def _finish(data, requires_grad):
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_requires_grad(np_dtype, requires_grad):
    if requires_grad and np_dtype.kind not in 'fV':
        raise RuntimeError(f'Only Tensors of floating point and complex dtype can require '
                           f'gradients (got {_name(np_dtype)}; pass a float dtype)')


def _check_range(low, high_inc, np_dtype):
    """PyTorch's bounds check for integer draws into ``np_dtype``: [low, high_inc]."""
    name = _name(np_dtype)
    if np_dtype.kind in 'fV':
        top = _dtype.finfo(_dtype.FROM_NUMPY[np_dtype]).max
        lo, hi = -top, top
    elif np_dtype.kind == 'b':
        lo, hi = 0, 1
    else:
        info = np.iinfo(np_dtype)
        lo, hi = int(info.min), int(info.max)
    held = f'the dtype holds [{_num(lo)}, {_num(hi)}]'
    if not lo <= low <= hi:
        raise RuntimeError(f'from is out of bounds for {_C_TYPE[name]} (from={low}; {held})')
    if not lo <= high_inc <= hi:
        raise RuntimeError(f'to - 1 is out of bounds for {_C_TYPE[name]} (to - 1={high_inc}; '
                           f'{held})')
    if np_dtype.kind in 'fV':
        digits = 1 << _MANTISSA[name]
        for what, v in (('from', low), ('to - 1', high_inc)):
            if not -digits <= v <= digits:
                warnings.warn(f'{what} is out of bounds [-(2^{_MANTISSA[name]}), '
                              f'2^{_MANTISSA[name]}]. Due to precision limitations {name} can '
                              f'support discrete uniform distribution only within this range.',
                              UserWarning, stacklevel=4)


def _integers(rng, low, high_inc, shape, np_dtype):
    data = rng.integers(low, high_inc, size=shape, dtype=np.int64, endpoint=True)
    return data.astype(np_dtype)


# -- sampling kernels (arrays in, arrays out) --------------------------------------------

def uniform01(rng, shape, np_dtype):
    """Uniform in [0, 1) with every bit of the dtype's mantissa random, never 1."""
    if np_dtype == np.float64:
        return rng.random(shape)
    if np_dtype == np.float32:
        return rng.random(shape, dtype=np.float32)
    m = _MANTISSA[_name(np_dtype)]
    return rng.integers(0, 1 << m, size=shape, dtype=np.int64).astype(np_dtype) * \
        np_dtype.type(2.0 ** -m)


def _standard_normal(rng, shape, np_dtype):
    if np_dtype == np.float64 or np_dtype == np.float32:
        return rng.standard_normal(shape, dtype=np_dtype)
    return rng.standard_normal(shape, dtype=np.float32).astype(np_dtype)


def _scaled_normal(rng, shape, np_dtype, mean, std):
    """``mean + std * z`` computed in the dtype (float32 for float16), in place."""
    z = xp.asarray(_standard_normal(rng, shape, np_dtype if np_dtype.itemsize >= 4
                                    else np.dtype(np.float32)))
    if std != 1.0:
        z *= std
    if mean != 0.0:
        z += mean
    return z.astype(np_dtype, copy=False)


def _bernoulli(rng, p, shape, np_dtype):
    return xp.asarray(rng.random(shape) < p).astype(np_dtype)


class _ZeroGrad(Op):
    """A sample: PyTorch gives its parameters zero gradients (no reparameterisation)."""

    def backward(self, g):
        z = zeros_like(g)
        return (z,) * self._n


# -- random constructors -----------------------------------------------------------------

def rand(*size, generator=None, dtype=None, layout=None, device=None,
         pin_memory=False, requires_grad=False, **kw):
    """Uniform samples in [0, 1)."""
    shape = _size(size, kw.pop('size', None), 'rand')
    _no_extra(kw, 'rand')
    check_device(device)
    np_dtype = _float_only(_np_dtype(dtype), 'check_uniform_bounds')
    return _finish(uniform01(array_rng(generator), shape, np_dtype), requires_grad)


def randn(*size, generator=None, dtype=None, layout=None, device=None,
          pin_memory=False, requires_grad=False, **kw):
    """Standard normal samples."""
    shape = _size(size, kw.pop('size', None), 'randn')
    _no_extra(kw, 'randn')
    check_device(device)
    np_dtype = _float_only(_np_dtype(dtype), 'normal_kernel_cpu')
    return _finish(_standard_normal(array_rng(generator), shape, np_dtype), requires_grad)


def _no_extra(kw, fn):
    if kw:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kw))}'")


def randint(*args, size=None, generator=None, dtype=None, layout=None, device=None,
            pin_memory=False, requires_grad=False, low=None, high=None):
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``."""
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) > 2 or (len(args) == 2 and (low is not None or high is not None)):
        raise TypeError('randint() takes (high, size) or (low, high, size), size a tuple of ints')
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None or size is None:
        raise TypeError('randint() missing required arguments: call randint(high, size) or '
                        'randint(low, high, size) with size a tuple of ints')
    low = 0 if low is None else _int_arg(low, 'randint', 'low')
    high = _int_arg(high, 'randint', 'high')
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f'{type(size).__name__}')
    shape = _size((size,), None, 'randint')
    check_device(device)
    np_dtype = _np_dtype(dtype, _dtype.int64)
    _check_requires_grad(np_dtype, requires_grad)
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f'from={low} >= to={high} (randint)')
    _check_range(low, high - 1, np_dtype)
    return _finish(_integers(array_rng(generator), low, high - 1, shape, np_dtype), requires_grad)


def randperm(n, *, generator=None, dtype=None, layout=None, device=None,
             pin_memory=False, requires_grad=False):
    """A random permutation of 0..n-1."""
    n = _int_arg(n, 'randperm', 'n')
    check_device(device)
    np_dtype = _np_dtype(dtype, _dtype.int64)
    name = _name(np_dtype)
    if n < 0:
        raise RuntimeError(f'Trying to create tensor with negative dimension {n}: [{n}] '
                           f'(randperm)')
    if np_dtype.kind == 'b':
        raise NotImplementedError('"randperm" not implemented for \'Bool\'')
    if np_dtype.kind in 'fV':
        limit = (1 << _MANTISSA[name]) + 1
        if n > limit:
            shown = {'float16': '2049', 'float32': '2^24+1', 'float64': '2^53+1'}[name]
            raise RuntimeError(f'n cannot be greater than {shown} for '
                               f'{_KERNEL_TYPE[name]} type.')
    elif n > 0 and n - 1 > np.iinfo(np_dtype).max:
        raise RuntimeError(f'value cannot be converted to type {name}_t without overflow '
                           f'(randperm({n}) needs values up to {n - 1})')
    _check_requires_grad(np_dtype, requires_grad)
    return _finish(array_rng(generator).permutation(n).astype(np_dtype), requires_grad)


def _like_dtype(input, dtype):
    return dtype if dtype is not None else input.dtype


def _like_device(input, device):
    """``*_like`` allocate on the input's device unless told otherwise (not the default)."""
    return device if device is not None else input.device


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    return rand(input.shape, generator=generator, dtype=_like_dtype(input, dtype),
                device=_like_device(input, device),
                 requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    return randn(input.shape, generator=generator, dtype=_like_dtype(input, dtype),
                 device=_like_device(input, device),
                 requires_grad=requires_grad)


def randint_like(input, low=None, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """``randint_like(x, high)`` or ``randint_like(x, low, high)``, in x's shape and dtype."""
    if high is None:
        if low is None:
            raise TypeError('randint_like() missing required argument: high (call '
                            'randint_like(input, high) or randint_like(input, low, high))')
        low, high = 0, low
    elif low is None:
        low = 0
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=_like_dtype(input, dtype), device=_like_device(input, device),
                   requires_grad=requires_grad)


# -- sampling ops ------------------------------------------------------------------------

class Normal(_ZeroGrad):
    """``normal(mean, std)`` with a tensor mean and/or std: samples of the broadcast shape
    in mean's dtype (std's when mean is a number)."""

    def forward(self, *arrays, mean=None, std=None, generator=None, np_dtype=None):
        it = iter(arrays)
        m = next(it) if mean is None else mean
        s = next(it) if std is None else std
        self._n = len(arrays)
        shape = xp.broadcast_shapes(xp.shape(m), xp.shape(s))
        z = _standard_normal(array_rng(generator), shape,
                             np_dtype if np_dtype.itemsize >= 4 else np.dtype(np.float32))
        return (m + s * z).astype(np_dtype, copy=False)


class Bernoulli(_ZeroGrad):
    """``bernoulli(p)``: 1 with probability p, in p's dtype."""
    _n = 1

    def forward(self, p, generator=None):
        return _bernoulli(array_rng(generator), p, p.shape, p.dtype)


class BernoulliScalarP(Op):
    """``bernoulli(input, p)``: input gives shape and dtype only. PyTorch has no derivative."""
    node_name = 'NotImplemented'

    def forward(self, x, p, generator=None):
        return _bernoulli(array_rng(generator), p, x.shape, x.dtype)

    def backward(self, g):
        raise RuntimeError('derivative for aten::bernoulli is not implemented (bernoulli(input, '
                           'p) samples do not depend on input; detach() it first)')


class Poisson(_ZeroGrad):
    _n = 1

    def forward(self, rates, generator=None):
        return xp.asarray(array_rng(generator).poisson(rates)).astype(rates.dtype)


class Multinomial(Op):
    differentiable = False

    def forward(self, p, num_samples, replacement, generator=None):
        rng = array_rng(generator)
        k = p.shape[-1]
        P = p.reshape(-1, k).astype(np.float64)
        rows = P.shape[0]
        if rows == 0:
            return xp.zeros(p.shape[:-1] + (num_samples,), np.int64)
        if replacement:
            cdf = xp.cumsum(P, axis=1)
            cdf /= cdf[:, -1:]
            u = rng.random((rows, num_samples))
            if rows == 1:
                idx = xp.searchsorted(cdf[0], u[0], side='right')[None]
            else:  # one sorted array: row r's cdf shifted by 2r
                shift = 2.0 * xp.arange(rows)[:, None]
                idx = xp.searchsorted((cdf + shift).ravel(), (u + shift).ravel(),
                                      side='right').reshape(rows, num_samples)
                idx -= k * xp.arange(rows)[:, None]
            last = k - 1 - xp.argmax(P[:, ::-1] > 0, axis=1)   # never past the last p > 0
            idx = xp.minimum(idx, last[:, None])
        else:  # exponential races: the n smallest E/p are a draw without replacement
            with np.errstate(divide='ignore'):
                keys = rng.standard_exponential((rows, k)) / P
            if num_samples < k:
                part = xp.argpartition(keys, num_samples - 1, axis=1)[:, :num_samples]
                order = xp.argsort(xp.take_along_axis(keys, part, 1), axis=1, kind='stable')
                idx = xp.take_along_axis(part, order, 1)
            else:
                idx = xp.argsort(keys, axis=1, kind='stable')
        return idx.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64)


def _tensor_arg(x, fn, arg):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples: ``normal(mean, std)`` with tensor mean and/or std (broadcast), or
    ``normal(mean, std, size)`` with numbers."""
    array_rng(generator)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError('normal() received an invalid combination of arguments: with '
                            'numbers for mean and std, pass size (normal(mean, std, size))')
        m, s = _scalar(mean, 'normal', 'mean'), _scalar(std, 'normal', 'std')
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"normal(): argument 'size' must be tuple of ints, not "
                            f'{type(size).__name__}')
        shape = _size((size,), None, 'normal')
        check_device(device)
        np_dtype = _float_only(_np_dtype(dtype), 'normal_kernel_cpu')
        if not s >= 0.0:
            raise RuntimeError(f'normal expects std >= 0.0, but found std {_num(s)}')
        return _finish(_scaled_normal(array_rng(generator), shape, np_dtype, m, s), requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError('normal() received an invalid combination of arguments: size, dtype '
                        'and requires_grad go with numbers for mean and std only')
    if mt and st:
        np_dtype = _float_only(mean._data.dtype, 'normal_kernel_cpu')
        _check_std(std._data)
        _broadcast(mean, std)
        result = Normal.named('NormalBackward3').apply(mean, std, generator=generator,
                                                        np_dtype=np_dtype)
    elif mt:
        np_dtype = _float_only(mean._data.dtype, 'normal_kernel_cpu')
        s = _scalar(std, 'normal', 'std')
        if not s >= 0.0:
            raise RuntimeError(f'normal expects std >= 0.0, but found std {_num(s)}')
        result = Normal.named('NormalBackward1').apply(mean, std=s, generator=generator,
                                                        np_dtype=np_dtype)
    else:
        np_dtype = _float_only(std._data.dtype, 'normal_kernel_cpu')
        _check_std(std._data)
        result = Normal.named('NormalBackward2').apply(
            std, mean=_scalar(mean, 'normal', 'mean'), generator=generator, np_dtype=np_dtype)
    return result


def _broadcast(a, b):
    try:
        return xp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        x, y = a.shape, b.shape
        for i in range(1, min(len(x), len(y)) + 1):
            if x[-i] != y[-i] and x[-i] != 1 and y[-i] != 1:
                raise RuntimeError(
                    f'The size of tensor a ({x[-i]}) must match the size of tensor b ({y[-i]}) '
                    f'at non-singleton dimension {max(len(x), len(y)) - i} (normal: mean of '
                    f'shape {list(x)}, std of shape {list(y)})') from None
        raise


def _check_std(s):
    if s.size and not (s >= 0).all():
        raise RuntimeError('normal expects all elements of std >= 0.0')


def _check_p(p):
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false. '
                           '(bernoulli: every probability must be in [0, 1])')


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or with probability ``p`` in input's shape and dtype)."""
    _tensor_arg(input, 'bernoulli', 'input')
    array_rng(generator)
    if p is None:
        _float_only(input._data.dtype, 'bernoulli_tensor_cpu_p_')
        _check_p(input._data)
        result = Bernoulli.apply(input, generator=generator)
    else:
        p = _scalar(p, 'bernoulli', 'p')
        if not 0 <= p <= 1:
            raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_num(p)}')
        result = BernoulliScalarP.apply(input, p, generator=generator)
    return result


def poisson(input, generator=None):
    """Poisson samples with rates ``input``, in its dtype."""
    _tensor_arg(input, 'poisson', 'input')
    array_rng(generator)
    rates = input._data
    _float_only(rates.dtype, 'poisson_cpu')
    if rates.size and not (rates >= 0).all():
        raise RuntimeError('invalid Poisson rate, expected rate to be non-negative')
    return Poisson.apply(input, generator=generator)


@method
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices sampled from each row of ``input`` (unnormalised probabilities)."""
    _tensor_arg(input, 'multinomial', 'input')
    array_rng(generator)
    num_samples = _int_arg(num_samples, 'multinomial', 'num_samples')
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError(f'prob_dist must be 1 or 2 dim (multinomial: got shape '
                           f'{list(p.shape)})')
    if p.dtype.kind not in 'fV':
        raise RuntimeError(f'multinomial only supports floating-point dtypes for input, got: '
                           f'{_KERNEL_TYPE[_name(p.dtype)]}')
    if num_samples <= 0:
        raise RuntimeError(f'cannot sample n_sample <= 0 samples (num_samples={num_samples})')
    k = p.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError(f'cannot sample n_sample > prob_dist.size(-1) samples without '
                           f'replacement ({num_samples} > {k}; pass replacement=True)')
    if k > (1 << 24):
        raise RuntimeError('number of categories cannot exceed 2^24')
    if p.size:
        if not (xp.isfinite(p) & (p >= 0)).all():
            raise RuntimeError('probability tensor contains either `inf`, `nan` or element < 0')
        if not (p.sum(-1, dtype=np.float64) > 0).all():
            raise RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)')
    elif k == 0 and (p.ndim == 1 or p.shape[0]):
        raise RuntimeError('invalid multinomial distribution (sum of probabilities <= 0): '
                           'no categories')
    result = Multinomial.apply(input, num_samples, bool(replacement), generator=generator)
    return result


# -- in-place fillers --------------------------------------------------------------------

class _Fill(Op):
    """An in-place random fill: the old values get zero gradient (so do tensor params)."""

    def backward(self, g):
        z = zeros_like(g)
        return (z,) * len(self.next_functions)


class Uniform(_Fill):
    def forward(self, x, low, high, generator=None):
        r = uniform01(array_rng(generator), x.shape, x.dtype)
        if (low, high) != (0.0, 1.0):
            c = x.dtype.type if x.dtype.itemsize >= 4 else np.float32  # float16 computes in float32
            r = xp.asarray(r * c(high - low) + c(low)).astype(x.dtype, copy=False)
            if high > low:   # rounding must not reach ``high``: [from, to) as promised
                xp.minimum(r, xp.nextafter(x.dtype.type(high), x.dtype.type(low)), out=r)
        return r


class NormalFill(_Fill):
    node_name = 'NormalBackward0'

    def forward(self, x, mean, std, generator=None):
        return _scaled_normal(array_rng(generator), x.shape, x.dtype, mean, std)


class BernoulliFill(_Fill):
    node_name = 'BernoulliBackward2'

    def forward(self, x, p, generator=None):
        return _bernoulli(array_rng(generator), p, x.shape, x.dtype)


class BernoulliTensorFill(_Fill):
    node_name = 'BernoulliBackward1'

    def forward(self, x, p, generator=None):
        return _bernoulli(array_rng(generator), p, x.shape, x.dtype)


class Random(_Fill):
    """``random_(from, to)``; the subclasses are the ``random_(to)`` and ``random_()`` forms,
    which PyTorch names differently."""
    def forward(self, x, low, high_inc, generator=None):
        return _integers(array_rng(generator), low, high_inc, x.shape, x.dtype)


class RandomTo(Random):
    node_name = 'RandomBackward1'


class RandomFull(Random):
    node_name = 'RandomBackward2'


class Exponential(_Fill):
    def forward(self, x, lambd, generator=None):
        return xp.asarray(array_rng(generator).standard_exponential(x.shape) / lambd).astype(x.dtype)


class Geometric(_Fill):
    def forward(self, x, p, generator=None):
        return xp.asarray(array_rng(generator).geometric(p, x.shape)).astype(x.dtype)


class LogNormal(_Fill):
    def forward(self, x, mean, std, generator=None):
        z = xp.asarray(array_rng(generator).standard_normal(x.shape))
        return xp.exp(mean + std * z).astype(x.dtype)


class Cauchy(_Fill):
    def forward(self, x, median, sigma, generator=None):
        z = xp.asarray(array_rng(generator).standard_cauchy(x.shape))
        return (median + sigma * z).astype(x.dtype)


def _continuous_only(x, what, names):
    if x._data.dtype.kind not in 'fV':
        raise RuntimeError(f'{what} distribution is a continuous probability distribution. '
                           f'dtype must be a floating point but you specified '
                           f'{names[_name(x._data.dtype)]}')


@method
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with uniform samples in [from, to)."""
    low = _scalar(kw.pop('from', from_), 'uniform_', 'from')
    high = _scalar(kw.pop('to', to), 'uniform_', 'to')
    _no_extra(kw, 'uniform_')
    array_rng(generator)
    np_dtype = _float_only(self._data.dtype, 'check_uniform_bounds')
    ctype, top = _C_TYPE[_name(np_dtype)], _dtype.finfo(_dtype.FROM_NUMPY[np_dtype]).max
    if not -top <= low <= top:
        raise RuntimeError(f'from is out of bounds for {ctype} (uniform_: from={_num(low)})')
    if not -top <= high <= top:
        raise RuntimeError(f'to is out of bounds for {ctype} (uniform_: to={_num(high)})')
    if low > high:
        raise RuntimeError(f'uniform_ expects to return a [from, to) range, but found '
                           f'from={_num(low)} > to={_num(high)}')
    if high - low > top:
        raise RuntimeError(f'uniform_ expects to-from <= std::numeric_limits<{ctype}>::max(), '
                           f'but found to={_num(high)} and from={_num(low)} which result in '
                           f'to-from to exceed the limit')
    return Uniform.apply_(self, low=low, high=high, generator=generator)


@method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples."""
    mean, std = _scalar(mean, 'normal_', 'mean'), _scalar(std, 'normal_', 'std')
    array_rng(generator)
    _float_only(self._data.dtype, 'normal_kernel_cpu')
    if not std >= 0.0:
        raise RuntimeError(f'normal expects std >= 0.0, but found std {_num(std)}')
    return NormalFill.apply_(self, mean=mean, std=std, generator=generator)


@method
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to self), else 0."""
    array_rng(generator)
    if isinstance(p, Tensor):
        pd = p._data
        _float_only(pd.dtype, 'bernoulli_tensor_cpu_p_')
        shape = self._data.shape
        if pd.ndim > len(shape):
            raise RuntimeError(f'expand({p.type()}{{{list(pd.shape)}}}, size={list(shape)}): the '
                               f'number of sizes provided ({len(shape)}) must be greater or equal '
                               f'to the number of dimensions in the tensor ({pd.ndim}) '
                               f'(bernoulli_: p must broadcast to self)')
        for i in range(1, pd.ndim + 1):
            if pd.shape[-i] not in (1, shape[-i]):
                raise RuntimeError(
                    f'The expanded size of the tensor ({shape[-i]}) must match the existing size '
                    f'({pd.shape[-i]}) at non-singleton dimension {len(shape) - i}.  Target '
                    f'sizes: {list(shape)}.  Tensor sizes: {list(pd.shape)} (bernoulli_: p '
                    f'must broadcast to self)')
        _check_p(pd)
        return BernoulliTensorFill.apply_(self, p, generator=generator)
    p = _scalar(p, 'bernoulli_', 'p')
    if not 0 <= p <= 1:
        raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_num(p)}')
    return BernoulliFill.apply_(self, p=p, generator=generator)


@method('bernoulli')
def _bernoulli_method(self, p=None, *, generator=None):
    if isinstance(p, Tensor):
        raise TypeError('bernoulli(): p must be a number (for a tensor of probabilities, call '
                        'dynagrad.bernoulli(p) or self.bernoulli_(p))')
    return bernoulli(self, p, generator=generator)


@method
def random_(self, *args, generator=None, **kw):
    """``random_()``: integers over the dtype's range ([0, 2^mantissa] for floats);
    ``random_(to)``: [0, to); ``random_(from, to)``: [from, to) (to=None: the dtype's top)."""
    _no_extra({k: v for k, v in kw.items() if k not in ('from', 'to')}, 'random_')
    if len(args) > 2 or len(args) + len(kw) > 2 or (len(args) == 1 and 'to' in kw):
        raise TypeError('random_() takes random_(), random_(to) or random_(from, to)')
    if len(args) == 2:
        low, high, node = args[0], args[1], Random
    elif len(args) == 1:
        low, high = kw.get('from', 0), args[0]
        node = Random if 'from' in kw else RandomTo
    elif kw:
        low, high = kw.get('from', 0), kw.get('to')
        node = Random if 'from' in kw else RandomTo
    else:
        low, high, node = 0, None, RandomFull
    array_rng(generator)
    np_dtype = self._data.dtype
    name = _name(np_dtype)
    low = _int_arg(low, 'random_', 'from')
    if np_dtype.kind in 'fV':
        top = 1 << _MANTISSA[name]
    elif np_dtype.kind == 'b':
        top = 1
    else:
        top = int(np.iinfo(np_dtype).max)
    if high is None:
        if node is not RandomFull and np_dtype.kind in 'fV' and not low < top:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={low} > to_inc={top}")
        high_inc = top
    else:
        high = _int_arg(high, 'random_', 'to')
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f'from={low} >= to={high}')
        high_inc = high - 1
    _check_range(low, high_inc, np_dtype)
    return node.apply_(self, low=low, high_inc=high_inc, generator=generator)


@method
def exponential_(self, lambd=1.0, *, generator=None):
    lambd = _scalar(lambd, 'exponential_', 'lambd')
    array_rng(generator)
    _continuous_only(self, 'Exponential', _KERNEL_TYPE)
    if not lambd > 0.0:
        raise RuntimeError(f'exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}')
    return Exponential.apply_(self, lambd=lambd, generator=generator)


@method
def geometric_(self, p, *, generator=None):
    p = _scalar(p, 'geometric_', 'p')
    array_rng(generator)
    if self._data.dtype.kind == 'b':
        raise NotImplementedError('"geometric_cpu" not implemented for \'Bool\'')
    if not 0 < p < 1:
        raise RuntimeError(f'geometric_ expects p to be in (0, 1), but got p={_num(p)}')
    return Geometric.apply_(self, p=p, generator=generator)


@method
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    mean, std = _scalar(mean, 'log_normal_', 'mean'), _scalar(std, 'log_normal_', 'std')
    array_rng(generator)
    _float_only(self._data.dtype, 'log_normal_cpu')
    if not std > 0.0:
        raise RuntimeError(f'log_normal_ expects std > 0.0, but found std={_num(std)}')
    return LogNormal.apply_(self, mean=mean, std=std, generator=generator)


@method
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    median = _scalar(median, 'cauchy_', 'median')
    sigma = _scalar(sigma, 'cauchy_', 'sigma')
    array_rng(generator)
    _continuous_only(self, 'Cauchy', _C_TYPE)
    if not sigma > 0.0:
        raise RuntimeError(f'cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}')
    return Cauchy.apply_(self, median=median, sigma=sigma, generator=generator)


__all__ = ['Generator', 'default_generator', 'manual_seed', 'initial_seed', 'seed',
           'get_rng_state', 'set_rng_state', 'rand', 'randn', 'randint', 'randperm',
           'rand_like', 'randn_like', 'randint_like', 'normal', 'bernoulli', 'poisson',
           'multinomial']
