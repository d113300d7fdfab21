"""What the elementwise families share: the ``Unary`` declaration form, the helpers their
error messages use, and the factories that turn op classes into functions and methods.

The families: ``arithmetic`` (add, sub, mul, div, pow, remainder, ...), ``unary`` (exp,
log, trig, hyperbolic, rounding, ...), ``special`` (erf, lgamma, digamma, ...),
``comparison`` (comparisons, predicates, logical and bitwise ops) and ``clamping``
(clamp, maximum, where, lerp, fill, copy, clone).

Every family registers its Tensor methods (in-place forms and operators included) where it
defines the function they bind: with ``dynagrad.tensor.method`` on a ``def``, or through
the factories below on a one-line declaration.
"""
import sys

from .. import _dtype
from ..backend import xp
from ..tensor import Tensor, method
from ..autograd.function import Op
from ..autograd.promotion import OperandTypeError
from .out_args import call_into, CAST


class Unary(Op):
    """An op of one tensor input declared by its formula alone::

        class Exp(Unary):
            quiet_fp = True
            saves = 'output'
            def f(x): return xp.exp(x)          # the value, on an array
            def df(g, y): return g * y          # the gradient: g times the derivative

    ``f`` computes on arrays. ``df`` gets the output gradient ``g`` and what ``saves``
    names: the input ``x`` ('input', the default), the output ``y`` ('output'), or nothing
    (None: ``df(g)``). Like every backward formula, ``df`` runs on arrays and, under
    ``create_graph=True``, on tensors, so it may use only what both share (operators, the
    helpers of ``formula``, and ``SomeOp.run``).

    ``f`` and ``df`` become static methods, and the class's ``forward`` and ``backward``
    are built from them; an op that needs more (parameters, several saved values) writes
    ``forward`` and ``backward`` itself, as any ``Op`` does.
    """
    vmap_rule = 'elementwise'
    float_result = True   # integer inputs are computed in the default float dtype
    saves = 'input'       # what df gets after g: 'input', 'output' or None

    def __init_subclass__(cls, **kwargs):
        own = cls.__dict__
        for name in ('f', 'df'):
            if name in own and not isinstance(own[name], staticmethod):
                setattr(cls, name, staticmethod(own[name]))
        if 'f' in own and 'forward' not in own:
            f = own['f'].__func__
            if cls.saves is None and not cls.quiet_fp:
                cls.forward = own['f']  # the static f itself: no frame of ours on the hot path
            else:
                cls.forward = _FORWARDS[cls.saves](f)
        if 'df' in own and 'backward' not in own:
            df = own['df']
            cls.backward = df if cls.saves is None else _backward_saved(df.__func__)
            # elementwise, so the Jacobian is diagonal: df applied to the tangent is the
            # forward-mode derivative too (unless the op writes its own: abs of complex)
            if 'jvp' not in own:
                cls.jvp = staticmethod(_jvp_from_df(df.__func__, cls.saves))
        super().__init_subclass__(**kwargs)   # Op's: wraps a quiet_fp forward


def _jvp_from_df(df, saves):
    if saves is None:
        return lambda tangents, inputs, out, **params: df(tangents[0])
    if saves == 'output':
        return lambda tangents, inputs, out, **params: df(tangents[0], out)
    return lambda tangents, inputs, out, **params: df(tangents[0], inputs[0])


# forward and backward made of f and df: closures, so the hot path (exp, tanh, relu) pays no
# attribute lookups and no more calls than a hand-written forward and backward would.

def _forward_saving_input(f):
    def forward(self, x):
        self._saved = (x,)
        return f(x)
    return forward


def _forward_saving_output(f):
    def forward(self, x):
        y = f(x)
        self._saved = (y,)
        return y
    return forward


def _forward_saving_nothing(f):
    def forward(self, x):
        return f(x)
    return forward


_FORWARDS = {'input': _forward_saving_input, 'output': _forward_saving_output,
             None: _forward_saving_nothing}


def _backward_saved(df):
    def backward(self, g):
        # self.saved_tensors[0], without the property's frame
        return df(g, self._unpack_saved(self._as_tensors)[0])
    return backward


class _NoDerivative(Op):
    """An op whose backward PyTorch does not define: the graph records it, backward raises."""
    vmap_rule = 'elementwise'
    aten = ''

    def backward(self, *grads):
        raise RuntimeError(f'derivative for aten::{self.aten} is not implemented')


# -- helpers of formulas and error messages -----------------------------------------------

def _as_array(x):
    return x._data if hasattr(x, '_data') else x


def type_name(a):
    """PyTorch's scalar-type name of an array's dtype ('Float', 'Long', 'Bool', ...)."""
    return _dtype.FROM_NUMPY[xp.asarray(a).dtype].legacy_name[:-6]


def not_implemented(kernel, a):
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(a)}\'')


