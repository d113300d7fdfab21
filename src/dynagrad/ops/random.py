"""Random sampling: the generator, random constructors, sampling ops and in-place fillers.

Every draw goes through a ``Generator``: the one passed as ``generator=``, else
``default_generator``, which ``dynagrad.manual_seed`` seeds. The engine is the one PyTorch's
CPU generator uses, a 32-bit Mersenne Twister (mt19937, NumPy's ``MT19937`` bit generator)
seeded with the standard initialisation from the low 32 bits of the seed, and the
distributions are the same transforms of its draws, so after the same seed ``rand``,
``randn``, ``randint``, ``randperm``, ``random_``, ``normal``/``normal_``, ``uniform_``,
``bernoulli``/``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``,
``cauchy_``, ``multinomial``, dropout and ``nn.init`` give PyTorch's CPU values bit for bit
(float32 and float64; the half types too), and calls advance the stream as PyTorch's do.
``poisson`` and ``binomial`` draw from the same engine with NumPy's samplers (PyTorch's
use a variable number of draws per element by rejection): deterministic under
``manual_seed``, but not PyTorch's values.

The transforms (found by comparing with PyTorch's outputs): a float32 uniform is the low 24
bits of one 32-bit draw times 2**-24, a float64 one the low 53 bits of a 64-bit draw (first
32-bit draw high) times 2**-53; ``uniform_(a, b)`` is ``fma(u, b - a, a)``. Normal samples
come from Box-Muller: tensors of 16 or more elements fill with uniforms, then each block of
16 turns its first 8 into ``1 - u`` radii and its last 8 into angles (the last, partial
block is redone from 16 fresh uniforms); float32 computes this with the single-precision
Cephes log and sincos (fused multiply-adds), float64 with the C library's ``log``.
Smaller tensors take two float64 uniforms per pair, ``sqrt(-2 log1p(-u2))`` and
``2 pi u1``, and keep the pair's sine for the next draw (part of the generator's state).
The C library's ``log``, ``log1p``, ``exp`` and ``tan`` are called per element (through
``math``): NumPy's vectorised ones differ from them in the last bit now and then.

Autograd follows PyTorch: a sample is not a differentiable function of its parameters,
so ``normal(mean, std)``, ``bernoulli(p)`` and ``poisson(rates)`` record a node whose
gradients are zero, and the in-place fillers (``uniform_``, ``normal_``, ...) on a
non-leaf replace its history with a node that sends zero back; on a leaf that requires
grad they raise unless run under ``no_grad`` (as ``nn.init`` does).
"""
import contextlib
import ctypes
import math
import os
import struct
import warnings

import numpy as np

from .. import _dtype
from .._device import default_device_set, get_default_device
from .._meta import MetaArray
from ..autograd.device_dispatch import current_device_type
from ..backend import native_kernel, xp
from ..autograd.function import Op
from ..autograd.batched import state as _vmap, check_random, random_batch, batched
from ..autograd.batched import captured_whole, vmap_function
from ..tensor import Tensor, as_device, check_device, CPU, method, wrap
from .formula import zeros_like
from .random_draws import (_bits53, _fma32, _fma64, _integers, _libm, _normal_fill,
                           _normal_pairs, _raw32, _raw64, _scale_shift, _uniform53,
                           _uniform_bits)

_U64 = 1 << 64
_DEFAULT_SEED = 67280421310721
_MT_WORDS = 624
# seed, then the twister's 624 words and position, then the cached normal sample (flag, value)
_STATE_LAYOUT = struct.Struct('<Q' + 'I' * _MT_WORDS + 'qQd')
_STATE_BYTES = _STATE_LAYOUT.size


# -- the generator -----------------------------------------------------------------------

def _check_seed(seed):
    if isinstance(seed, Tensor) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f'manual_seed expected a long, but got {type(seed).__name__}')
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError(f'Overflow when unpacking long long: manual_seed takes a seed in '
                         f'[-2**63, 2**64 - 1], got {seed}')
    return seed % _U64   # negative seeds wrap, as in PyTorch


