"""``assert_close`` and the deprecated ``assert_allclose``, as ``torch.testing`` has them.

Inputs are compared pairwise: sequences item by item and mappings key by key (recursively),
``None`` with ``None``, booleans with booleans, Python/NumPy numbers as scalars, and tensors
(or NumPy arrays, with each other) element-wise: close where
``|actual - expected| <= atol + rtol * |expected|``, non-finite values only where equal
(NaN with NaN under ``equal_nan``). The messages are PyTorch's.
"""
import collections.abc
import math
import warnings

import numpy as np

from .. import _dtype as dt
from ..tensor import Tensor

# Default (rtol, atol) by dtype; the others (integers, bool) compare exactly.
_TOLERANCES = {dt.float16: (1e-3, 1e-5), dt.bfloat16: (1.6e-2, 1e-5),
               dt.float32: (1.3e-6, 1e-5), dt.float64: (1e-7, 1e-7)}
# assert_allclose's older table
_ALLCLOSE_TOLERANCES = {dt.float16: (1e-3, 1e-3), dt.float32: (1e-4, 1e-5),
                        dt.float64: (1e-5, 1e-8)}


class _Mismatch(Exception):
    """A comparison failed: ``kind`` is the exception type to raise with ``message``."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind, self.message = kind, message


class _NoPair(Exception):
    pass


def _tolerances(dtypes, rtol, atol, table=_TOLERANCES):
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _check_tolerance_args(rtol, atol):
    if (rtol is None) != (atol is None):
        missing = 'rtol' if rtol is None else 'atol'
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f'no {missing}.')


# -- scalars ---------------------------------------------------------------------------------

def _is_bool(x):
    return isinstance(x, (bool, np.bool_))


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number)) and not _is_bool(x)


def _number_type(x):
    """NumPy numbers count as the Python type they stand for."""
    if isinstance(x, (np.integer, int)):
        return int
    if isinstance(x, (np.complexfloating, complex)):
        return complex
    return float


_NUMBER_DTYPES = {int: dt.int64, float: dt.float64, complex: None}


def _scalar_message(actual, expected, rtol, atol, identifier='Scalars'):
    """PyTorch's message for two scalars that are not close."""
    abs_diff = abs(actual - expected)
    if expected != 0:
        rel_diff = abs_diff / abs(expected)
    else:
        rel_diff = math.nan if abs_diff == 0 or abs_diff != abs_diff else math.inf
    exact = rtol == 0 and atol == 0
    lines = [f'{identifier} are not {"equal" if exact else "close"}!', '',
             f'Expected {expected} but got {actual}.']
    if exact:
        lines += [f'Absolute difference: {abs_diff}', f'Relative difference: {rel_diff}']
    else:
        lines += [f'Absolute difference: {abs_diff} (up to {atol} allowed)',
                  f'Relative difference: {rel_diff} (up to {rtol} allowed)']
    return '\n'.join(lines)


def _scalars_close(actual, expected, rtol, atol, equal_nan):
    if actual == expected:
        return True
    if equal_nan and actual != actual and expected != expected:
        return True
    if not (math.isfinite(abs(actual)) and math.isfinite(abs(expected))):
        return False
    return abs(actual - expected) <= atol + rtol * abs(expected)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    ta, te = _number_type(actual), _number_type(expected)
    if check_dtype and ta is not te:
        raise _Mismatch(AssertionError, f'The (d)types do not match: {ta} != {te}.')
    rtol, atol = _tolerances([_NUMBER_DTYPES[ta], _NUMBER_DTYPES[te]], rtol, atol)
    a, e = ta(actual), te(expected)
    if not _scalars_close(a, e, rtol, atol, equal_nan):
        raise _Mismatch(AssertionError, _scalar_message(a, e, rtol, atol))


# -- tensors ---------------------------------------------------------------------------------

def _as_tensor(x):
    if isinstance(x, np.ndarray):
        from .. import ops
        return ops.as_tensor(x)
    return x