# PyTorch's CPU kernels refuse most ops on uint16/32/64 and float8 ("limited support"). An op
# tests the NumPy dtype it computes in against one of these sets (a single hash lookup, paid
# on the ordinary dtypes' path too, so nothing more): REFUSED for a kernel that refuses all
# eight, FLOAT8 or WIDE_UNSIGNED where torch refuses only those. The float8 entries appear
# when ml_dtypes loads (the sets are shared with _dtype, which fills them).
REFUSED = _dtype.REFUSED_NUMPY
FLOAT8 = _dtype.FLOAT8_NUMPY
WIDE_UNSIGNED = _dtype.WIDE_UNSIGNED_NUMPY
WIDE_UNSIGNED_OR_E8M0 = _dtype.WIDE_UNSIGNED_OR_E8M0_NUMPY


def refused(kernel, a):
    """The error of a kernel PyTorch does not implement for ``a``'s dtype, with what to do."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(a)}\' (PyTorch '
                               'supports few ops on uint16/32/64 and float8: cast to int64 or '
                               'a floating dtype first)')


def unordered_complex():
    """PyTorch's error for clamp and relu of a complex tensor."""
    return NotImplementedError('clamp is not supported for complex types')


def _need_tensor(fn_name, value, position, arg='other'):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


# -- function and method factories ----------------------------------------------------------
# One line declares an op's function and its Tensor methods where the op is defined:
#
#     exp2 = _unary(Exp2, 'exp2', inplace=True)
#
# is dynagrad.exp2, Tensor.exp2 and Tensor.exp2_. The functions made here call the op's
# ``apply`` (bound once, here) directly: one frame on the hot path, as a hand-written one.


def _unary(op_cls, name, *, aliases=(), inplace=None, out=True):
    """``name(input, *, out=None)``: ``op_cls`` on one tensor (``out=False``: without
    ``out=``, as PyTorch's function; ``out=EXACT``: out's dtype must be the result's, as
    PyTorch's kernels of sign, floor, abs... want); also the Tensor method ``name`` and
    each alias (the same function, so it accepts the ``out=`` PyTorch's methods refuse).
    ``inplace`` (True for ``op_cls`` itself, or the op class of PyTorch's in-place form)
    adds ``Tensor.<name>_`` for ``name`` and each alias."""
    module = _caller_module()
    apply = op_cls.apply

    if out:
        rule = CAST if out is True else out

        def fn(input, *, out=None):
            if out is None:
                return apply(input)
            return call_into(out, name, apply, input, _dtype_rule=rule)
        fn.takes_out = True
    else:
        def fn(input):
            return apply(input)
    method(name, *aliases)(_named(fn, name, module))
    if inplace:
        apply_ = (op_cls if inplace is True else inplace).apply_
        for each in (name,) + aliases:
            def fn_(self):
                return apply_(self)
            method(each + '_')(_named(fn_, each + '_', module))
    return fn


def _binary(op_cls, name, *, aliases=(), inplace=False, tensors_only=False):
    """``name(input, other, *, out=None)``: ``op_cls`` on two operands (``tensors_only``:
    ``other`` must be a Tensor, as in PyTorch's signature); also the Tensor method ``name``
    and each alias. ``inplace`` adds ``Tensor.<name>_`` for ``name`` and each alias."""
    module = _caller_module()
    apply = op_cls.apply
    if tensors_only:
        def fn(input, other, *, out=None):
            _need_tensor(name, other, 2)
            if out is None:
                return apply(input, other)
            return call_into(out, name, apply, input, other)
    else:
        def fn(input, other, *, out=None):
            if out is None:
                return apply(input, other)
            return call_into(out, name, apply, input, other)
    fn.takes_out = True
    method(name, *aliases)(_named(fn, name, module))
    if inplace:
        for each in (name,) + aliases:
            method(each + '_')(_binary_inplace(op_cls, each + '_', tensors_only, module))
    return fn


def _binary_inplace(op_cls, name, tensors_only, module):
    apply_ = op_cls.apply_
    if tensors_only:
        def fn_(self, other):
            _need_tensor(name, other, 1)
            return apply_(self, other)
    else:
        def fn_(self, other):
            return apply_(self, other)
    return _named(fn_, name, module)


def _operator(op_cls, *dunders, reflected=False):
    """The Tensor methods ``dunders`` (``__add__``, ``__radd__``...): ``op_cls.apply`` on
    ``(self, other)``, or on ``(other, self)`` when ``reflected``, called directly
    (``op_cls`` may also be a function, where the operator picks among variants)."""
    apply = op_cls.apply if isinstance(op_cls, type) else op_cls
    # An operand that is no number (a str, None): NotImplemented, so Python gives torch's
    # answer (== False, + a TypeError); the try costs nothing when nothing is raised.
    if reflected:
        def operator(self, other):
            try:
                return apply(other, self)
            except OperandTypeError:
                return NotImplemented
    else:
        def operator(self, other):
            try:
                return apply(self, other)
            except OperandTypeError:
                return NotImplemented
    method(*dunders)(_named(operator, dunders[0], _caller_module()))
    return operator


def _caller_module():
    """The module that called the factory calling this (what ``collections.namedtuple``
    does too)."""
    return sys._getframe(2).f_globals.get('__name__', __name__)


def _named(fn, name, module):
    # The declaring module's name and the function's own: reprs read as that module's
    # function, and pickle finds it there (``dynagrad.ops.unary.exp2``).
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    return fn
