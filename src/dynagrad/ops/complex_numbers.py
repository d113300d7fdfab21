"""Complex numbers: making them (``complex``, ``polar``, ``view_as_complex``), the views of
their parts (``real``, ``imag``, ``view_as_real``), conjugation, and ``angle`` and ``sgn``
of complex tensors.

Gradients follow PyTorch's convention, the conjugate Wirtinger derivative: for a real loss
L of z = x + iy, z's gradient is dL/dx + i dL/dy. Most ops get it from their real formula
(see ``Op.holomorphic``); the ops here are not holomorphic, so each writes its own.

``conj`` is lazy in PyTorch: a view that reads its source conjugated. NumPy has no such
view, so here it is a conjugated copy that reports ``is_conj()`` as PyTorch's does and
shares its source's version counter (a saved conjugate of a tensor later written in place
is caught at backward). Writing into it is refused, since the write could not reach its
source as it does in PyTorch.
"""
import numpy as np

from .. import _dtype
from ..backend import xp
from ..autograd.batched import vmap_function
from ..autograd.function import Op
from ..autograd.autocast import autocast_args, autocast_state
from ..tensor import Tensor, method
from . import formula as fm
from ._elementwise import _need_tensor
from .strided import _copy_op

_REAL_TO_COMPLEX = _dtype.COMPLEX_NUMPY


def _tensor_input(name, input):
    _need_tensor(name, input, 1, 'input')
    return input


# -- the parts of a complex tensor ------------------------------------------------------------

class _ComplexView(Op):
    """The views between complex numbers and their real parts: linear, not holomorphic."""
    is_view = True
    holomorphic = False
    supports_complex = True
    linear = True


class Real(_ComplexView):
    """``z.real``: a view of the real parts (PyTorch records it as a select of
    ``view_as_real``, hence the node's name)."""
    node_name = 'SelectBackward0'
    vmap_rule = 'elementwise'

    def forward(self, z):
        return z.real

    def backward(self, g):
        return g + 0j        # a real gradient of the real part is z's gradient as it is


class Imag(Real):
    """``z.imag``: a view of the imaginary parts."""

    def forward(self, z):
        return z.imag

    def backward(self, g):
        return g * 1j         # dL/dy enters as the imaginary part


