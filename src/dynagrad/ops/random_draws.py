"""PyTorch's draws from its CPU engine, on NumPy: the Mersenne Twister's 32- and 64-bit
words, the uniforms made of 24 and 53 bits, the normal pairs of its Box-Muller (blocked
for tensors of 16 values or more), its integers in a range, and the float arithmetic they
need to round as PyTorch's vectorised code does (fused multiply-adds, float32 log, sin and
cos). ``dynagrad.ops.random`` samples through these, so a seeded program draws PyTorch's
numbers."""
import math

import numpy as np

from ..backend import xp

_U64 = 1 << 64
_SIXTEEN = 16        # tensors this big take the blocked Box-Muller path


def _bits_of(rng):
    """The MT19937 bit generator behind a dynagrad Generator or the NumPy one it lends."""
    bits = getattr(rng, 'bit_generator', None)    # NumPy's Generator
    return rng._bits if bits is None else bits


def _raw32(rng, n):
    """``n`` 32-bit draws (as uint64), on the device the running op computes on: the
    engine runs on the host, so inside a device op (an in-place fill, dropout's mask) its
    bits are copied over and the rest of the draw computes there."""
    return xp.asarray(_bits_of(rng).random_raw(n))


def _raw64(rng, n):
    """``n`` 64-bit draws, each two 32-bit draws, the first the high half."""
    r = _raw32(rng, 2 * n)
    return (r[0::2] << xp.uint64(32)) | r[1::2]


def _uniform24(rng, n):
    """float32 uniforms in [0, 1): the low 24 bits of a 32-bit draw."""
    u = (_raw32(rng, n) & xp.uint64(0xffffff)).astype(np.float32)
    u *= np.float32(2.0 ** -24)
    return u


def _bits53(rng, n):
    """The low 53 bits of ``n`` 64-bit draws."""
    r = _raw32(rng, 2 * n)
    high = r[0::2]
    high &= xp.uint64((1 << 21) - 1)
    high <<= xp.uint64(32)
    high |= r[1::2]
    return high


def _uniform53(rng, n):
    """float64 uniforms in [0, 1): the low 53 bits of a 64-bit draw."""
    u = _bits53(rng, n).astype(np.float64)
    u *= 2.0 ** -53
    return u


def _uniform_bits(rng, n, np_dtype):
    """Uniforms in [0, 1) as PyTorch draws them for ``np_dtype`` (the float32 ones for the
    half types, rounded to them afterwards)."""
    if np_dtype == np.float64:
        return _uniform53(rng, n)
    return _uniform24(rng, n)


# Fused multiply-add, rounded once as the hardware's is: PyTorch's kernels use it, and a
# separate multiply and add differ in the last bit about a third of the time.

