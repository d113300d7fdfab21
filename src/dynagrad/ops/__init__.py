"""dynagrad's ops, one module per family; here they become functions and Tensor methods.

Each family module lists its public functions in ``__all__`` (``dynagrad.<name>``) and
its Tensor methods in ``METHODS`` (``tensor.<name>``, in-place variants included).
"""
from ..tensor import Tensor
from . import arithmetic, unary, comparison, clamping, pointwise  # noqa: F401
from . import reduction, shape, indexing, linalg, random, creation
from .arithmetic import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .clamping import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .arithmetic import Add, Sub, Rsub, Mul, Div, Rdiv, Rpow
from .unary import Neg, Abs
from .comparison import Eq, Ne, Lt, Le, Gt, Ge

# The elementwise families (``pointwise`` gathers them under its old name), then the rest.
FAMILIES = (arithmetic, unary, comparison, clamping, reduction, shape, indexing, linalg, random)
__all__ = [name for module in FAMILIES + (creation,) for name in module.__all__]


def _operator(op_cls):
    apply = op_cls.apply

    def method(self, other):
        return apply(self, other)
    method.__name__ = op_cls.__name__.lower()
    return method


def _bind():
    T = Tensor
    for family in FAMILIES:
        for name, fn in family.METHODS.items():
            setattr(T, name, fn)
    T.__getitem__ = indexing.getitem
    T.__setitem__ = indexing.setitem
    T.__matmul__ = linalg.matmul
    T.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
    T.__pow__ = arithmetic.pow
    T.__ipow__ = arithmetic.pow_
    # Operators call the op directly: one wrapper frame on the hot path, no more.
    T.__add__ = T.__radd__ = _operator(Add)
    T.__sub__ = _operator(Sub)
    T.__rsub__ = _operator(Rsub)
    T.__mul__ = T.__rmul__ = _operator(Mul)
    T.__truediv__ = _operator(Div)
    T.__rtruediv__ = _operator(Rdiv)
    T.__rpow__ = _operator(Rpow)
    T.__neg__ = lambda self: Neg.apply(self)
    T.__abs__ = lambda self: Abs.apply(self)
    T.__pos__ = lambda self: self
    T.__eq__, T.__ne__ = _operator(Eq), _operator(Ne)
    T.__lt__, T.__le__, T.__gt__, T.__ge__ = map(_operator, (Lt, Le, Gt, Ge))
    T.__iadd__, T.__isub__ = arithmetic.add_, arithmetic.sub_
    T.__imul__, T.__itruediv__ = arithmetic.mul_, arithmetic.div_
    T.T = property(lambda self: shape.permute(self, tuple(range(self.ndim))[::-1]))
    T.mT = property(lambda self: shape.transpose(self, -2, -1))
    T.__hash__ = Tensor.__hash__


_bind()