def _twister(seed):
    """An MT19937 bit generator after the standard init_genrand of the seed's low 32 bits."""
    legacy = np.random.RandomState(seed & 0xffffffff).get_state(legacy=True)
    bits = np.random.MT19937()
    bits.state = {'bit_generator': 'MT19937', 'state': {'key': legacy[1], 'pos': legacy[2]}}
    return bits


# what Generator._use sets: made on the first draw after a seed
_TWISTER_STATE = ('_bits', '_rng', '_normal', '_words')


class Generator:
    """A seeded source of random numbers for the sampling functions' ``generator=``.

    ``Generator().manual_seed(s)`` gives the same stream as ``dynagrad.manual_seed(s)``
    gives the default generator, and the same values as PyTorch's CPU generator.
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
        # The twister itself is made at the first draw (see __getattr__): making it imports
        # numpy.random, which cost a tenth of ``import dynagrad`` for the default generator.
        self._seed = seed
        state = vars(self)
        for name in _TWISTER_STATE:
            state.pop(name, None)

    def __getattr__(self, name):
        if name in _TWISTER_STATE and '_seed' in vars(self):
            self._use(_twister(self._seed))
            return vars(self)[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _use(self, bits, normal=None):
        self._bits = bits
        self._rng = np.random.Generator(bits)   # NumPy's samplers on the same stream
        self._normal = normal                    # the cached second value of a normal pair
        self._words = None                       # the twister's state as an array, when made

    @property
    def device(self):
        return CPU

    def manual_seed(self, seed):
        """Seed the generator (an int in [-2**63, 2**64 - 1]; negative seeds wrap). Returns it."""
        self._reseed(_check_seed(seed))
        return self

    def initial_seed(self):
        return self._seed

    # Philox offsets and CUDA-graph-safe states belong to accelerator generators; a CPU
    # generator refuses them as PyTorch's does
    def get_offset(self):
        raise RuntimeError('CPU Generator does not use offset')

    def set_offset(self, offset):
        raise RuntimeError('CPU Generator does not use offset')

    def graphsafe_get_state(self):
        raise NotImplementedError('graphsafe_get_state is not supported in this Generator')

    def graphsafe_set_state(self, state):
        if not isinstance(state, Generator):
            raise TypeError(f'expected a Generator, but got {type(state).__name__}')
        raise NotImplementedError('graphsafe_set_state is not supported in this Generator')

    def seed(self):
        """Seed from the operating system's entropy; return the seed."""
        seed = int.from_bytes(os.urandom(8), 'little')
        self._reseed(seed)
        return seed

    def get_state(self):
        """The state as a uint8 tensor; ``set_state`` of it repeats the stream exactly."""
        st = self._bits.state['state']
        cached = self._normal is not None
        raw = _STATE_LAYOUT.pack(self._seed, *[int(k) for k in st['key']], int(st['pos']),
                                 int(cached), self._normal if cached else 0.0)
        return wrap(xp.frombuffer(raw, np.uint8).copy())

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
        words = _STATE_LAYOUT.unpack(xp.ascontiguousarray(new_state._data).reshape(-1).tobytes())
        pos = words[1 + _MT_WORDS]
        if not 0 <= pos <= _MT_WORDS:
            raise RuntimeError(f'Invalid mt19937 state: position {pos} is outside [0, '
                               f'{_MT_WORDS}] (pass a tensor from get_state())')
        bits = np.random.MT19937()
        bits.state = {'bit_generator': 'MT19937',
                      'state': {'key': xp.array(words[1:1 + _MT_WORDS], dtype=np.uint32),
                                'pos': pos}}
        self._seed = words[0]
        self._use(bits, words[-1] if words[-2] else None)
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
    """Seed the default generator and every device's (``int(seed)``, as PyTorch does);
    returns the default generator."""
    seed = int(seed)
    for generator in _device_generators.values():
        generator.manual_seed(seed)
    return default_generator.manual_seed(seed)


# device type -> the generator its draws come from (made when the device is first used).
# Its bits come from the same Mersenne Twister as the CPU's, drawn on the host and copied
# over: a seeded program draws the same numbers on either device (PyTorch's CUDA
# generator, Philox, draws others).
_device_generators = {}