def _tensor_kind(x):
    if isinstance(x, Tensor):
        return Tensor
    if isinstance(x, np.ndarray):
        return np.ndarray
    return None


def _check_attributes(actual, expected, check_device, check_dtype, check_layout,
                      check_stride):
    def differ(name, a, e):
        raise _Mismatch(AssertionError,
                        f"The values for attribute '{name}' do not match: {a} != {e}.")
    if actual.shape != expected.shape:
        differ('shape', actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        differ('device', actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        differ('dtype', actual.dtype, expected.dtype)
    if check_layout and actual.layout != expected.layout:
        differ('layout', actual.layout, expected.layout)
    if check_stride and actual.stride() != expected.stride():
        differ('stride()', actual.stride(), expected.stride())


def _values(t, common):
    """``t``'s values as a NumPy array of the common dtype (bool counted as int64, as
    PyTorch's differences are)."""
    a = np.asarray(t._data)
    if common is dt.bool:
        return a.astype(np.int64)
    return a.astype(common.numpy, copy=False)


def _first_max(values):
    """The greatest value and its flat index; a NaN wins, as in ``torch.max``."""
    flat = values.reshape(-1)
    nan = np.isnan(flat) if flat.dtype.kind in 'fV' else np.zeros(flat.shape, bool)
    i = int(np.flatnonzero(nan)[0]) if nan.any() else int(np.argmax(flat))
    return flat[i].item(), i


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride):
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    _check_attributes(actual, expected, check_device, check_dtype, check_layout, check_stride)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol)
    common = actual.dtype if actual.dtype == expected.dtype else \
        dt.promote_types(actual.dtype, expected.dtype)
    if actual.numel() == 0:
        return
    if actual.ndim == 0:
        a, e = actual.item(), expected.item()
        if common is dt.bool:
            a, e = bool(a), bool(e)
        elif common.is_floating_point:
            a, e = float(a), float(e)
        else:
            a, e = int(a), int(e)
        if not _scalars_close(a, e, rtol, atol, equal_nan):
            raise _Mismatch(AssertionError, _scalar_message(a, e, rtol, atol))
        return
    a, e = _values(actual, common), _values(expected, common)
    floating = a.dtype.kind in 'fV'
    if floating:
        with np.errstate(invalid='ignore', over='ignore'):
            diff = np.abs(a - e)
            allowed = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * e)
        close = (a == e) | (np.isfinite(diff) & (diff <= allowed))
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    else:   # integers: exact differences in int64, the tolerance in float
        a, e = a.astype(np.int64), e.astype(np.int64)
        diff = np.abs(a - e)
        close = diff <= atol + rtol * np.abs(e).astype(np.float64)
    if close.all():
        return
    raise _Mismatch(AssertionError, _tensor_message(a, e, diff, close, rtol, atol, floating))


def _tensor_message(a, e, diff, close, rtol, atol, floating):
    total = close.size
    bad = total - int(close.sum())
    with np.errstate(divide='ignore', invalid='ignore'):
        if floating:
            rel = diff / np.abs(e)
        else:   # PyTorch divides integers into its default float dtype
            rel = diff.astype(np.float32) / np.abs(e).astype(np.float32)
    # only the mismatched elements count
    diff = np.where(close, diff.dtype.type(0), diff)
    rel = np.where(close, rel.dtype.type(0), rel)
    max_abs, i_abs = _first_max(diff)
    max_rel, i_rel = _first_max(rel)
    exact = rtol == 0 and atol == 0

    def index(i):
        return tuple(int(k) for k in np.unravel_index(i, a.shape))
    lines = [f'Tensor-likes are not {"equal" if exact else "close"}!', '',
             f'Mismatched elements: {bad} / {total} ({bad / total:.1%})']
    abs_line = f'Greatest absolute difference: {max_abs} at index {index(i_abs)}'
    rel_line = f'Greatest relative difference: {max_rel} at index {index(i_rel)}'
    if not exact:
        abs_line += f' (up to {atol} allowed)'
        rel_line += f' (up to {rtol} allowed)'
    return '\n'.join(lines + [abs_line, rel_line])


