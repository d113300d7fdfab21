"""PyTorch's dtype rules for an op's operands, run by ``Op.apply`` only off the fast path.

Each op class carries a code, ``_casts`` (``casts_code``), saying which rule it follows;
``Op.apply`` tests the common case (float32, or one floating dtype with Python numbers)
inline by that code and calls ``promote`` for anything else. ``promote`` turns NumPy
scalars into numbers, refuses what PyTorch refuses (complex for real-only ops, operands
that are not numbers), casts what PyTorch's promotion casts, and hands back the op's
widened variant (``widening.py``) where float16 or bfloat16 is computed in float32.
"""
import numpy as np

from .. import _dtype
from .._coo import COO
from .._device import DEVICE_ARRAY_TYPES
from ..backend import xp
from ..tensor import Tensor
from .device_dispatch import is_data_array
from .widening import Widened, widened

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_FLOAT8 = _dtype.FLOAT8_NUMPY     # filled when ml_dtypes loads


def casts_code(cls):
    """The dtype rule ``Op.apply`` checks for ``cls``. 0: none; 1: integer inputs go float;
    2: PyTorch's promotion; 3, 4, 5: the same three for an op that widens float16 (see
    ``Op.widens_half``); 6: widens bfloat16 only (once ml_dtypes is loaded)."""
    code = ((2 if cls.promotes else 1 if cls.float_result else 0)
            + (3 if cls.widens_half else 0))
    if code == 0 and _dtype.extension_loaded() and widens_bfloat16_only(cls):
        code = 6
    return code


def float_dtype(arrays):
    """The dtype when NumPy's own arithmetic already gives PyTorch's: one floating dtype
    among the arrays and only Python numbers besides (the common case); else None."""
    d = None
    for a in arrays:
        c = a.__class__
        if c is _ndarray:
            if d is None:
                d = a.dtype
                # float8_e5m2 is the one float8 NumPy files as kind 'f': promote casts a
                # number with it (float32 is told by identity first, at no cost)
                if d is not _F32 and (d.kind != 'f' or d in _FLOAT8):
                    return None
            elif a.dtype is not d and a.dtype != d:
                return None
        elif c is not float and c is not int:
            return None
    return d


def widens_bfloat16_only(cls):
    """Whether ``cls``, when it has no dtype rule, computes bfloat16 in float32 (``_casts``
    6)."""
    return (cls.widens_bfloat16 and cls.differentiable
            and not cls.is_view and not issubclass(cls, Widened))


def forward_arrays(cls, inputs):
    """What ``cls.apply(*inputs)`` hands its forward: the op class that runs (a widened
    variant for half precision) and the arrays after PyTorch's promotion. For code that
    replays ops on arrays (dynagrad.compiler)."""
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    if cls._casts:
        meta = promote(cls, inputs, arrays)
        if meta is not None and meta is not True:
            return forward_arrays(meta, inputs)
    return cls, arrays


def _complex_refused(cls, array):
    name = op_name(cls)
    kind = 'ComplexFloat' if array.dtype.itemsize == 8 else 'ComplexDouble'
    return NotImplementedError(f'"{name}" not implemented for \'{kind}\' (dynagrad computes '
                               f'{name} on real tensors only, as PyTorch does)')


def _common_dtype(arrays):
    """The one dtype of ``arrays`` when NumPy's arithmetic already gives PyTorch's, else None.

    NumPy 2 treats Python scalars as weak, as PyTorch does, except a float scalar with an
    integer array (NumPy: float64, PyTorch: the default float dtype).
    """
    d = None
    float_scalar = False
    for a in arrays:
        cls = a.__class__
        if cls is _ndarray or cls in DEVICE_ARRAY_TYPES:
            if d is None:
                d = a.dtype
            elif a.dtype != d:
                return None
        elif cls is float:
            float_scalar = True
        elif cls is not int and cls is not bool:
            return None
    if d is None or (float_scalar and d.kind not in 'fc'):
        return None
    return d


class OperandTypeError(TypeError):
    """An operand that is neither a tensor nor a number (a str, None, a list). The operators
    turn it into ``NotImplemented``, so that Python answers as it does for torch: ``==`` is
    False, ``+`` and ``<`` raise its "unsupported operand" TypeError."""


def op_name(cls):
    """The op's name in PyTorch's messages ('add' for Add)."""
    name = getattr(cls, 'aten', '') or cls._node_name
    return name[:-9].lower() if name[-9:-1] == 'Backward' else name