def device_generator(kind):
    """The default generator of device type ``kind`` ('cuda')."""
    generator = _device_generators.get(kind)
    if generator is None:
        check_device(kind)
        generator = _new_generator(Generator)
        generator._reseed(_DEFAULT_SEED)
        generator.seed()
        _device_generators[kind] = generator
    return generator


def _new_generator(cls):
    return object.__new__(cls)


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
    state = all_rng_states()
    try:
        yield
    finally:
        set_all_rng_states(state)


def all_rng_states():
    """The state of the default generator and of every device's (checkpoint's stash)."""
    return {kind: g.get_state() for kind, g in
            [('cpu', default_generator)] + list(_device_generators.items())}


def set_all_rng_states(states):
    """Put back what ``all_rng_states`` returned."""
    for kind, state in states.items():
        (default_generator if kind == 'cpu' else device_generator(kind)).set_state(state)


def _generator(generator, device=None):
    """The dynagrad Generator to draw from: ``generator``, else the default one of
    ``device`` (None: of the device the op being run computes on)."""
    if _vmap.active:
        check_random()
    if generator is None:
        kind = _draw_device(device)
        return default_generator if kind == 'cpu' else device_generator(kind)
    if not isinstance(generator, Generator):
        raise TypeError(f'generator must be a dynagrad.Generator, not {type(generator).__name__}')
    return generator


def _draw_device(device):
    if device is not None:
        return as_device(device).type
    if default_device_set():            # a factory under set_default_device or `with device`
        return get_default_device().type
    return current_device_type()        # inside a device op: its device


def array_rng(generator):
    """A NumPy ``Generator`` drawing from the generator's stream (for NumPy's samplers; the
    PyTorch-matching draws below take it too)."""
    return _generator(generator)._rng


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
    # float8 (kind 'V', or 'f' for e5m2) has no sampling kernel either
    if np_dtype.kind not in 'fV' or np_dtype in _dtype.FLOAT8_NUMPY:
        name = _dtype.type_name(_dtype.FROM_NUMPY[np.dtype(np_dtype)])
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
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


def _finish(data, requires_grad, device=None):
    """The drawn (host) array as a tensor on ``device`` (None: the default device)."""
    backend = check_device(device)
    if backend.type != 'cpu':
        data = backend.asarray(data)
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_requires_grad(np_dtype, requires_grad):
    if requires_grad and np_dtype.kind not in 'fVc':
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


# -- sampling kernels (arrays in, arrays out) --------------------------------------------

def uniform01(rng, shape, np_dtype):
    """Uniform in [0, 1) as PyTorch draws it (``rng``: a Generator or the NumPy one that
    ``array_rng`` lends)."""
    u = _uniform_bits(rng, math.prod(shape), np_dtype).astype(np_dtype, copy=False)
    if np_dtype.itemsize < 4:   # rounding to a half type can reach 1
        u = _below_to(u, 0.0, 1.0)
    return u.reshape(shape)


def _below_to(r, low, high):
    """PyTorch keeps ``uniform_`` in [from, to): a value that rounded up to ``to`` (in the
    dtype) becomes ``from``."""
    top = r.dtype.type(high)
    hit = r == top
    if hit.any():
        r[hit] = r.dtype.type(low)
    return r


def native_draw(rng, kernel, *args):
    """Run a native kernel that draws from the twister of ``rng`` (a Generator; None: the
    one ``bernoulli_mask(None, ...)`` draws from) in place: its 624 words and position,
    NumPy's own memory seen as 625 uint32 (no copy in or out: a round trip through
    ``MT19937.state`` costs 70 us), under the bit generator's lock as NumPy's draws run.
    False, drawing nothing, where that memory does not hold this layout."""
    rng = _generator(None) if rng is None else rng
    words = rng._words
    if words is None:       # once per bit generator: ``_use`` replaces both together
        bits = rng._bits
        memory = (ctypes.c_uint32 * (_MT_WORDS + 1)).from_address(bits.ctypes.state_address)
        words = np.ndarray((_MT_WORDS + 1,), np.uint32, buffer=memory)  # host memory, not xp
        state = bits.state['state']
        same = (words[:_MT_WORDS] == state['key']).all() and words[_MT_WORDS] == state['pos']
        words = rng._words = words if same else False
    if words is False:
        return False
    with rng._bits.lock:
        return kernel(words, *args)


