"""What the elementwise families share: the ``Unary`` declaration form, the helpers their
error messages use, and the factories that turn op classes into functions and methods.

The families: ``arithmetic`` (add, sub, mul, div, pow, remainder, ...), ``unary`` (exp,
log, trig, hyperbolic, rounding, ...), ``special`` (erf, lgamma, digamma, ...),
``comparison`` (comparisons, predicates, logical and bitwise ops) and ``clamping``
(clamp, maximum, where, lerp, fill, copy, clone).
"""
from .. import _dtype
from ..backend import xp
from ..tensor import Tensor
from ..autograd.function import Op


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
        super().__init_subclass__(**kwargs)   # Op's: wraps a quiet_fp forward


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


def _need_tensor(fn_name, value, position, arg='other'):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


# -- function and method factories ----------------------------------------------------------

def _unary(op_cls, name):
    def fn(input):
        return op_cls.apply(input)
    fn.__name__ = name
    return fn


def _unary_inplace(op_cls):
    def method(self):
        return op_cls.apply_(self)
    method.__name__ = op_cls.__name__.lower() + '_'
    return method


def _binary_tensors(op_cls, name):
    def fn(input, other):
        _need_tensor(name, other, 2)
        return op_cls.apply(input, other)
    fn.__name__ = name
    return fn


def _binary_inplace(op_cls, name, tensors_only=True):
    def method(self, other):
        if tensors_only:
            _need_tensor(name, other, 1)
        return op_cls.apply_(self, other)
    method.__name__ = name
    return method


def _commuted(fn):
    def method(self, other):
        return fn(self, other)
    method.__name__ = fn.__name__
    return method


def _reflected(op_cls):
    def method(self, other):
        return op_cls.apply(other, self)
    return method