def number_operand(cls, x, position):
    """A non-tensor operand as the Python number PyTorch reads it: a NumPy scalar is a
    number like any other (weak in promotion, so float32 * np.float64(2) stays float32,
    where NumPy 2 would widen); anything else is refused as PyTorch's argument parser does.
    np.bool_, which is no numbers.Number, torch reads as a float (int32 + np.True_ is
    float32)."""
    if isinstance(x, np.generic) and x.dtype.kind in 'biufc':
        return float(x) if x.dtype.kind == 'b' else x.item()
    if isinstance(x, (bool, int, float, complex)):     # int and float subclasses too
        return x
    raise OperandTypeError(
        f"{op_name(cls)}(): argument '{'other' if position else 'input'}' (position "
        f"{position + 1}) must be Tensor, not {type(x).__name__}")


def float_argument(op, name, value, position=None):
    """A ``float`` parameter (logit's eps, nan_to_num's nan...) as torch's argument parser
    reads it: a number, a NumPy scalar or a one-element tensor; None stays None; anything
    else is its TypeError, not NumPy's."""
    if value is None or value.__class__ is float or value.__class__ is int:
        return value
    if isinstance(value, (bool, int, float, np.integer, np.floating)) or (
            isinstance(value, Tensor) and value._data.size == 1
            and value._data.dtype.kind in 'biuf'):
        return float(value)
    where = f' (position {position})' if position is not None else ''
    raise TypeError(f"{op}(): argument '{name}'{where} must be float, not "
                    f'{type(value).__name__}')


def promote(cls, inputs, arrays):
    """Cast, in the list ``arrays``, what PyTorch's promotion casts; return whether it did.

    When the result is float16 or bfloat16 and the op computes it in float32 (always for
    bfloat16, for float16 where the op ``widens_half``), return instead the op's widened
    variant, which the caller runs in its place.
    """
    for i, a in enumerate(arrays):
        c = a.__class__
        if c is not float and c is not int and c is not bool and c is not complex \
                and a is not None and c is not COO and not is_data_array(a) \
                and not isinstance(a, _ndarray):    # (an array subclass: nn's _NoData)
            arrays[i] = number_operand(cls, a, i)   # (None: an op's optional input)
    if not cls.supports_complex:
        for a in arrays:
            if is_data_array(a) and a.dtype.kind == 'c':
                raise _complex_refused(cls, a)
    common = _common_dtype(arrays)
    if common is not None and common.char not in 'eE' and (
            common.kind in 'fc' or not cls.float_result) and common not in _FLOAT8:
        return None
    if cls.promotes:
        target = _dtype.result_type(*inputs)
        if cls.float_result and target.category < 2:
            target = _dtype.get_default_dtype()
    else:
        first = _dtype.FROM_NUMPY.get(getattr(arrays[0], 'dtype', None))
        if first is not None and (first.category >= 2 or not cls.float_result):
            target = first
        else:
            target = _dtype.get_default_dtype()
    if target.itemsize == 2 and target.category == 2 and (
            target is _dtype.bfloat16 or cls.widens_half):
        return widened(cls, target.numpy)
    if not cls.promotes and not cls.float_result:
        return None
    np_target = target.numpy
    # A number with a float8 tensor becomes a 0-d float8 array: NumPy would compute in
    # float64, where torch's kernels (add_stub, mul_cpu_reduced_float...) refuse float8.
    number_as_float8 = cls.promotes and np_target in _FLOAT8
    cast = None
    for i, a in enumerate(arrays):
        if a.__class__ is _ndarray or a.__class__ in DEVICE_ARRAY_TYPES:
            if a.dtype != np_target:
                arrays[i] = a.astype(np_target)
                cast = True
        elif a.__class__ is COO:    # a sparse operand: its kernel casts (see sparse_dispatch)
            continue
        elif number_as_float8:
            arrays[i] = xp.asarray(a, dtype=np_target)
        elif cls.promotes and target.category >= 2 and a is None:   # t + None
            raise OperandTypeError(f"{op_name(cls)}(): argument 'other' (position {i + 1}) "
                                   'must be Tensor, not NoneType')
        elif cls.promotes and target.category == 2 and not isinstance(a, float):
            arrays[i] = float(a)
        elif cls.promotes and target.category == 3 and not isinstance(a, complex):
            arrays[i] = complex(a)
    return cast