def _bernoulli(rng, p, shape, np_dtype, like=None):
    """1 where a uniform is below ``p``: a float64 uniform for a number ``p``, one in p's
    dtype for a tensor of probabilities (draws walk ``like``'s memory order, if given)."""
    n = math.prod(shape)
    if isinstance(p, (float, int)):
        keep = xp.empty(n, np_dtype)
        kernel = native_kernel('bernoulli_mask', keep) if n else None
        if kernel is None or native_draw(rng, kernel, float(p), keep) is False:
            # u < p with u = k / 2**53 is k < p * 2**53 (exact): compare the integers
            keep = (_bits53(rng, n) < xp.uint64(math.ceil(p * 2.0 ** 53))).astype(np_dtype)
        return _place(keep, shape, like)
    pd = p.dtype if p.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    u = _place(_uniform_bits(rng, n, pd), shape, like)
    return (u < p.astype(u.dtype, copy=False)).astype(np_dtype)


def _walk_axes(like):
    """The axes of a strided array from the largest stride to the smallest, the order in
    which PyTorch's kernels walk a tensor (memory order); None for plain C order."""
    if like is None or like.flags.c_contiguous or like.ndim < 2:
        return None
    axes = sorted(range(like.ndim), key=lambda d: -abs(like.strides[d]) if like.shape[d] > 1
                  else 0)
    return None if axes == list(range(like.ndim)) else axes


def _place(flat, shape, like=None):
    """Values drawn in ``like``'s memory order, as an array of ``shape``."""
    axes = _walk_axes(like)
    if axes is None:
        return flat.reshape(shape)
    walked = flat.reshape([shape[d] for d in axes])
    return walked.transpose(xp.argsort(axes))


def bernoulli_mask(generator, p, shape, np_dtype):
    """A 0/1 array of ``shape``, 1 with probability ``p`` (a number), drawn as PyTorch's
    ``bernoulli_(p)`` draws it (dropout's masks)."""
    return _bernoulli(_generator(generator), float(p), shape, np_dtype)


def _exponential(rng, shape, lambd):
    u = _uniform53(rng, math.prod(shape)).reshape(shape)
    return (-1.0 / lambd) * _libm(math.log1p, -u)


class _ZeroGrad(Op):
    """A sample: PyTorch gives its parameters zero gradients (no reparameterisation)."""

    def backward(self, g):
        z = zeros_like(g)
        return (z,) * self._n


# -- random constructors -----------------------------------------------------------------

def _per_sample(shape):
    """Inside vmap with randomness='different', a factory draws for every sample: the
    batch dims of those levels first. ``(levels, shape)``."""
    if _vmap.active:
        levels, sizes = random_batch()
        if levels:
            return levels, tuple(sizes) + tuple(shape)
    return (), shape


@captured_whole
def rand(*size, generator=None, dtype=None, layout=None, device=None,
         pin_memory=False, requires_grad=False, **kw):
    """Uniform samples in [0, 1)."""
    shape = _size(size, kw.pop('size', None), 'rand')
    _no_extra(kw, 'rand')
    check_device(device)
    np_dtype = _float_only(_np_dtype(dtype), 'check_uniform_bounds')
    levels, shape = _per_sample(shape)
    return batched(_finish(uniform01(_generator(generator, device), shape, np_dtype),
                           requires_grad, device), levels)