def _add_round_odd(a, b):
    """``a + b`` (float64) rounded to odd: exact sum's truncation with the last bit set when
    inexact, so that one more rounding to fewer bits is the correct rounding of the sum."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s = xp.where(fix, xp.nextafter(s, xp.where(err > 0, xp.inf, -xp.inf)), s)
    return s


def _split(a):
    c = 134217729.0 * a    # 2**27 + 1: Veltkamp's split into two 26-bit halves
    hi = c - (c - a)
    return hi, a - hi


def _fma64(x, y, z):
    """``x * y + z`` for float64 arrays/scalars, rounded once (Boldo and Melquiond's
    emulation: exact product, exact sum, then the low parts rounded to odd)."""
    x = xp.asarray(x, np.float64)
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(xp.asarray(y, np.float64))
    perr = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    s = p + z
    bb = s - p
    serr = (p - (s - bb)) + (z - bb)
    return s + _add_round_odd(serr, perr)


def _fma32(x, y, z, tiny=False):
    """``x * y + z`` for float32 values, rounded once. The product is exact in float64 and
    the float64 sum rounds again only by a hair, which matters only where it lands exactly
    halfway between two float32s (or, with ``tiny``, among subnormals): those few are
    redone exactly."""
    s = xp.asarray(x).astype(np.float64)
    s *= y
    s += z
    bits = s.view(np.int64)
    risky = (bits & 0x1fffffff) == 0x10000000
    if tiny:
        risky |= (bits & 0x7ff0000000000000) < 0x3820000000000000     # below 2**-125
    if risky.any():
        p = xp.broadcast_to(xp.asarray(x, np.float64) * y, s.shape)[risky]
        s[risky] = _add_round_odd(p, xp.broadcast_to(xp.asarray(z, np.float64), s.shape)[risky])
    return s.astype(np.float32)


def _scale_shift(z, std, mean, np_dtype):
    """``fma(z, std, mean)`` in ``np_dtype`` (float32 or float64) as PyTorch computes it."""
    if math.frexp(std)[0] == 0.5 or std == 0:   # power of two: the product is exact
        t = np_dtype.type
        return (z * t(std) + t(mean)).astype(np_dtype, copy=False)
    if np_dtype == np.float32:
        return _fma32(z, np.float32(std), np.float32(mean), tiny=True)
    return _fma64(z, std, mean)


# float32 log and sincos: Cephes's single-precision algorithms, evaluated as PyTorch's
# vectorised (AVX2) normal fill does, with its fused multiply-adds.
_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
          3.3333331174E-1)
_F = np.float32


def _log_f32(x):
    bits = xp.maximum(x, _F(1.17549435e-38)).view(np.int32)
    e = ((bits >> 23) - 0x7f).astype(np.float32) + _F(1)
    m = ((bits & ~0x7f800000) | 0x3f000000).view(np.float32)   # mantissa in [0.5, 1)
    low = m < _F(0.707106781186547524)
    e = e - low.astype(np.float32)
    x = (m - _F(1)) + xp.where(low, m, _F(0))
    z = x * x
    y = xp.full_like(x, _F(_LOG_P[0]))
    for c in _LOG_P[1:]:
        y = _fma32(y, x, _F(c))
    y = y * x
    y = _fma32(y, z, e * _F(-2.12194440e-4))
    # the fused steps below have exact products (z / 2; a small integer e times a 9-bit
    # constant), so a plain multiply and add round the same
    y = y - z * _F(0.5)
    return (x + y) + e * _F(0.693359375)


def _sincos_f32(x):
    """sin and cos of float32 angles in [0, 2 pi)."""
    negative = x < 0
    x = xp.abs(x)
    j = (x * _F(1.27323954473516)).astype(np.int32)    # 4 / pi
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    swap = (j & 2) == 0
    # y is an even integer below 9 here (angles in [0, 2 pi)), so its products with the
    # first two parts of pi / 4 (8 and 11 bits) are exact: only the third needs the fma
    x = x + y * _F(-0.78515625)
    x = x + y * _F(-2.4187564849853515625e-4)
    x = _fma32(y, _F(-3.77489497744594108e-8), x)
    sin_negative = negative ^ ((j & 4) != 0)
    cos_negative = ((~(j - 2)) & 4) != 0
    z = x * x
    yc = xp.full_like(x, _F(2.443315711809948E-005))
    yc = _fma32(yc, z, _F(-1.388731625493765E-003))
    yc = _fma32(yc, z, _F(4.166664568298827E-002))
    yc = _fma32(yc * z, z, -(z * _F(0.5))) + _F(1)
    ys = xp.full_like(x, _F(-1.9515295891E-4))
    ys = _fma32(ys, z, _F(8.3321608736E-3))
    ys = _fma32(ys, z, _F(-1.6666654611E-1))
    ys = _fma32(ys * z, x, x)
    s = xp.where(swap, ys, yc)
    c = xp.where(swap, yc, ys)
    return xp.where(sin_negative, -s, s), xp.where(cos_negative, -c, c)


def _libm(fn, a):
    """``fn`` (math.log, math.log1p) element-wise through the C library, as PyTorch's
    kernels call it: NumPy's own SIMD versions differ in the last bit now and then."""
    return xp.fromiter(map(fn, a.ravel().tolist()), np.float64, a.size).reshape(a.shape)


