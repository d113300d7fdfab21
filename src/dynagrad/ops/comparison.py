"""Comparisons, predicates (isnan, isclose, ...), logical and bitwise ops: never
differentiable (their results are boolean or integer)."""
import numpy as np

from ..backend import xp
from ..autograd.function import Op
from ._elementwise import (_binary_inplace, _binary_tensors, _commuted, _need_tensor,
                           not_implemented, _reflected, _unary, _unary_inplace)


class _Compare(Op):
    differentiable = False


class Eq(_Compare):
    def forward(self, a, b):
        return xp.equal(a, b)


class Ne(_Compare):
    def forward(self, a, b):
        return xp.not_equal(a, b)


class Lt(_Compare):
    def forward(self, a, b):
        return xp.less(a, b)


class Le(_Compare):
    def forward(self, a, b):
        return xp.less_equal(a, b)


class Gt(_Compare):
    def forward(self, a, b):
        return xp.greater(a, b)


class Ge(_Compare):
    def forward(self, a, b):
        return xp.greater_equal(a, b)


# -- predicates, logical and bitwise ops (never differentiable) ---------------------------


class Isclose(_Compare):
    def forward(self, a, b, rtol, atol, equal_nan):
        close = a == b
        if a.dtype == bool:
            return close
        if equal_nan and a.dtype.kind == 'f':
            close |= xp.isnan(a) & xp.isnan(b)
        if a.dtype.kind != 'f':
            a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid='ignore', over='ignore'):
            diff = xp.abs(a - b)
            close |= xp.isfinite(diff) & (diff <= atol + xp.abs(rtol * b))
        return close


class Isnan(_Compare):
    def forward(self, x):
        return xp.isnan(x) if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isinf(_Compare):
    def forward(self, x):
        return xp.isinf(x) if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isfinite(_Compare):
    def forward(self, x):
        return xp.isfinite(x) if x.dtype.kind == 'f' else xp.ones(x.shape, bool)


class Isposinf(_Compare):
    def forward(self, x):
        return x == np.inf if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


class Isneginf(_Compare):
    def forward(self, x):
        return x == -np.inf if x.dtype.kind == 'f' else xp.zeros(x.shape, bool)


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

    def _check(self, dt):
        if dt.kind == 'f' or (dt == bool and not self.allow_bool):
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

    def forward(self, x):
        self._check(x.dtype)
        return xp.invert(x)


def _shift_operands(op, a, b):
    dt = xp.result_type(a, b)
    if dt.kind == 'f' or dt == bool:
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


# -- function forms ---------------------------------------------------------------------
# dynagrad.<name>(input, ...) and, bound in ops/__init__.py, tensor.<name>(...).


def eq(input, other):
    return Eq.apply(input, other)


def ne(input, other):
    return Ne.apply(input, other)


def lt(input, other):
    return Lt.apply(input, other)


def le(input, other):
    return Le.apply(input, other)


def gt(input, other):
    return Gt.apply(input, other)


def ge(input, other):
    return Ge.apply(input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


isnan = _unary(Isnan, 'isnan')
isinf = _unary(Isinf, 'isinf')
isfinite = _unary(Isfinite, 'isfinite')
isposinf = _unary(Isposinf, 'isposinf')
isneginf = _unary(Isneginf, 'isneginf')
logical_not = _unary(LogicalNot, 'logical_not')
bitwise_not = _unary(BitwiseNot, 'bitwise_not')
logical_and = _binary_tensors(LogicalAnd, 'logical_and')
logical_or = _binary_tensors(LogicalOr, 'logical_or')
logical_xor = _binary_tensors(LogicalXor, 'logical_xor')


def _bitwise(op_cls, name):
    def fn(input, other):
        return op_cls.apply(input, other)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(BitwiseAnd, 'bitwise_and')
bitwise_or = _bitwise(BitwiseOr, 'bitwise_or')
bitwise_xor = _bitwise(BitwiseXor, 'bitwise_xor')
bitwise_left_shift = _bitwise(BitwiseLeftShift, 'bitwise_left_shift')
bitwise_right_shift = _bitwise(BitwiseRightShift, 'bitwise_right_shift')


def _check_isclose(input, other, rtol, atol):
    _need_tensor('isclose', other, 2)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f'{input.dtype} did not match {other.dtype} (isclose(): both '
                           'inputs must have the same dtype; convert one with .to())')
    if rtol < 0:
        raise RuntimeError(f'rtol must be greater than or equal to zero, but got {rtol}')
    if atol < 0:
        raise RuntimeError(f'atol must be greater than or equal to zero, but got {atol}')


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_isclose(input, other, rtol, atol)
    return Isclose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """Same shape and same values (a Python bool)."""
    _need_tensor('equal', other, 2)
    a, b = input._data, other._data
    return a.shape == b.shape and bool(xp.array_equal(a, b))


# -- operators ----------------------------------------------------------------------------


def _invert(self):
    if self._data.dtype.kind == 'f':
        raise TypeError('~ (operator.invert) is only implemented on integer and Boolean-type '
                        'tensors')
    return BitwiseNot.apply(self)


__all__ = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greater', 'greater_equal', 'less', 'less_equal',
           'not_equal', 'isclose', 'allclose', 'equal', 'isnan', 'isinf', 'isfinite',
           'isposinf', 'isneginf', 'logical_and', 'logical_or', 'logical_xor', 'logical_not',
           'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not', 'bitwise_left_shift',
           'bitwise_right_shift']

# Tensor methods (bound in ops/__init__.py): the function forms, the in-place ones, operators.
METHODS = {name: globals()[name] for name in __all__}
METHODS.update(
    logical_not_=_unary_inplace(LogicalNot), bitwise_not_=_unary_inplace(BitwiseNot),
    logical_and_=_binary_inplace(LogicalAnd, 'logical_and_'),
    logical_or_=_binary_inplace(LogicalOr, 'logical_or_'),
    logical_xor_=_binary_inplace(LogicalXor, 'logical_xor_'),
    bitwise_and_=_binary_inplace(BitwiseAnd, 'bitwise_and_', False),
    bitwise_or_=_binary_inplace(BitwiseOr, 'bitwise_or_', False),
    bitwise_xor_=_binary_inplace(BitwiseXor, 'bitwise_xor_', False),
    bitwise_left_shift_=_binary_inplace(BitwiseLeftShift, 'bitwise_left_shift_', False),
    bitwise_right_shift_=_binary_inplace(BitwiseRightShift, 'bitwise_right_shift_', False),
)
# Operators: &, |, ^, ~, <<, >> with their reflected and in-place forms (==, <, ... are bound
# in ops/__init__.py).
METHODS.update(
    __and__=bitwise_and, __rand__=_commuted(bitwise_and), __iand__=METHODS['bitwise_and_'],
    __or__=bitwise_or, __ror__=_commuted(bitwise_or), __ior__=METHODS['bitwise_or_'],
    __xor__=bitwise_xor, __rxor__=_commuted(bitwise_xor), __ixor__=METHODS['bitwise_xor_'],
    __invert__=_invert,
    __lshift__=bitwise_left_shift, __rlshift__=_reflected(BitwiseLeftShift),
    __ilshift__=METHODS['bitwise_left_shift_'],
    __rshift__=bitwise_right_shift, __rrshift__=_reflected(BitwiseRightShift),
    __irshift__=METHODS['bitwise_right_shift_'],
)