@captured_whole
def randn(*size, generator=None, dtype=None, layout=None, device=None,
          pin_memory=False, requires_grad=False, **kw):
    """Standard normal samples."""
    shape = _size(size, kw.pop('size', None), 'randn')
    _no_extra(kw, 'randn')
    check_device(device)
    np_dtype = _np_dtype(dtype)
    levels, shape = _per_sample(shape)
    if np_dtype.kind == 'c':
        # PyTorch's complex normal: independent real and imaginary parts of variance 1/2
        part = np_dtype.type(0).real.dtype
        pair = _normal_fill(_generator(generator, device), shape + (2,), part) * \
            part.type(0.5 ** 0.5)
        values = xp.empty(shape, np_dtype)
        values.real, values.imag = pair[..., 0], pair[..., 1]
        return batched(_finish(values, requires_grad, device), levels)
    np_dtype = _float_only(np_dtype, 'normal_kernel_cpu')
    return batched(_finish(_normal_fill(_generator(generator, device), shape, np_dtype),
                           requires_grad, device), levels)


def _no_extra(kw, fn):
    if kw:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kw))}'")


@captured_whole
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
    levels, shape = _per_sample(shape)
    return batched(_finish(_integers(_generator(generator, device), low, high - 1, shape,
                                     np_dtype),
                           requires_grad, device), levels)


@captured_whole
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
    return _finish(_permutation(_generator(generator, device), n).astype(np_dtype),
                   requires_grad, device)


def _permutation(g, n):
    """PyTorch's shuffle: for each i, swap place i with a place drawn from [i, n). The
    swaps depend on each other, so this one runs a loop (about 0.1 s per million)."""
    if n < 2:
        return xp.arange(n, dtype=np.int64)
    spans = xp.arange(n, 1, -1, dtype=np.uint64)
    if n < 0xffffffff // 20:
        offsets = _raw32(g, n - 1) % spans
    else:
        offsets = _raw64(g, n - 1) % spans
    perm = list(range(n))
    for i, j in enumerate((offsets + xp.arange(n - 1, dtype=np.uint64)).tolist()):
        perm[i], perm[j] = perm[j], perm[i]
    return xp.array(perm, dtype=np.int64)


def _like_dtype(input, dtype):
    return dtype if dtype is not None else input.dtype


def _like_device(input, device):
    """``*_like`` allocate on the input's device unless told otherwise (not the default)."""
    return device if device is not None else input.device


@captured_whole
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    return rand(input.shape, generator=generator, dtype=_like_dtype(input, dtype),
                device=_like_device(input, device),
                 requires_grad=requires_grad)


@captured_whole
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    return randn(input.shape, generator=generator, dtype=_like_dtype(input, dtype),
                 device=_like_device(input, device),
                 requires_grad=requires_grad)


@captured_whole
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
        z = _normal_fill(_generator(generator), shape,
                         np_dtype if np_dtype.itemsize >= 4 else np.dtype(np.float32))
        return (m + s * z).astype(np_dtype, copy=False)


class Bernoulli(_ZeroGrad):
    """``bernoulli(p)``: 1 with probability p, in p's dtype."""
    _n = 1

    def forward(self, p, generator=None):
        return _bernoulli(_generator(generator), p, p.shape, p.dtype)


class BernoulliScalarP(Op):
    """``bernoulli(input, p)``: input gives shape and dtype only. PyTorch has no derivative."""
    node_name = 'NotImplemented'

    def forward(self, x, p, generator=None):
        return _bernoulli(_generator(generator), p, x.shape, x.dtype)

    def backward(self, g):
        raise RuntimeError('derivative for aten::bernoulli is not implemented (bernoulli(input, '
                           'p) samples do not depend on input; detach() it first)')


class Poisson(_ZeroGrad):
    _n = 1

    def forward(self, rates, generator=None):
        return xp.asarray(array_rng(generator).poisson(rates)).astype(rates.dtype)


class Binomial(Op):
    """``binomial(count, prob)``: NumPy's sampler on the generator's stream."""
    node_name = 'NotImplemented'

    def forward(self, count, prob, generator=None):
        n, p = xp.broadcast_arrays(count, prob)
        draws = array_rng(generator).binomial(n.astype(np.int64), p.astype(np.float64))
        return xp.asarray(draws).astype(count.dtype)

    def backward(self, g):
        raise RuntimeError('derivative for aten::binomial is not implemented (binomial samples '
                           'are not differentiable; detach() count first)')


