"""``linalg.eig`` and ``linalg.eigvals``: eigen-decomposition of a general (non-symmetric)
matrix, complex results, LAPACK's geev through NumPy (as PyTorch, so eigenvectors come
normalised to norm 1 with the same phase convention).

The gradient (PyTorch's convention for complex numbers, with E_ij = L_j - L_i):

    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(diag(V^H gV)))) / conj(E)) V^H

off the diagonal of the fraction, which is zero on it. The second term in the numerator
keeps the eigenvectors at norm 1. Eigenvectors are defined up to a phase, so a loss that
depends on it (the imaginary part of diag(V^H gV) not zero) is refused, as PyTorch refuses
it; repeated eigenvalues give infinities there, as in PyTorch.
"""
from collections import namedtuple

import numpy as np

from .. import _dtype
from ..backend import xp
from ..autograd.function import Op
from ..autograd.autocast import autocast_args, autocast_state
from ..tensor import Tensor
from .formula import is_array
from .linalg_products import _mm, _check_tensor
from ._linalg_common import _check_square, _eye, _np_dtype, _tname
from .linalg_decompositions import Inv

# geev's results: complex, of the input's precision (a complex input keeps its dtype)
_COMPLEX_OF = {**_dtype.COMPLEX_NUMPY, **{c: c for c in _dtype.COMPLEX_NUMPY.values()}}
_eig_result = namedtuple('linalg_eig', ['eigenvalues', 'eigenvectors'])
_PHASE_ERROR = ('linalg_eig_backward: The eigenvectors in the complex case are specified up '
                'to multiplication by e^{i phi}. The specified loss function depends on this '
                'quantity, so it is ill-defined.')


def _mH(x):
    return x.mT.conj()


def _inv(x):
    return xp.linalg.inv(x) if is_array(x) else Inv.apply(x)


class Eig(Op):
    node_name = 'LinalgEigBackward0'
    holomorphic = False
    supports_complex = True

    def forward(self, A):
        self.real_input = A.dtype.kind != 'c'
        L, V = xp.linalg.eig(A)
        complex_dtype = _COMPLEX_OF[A.dtype]
        L, V = L.astype(complex_dtype, copy=False), V.astype(complex_dtype, copy=False)
        self.save_for_backward(L, V)
        return L, V

    def backward(self, gL=None, gV=None):
        L, V = self.saved_tensors
        Vh = _mH(V)
        inner = 0
        if gL is not None:
            inner = gL[..., None] * _eye(L.shape[-1], _np_dtype(L))
        if gV is not None:
            VhgV = _mm(Vh, gV)
            diagonal = xp.diagonal(_as_array(VhgV), axis1=-2, axis2=-1)
            scale = np.finfo(diagonal.real.dtype).eps ** 0.5
            if xp.any(xp.abs(diagonal.imag) > scale * xp.maximum(1, xp.abs(diagonal))):
                raise RuntimeError(_PHASE_ERROR)
            n = L.shape[-1]
            eye = _eye(n, _np_dtype(L).type(0).real.dtype)
            E = L[..., None, :] - L[..., :, None]
            E = (E + eye).conj()                    # 1 on the diagonal, masked below
            VhV = _mm(Vh, V)
            real_diagonal = VhgV.real * eye         # diag(re(diag(V^H gV)))
            inner = inner + (VhgV - _mm(VhV, real_diagonal)) / E * (1 - eye)
        gA = _mm(_mm(_mH(_inv(V)), inner), Vh)
        return gA.real if self.real_input else gA


def _as_array(x):
    return x._data if isinstance(x, Tensor) else x


def _check_eig(op, A):
    _check_tensor(op, A)
    d = A._data.dtype
    if d.kind in 'iub':
        raise RuntimeError(f'Unknown Complex ScalarType for {_tname(A)}')
    if d not in _COMPLEX_OF:
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for \'{_tname(A)}\'')
    _check_square(op, A, complex_ok=True)


def eig(A):
    """``(eigenvalues, eigenvectors)`` of square matrices (batched), complex."""
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_eig('linalg.eig', A)
    return _eig_result(*Eig.apply(A))


def eigvals(A):
    """The eigenvalues of square matrices (batched), complex."""
    if autocast_state.active:
        A, = autocast_args('fp32', A)
    _check_eig('linalg.eigvals', A)
    return Eig.apply(A)[0]
