"""Bernoulli masks and dropout as PyTorch's CPU generator draws them, the Mersenne Twister
advanced inside the kernel.

The stream is the one ``ops/random.py`` draws with NumPy (see its docstring): one float64
uniform per element for ``bernoulli_(p)`` with a number ``p``, i.e. two 32-bit draws, the
first the high half, whose low 53 bits ``k`` keep the element when ``k < ceil(p 2**53)``.
Drawn through NumPy, each 32-bit word is a separate Python-level array op (the draw, the
mask, the shift, the compare, the cast, the scale: about 15 ms per GPT step); here the twist,
the tempering and the compare run in one loop over the elements.

``state`` is the twister's live state, NumPy's own memory (``ops/random.py`` gives it as
625 uint32: the 624 words, then the position), read and written in place, so the
generator stands after a kernel exactly where NumPy's draws would have left it. The
arithmetic is unsigned 64-bit with every constant a ``np.uint64``: numba types a mix of
uint64 and a plain int literal as float64.
"""
import math

import numpy as np

from ._math import kernel

_N, _M = 624, 397
_U = np.uint64
_MATRIX_A, _UPPER, _LOWER = _U(0x9908b0df), _U(0x80000000), _U(0x7fffffff)
_TEMPER_B, _TEMPER_C = _U(0x9d2c5680), _U(0xefc60000)
_S1, _S7, _S11, _S15, _S18, _S32 = _U(1), _U(7), _U(11), _U(15), _U(18), _U(32)
_LOW21 = _U((1 << 21) - 1)


@kernel
def _twisted(state, i, next_, far):
    y = (_U(state[i]) & _UPPER) | (_U(state[next_]) & _LOWER)
    return np.uint32(_U(state[far]) ^ (y >> _S1) ^ ((y & _S1) * _MATRIX_A))


@kernel
def _twist(state):
    """The next 624 words (mt19937's generation step), position back to 0."""
    # three loops, not one with indices modulo 624: each then reads its words in order
    for i in range(_N - _M):
        state[i] = _twisted(state, i, i + 1, i + _M)
    for i in range(_N - _M, _N - 1):
        state[i] = _twisted(state, i, i + 1, i + _M - _N)
    state[_N - 1] = _twisted(state, _N - 1, 0, _M - 1)
    state[_N] = np.uint32(0)


@kernel
def _tempered(state, i):
    y = _U(state[i])
    y ^= y >> _S11
    y ^= (y << _S7) & _TEMPER_B
    y ^= (y << _S15) & _TEMPER_C
    return y ^ (y >> _S18)


@kernel
def _bits53(state, i):
    """The low 53 bits of the 64-bit draw whose high word is at ``i``, low at ``i + 1``."""
    return ((_tempered(state, i) & _LOW21) << _S32) | _tempered(state, i + 1)


@kernel
def _mask_run(words, threshold, keep_value, drop_value, out, run):
    for k in range(run):
        out[k] = keep_value if _bits53(words, 2 * k) < threshold else drop_value


@kernel
def _dropout_run(words, threshold, keep_value, drop_value, x, out, noise, run):
    for k in range(run):
        v = keep_value if _bits53(words, 2 * k) < threshold else drop_value
        noise[k] = v
        out[k] = x[k] * v