class Multinomial(Op):
    differentiable = False

    def forward(self, p, num_samples, replacement, generator=None):
        g = _generator(generator)
        k = p.shape[-1]
        P = p.reshape(-1, k)
        rows = P.shape[0]
        if rows == 0:
            return xp.zeros(p.shape[:-1] + (num_samples,), np.int64)
        if replacement and num_samples > 1:
            # a float64 uniform per sample (row by row), found in the normalised running sum
            idx = xp.empty((rows, num_samples), np.int64)
            kernel = native_kernel('multinomial_with_replacement', P)
            if kernel is None or native_draw(g, kernel, xp.ascontiguousarray(P), idx) is False:
                cdf = xp.cumsum(P.astype(np.float64), axis=1)
                cdf /= cdf[:, -1:]
                cdf[:, -1] = 1.0
                u = _uniform53(g, rows * num_samples).reshape(rows, num_samples)
                idx = _first_at_least(cdf, u)
        else:
            # exponential races: the largest p / E (E ~ Exp(1), in p's dtype) win; E is
            # drawn as PyTorch's ``empty_like(p).exponential_()``, in p's memory order
            work = p.dtype if p.dtype.itemsize >= 4 else np.dtype(np.float32)
            kernel = native_kernel('multinomial_race', P) if P.flags.c_contiguous else None
            keys, winners = xp.empty(P.shape, work), xp.empty(rows, np.int64)
            if kernel is None or native_draw(g, kernel, P, keys, winners) is False:
                exponentials = _place(_exponential(g, (P.size,), 1.0), P.shape, P)
                keys = P.astype(work, copy=False) / exponentials.astype(work)
                winners = xp.argmax(keys, axis=1)
            if num_samples == 1:
                idx = winners[:, None]
            else:
                idx = xp.argsort(-keys, axis=1, kind='stable')[:, :num_samples]
        return idx.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64)


_SEARCH_ROW_BY_ROW = 16


def _first_at_least(cdf, u):
    """Per row, the first index whose ``cdf`` is >= each ``u`` (a binary search run on all
    rows at once, comparing exactly)."""
    rows, k = cdf.shape
    if rows <= _SEARCH_ROW_BY_ROW:  # searchsorted per row: fewer calls than the halvings'
        return xp.stack([xp.searchsorted(cdf[r], u[r], side='left') for r in range(rows)])
    left = xp.zeros(u.shape, np.int64)
    right = xp.full(u.shape, k, np.int64)
    row = xp.arange(rows)[:, None]
    while True:
        open_ = left < right
        if not open_.any():
            return left
        mid = (left + right) // 2
        below = cdf[row, xp.minimum(mid, k - 1)] < u
        left = xp.where(open_ & below, mid + 1, left)
        right = xp.where(open_ & ~below, mid, right)


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
        return _finish(_normal_fill(_generator(generator, device), shape, np_dtype, m, s),
                       requires_grad, device)
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


def _broadcast(a, b, names=('normal', 'mean', 'std')):
    try:
        return xp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        x, y = a.shape, b.shape
        for i in range(1, min(len(x), len(y)) + 1):
            if x[-i] != y[-i] and x[-i] != 1 and y[-i] != 1:
                raise RuntimeError(
                    f'The size of tensor a ({x[-i]}) must match the size of tensor b ({y[-i]}) '
                    f'at non-singleton dimension {max(len(x), len(y)) - i} ({names[0]}: '
                    f'{names[1]} of shape {list(x)}, {names[2]} of shape {list(y)})') from None
        raise


def _check_std(s):
    if s.size and not (s >= 0).all():
        raise RuntimeError('normal expects all elements of std >= 0.0')


def _check_p(p):
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false. '
                           '(bernoulli: every probability must be in [0, 1])')


@vmap_function('sampler')
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


