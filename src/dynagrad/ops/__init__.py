"""dynagrad's ops, grouped by family; this module binds them to Tensor as methods and operators."""
from ..tensor import Tensor
from ..autograd.function import Op
from . import pointwise, reduction, shape, indexing, linalg, creation
from .pointwise import *  # noqa: F401,F403
from .reduction import sum, mean  # noqa: F401
from .shape import (reshape, view, view_as, reshape_as, flatten, transpose, swapaxes,  # noqa
                    swapdims, t, permute, squeeze, unsqueeze, expand, expand_as, broadcast_to)
from .indexing import getitem, setitem, nonzero  # noqa: F401
from .linalg import matmul, mm  # noqa: F401
from .creation import *  # noqa: F401,F403
from .pointwise import (Add, Sub, Rsub, Mul, Div, Rdiv, Rpow, Neg, Abs, Eq, Ne, Lt, Le, Gt,
                        Ge, Clamp)


class Fill(Op):
    node_name = 'FillBackward2'

    def forward(self, x, value):
        return xp_full_like(x, value)

    def backward(self, g):
        return g * 0


class Zero(Fill):
    pass


class Copy(Op):
    """``x.copy_(src)``: src broadcast to x's shape and cast to its dtype."""
    node_name = 'CopyBackwards'

    def forward(self, x, src):
        if src.ndim > x.ndim:  # leading size-1 dimensions of src are dropped, as in PyTorch
            src = src.reshape(src.shape[src.ndim - x.ndim:])
        return xp_broadcast_to(src, x.shape).astype(x.dtype)

    def backward(self, g):
        return g * 0, g


def _xp_funcs():
    from ..backend import xp
    return xp.full_like, xp.broadcast_to


xp_full_like, xp_broadcast_to = _xp_funcs()


# -- in-place variants --------------------------------------------------------------------

def add_(self, other, *, alpha=1):
    return Add.apply_(self, other, alpha=alpha)


def sub_(self, other, *, alpha=1):
    return Sub.apply_(self, other, alpha=alpha)


def mul_(self, other):
    return Mul.apply_(self, other)


def div_(self, other, *, rounding_mode=None):
    if self._data.dtype.kind != 'f':
        raise RuntimeError(f'result type Float can\'t be cast to the desired output type '
                           f'{self.dtype.legacy_name[:-6]}')
    return Div.apply_(self, other)


def clamp_(self, min=None, max=None):
    return Clamp.apply_(self, min=min, max=max)


def zero_(self):
    return Zero.apply_(self, value=0)


def fill_(self, value):
    value = value.item() if isinstance(value, Tensor) else value
    return Fill.apply_(self, value=value)


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        if isinstance(src, (int, float, bool)):
            return fill_(self, src)
        raise TypeError(f'copy_(): argument \'other\' must be Tensor, not {type(src).__name__}')
    import numpy as np
    src_shape, shape = src._data.shape, self._data.shape
    extra = len(src_shape) - len(shape)
    trimmed = src_shape[extra:] if extra > 0 and all(d == 1 for d in src_shape[:extra]) \
        else src_shape
    try:
        if np.broadcast_shapes(trimmed, shape) != shape:
            raise ValueError
    except ValueError:
        where = next((f'The size of tensor a ({x}) must match the size of tensor b ({y}) at '
                      f'non-singleton dimension {len(shape) - k}' for k, (x, y) in
                      enumerate(zip(shape[::-1], trimmed[::-1]), 1) if x != y and y != 1),
                     'The source has more dimensions than the destination')
        raise RuntimeError(f'{where} (copy_: source of shape '
                           f'{list(src_shape)} into destination of shape {list(shape)})') from None
    return Copy.apply_(self, src)


def _unary_inplace(op_cls):
    def method(self):
        return op_cls.apply_(self)
    method.__name__ = op_cls.__name__.lower() + '_'
    return method


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return pointwise.PowTensor.apply_(self, exponent)
    return pointwise.Pow.apply_(self, exponent=exponent)


def _operator(op_cls):
    apply = op_cls.apply

    def method(self, other):
        return apply(self, other)
    method.__name__ = op_cls.__name__.lower()
    return method


def _bind():
    T = Tensor
    methods = dict(
        add=add, sub=sub, subtract=sub, mul=mul, multiply=mul, div=div, divide=div,  # noqa
        true_divide=div, pow=pow, neg=neg, negative=neg, exp=exp, log=log, sqrt=sqrt,  # noqa
        tanh=tanh, sigmoid=sigmoid, relu=relu, abs=abs, absolute=abs, sign=sign,  # noqa
        clamp=clamp, clip=clamp, clone=clone, eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge,  # noqa
        sum=sum, mean=mean, matmul=matmul, mm=mm, reshape=reshape, view=view,
        view_as=view_as, reshape_as=reshape_as, flatten=flatten, transpose=transpose,
        swapaxes=swapaxes, swapdims=swapdims, t=t, permute=permute, squeeze=squeeze,
        unsqueeze=unsqueeze, expand=expand, expand_as=expand_as, broadcast_to=broadcast_to,
        add_=add_, sub_=sub_, mul_=mul_, div_=div_, clamp_=clamp_, clip_=clamp_,
        zero_=zero_, fill_=fill_, copy_=copy_, pow_=_pow_,
        __getitem__=getitem, __setitem__=setitem,
        __matmul__=matmul, __pow__=pow,
    )
    for name in ('exp', 'log', 'sqrt', 'tanh', 'sigmoid', 'relu', 'abs', 'neg', 'sign'):
        methods[name + '_'] = _unary_inplace(getattr(pointwise, name.capitalize()))
    for name, fn in methods.items():
        setattr(T, name, fn)

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
    T.__rmatmul__ = lambda self, other: matmul(other, self)
    T.__eq__, T.__ne__ = _operator(Eq), _operator(Ne)
    T.__lt__, T.__le__, T.__gt__, T.__ge__ = map(_operator, (Lt, Le, Gt, Ge))
    T.__iadd__, T.__isub__, T.__imul__, T.__itruediv__ = add_, sub_, mul_, div_
    T.__ipow__ = _pow_
    T.T = property(lambda self: permute(self, tuple(range(self.ndim))[::-1]))
    T.mT = property(lambda self: transpose(self, -2, -1))
    T.__hash__ = Tensor.__hash__


_bind()
