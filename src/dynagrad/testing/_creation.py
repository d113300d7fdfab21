"""``make_tensor``: a tensor of random values for tests, as ``torch.testing.make_tensor``.

Values are drawn from dynagrad's default generator (``dynagrad.manual_seed`` repeats them)
in a range by dtype unless ``low`` / ``high`` say otherwise:

=================  ==========================
dtype              default range
=================  ==========================
bool               ``[0, 2)``
uint8              ``[0, 10)``
other integers     ``[-9, 10)``
floating           ``[-9, 9)``
=================  ==========================

The bounds are clamped to the dtype's finite range (a high bound past an integer dtype's
range lets its largest value in); integer bounds round up.
"""
import math
import warnings

import numpy as np

from .. import _dtype as dt
from ..ops.random import array_rng
from ..tensor import check_device, wrap


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f'make_tensor(): shape must be ints or one sequence of ints, got '
                            f'{shape!r} (an element of type {type(s).__name__})')
    return tuple(int(s) for s in shape)


def _range(dtype, low, high):
    """The checked, clamped ``[low, high)`` of ``dtype`` (ints rounded up)."""
    if dtype is dt.bool:
        default = (0, 2)
    elif dtype is dt.uint8:
        default = (0, 10)
    elif dtype.is_floating_point:
        default = (-9, 9)
    else:
        default = (-9, 10)
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if (isinstance(low, float) and math.isnan(low)) or \
            (isinstance(high, float) and math.isnan(high)):
        raise ValueError(f'`low` and `high` cannot be NaN, but got low={low} and high={high}')
    if dtype.is_floating_point:
        if low > high:
            raise ValueError(f'`low` must be less than `high`, but got {low} >= {high}')
        if low == high:
            warnings.warn('Passing `low==high` to `dynagrad.testing.make_tensor` for floating '
                          'types is deprecated (as in PyTorch since 2.1). Use '
                          '`dynagrad.full(...)` instead.', FutureWarning, stacklevel=3)
        info = dt.finfo(dtype)
        return max(low, info.min), min(high, info.max)
    if low >= high:
        raise ValueError(f'`low` must be less than `high`, but got {low} >= {high}')
    if dtype is not dt.bool:
        info = dt.iinfo(dtype)   # a high bound past the range lets the top value in
        low, high = max(low, info.min), min(high, info.max + 1)
    return math.ceil(low), math.ceil(high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` and ``dtype`` filled with random values in ``[low, high)``.

    ``exclude_zero`` replaces zeros by 1 (integers, bool) or by the dtype's smallest
    positive normal number (floating); ``noncontiguous`` gives a strided view of the same
    values (every other element of a last dim twice as long); ``memory_format`` a copy in
    that memory format.
    """
    if noncontiguous and memory_format is not None:
        raise ValueError(f'The parameters `noncontiguous` and `memory_format` are mutually '
                         f'exclusive, but got noncontiguous={noncontiguous} and '
                         f'memory_format={memory_format}')
    dtype = dt.to_dtype(dtype)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f'`requires_grad=True` is not supported for boolean and integral '
                         f'dtypes, but got dtype={dtype}')
    check_device(device)
    shape = _shape(shape)
    low, high = _range(dtype, low, high)
    rng = array_rng(None)
    if dtype.is_floating_point:
        values = rng.uniform(low, high, shape) if low < high else np.full(shape, low, float)
        if exclude_zero:
            values[values == 0] = dt.finfo(dtype).tiny
    else:
        values = rng.integers(low, high, shape, dtype=np.int64)
        if exclude_zero:
            values[values == 0] = 1
    array = np.asarray(values).astype(dtype.numpy)
    if noncontiguous and array.size > 1:
        array = np.repeat(array, 2, axis=-1)[..., ::2]
    result = wrap(array)
    if memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result
