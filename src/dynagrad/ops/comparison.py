"""Comparisons, predicates (isnan, isclose, signbit, is_floating_point, ...), logical and
bitwise ops: never differentiable (their results are boolean or integer), except the
in-place comparisons (``x.eq_(y)``), which PyTorch records with a zero gradient; and the
identities of real tensors (conj, resolve_conj, real, ...)."""
import numpy as np

from .._device import is_any_array
from ..backend import xp
from ..autograd.function import Op
from ..autograd.promotion import number_operand
from ..tensor import Tensor, method
from .. import _dtype
from ._elementwise import (REFUSED, WIDE_UNSIGNED, _binary, _need_tensor, not_implemented,
                           _operator, _unary, refused)
from .out_args import EXACT


class _Compare(Op):
    vmap_rule = 'elementwise'
    differentiable = False


_PLAIN_OPERANDS = frozenset((np.ndarray, float, int, bool, complex))


def _operand(op, b):
    """A comparison's second operand that is not an array or a plain number: a NumPy scalar
    compares as a Python number; anything else raises OperandTypeError, so that ``==`` is
    False and ``<`` a TypeError, as in torch."""
    return b if is_any_array(b) else number_operand(type(op), b, 1)




def _check_operands(kernel, a, b):
    """The slow path of a comparison with a uint16/32/64 or float8 operand: torch refuses to
    promote those with most dtypes, and its ordering kernels (``kernel``; '' for eq and ne,
    which it has) refuse them."""
    da = _dtype.FROM_NUMPY[a.dtype] if is_any_array(a) else None
    db = _dtype.FROM_NUMPY[b.dtype] if is_any_array(b) else None
    if da is not None and db is not None:
        common = _dtype.promote_types(da, db)       # raises torch's promotion error
    else:
        common, number = (da, b) if da is not None else (db, a)
        if isinstance(number, float) and common in _dtype.WIDE_UNSIGNED:
            common = _dtype.get_default_dtype()     # uint32 < 1.5 compares as floats
    if kernel and common.numpy in REFUSED:
        raise refused(kernel, xp.zeros(0, common.numpy))


def _ordered(a, b):
    """What an ordering comparison computes in (its refusal names it): a complex number
    makes a float tensor's comparison complex, as in torch."""
    if b.__class__ is not complex:
        return a
    if a.dtype.kind in 'fc':
        return xp.zeros(0, a.dtype) + b
    return xp.zeros(0, _dtype.default_complex_dtype().numpy)