# -- pairing ---------------------------------------------------------------------------------

def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, path, options):
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f'The length of the sequences mismatch: '
                                            f'{len(actual)} != {len(expected)}', )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + [i], options)
        return
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        _compare_keys(actual, expected)
        for key in actual:
            _compare(actual[key], expected[key], path + [key], options)
        return
    try:
        _compare_leaves(actual, expected, options)
    except _Mismatch as m:
        if path:
            where = ''.join(f'[{k!r}]' for k in path)
            m.message += f'\n\nThe failure occurred for item {where}'
        raise


def _compare_keys(actual, expected):
    a, e = set(actual), set(expected)
    if a == e:
        return
    lines = ['The keys of the mappings do not match:']
    missing, extra = e - a, a - e
    if missing:
        lines.append(f'Missing keys in the actual mapping: {_sorted(missing)}')
    if extra:
        lines.append(f'Additional keys in the actual mapping: {_sorted(extra)}')
    raise _Mismatch(AssertionError, '\n'.join(lines))


def _sorted(keys):
    try:
        return sorted(keys)
    except TypeError:
        return list(keys)


def _compare_leaves(actual, expected, options):
    if actual is None or expected is None:
        if actual is not None or expected is not None:
            raise _Mismatch(AssertionError, f'None mismatch: {actual} is not {expected}')
        return
    if _is_bool(actual) and _is_bool(expected):
        if bool(actual) != bool(expected):
            raise _Mismatch(AssertionError,
                            f'Booleans mismatch: {bool(actual)} is not {bool(expected)}')
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, options['rtol'], options['atol'],
                         options['equal_nan'], options['check_dtype'])
        return
    kind = _tensor_kind(actual)
    if kind is not None and kind is _tensor_kind(expected):
        if not options['allow_subclasses'] and type(actual) is not type(expected):
            raise _NoPair()
        _compare_tensors(actual, expected, options['rtol'], options['atol'],
                         options['equal_nan'], options['check_device'], options['check_dtype'],
                         options['check_layout'], options['check_stride'])
        return
    raise _NoPair()


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close (see the module docstring).

    Default tolerances by dtype (rtol, atol): float16 (1e-3, 1e-5), bfloat16 (1.6e-2,
    1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), others (0, 0); with dtypes that
    differ (``check_dtype=False``) the larger of the two. ``msg`` replaces the message (a
    string) or maps it to a new one (a callable).
    """
    _check_tolerance_args(rtol, atol)
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        _compare(actual, expected, [], options)
    except _NoPair:
        raise TypeError(f'No comparison pair was able to handle inputs of type '
                        f'{type(actual)} and {type(expected)}.') from None
    except _Mismatch as m:
        message = m.message
        if isinstance(msg, str):
            message = msg
        elif callable(msg):
            message = msg(message)
        raise m.kind(message) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=''):
    """Deprecated: ``assert_close`` after turning both sides into tensors (``expected`` of
    ``actual``'s dtype), with dtypes free to differ and the older default tolerances:
    float16 (1e-3, 1e-3), float32 (1e-4, 1e-5), float64 (1e-5, 1e-8), others exact."""
    warnings.warn('`dynagrad.testing.assert_allclose()` is deprecated (as '
                  '`torch.testing.assert_allclose()` is since PyTorch 1.12) and will be removed '
                  'in a future release. Please use `dynagrad.testing.assert_close()` instead. '
                  'You can find detailed upgrade instructions in '
                  'https://github.com/pytorch/pytorch/issues/61844.', FutureWarning,
                  stacklevel=2)
    from .. import ops
    if not isinstance(actual, Tensor):
        actual = ops.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = ops.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None,
                                 _ALLCLOSE_TOLERANCES)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