@vmap_function('sampler')
def poisson(input, generator=None):
    """Poisson samples with rates ``input``, in its dtype."""
    _tensor_arg(input, 'poisson', 'input')
    array_rng(generator)
    rates = input._data
    _float_only(rates.dtype, 'poisson_cpu')
    if rates.size and not (rates >= 0).all():
        raise RuntimeError('invalid Poisson rate, expected rate to be non-negative')
    return Poisson.apply(input, generator=generator)


@vmap_function('sampler')
def binomial(count, prob, generator=None):
    """Binomial samples: successes in ``count`` trials of probability ``prob`` (tensors of
    one floating dtype, broadcast), in count's dtype."""
    _tensor_arg(count, 'binomial', 'count')
    if not isinstance(prob, Tensor):
        raise TypeError(f"binomial(): argument 'prob' (position 2) must be Tensor, not "
                        f'{type(prob).__name__}')
    array_rng(generator)
    n, p = count._data, prob._data
    if n.dtype.kind not in 'fV':
        raise ValueError(f'binomial only supports floating-point dtypes for count, got: '
                         f'{_KERNEL_TYPE[_name(n.dtype)]}')
    if p.dtype != n.dtype:
        raise RuntimeError(f'Found dtype {_KERNEL_TYPE[_name(p.dtype)]} but expected '
                           f'{_KERNEL_TYPE[_name(n.dtype)]} (binomial: count and prob must '
                           f'share a dtype)')
    _broadcast(count, prob, ('binomial', 'count', 'prob'))
    if n.size and not (n >= 0).all():
        raise RuntimeError('binomial expects count >= 0 (got a negative count)')
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError('binomial expects prob in [0, 1] (got a probability outside it)')
    return Binomial.apply(count, prob, generator=generator)


def _check_probabilities(p):
    """Refuse inf, NaN, negative numbers and rows of zeros: for float32/64 by NaN-propagating
    reductions (half the cost of the element-wise masks, once per token in a sampling loop)."""
    if p.__class__ is np.ndarray and p.dtype.char in 'fd':
        row_max = xp.maximum.reduce(p, axis=-1)     # (Python floats compare fastest)
        least = high = float(row_max.item()) if row_max.size == 1 else None
        if least is None:
            least, high = float(xp.minimum.reduce(row_max)), float(xp.maximum.reduce(row_max))
        finite_nonnegative = float(xp.minimum.reduce(p, axis=None)) >= 0 and high < math.inf
        positive = least > 0
    else:
        finite_nonnegative = (xp.isfinite(p) & (p >= 0)).all()
        positive = finite_nonnegative and (p.sum(-1, dtype=np.float64) > 0).all()
    if not finite_nonnegative:
        raise RuntimeError('probability tensor contains either `inf`, `nan` or element < 0')
    if not positive:
        raise RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)')


@method
@vmap_function('sampler')
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
        _check_probabilities(p)
    elif k == 0 and (p.ndim == 1 or p.shape[0]):
        raise RuntimeError('invalid multinomial distribution (sum of probabilities <= 0): '
                           'no categories')
    result = Multinomial.apply(input, num_samples, bool(replacement), generator=generator)
    return result


# -- in-place fillers --------------------------------------------------------------------

class _Fill(Op):
    """An in-place random fill: the old values get zero gradient (so do tensor params)."""
    widens_bfloat16 = False   # the draw depends on the dtype: bfloat16 is drawn as such

    @classmethod
    def apply_(cls, target, *others, **params):
        if isinstance(target._data, MetaArray):
            return target       # nothing to fill, and no generator draws (as in PyTorch)
        return super().apply_(target, *others, **params)

    def backward(self, g):
        z = zeros_like(g)
        return (z,) * len(self.next_functions)


class Uniform(_Fill):
    def forward(self, x, low, high, generator=None):
        work = x.dtype if x.dtype.itemsize >= 4 else np.dtype(np.float32)  # halves: in float32
        u = _place(_uniform_bits(_generator(generator), x.size, x.dtype), x.shape, x)
        if (low, high) == (0.0, 1.0):
            r = u.astype(x.dtype, copy=False)
        elif work == np.float64:
            r = _fma64(u, high - low, low)
        else:   # from and to in the tensor's dtype first, then fma(u, to - from, from)
            lo, hi = (x.dtype.type(v).astype(np.float32) for v in (low, high))
            r = _fma32(u, hi - lo, lo, tiny=True).astype(x.dtype, copy=False)
        return _below_to(r, low, high)