class Eq(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('', a, b)
        return xp.equal(a, b)


class Ne(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('', a, b)
        return xp.not_equal(a, b)


class Lt(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('lt_cpu', a, b)
        if a.dtype.kind == 'c' or b.__class__ is complex:
            raise not_implemented('lt_cpu', _ordered(a, b))
        return xp.less(a, b)


class Le(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('le_cpu', a, b)
        if a.dtype.kind == 'c' or b.__class__ is complex:
            raise not_implemented('le_cpu', _ordered(a, b))
        return xp.less_equal(a, b)


class Gt(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('gt_cpu', a, b)
        if a.dtype.kind == 'c' or b.__class__ is complex:
            raise not_implemented('gt_cpu', _ordered(a, b))
        return xp.greater(a, b)


class Ge(_Compare):
    def forward(self, a, b):
        if b.__class__ not in _PLAIN_OPERANDS:
            b = _operand(self, b)
        if a.dtype in REFUSED or is_any_array(b) and b.dtype in REFUSED:
            _check_operands('ge_cpu', a, b)
        if a.dtype.kind == 'c' or b.__class__ is complex:
            raise not_implemented('ge_cpu', _ordered(a, b))
        return xp.greater_equal(a, b)


class _CompareInplace(Op):
    """``x.eq_(other)`` and friends: the comparison written into x's dtype. PyTorch records
    it (``EqBackward1``, ``EqBackward0`` for a Python number) with a zero gradient."""
    vmap_rule = 'elementwise'
    guards_leaves = True
    compare = None

    def forward(self, a, b):
        return type(self).compare(a, b)

    def backward(self, g):
        need = self.needs_input_grad
        return g * 0, (g * 0 if need[1] else None)


def _compare_inplace(name, compare):
    return type(name, (_CompareInplace,), {'compare': staticmethod(compare),
                                            'node_name': name + 'Backward1',
                                            '__module__': __name__, '__qualname__': name})


EqInplace = _compare_inplace('Eq', xp.equal)
NeInplace = _compare_inplace('Ne', xp.not_equal)
LtInplace = _compare_inplace('Lt', xp.less)
LeInplace = _compare_inplace('Le', xp.less_equal)
GtInplace = _compare_inplace('Gt', xp.greater)
GeInplace = _compare_inplace('Ge', xp.greater_equal)


def _inplace_compare_method(op, *names):
    scalar_op = op.named(op._node_name[:-1] + '0')

    def compare_(self, other):
        return (op if isinstance(other, Tensor) else scalar_op).apply_(self, other)
    compare_.__name__ = compare_.__qualname__ = names[0]
    method(*names)(compare_)


# -- predicates, logical and bitwise ops (never differentiable) ---------------------------


class Isclose(_Compare):
    def forward(self, a, b, rtol, atol, equal_nan):
        close = a == b
        if a.dtype == bool:
            return close
        if equal_nan and a.dtype.kind in 'fVc':
            close |= xp.isnan(a) & xp.isnan(b)
        if a.dtype.kind in 'iu':
            a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid='ignore', over='ignore'):
            diff = xp.abs(a - b)
            close |= xp.isfinite(diff) & (diff <= atol + xp.abs(rtol * b))
        return close


class Isnan(_Compare):
    def forward(self, x):
        return xp.isnan(x) if x.dtype.kind in 'fV' else xp.zeros(x.shape, bool)


class Isinf(_Compare):
    def forward(self, x):
        return xp.isinf(x) if x.dtype.kind in 'fV' else xp.zeros(x.shape, bool)


class Isfinite(_Compare):
    def forward(self, x):
        return xp.isfinite(x) if x.dtype.kind in 'fV' else xp.ones(x.shape, bool)


class Isposinf(_Compare):
    def forward(self, x):
        return x == np.inf if x.dtype.kind in 'fV' else xp.zeros(x.shape, bool)


class Isneginf(_Compare):
    def forward(self, x):
        return x == -np.inf if x.dtype.kind in 'fV' else xp.zeros(x.shape, bool)


class Signbit(_Compare):
    def forward(self, x):
        if x.dtype == bool:
            return xp.zeros(x.shape, bool)
        return xp.signbit(x) if x.dtype.kind in 'fV' else x < 0


class Isreal(_Compare):
    supports_complex = True

    def forward(self, x):
        if x.dtype.kind == 'c':
            return x.imag == 0
        return xp.ones(x.shape, bool)


class LogicalAnd(_Compare):
    def forward(self, a, b):
        return xp.logical_and(a, b)


class LogicalOr(_Compare):
    def forward(self, a, b):
        return xp.logical_or(a, b)


class LogicalXor(_Compare):
    def forward(self, a, b):
        return xp.logical_xor(a, b)


class LogicalNot(_Compare):
    def forward(self, x):
        return xp.logical_not(x)


class _Bitwise(_Compare):
    promotes = True
    kernel = ''
    allow_bool = True

    refuses = frozenset()    # NumPy dtypes refused beside floating ones (see BitwiseNot)

    def _check(self, dt):
        if dt.kind in 'fV' or (dt == bool and not self.allow_bool) or dt in self.refuses:
            raise not_implemented(self.kernel, xp.zeros(0, dt))


class BitwiseAnd(_Bitwise):
    kernel = 'bitwise_and_cpu'

    def forward(self, a, b):
        self._check(xp.result_type(a, b))
        return xp.bitwise_and(a, b)


class BitwiseOr(_Bitwise):
    kernel = 'bitwise_or_cpu'

    def forward(self, a, b):
        self._check(xp.result_type(a, b))
        return xp.bitwise_or(a, b)


class BitwiseXor(_Bitwise):
    kernel = 'bitwise_xor_cpu'

    def forward(self, a, b):
        self._check(xp.result_type(a, b))
        return xp.bitwise_xor(a, b)


class BitwiseNot(_Bitwise):
    kernel = 'bitwise_not_cpu'
    refuses = WIDE_UNSIGNED

    def forward(self, x):
        self._check(x.dtype)
        return xp.invert(x)


def _shift_operands(op, a, b):
    dt = xp.result_type(a, b)
    if dt.kind in 'fV' or dt == bool or dt in REFUSED:
        raise not_implemented(op.kernel, xp.zeros(0, dt))
    a = xp.asarray(a, dt)
    b = xp.asarray(b, dt)
    bits = dt.itemsize * 8
    # PyTorch: a shift by a negative count or by the width or more gives what shifting
    # out every bit gives; NumPy (and C) leave that undefined.
    out_of_range = (b < 0) | (b >= bits)
    return a, b, out_of_range, bits


class BitwiseLeftShift(_Bitwise):
    kernel = 'lshift_cpu'

    def forward(self, a, b):
        a, b, bad, bits = _shift_operands(self, a, b)
        if bad.any():
            return xp.where(bad, 0, xp.left_shift(a, xp.where(bad, 0, b))).astype(a.dtype)
        return xp.left_shift(a, b)


class BitwiseRightShift(_Bitwise):
    kernel = 'rshift_cpu'

    def forward(self, a, b):
        a, b, bad, bits = _shift_operands(self, a, b)
        if bad.any():
            full = xp.right_shift(a, bits - 1) if a.dtype.kind == 'i' else xp.zeros_like(a)
            return xp.where(bad, full, xp.right_shift(a, xp.where(bad, 0, b))).astype(a.dtype)
        return xp.right_shift(a, b)


# -- function forms and Tensor methods ------------------------------------------------------
# Each line: dynagrad.<name> and Tensor.<name> (and the aliases), with ``inplace`` the in-place
# Tensor.<name>_ too; then the operators, which call the op's apply directly.

eq = _binary(Eq, 'eq')
_operator(Eq, '__eq__')
ne = not_equal = _binary(Ne, 'ne', aliases=('not_equal',))
_operator(Ne, '__ne__')
lt = less = _binary(Lt, 'lt', aliases=('less',))
_operator(Lt, '__lt__')
le = less_equal = _binary(Le, 'le', aliases=('less_equal',))
_operator(Le, '__le__')
gt = greater = _binary(Gt, 'gt', aliases=('greater',))
_operator(Gt, '__gt__')
ge = greater_equal = _binary(Ge, 'ge', aliases=('greater_equal',))
_operator(Ge, '__ge__')

for _op, _names in ((EqInplace, ('eq_',)), (NeInplace, ('ne_', 'not_equal_')),
                    (LtInplace, ('lt_', 'less_')), (LeInplace, ('le_', 'less_equal_')),
                    (GtInplace, ('gt_', 'greater_')), (GeInplace, ('ge_', 'greater_equal_'))):
    _inplace_compare_method(_op, *_names)

isnan = _unary(Isnan, 'isnan', out=False)
isinf = _unary(Isinf, 'isinf', out=False)
isfinite = _unary(Isfinite, 'isfinite', out=False)
isposinf = _unary(Isposinf, 'isposinf', out=EXACT)
isneginf = _unary(Isneginf, 'isneginf', out=EXACT)



@method
def signbit(input):
    _need_tensor('signbit', input, 1, 'input')
    return Signbit.apply(input)


@method
def isreal(input):
    """Where the imaginary part is 0 (everywhere, for a real tensor)."""
    _need_tensor('isreal', input, 1, 'input')
    return Isreal.apply(input)


logical_not = _unary(LogicalNot, 'logical_not', inplace=True)
logical_and = _binary(LogicalAnd, 'logical_and', inplace=True, tensors_only=True)
logical_or = _binary(LogicalOr, 'logical_or', inplace=True, tensors_only=True)
logical_xor = _binary(LogicalXor, 'logical_xor', inplace=True, tensors_only=True)

# The bitwise ops' operators: a & b and b & a, then a &= b (the in-place method).
bitwise_and = _binary(BitwiseAnd, 'bitwise_and', inplace=True)
_operator(BitwiseAnd, '__and__', '__rand__')
method('__iand__')(Tensor.bitwise_and_)
bitwise_or = _binary(BitwiseOr, 'bitwise_or', inplace=True)
_operator(BitwiseOr, '__or__', '__ror__')
method('__ior__')(Tensor.bitwise_or_)
bitwise_xor = _binary(BitwiseXor, 'bitwise_xor', inplace=True)
_operator(BitwiseXor, '__xor__', '__rxor__')
method('__ixor__')(Tensor.bitwise_xor_)
bitwise_left_shift = _binary(BitwiseLeftShift, 'bitwise_left_shift', inplace=True)
_operator(BitwiseLeftShift, '__lshift__')
_operator(BitwiseLeftShift, '__rlshift__', reflected=True)
method('__ilshift__')(Tensor.bitwise_left_shift_)
bitwise_right_shift = _binary(BitwiseRightShift, 'bitwise_right_shift', inplace=True)
_operator(BitwiseRightShift, '__rshift__')
_operator(BitwiseRightShift, '__rrshift__', reflected=True)
method('__irshift__')(Tensor.bitwise_right_shift_)
bitwise_not = _unary(BitwiseNot, 'bitwise_not', inplace=True, out=EXACT)


@method('__invert__')
def _invert(self):
    if self._data.dtype.kind in 'fV':
        raise TypeError('~ (operator.invert) is only implemented on integer and Boolean-type '
                        'tensors')
    return BitwiseNot.apply(self)


def _check_isclose(input, other, rtol, atol):
    _need_tensor('isclose', other, 2)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f'{input.dtype} did not match {other.dtype} (isclose(): both '
                           'inputs must have the same dtype; convert one with .to())')
    if rtol < 0:
        raise RuntimeError(f'rtol must be greater than or equal to zero, but got {rtol}')
    if atol < 0:
        raise RuntimeError(f'atol must be greater than or equal to zero, but got {atol}')


@method
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_isclose(input, other, rtol, atol)
    return Isclose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


@method
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@method
def equal(input, other):
    """Same shape and same values (a Python bool)."""
    _need_tensor('equal', other, 2)
    a, b = input._data, other._data
    return a.shape == b.shape and bool(xp.array_equal(a, b))


# -- dtype predicates (is_complex, conj and the parts of complex tensors: complex.py) ----------


def _tensor_input(name, input):
    _need_tensor(name, input, 1, 'input')
    return input


# (is_floating_point and is_complex replace the Tensor's own methods with these, which also
# refuse a non-tensor as PyTorch's functions do: the function and the method are one object)
@method
def is_floating_point(input):
    return _tensor_input('is_floating_point', input)._data.dtype.kind in 'fV'  # 'V': bfloat16


@method
def is_signed(input):
    return _tensor_input('is_signed', input).dtype.is_signed


@method
def is_nonzero(input):
    """The value of a one-element tensor as a bool (PyTorch's errors for any other size)."""
    return bool(_tensor_input('is_nonzero', input))


@method
def is_neg(input):
    _tensor_input('is_neg', input)
    return False


@method
def resolve_neg(input):
    return _tensor_input('resolve_neg', input)


__all__ = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greater', 'greater_equal', 'less', 'less_equal',
           'not_equal', 'isclose', 'allclose', 'equal', 'isnan', 'isinf', 'isfinite',
           'isposinf', 'isneginf', 'logical_and', 'logical_or', 'logical_xor', 'logical_not',
           'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not', 'bitwise_left_shift',
           'bitwise_right_shift', 'signbit', 'isreal', 'is_floating_point', 'is_signed',
           'is_nonzero', 'is_neg', 'resolve_neg']