def _box_muller_16(u, np_dtype, mean, std):
    """Blocks of 16 uniforms -> 16 normals: radii from the first 8, angles from the last 8."""
    d = u.reshape(-1, _SIXTEEN)
    half = _SIXTEEN // 2
    if np_dtype == np.float32:
        radius = xp.sqrt(_F(-2) * _log_f32(_F(1) - d[:, :half]))
        sin, cos = _sincos_f32(_F(2 * math.pi) * d[:, half:])
    else:
        radius = xp.sqrt(-2.0 * _libm(math.log, 1.0 - d[:, :half]))
        theta = 2.0 * math.pi * d[:, half:]
        sin, cos = xp.sin(theta), xp.cos(theta)
    out = xp.empty(d.shape, np_dtype)
    out[:, :half] = _scale_shift(radius * cos, std, mean, np_dtype)
    out[:, half:] = _scale_shift(radius * sin, std, mean, np_dtype)
    return out.reshape(-1)


def _normal_pairs(g, n):
    """``n`` float64 standard normals drawn PyTorch's scalar way: a pair per two float64
    uniforms (``sqrt(-2 log1p(-u2))`` times the cosine, then the sine, of ``2 pi u1``), the
    pair's second value kept in the generator for the next draw when it is not used."""
    head = []
    if n and g._normal is not None:
        head = [g._normal]
        g._normal = None
    pairs = (n - len(head) + 1) // 2
    u = _uniform53(g, 2 * pairs).reshape(pairs, 2)
    radius = xp.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
    theta = 2.0 * math.pi * u[:, 0]
    z = xp.stack([radius * xp.cos(theta), radius * xp.sin(theta)], axis=1).reshape(-1)
    out = xp.concatenate([xp.array(head, np.float64), z])
    if out.size > n:
        g._normal = float(out[n])
    return out[:n]


def _normal_fill(g, shape, np_dtype, mean=0.0, std=1.0):
    """Normal samples in ``shape`` as PyTorch's ``normal_`` fills a contiguous tensor."""
    n = math.prod(shape)
    work = np_dtype if np_dtype.itemsize >= 4 else np.dtype(np.float32)
    if n < _SIXTEEN:
        out = _scale_shift(_normal_pairs(g, n), std, mean, np.dtype(np.float64))
        return out.astype(np_dtype).reshape(shape)
    if np_dtype.itemsize < 4:
        # half types: whole blocks over uniforms padded to a multiple of 16; the last block
        # gives the last 16 values
        padded = -(-n // _SIXTEEN) * _SIXTEEN
        v = _box_muller_16(_uniform_bits(g, padded, work), work, mean, std)
        out = xp.concatenate([v[:n - _SIXTEEN], v[padded - _SIXTEEN:]])
        return out.astype(np_dtype).reshape(shape)
    u = _uniform_bits(g, n, work)
    out = xp.empty(n, work)
    full = n - n % _SIXTEEN
    out[:full] = _box_muller_16(u[:full], work, mean, std)
    if full < n:   # the last 16 again, from fresh uniforms
        out[n - _SIXTEEN:] = _box_muller_16(_uniform_bits(g, _SIXTEEN, work), work, mean, std)
    return out.reshape(shape)


def _integers(rng, low, high_inc, shape, np_dtype):
    """Integers in [low, high_inc]: a 32-bit draw modulo the range, a 64-bit one for ranges
    of 2**32 and more."""
    n = math.prod(shape)
    span = high_inc - low + 1
    if span < (1 << 32):
        r = _raw32(rng, n) % xp.uint64(span)
    elif span < _U64:
        r = _raw64(rng, n) % xp.uint64(span)
    else:
        r = _raw64(rng, n)
    data = (r + xp.uint64(low % _U64)).astype(np.int64)   # wraps modulo 2**64, as C does
    return data.astype(np_dtype).reshape(shape)