class NormalFill(_Fill):
    node_name = 'NormalBackward0'

    def forward(self, x, mean, std, generator=None):
        # PyTorch's blocked path is for contiguous tensors; others draw one by one
        if x.flags.c_contiguous:
            return _normal_fill(_generator(generator), x.shape, x.dtype, mean, std)
        z = _scale_shift(_normal_pairs(_generator(generator), x.size), std, mean,
                         np.dtype(np.float64))
        return _place(z.astype(x.dtype), x.shape, x)


class BernoulliFill(_Fill):
    node_name = 'BernoulliBackward2'

    def forward(self, x, p, generator=None):
        return _bernoulli(_generator(generator), p, x.shape, x.dtype, like=x)


class BernoulliTensorFill(_Fill):
    node_name = 'BernoulliBackward1'

    def forward(self, x, p, generator=None):
        return _bernoulli(_generator(generator), p, x.shape, x.dtype, like=x)


class Random(_Fill):
    """``random_(from, to)``; the subclasses are the ``random_(to)`` and ``random_()`` forms,
    which PyTorch names differently."""
    def forward(self, x, low, high_inc, generator=None):
        flat = _integers(_generator(generator), low, high_inc, (x.size,), x.dtype)
        return _place(flat, x.shape, x)


class RandomTo(Random):
    node_name = 'RandomBackward1'


class RandomFull(Random):
    node_name = 'RandomBackward2'


class Exponential(_Fill):
    def forward(self, x, lambd, generator=None):
        flat = _exponential(_generator(generator), (x.size,), lambd).astype(x.dtype)
        return _place(flat, x.shape, x)


class Geometric(_Fill):
    """``ceil(log(u) / log1p(-p))`` with a float64 uniform u."""

    def forward(self, x, p, generator=None):
        u = _uniform53(_generator(generator), x.size)
        zero = u == 0            # log(0) = -inf: the sample is +inf (1 in 2**53)
        logs = _libm(math.log, xp.where(zero, 1.0, u))
        k = xp.ceil(logs / math.log1p(-p))
        if zero.any():
            k[zero] = xp.inf
        return _place(k.astype(x.dtype), x.shape, x)


class LogNormal(_Fill):
    """``exp(fma(z, std, mean))``, z from the scalar normal draws (whatever the size)."""

    def forward(self, x, mean, std, generator=None):
        z = _normal_pairs(_generator(generator), x.size)
        flat = _libm(math.exp, _scale_shift(z, std, mean, np.dtype(np.float64)))
        return _place(flat.astype(x.dtype), x.shape, x)


class Cauchy(_Fill):
    """``fma(tan(pi (u - 1/2)), sigma, median)`` with a float64 uniform u."""

    def forward(self, x, median, sigma, generator=None):
        u = _uniform53(_generator(generator), x.size)
        t = _libm(math.tan, math.pi * (u - 0.5))
        flat = _scale_shift(t, sigma, median, np.dtype(np.float64)).astype(x.dtype)
        return _place(flat, x.shape, x)


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
    if self._data.dtype.kind == 'c':   # torch draws the real view: each part in [from, to)
        from .complex_numbers import view_as_real
        view_as_real(self).uniform_(low, high, generator=generator)
        return self
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
    if self._data.dtype.kind != 'c':
        _float_only(self._data.dtype, 'normal_kernel_cpu')
    if not std >= 0.0:
        raise RuntimeError(f'normal expects std >= 0.0, but found std {_num(std)}')
    if self._data.dtype.kind == 'c':
        # torch draws the real view: each part N(mean, std^2 / 2), so E|z - mean|^2 = std^2
        from .complex_numbers import view_as_real
        view_as_real(self).normal_(mean, std / math.sqrt(2), generator=generator)
        return self
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
           'binomial', 'multinomial']