@kernel
def _draw(state, threshold, keep_value, x, out, noise, fused):
    """Element e keeps ``keep_value`` (else 0) when its 53-bit draw is below ``threshold``:
    written to ``out``, or, ``fused``, to ``noise`` with ``out = x * noise``."""
    n = out.size
    drop_value = keep_value - keep_value
    pos = np.int64(state[_N])
    e = 0
    while e < n:
        if pos == _N:
            _twist(state)
            pos = 0
        if pos == _N - 1:       # a draw whose two words straddle a generation step
            high = _tempered(state, _N - 1) & _LOW21
            _twist(state)
            v = keep_value if ((high << _S32) | _tempered(state, 0)) < threshold else \
                drop_value
            if fused:
                noise[e] = v
                out[e] = x[e] * v
            else:
                out[e] = v
            e += 1
            pos = 1
            continue
        # the draws within this generation step. Indexed from slices at the positions:
        # indexed ``state[pos + 2 k]``, a signed sum that numba must check for a negative
        # index, the loops did not vectorise (2.5x slower)
        run = min((_N - pos) // 2, n - e)
        if fused:
            _dropout_run(state[pos:], threshold, keep_value, drop_value, x[e:], out[e:],
                         noise[e:], run)
        else:
            _mask_run(state[pos:], threshold, keep_value, drop_value, out[e:], run)
        e += run
        pos += 2 * run
    state[_N] = np.uint32(pos)


def _threshold(p):
    """``u < p`` for ``u = k / 2**53`` is ``k < ceil(p 2**53)`` (exact: p times a power of 2)."""
    return _U(math.ceil(p * 2.0 ** 53))


def bernoulli_mask(state, p, out):
    """Fill the flat float array ``out`` with 1 (probability ``p``, a float) or 0, drawn
    as ``bernoulli_(p)`` draws them, advancing ``state``."""
    _draw(state, _threshold(p), out.dtype.type(1), out, out, out, False)
    return out


def dropout(state, keep, x):
    """``(x * noise, noise)`` for C-contiguous ``x``: ``noise`` is ``1 / keep`` (rounded in
    x's dtype, as ``mask / (1 - p)`` divides) with probability ``keep``, else 0, drawn as
    ``bernoulli_(keep)`` draws the mask."""
    scale = x.dtype.type(1) / x.dtype.type(keep)
    out = np.empty(x.shape, x.dtype)
    noise = np.empty(x.shape, x.dtype)
    _draw(state, _threshold(keep), scale, x.reshape(-1), out.reshape(-1), noise.reshape(-1),
          True)
    return out, noise


# -- multinomial ---------------------------------------------------------------------------
# A sampling loop draws one token per call from some 65 probabilities: NumPy's path spends
# its time on per-call overheads (a dozen array ops, the C library's log1p through Python),
# not on arithmetic, so these kernels draw word by word. No fastmath here: the running sum
# of the with-replacement search must add in order, as NumPy's cumsum does.

def _strict(fn):
    from numba import njit
    return njit(cache=True, nogil=True, error_model='numpy')(fn)


@_strict
def _next_word(state):
    """The next 32-bit draw (as mt19937's next32 gives it), advancing the position."""
    pos = np.int64(state[_N])
    if pos >= _N:
        _twist(state)
        pos = 0
    state[_N] = np.uint32(pos + 1)
    return _tempered(state, pos)


@_strict
def _next_uniform53(state):
    """A float64 uniform in [0, 1): the low 53 bits of a 64-bit draw (high word first)."""
    high = _next_word(state) & _LOW21
    bits = (high << _S32) | _next_word(state)
    return np.float64(bits) * 2.0 ** -53


@_strict
def _race(state, p, keys, winners):
    """``keys = p / E`` row by row (E ~ Exp(1) as ``-log1p(-u)``, rounded to keys' dtype
    before the division, as the NumPy path casts it), and each row's first largest key's
    index in ``winners`` (NumPy's argmax: a NaN wins at once)."""
    rows, k = p.shape
    for r in range(rows):
        best = 0
        for j in range(k):
            keys[r, j] = -math.log1p(-_next_uniform53(state))
            keys[r, j] = p[r, j] / keys[r, j]
        for j in range(k):
            key = keys[r, j]
            if key != key:
                best = j
                break
            if key > keys[r, best]:
                best = j
        winners[r] = best


@_strict
def _with_replacement(state, p, cdf, out):
    """``out[r, s]``: the first index whose normalised running sum of row r is at least a
    fresh float64 uniform (the running sum in float64, in order; its last entry set to 1)."""
    rows, k = p.shape
    samples = out.shape[1]
    for r in range(rows):
        total = 0.0
        for j in range(k):
            total += np.float64(p[r, j])
            cdf[j] = total
        for j in range(k):
            cdf[j] = cdf[j] / total
        cdf[k - 1] = 1.0
        for s in range(samples):
            u = _next_uniform53(state)
            left, right = 0, k
            while left < right:
                mid = (left + right) // 2
                if cdf[mid] < u:
                    left = mid + 1
                else:
                    right = mid
            out[r, s] = left


def multinomial_race(state, p, keys, winners):
    """Draw ``p.size`` exponentials (C order) for the rows of the 2-D ``p``: ``keys`` (p's
    shape and dtype) gets ``p / E``, ``winners`` (int64, one per row) each row's argmax."""
    _race(state, p, keys, winners)
    return winners


def multinomial_with_replacement(state, p, out):
    """``out`` (int64, rows x samples) gets samples drawn with replacement from the rows of
    the 2-D ``p``, one float64 uniform each, row by row."""
    _with_replacement(state, p, np.empty(p.shape[1], np.float64), out)
    return out