class ViewAsReal(_ComplexView):
    """``view_as_real(z)``: the same memory seen as real pairs, shape ``z.shape + (2,)``."""

    def forward(self, z):
        real = z.real
        return xp.lib.stride_tricks.as_strided(real, z.shape + (2,),
                                               z.strides + (z.itemsize // 2,))

    def backward(self, g):
        return g[..., 0] + g[..., 1] * 1j


class ViewAsComplex(_ComplexView):
    """``view_as_complex(x)``: real pairs (last dimension 2, stride 1) seen as complex."""

    def forward(self, x):
        return x.view(_REAL_TO_COMPLEX[x.dtype])[..., 0]

    def backward(self, g):
        return _stack_parts(g)


def _stack_parts(g):
    """A complex gradient as the real pairs of ``view_as_real`` (a copy: g may be any view)."""
    if hasattr(g, '_data'):
        return ViewAsReal.apply(g.resolve_conj() if g._is_conj else g)
    return xp.stack((g.real, g.imag), -1)


@method
def real(input):
    """The real part: a view for a complex tensor, the tensor itself for a real one."""
    if _tensor_input('real', input)._data.dtype.kind == 'c':
        return Real.apply(input)
    return input


@method
def imag(input):
    """The imaginary part: a view; PyTorch's error for real tensors."""
    if _tensor_input('imag', input)._data.dtype.kind != 'c':
        raise RuntimeError('imag is not implemented for tensors with non-complex dtypes.')
    return Imag.apply(input)


class _PartAttribute:
    """``z.real`` and ``z.imag`` as attributes (the functions are ``dynagrad.real`` and
    ``dynagrad.imag``): read, the view; assigned, a copy into it, as PyTorch does."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, tensor, owner=None):
        return self.fn if tensor is None else self.fn(tensor)

    def __set__(self, tensor, value):
        part = self.fn(tensor)
        part.copy_(value if isinstance(value, Tensor) else xp.asarray(value))


Tensor.real = _PartAttribute(real)
Tensor.imag = _PartAttribute(imag)


@vmap_function('physical')
def view_as_real(input):
    data = _tensor_input('view_as_real', input)._data
    if data.dtype.kind != 'c':
        raise RuntimeError('view_as_real is only supported for complex tensors')
    if input._is_conj:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            'conjugate tensor so you can view it as real, use self.resolve_conj(); however, '
            'be warned that the resulting tensor will NOT alias the original.')
    return ViewAsReal.apply(input)


@vmap_function('physical')
def view_as_complex(input):
    _tensor_input('view_as_complex', input)
    if autocast_state.active:       # PyTorch's autocast computes it from float32 pairs
        input, = autocast_args('fp32', input)
    data = input._data
    if data.dtype not in _REAL_TO_COMPLEX:
        name = _dtype.type_name(input.dtype)
        extra = (' (dynagrad has no complex32: NumPy has no such type)'
                 if data.dtype == np.float16 else '')
        raise RuntimeError('view_as_complex is only supported for half, float and double '
                           f'tensors, but got a tensor of scalar type: {name}{extra}')
    if data.ndim == 0 or data.shape[-1] != 2:
        raise RuntimeError('Tensor must have a last dimension of size 2')
    item = data.itemsize
    if data.strides[-1] != item:
        raise RuntimeError('Tensor must have a last dimension with stride 1')
    if any(s % (2 * item) for s, n in zip(data.strides[:-1], data.shape[:-1]) if n > 1):
        raise RuntimeError('Tensor must have a stride divisible by 2 for all but last '
                           'dimension')
    return ViewAsComplex.apply(input)


view_as_real_copy = _copy_op('view_as_real_copy', view_as_real)
view_as_complex_copy = _copy_op('view_as_complex_copy', view_as_complex)


@method
def cfloat(self):
    return self.to(_dtype.complex64)


@method
def cdouble(self):
    return self.to(_dtype.complex128)


# -- conjugation ---------------------------------------------------------------------------------

class Conj(Op):
    holomorphic = False
    supports_complex = True
    linear = True
    vmap_rule = 'elementwise'

    def forward(self, z):
        return z.conj()

    def backward(self, g):
        return g.conj()


class ConjPhysical(Conj):
    pass


class ConjPhysicalInplace(Conj):
    node_name = 'ConjPhysicalBackward1'


@method
def is_complex(input):
    return _tensor_input('is_complex', input)._data.dtype.kind == 'c'


@method
def is_conj(input):
    return _tensor_input('is_conj', input)._is_conj


@method
def conj(input):
    """The conjugate; for a real tensor, the tensor itself (as PyTorch). See the module
    docstring for how it is lazy."""
    if _tensor_input('conj', input)._data.dtype.kind != 'c':
        return input
    out = Conj.apply(input)
    out._vc = input._vc
    if not input._is_conj:
        out._is_conj = True
    return out


@method
def conj_physical(input):
    if _tensor_input('conj_physical', input)._data.dtype.kind != 'c':
        return input
    return ConjPhysical.apply(input)


@method
def conj_physical_(self):
    return ConjPhysicalInplace.apply_(self)


@method
def resolve_conj(input):
    if not _tensor_input('resolve_conj', input)._is_conj:
        return input
    return input.clone()


# -- making complex tensors --------------------------------------------------------------------

class Complex(Op):
    """``complex(real, imag)``: two real tensors of one floating dtype, broadcast."""
    holomorphic = False
    supports_complex = True

    def forward(self, re, im):
        out = xp.empty(xp.broadcast_shapes(re.shape, im.shape), _REAL_TO_COMPLEX[re.dtype])
        out.real = re
        out.imag = im
        return out

    def backward(self, g):
        return g.real, g.imag


def _check_parts(op, a, b):
    _need_tensor(op, a, 1, 'real' if op == 'complex' else 'abs')
    _need_tensor(op, b, 2, 'imag' if op == 'complex' else 'angle')
    da, db = a._data.dtype, b._data.dtype
    if da not in _REAL_TO_COMPLEX or db not in _REAL_TO_COMPLEX:
        extra = (' (dynagrad has no complex32: NumPy has no such type)'
                 if np.float16 in (da, db) else '')
        raise RuntimeError('Expected both inputs to be Half, Float or Double tensors but got '
                           f'{_dtype.type_name(a.dtype)} and {_dtype.type_name(b.dtype)}'
                           + extra)
    if da != db:
        raise RuntimeError(f'Expected object of scalar type {_dtype.type_name(a.dtype)} but '
                           f'got scalar type {_dtype.type_name(b.dtype)} for second argument')


def complex(real, imag):
    _check_parts('complex', real, imag)
    return Complex.apply(real, imag)


class Polar(Op):
    """``polar(abs, angle)``: abs * (cos(angle) + i sin(angle))."""
    holomorphic = False
    supports_complex = True

    def forward(self, r, theta):
        out = xp.empty(xp.broadcast_shapes(r.shape, theta.shape), _REAL_TO_COMPLEX[r.dtype])
        out.real = r * xp.cos(theta)
        out.imag = r * xp.sin(theta)
        self.save_for_backward(theta, out)
        return out

    def backward(self, g):
        theta, z = self.saved_tensors
        # Re(g * conj(dz/dr)) with dz/dr = e^(i theta); Re(g * conj(dz/dtheta)) with
        # dz/dtheta = i z
        g_re, g_im = g.real, g.imag
        grad_r = g_re * fm.cos(theta) + g_im * fm.sin(theta)
        grad_theta = g_im * z.real - g_re * z.imag
        return grad_r, grad_theta


def polar(abs, angle):
    _check_parts('polar', abs, angle)
    return Polar.apply(abs, angle)


# -- angle and sgn of complex tensors (their real forms are in unary.py) ----------------------

class ComplexAngle(Op):
    """``angle(z)``: atan2(imag, real), a real tensor. Its gradient i z g / |z|^2 (0 at 0)."""
    node_name = 'AngleBackward0'
    holomorphic = False
    supports_complex = True
    vmap_rule = 'elementwise'

    def forward(self, z):
        self.save_for_backward(z)
        return xp.angle(z)

    def backward(self, g):
        z, = self.saved_tensors
        r2 = z.real * z.real + z.imag * z.imag
        safe = _where_zero(r2, 1.0, r2)
        return _where_zero(r2, 0.0, (g / safe) * (z * 1j))


class ComplexSgn(Op):
    """``sgn(z)``: z / |z| (0 at 0). Not holomorphic: its gradient is
    (g - sgn^2 conj(g)) / (2 |z|), 0 where z is 0."""
    node_name = 'SgnBackward0'
    holomorphic = False
    supports_complex = True
    vmap_rule = 'elementwise'

    def forward(self, z):
        r = xp.abs(z)
        with np.errstate(invalid='ignore', divide='ignore'):
            out = xp.where(r == 0, 0, z / xp.where(r == 0, 1, r)).astype(z.dtype)
        self.save_for_backward(z, out)
        return out

    def backward(self, g):
        z, s = self.saved_tensors
        r = abs(z)
        safe = _where_zero(r, 1.0, r)
        return _where_zero(r, 0.0, (g - s * s * g.conj()) / (2 * safe))


def _where_zero(magnitude, at_zero, elsewhere):
    return fm.where(fm.unwrap(magnitude) == 0, at_zero, elsewhere)


__all__ = ['real', 'imag', 'view_as_real', 'view_as_complex', 'view_as_real_copy',
           'view_as_complex_copy', 'is_complex', 'is_conj', 'conj',
           'conj_physical', 'conj_physical_', 'resolve_conj', 'complex', 'polar']
