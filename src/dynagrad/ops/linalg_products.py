"""Products: the matmul family (mm, bmm, mv, dot, outer, inner), ``beta * input + alpha *
product`` (addmm, addmv, baddbmm, addbmm), einsum, tensordot, kron, cross, multi_dot.

Backward formulas are written with operators and ``.mT`` so that they run on arrays
(plain backward) and on tensors (``create_graph=True``, giving double backward); an op a
formula needs runs through ``SomeOp.run``. Re-exported by ``ops/linalg.py``."""
import math

import numpy as np

from ..backend import native_kernel, xp
from ..autograd.function import Op
from ..autograd.promotion import OperandTypeError
from ..autograd.autocast import autocast_args, autocast_state
from .. import _dtype
from ..tensor import Tensor, method
from .formula import is_array
from ._linalg_common import _eye, _np_dtype, _tname, _type_name, _shape
from ._elementwise import REFUSED, WIDE_UNSIGNED_OR_E8M0, _operator, refused


def _product(a, b):
    """``a @ b`` of two arrays: batches of small products by the native kernel (one GEMM a
    matrix, the batch over the BLAS's threads) where it applies, else NumPy's loop."""
    if (a.ndim > 2 or b.ndim > 2) and b.__class__ is np.ndarray:
        native = native_kernel('batched_matmul', a)
        if native is not None:
            out = native(a, b)
            if out is not None:
                return out
    return xp.matmul(a, b)


def _mm(a, b):
    """``a @ b`` for arrays, tensors, or a tensor with a constant array."""
    if is_array(a) and is_array(b):
        if a.ndim > 2 and a.shape[-1] == 1 and b.ndim > 2:
            # a batch of outer products (per-sample weight gradients): one broadcast
            # multiply, the same single products, at memory speed (NumPy's stacked matmul
            # runs a tiny GEMM per matrix, 2.4x slower at the MLP's sizes)
            return a * b
        return _product(a, b)
    return _matmul_op(a.ndim, b.ndim).apply(a, b)


# -- products ------------------------------------------------------------------------------

def _matmul_name(na, nb):
    if na == 1:
        return {1: 'DotBackward0', 2: 'SqueezeBackward4'}.get(nb, 'UnsafeViewBackward0')
    if na == 2:
        return {1: 'MvBackward0', 2: 'MmBackward0'}.get(nb, 'CloneBackward0')
    return 'UnsafeViewBackward0'


def _matmul_op(na, nb):
    """``Matmul`` under torch's node name for operands of ``na`` and ``nb`` dims."""
    return _MATMUL_OPS[na if na < 3 else 3][nb if nb < 3 else 3]


class Matmul(Op):
    """``a @ b`` with NumPy's (and PyTorch's) rules for 1-D operands and batch broadcasting."""
    supports_complex = True
    widens_half = True
    promotes = True

    def forward(self, a, b):
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.nd = (a.ndim, b.ndim)
        return _product(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        na, nb = self.nd
        ga = gb = None
        if na == 1 and nb == 1:                   # dot: g is a scalar
            return (g * b if b is not None else None), (g * a if a is not None else None)
        if na == 1:                               # (k) @ (..., k, m) -> (..., m)
            if b is not None:
                ga = _mm(b, g[..., None])[..., 0]
            if a is not None:
                gb = _mm(a[:, None], g[..., None, :])
            return ga, gb
        if nb == 1:                               # (..., n, k) @ (k) -> (..., n)
            if b is not None:
                ga = g[..., None] * b
            if a is not None:
                gb = _mm(a.mT, g[..., None])[..., 0]
            return ga, gb
        if b is not None:
            ga = _mm(g, b.mT)
        if a is not None:
            gb = _mm(a.mT, g)
        return ga, gb


class Float8Matmul(Matmul):
    """``a @ b`` of float8 matrices: NumPy (ml_dtypes) gives float32, which torch rounds to
    the operands' float8 dtype."""

    def forward(self, a, b):
        return _dtype.to_float8(super().forward(a, b), _dtype.FROM_NUMPY[a.dtype])


# Matmul's subclass per (ndim, ndim) of its operands (3 standing for any batched operand).
_MATMUL_OPS = [[Matmul.named(_matmul_name(na, nb)) for nb in range(4)] for na in range(4)]


def _product_kernel(na, nb):
    """The CPU kernel torch runs a product of ``na``-D and ``nb``-D operands on (1-D first
    operands are folded into a matrix, batches into bmm)."""
    if nb == 1:
        return 'dot' if na == 1 else 'addmv_impl_cpu'
    return 'addmm_impl_cpu_' if nb == 2 else 'bmm'


def _refuse_product(a, kernel):
    """torch multiplies uint16/32/64 in no product and float8 only in addmm (not e8m0);
    called only for an ``a`` whose dtype is in REFUSED."""
    if kernel != 'addmm_impl_cpu_' or a.dtype in WIDE_UNSIGNED_OR_E8M0:
        raise refused(kernel, a)


def dtype_mismatch(a, b):
    """The error of a product of two NumPy dtypes that differ (a composite that multiplies
    internally raises it too)."""
    return RuntimeError(f'expected m1 and m2 to have the same dtype, but got: '
                        f'{_dtype.FROM_NUMPY[a].name} != {_dtype.FROM_NUMPY[b].name}')


def _same_dtype(op, *ts, message=None):
    dts = [t._data.dtype for t in ts]
    if any(d != dts[0] for d in dts):
        if message is None:
            message = (f'{op}: expected all inputs to have the same dtype, but got '
                       + ', '.join(_type_name(d) for d in dts))
        raise RuntimeError(message)


def _check_tensor(op, *ts):
    for t in ts:
        if not isinstance(t, Tensor):
            raise OperandTypeError(f'{op}(): argument must be a Tensor, not {type(t).__name__}')


def _xshape(shape):
    return 'x'.join(str(d) for d in shape)


@method
def matmul(input, other):
    if autocast_state.active:
        input, other = autocast_args('lower', input, other)
    _check_tensor('matmul', input, other)
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f'both arguments to matmul need to be at least 1D, but they are '
                           f'{a.ndim}D and {b.ndim}D')
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        if a.ndim <= 2 and b.ndim <= 2:
            if a.ndim == 1 and b.ndim == 1:
                raise RuntimeError('inconsistent tensor size, expected tensor [{}] and src [{}] '
                                   'to have the same number of elements, but got {} and {} '
                                   'elements respectively'.format(ka, kb, ka, kb))
            sa = 'x'.join(str(d) for d in (a.shape if a.ndim == 2 else (1,) + a.shape))
            sb = 'x'.join(str(d) for d in (b.shape if b.ndim == 2 else b.shape + (1,)))
            raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})')
        raise RuntimeError(f'matmul: the inner dimensions of shapes {list(a.shape)} and '
                           f'{list(b.shape)} do not match ({ka} != {kb})')
    if a.dtype != b.dtype:
        raise dtype_mismatch(a.dtype, b.dtype)
    if a.dtype == np.bool_:
        raise NotImplementedError('"matmul" not implemented for \'Bool\'')
    if a.dtype in REFUSED:
        _refuse_product(a, _product_kernel(a.ndim, b.ndim))
        return Float8Matmul.named(_matmul_name(min(a.ndim, 3), min(b.ndim, 3))).apply(input,
                                                                                     other)
    if a.ndim > 2 or b.ndim > 2:
        sa, sb = a.shape[:-2], b.shape[:-2] if b.ndim > 1 else ()
        try:
            if sa != sb:    # equal batch shapes (attention's) need no check
                xp.broadcast_shapes(sa, sb)
        except ValueError:
            raise RuntimeError(f'matmul: the batch dimensions of shapes {list(a.shape)} and '
                               f'{list(b.shape)} do not broadcast') from None
    return _matmul_op(input.ndim, other.ndim).apply(input, other)


_operator(matmul, '__matmul__')
_operator(matmul, '__rmatmul__', reflected=True)


@method
def mm(input, mat2):
    _check_tensor('mm', input, mat2)
    if input.ndim != 2:
        raise RuntimeError(f'self must be a matrix, got {input.ndim}-D tensor')
    if mat2.ndim != 2:
        raise RuntimeError(f'mat2 must be a matrix, got {mat2.ndim}-D tensor')
    return matmul(input, mat2)


@method
def bmm(input, mat2):
    if autocast_state.active:
        input, mat2 = autocast_args('lower', input, mat2)
    _check_tensor('bmm', input, mat2)
    if input.ndim != 3:
        raise RuntimeError('batch1 must be a 3D tensor')
    if mat2.ndim != 3:
        raise RuntimeError('batch2 must be a 3D tensor')
    b, n, k = input.shape
    if tuple(mat2.shape[:2]) != (b, k):
        raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: '
                           f'[{b}, {k}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].')
    _same_dtype('bmm', input, mat2, message=f'expected scalar type {_tname(input)} but found '
                                            f'{_tname(mat2)}')
    if input._data.dtype in REFUSED:
        raise refused('bmm', input._data)
    return Matmul.named('BmmBackward0').apply(input, mat2)


@method
def mv(input, vec):
    _check_tensor('mv', input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f'vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}')
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f'size mismatch, got input ({input.shape[0]}), mat '
                           f'({_xshape(input.shape)}), vec ({vec.shape[0]})')
    _same_dtype('mv', input, vec)
    if input._data.dtype in REFUSED:
        raise refused('addmv_impl_cpu', input._data)
    return _matmul_op(input.ndim, vec.ndim).apply(input, vec)


def _check_dot(op, input, other):
    _check_tensor(op, input, other)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f'1D tensors expected, but got {input.ndim}D and {other.ndim}D '
                           'tensors')
    if input.shape[0] != other.shape[0]:
        ka, kb = input.shape[0], other.shape[0]
        raise RuntimeError(f'inconsistent tensor size, expected tensor [{ka}] and src [{kb}] '
                           f'to have the same number of elements, but got {ka} and {kb} '
                           'elements respectively')
    _same_dtype(op, input, other, message=f'{op} : expected both vectors to have same dtype, '
                                          f'but found {_tname(input)} and {_tname(other)}')
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\'')
    if input._data.dtype in REFUSED:
        raise refused('dot', input._data)       # vdot's kernel too


@method
def dot(input, other):
    _check_dot('dot', input, other)
    return _matmul_op(input.ndim, other.ndim).apply(input, other)


@method
def vdot(input, other):
    """``input`` conjugated (a no-op for real tensors) dotted with ``other``."""
    _check_dot('vdot', input, other)
    return Matmul.named('VdotBackward0').apply(input.conj(), other)


@method('outer', 'ger')
def outer(input, vec2):
    _check_tensor('outer', input, vec2)
    for name, t in (('self', input), ('vec2', vec2)):
        if t.ndim != 1:
            raise RuntimeError(f'outer: Expected 1-D argument {name}, but got {t.ndim}-D')
    return input.reshape(-1, 1) * vec2


ger = outer


@method
def inner(input, other):
    _check_tensor('inner', input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f'inner() the last dimension must match on both input tensors but '
                           f'got shapes {_shape(input)} and {_shape(other)}')
    if autocast_state.active and (input.ndim > 1 or other.ndim > 1):  # 1-D: a dot, not cast
        input, other = autocast_args('lower', input, other)
    _same_dtype('inner', input, other, message='both inputs should have same dtype')
    return _tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


# -- beta * input + alpha * (products) ---------------------------------------------------

class AddMatmul(Op):
    """``beta * input + alpha * prod`` for addmm, addmv, baddbmm and addbmm (the batch of
    products summed). With ``beta == 0`` the input is ignored (NaN in it does not propagate)."""
    supports_complex = True
    widens_half = True

    def forward(self, inp, m1, m2, beta=1, alpha=1, kind='addmm'):
        need_i, need_1, need_2 = self.needs_input_grad[:3]
        self.save_for_backward(m1 if need_2 else None, m2 if need_1 else None)
        self.beta, self.alpha, self.kind = beta, alpha, kind
        prod = m1 @ m2
        if kind == 'addbmm':
            prod = prod.sum(0)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            out = xp.broadcast_to(prod, xp.broadcast_shapes(prod.shape, inp.shape))
            return out.astype(prod.dtype, copy=True)
        out = prod + (inp if beta == 1 else inp * beta)
        return out.astype(prod.dtype, copy=False)

    def backward(self, g):
        m1, m2 = self.saved_tensors
        gi = None
        if self.needs_input_grad[0]:
            gi = g if self.beta == 1 else g * self.beta
        ga = g if self.alpha == 1 else g * self.alpha
        g1 = g2 = None
        if self.kind == 'addmv':
            if m2 is not None:
                g1 = ga[:, None] * m2
            if m1 is not None:
                g2 = _mm(m1.mT, ga)
            return gi, g1, g2
        if m2 is not None:
            g1 = _mm(ga, m2.mT)
        if m1 is not None:
            g2 = _mm(m1.mT, ga)
        return gi, g1, g2


# One class per kind, for its node name (AddmmBackward0, ...).
_ADD_MATMUL = {kind: type(kind.capitalize(), (AddMatmul,),
                          {'node_name': kind.capitalize() + 'Backward0', '__module__': __name__})
               for kind in ('addmm', 'addmv', 'baddbmm', 'addbmm')}


def _add_matmul(kind, input, m1, m2, beta, alpha, inplace=False):
    op = _ADD_MATMUL[kind]
    return (op.apply_ if inplace else op.apply)(input, m1, m2, beta=beta, alpha=alpha, kind=kind)


def _check_addmm_input(op, input, shape):
    try:
        ok = xp.broadcast_shapes(tuple(input.shape), tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f'{op}: the input of shape {_shape(input)} does not broadcast to the '
                           f'shape of the product {list(shape)}; expected size '
                           f'{list(shape)}')


def _add_dtypes(op, input, m1, m2):
    d = (input._data.dtype, m1._data.dtype, m2._data.dtype)
    if len(set(d)) > 1:
        raise RuntimeError(f'{op} input tensors must have the same dtype, but got '
                           + ', '.join(_type_name(x) for x in d))


def _check_addmm(input, mat1, mat2, op='addmm'):
    _check_tensor(op, input, mat1, mat2)
    for name, t in (('mat1', mat1), ('mat2', mat2)):
        if t.ndim != 2:
            raise RuntimeError(f'{name} must be a matrix, got {t.ndim}-D tensor')
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied '
                           f'({_xshape(mat1.shape)} and {_xshape(mat2.shape)})')
    if mat1._data.dtype != mat2._data.dtype or input._data.dtype != mat1._data.dtype:
        other = mat2 if mat1._data.dtype != mat2._data.dtype else input
        raise RuntimeError(f'self and mat2 must have the same dtype, but got '
                           f'{_tname(mat1)} and {_tname(other)}')
    _check_addmm_input(op, input, (mat1.shape[0], mat2.shape[1]))


@method
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if autocast_state.active:
        input, mat1, mat2 = autocast_args('lower', input, mat1, mat2)
    _check_addmm(input, mat1, mat2)
    return _add_matmul('addmm', input, mat1, mat2, beta, alpha)


@method
def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    _check_addmm(input, mat1, mat2, 'addmm_')
    return _add_matmul('addmm', input, mat1, mat2, beta, alpha, inplace=True)


def _check_addmv(input, mat, vec, op='addmv'):
    _check_tensor(op, input, mat, vec)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f'vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, '
                           f'{vec.ndim}')
    rows = mat.shape[0]
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, rows)):
        raise RuntimeError(f'size mismatch, got input ({input.shape[0] if input.ndim else 1}), '
                           f'mat ({_xshape(mat.shape)}), vec ({vec.shape[0]})')
    _add_dtypes(op, input, mat, vec)


@method
def addmv(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec)
    return _add_matmul('addmv', input, mat, vec, beta, alpha)


@method
def addmv_(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec, 'addmv_')
    return _add_matmul('addmv', input, mat, vec, beta, alpha, inplace=True)


class Addr(Op):
    """``beta * input + alpha * outer(vec1, vec2)``; with ``beta == 0`` the input is ignored.
    The three tensors are promoted to their common dtype, as PyTorch does."""
    supports_complex = True
    promotes = True

    def forward(self, inp, v1, v2, beta=1, alpha=1):
        need_i, need_1, need_2 = self.needs_input_grad[:3]
        self.save_for_backward(v1 if need_2 else None, v2 if need_1 else None)
        self.beta, self.alpha = beta, alpha
        prod = xp.multiply.outer(v1, v2)
        if alpha != 1:
            prod = prod * alpha
        dtype = xp.result_type(inp, prod)
        if beta == 0:
            return xp.broadcast_to(prod, xp.broadcast_shapes(prod.shape, inp.shape)).astype(
                dtype, copy=True)
        return (prod + (inp if beta == 1 else inp * beta)).astype(dtype, copy=False)

    def backward(self, g):
        v1, v2 = self.saved_tensors
        gi = None
        if self.needs_input_grad[0]:
            gi = g if self.beta == 1 else g * self.beta
        ga = g if self.alpha == 1 else g * self.alpha
        g1 = _mm(ga, v2[:, None])[:, 0] if v2 is not None else None
        g2 = _mm(ga.mT, v1[:, None])[:, 0] if v1 is not None else None
        return gi, g1, g2


def _check_addr(input, vec1, vec2, beta, alpha, op):
    _check_tensor(op, input, vec1, vec2)
    for name, t in (('vec1', vec1), ('vec2', vec2)):
        if t.ndim != 1:
            raise RuntimeError(f'{op}: Expected 1-D argument {name}, but got {t.ndim}-D')
    shape = (vec1.shape[0], vec2.shape[0])
    try:
        ok = xp.broadcast_shapes(tuple(input.shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f'The expanded size of the tensor does not match: {op} needs input '
                           f'broadcastable to {list(shape)}, got {_shape(input)}')
    if all(t._data.dtype.kind in 'iub' for t in (input, vec1, vec2)):
        for name, v in (('beta', beta), ('alpha', alpha)):
            if isinstance(v, float) and not float(v).is_integer():
                raise RuntimeError(f'For integral input tensors, argument {name} must not be a '
                                   'floating point number.')


@method
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(input, vec1, vec2, beta, alpha, 'addr')
    return Addr.apply(input, vec1, vec2, beta=beta, alpha=alpha)


@method
def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(input, vec1, vec2, beta, alpha, 'addr_')
    if tuple(input.shape) != (vec1.shape[0], vec2.shape[0]):
        raise RuntimeError(f'addr_: the in-place target of shape {_shape(input)} must have the '
                           f'shape of the outer product {[vec1.shape[0], vec2.shape[0]]}')
    return Addr.apply_(input, vec1, vec2, beta=beta, alpha=alpha)


def _check_batches(op, input, batch1, batch2, summed):
    _check_tensor(op, input, batch1, batch2)
    if batch2.ndim < 3:       # torch indexes dim 2 of batch2 first
        raise IndexError(f'{op}: batch2 must be a 3D tensor, got {batch2.ndim}D (Dimension out '
                         f'of range (expected to be in range of [{-max(batch2.ndim, 1)}, '
                         f'{max(batch2.ndim, 1) - 1}], but got 2))')
    for name, t in (('batch1', batch1), ('batch2', batch2)):
        if t.ndim != 3:
            raise RuntimeError(f'{op}: {name} must be a 3D tensor, got {t.ndim}D')
    b, n, k = batch1.shape
    if batch2.shape[0] != b:
        raise RuntimeError(f'batch1 and batch2 must have same number of batches, got {b} and '
                           f'{batch2.shape[0]}')
    if batch2.shape[1] != k:
        raise RuntimeError(f'Incompatible matrix sizes for bmm ({n}x{k} and '
                           f'{batch2.shape[1]}x{batch2.shape[2]})')
    _add_dtypes(op, input, batch1, batch2)
    shape = (n, batch2.shape[2]) if summed else (b, n, batch2.shape[2])
    _check_addmm_input(op, input, shape)


@method
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if autocast_state.active:
        input, batch1, batch2 = autocast_args('lower', input, batch1, batch2)
    _check_batches('baddbmm', input, batch1, batch2, False)
    return _add_matmul('baddbmm', input, batch1, batch2, beta, alpha)


@method
def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('baddbmm_', input, batch1, batch2, False)
    return _add_matmul('baddbmm', input, batch1, batch2, beta, alpha, inplace=True)


@method
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if autocast_state.active:
        input, batch1, batch2 = autocast_args('lower', input, batch1, batch2)
    _check_batches('addbmm', input, batch1, batch2, True)
    return _add_matmul('addbmm', input, batch1, batch2, beta, alpha)


@method
def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('addbmm_', input, batch1, batch2, True)
    return _add_matmul('addbmm', input, batch1, batch2, beta, alpha, inplace=True)


# -- einsum and friends ------------------------------------------------------------------

_LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


_F32 = np.dtype(np.float32)
_LONG_SUM = 1 << 13     # summed terms per output element from which float32 loses digits
_UNBLAS_WORK = 1 << 22  # multiply-adds an einsum may run without BLAS (a few milliseconds)


class Einsum(Op):
    """``xp.einsum`` over explicit subscripts (the function form removes ellipses and
    broadcasting first). The gradient of operand i is the einsum of the output gradient
    with the other operands into operand i's subscripts; letters summed only inside
    operand i come back as a broadcast (a ones vector), repeated letters (diagonals) as
    a product with an identity tensor."""
    supports_complex = True
    widens_half = True

    def forward(self, *arrays, inputs, output):
        self.inputs, self.output = inputs, output
        need = self.needs_input_grad[:len(arrays)]
        keep = [any(need[j] for j in range(len(arrays)) if j != i) for i in range(len(arrays))]
        self.save_for_backward(*(a if k else None for a, k in zip(arrays, keep)))
        self.sizes = {}
        for subs, a in zip(inputs, arrays):
            self.sizes.update(zip(subs, a.shape))
        eq = ','.join(inputs) + '->' + output
        summed = kept = 1
        for c, n in self.sizes.items():
            if c in output:
                kept *= n
            else:
                summed *= n
        if arrays[0].dtype == _F32 and len(arrays) <= 2 and summed >= _LONG_SUM and \
                summed * kept <= _UNBLAS_WORK:
            # a float32 sum of this many terms, accumulated in float32 (BLAS), loses digits
            # that PyTorch's cascade reductions keep; float64 accumulation (cast in buffered
            # chunks, never a float64 copy of the operands) keeps them. It runs without BLAS,
            # so only where the whole contraction is small work (a long sum into few outputs)
            out = xp.einsum(eq, *arrays, dtype=xp.float64)
            return xp.asarray(out).astype(_F32)
        # optimize (BLAS contractions, pairwise order) pays off beyond small operands
        big = len(arrays) > 2 or any(a.size > 256 for a in arrays)
        out = xp.einsum(eq, *arrays, optimize=big)
        return xp.asarray(out)

    def backward(self, g):
        saved = self.saved_tensors
        need = self.needs_input_grad
        grads = []
        dtype = _np_dtype(g)
        used = set(''.join(self.inputs) + self.output)
        fresh = iter(c for c in _LETTERS if c not in used)
        for i, subs in enumerate(self.inputs):
            if not need[i]:
                grads.append(None)
                continue
            terms = [self.output] + [s for j, s in enumerate(self.inputs) if j != i]
            operands = [g] + [saved[j] for j in range(len(self.inputs)) if j != i]
            avail = set(''.join(terms))
            target = ''
            seen = set()
            for c in subs:
                if c in seen:                  # a repeated letter: a diagonal
                    f = next(fresh)
                    target += f
                    terms.append(c + f)
                    operands.append(_eye(self.sizes[c], dtype))
                else:
                    seen.add(c)
                    target += c
                    if c not in avail:         # summed inside operand i only: broadcast
                        terms.append(c)
                        operands.append(xp.ones(self.sizes[c], dtype))
                        avail.add(c)
            grads.append(Einsum.run(*operands, inputs=tuple(terms), output=target))
        return tuple(grads)


def _parse_einsum(equation, shapes):
    """Explicit subscripts (ellipses replaced by letters) and the sizes every letter has."""
    eq = equation.replace(' ', '')
    if '->' in eq:
        lhs, out = eq.split('->', 1)
    else:
        lhs, out = eq, None
    terms = lhs.split(',')
    if len(terms) > len(shapes):
        raise RuntimeError('einsum(): fewer operands were provided than specified in the '
                           'equation')
    if len(terms) < len(shapes):
        raise RuntimeError('einsum(): more operands were provided than specified in the '
                           'equation')
    pos = 0
    for part in terms + ([out] if out is not None else []):
        rest = part.replace('...', '')
        for c in rest:
            if c not in _LETTERS:
                raise RuntimeError(f'einsum(): invalid subscript given at index '
                                   f'{eq.index(c, pos)} in the equation string, subscripts '
                                   'must be in [a-zA-Z]')
        pos += len(part) + 1
    used = set(lhs)
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        letters = len(t.replace('...', ''))
        if '...' in t:
            n_ell = max(n_ell, len(shape) - letters)
            if len(shape) < letters:
                raise RuntimeError(f'einsum(): the number of subscripts in the equation '
                                   f'({letters}) is more than the number of dimensions '
                                   f'({len(shape)}) for operand {k}')
        elif letters != len(shape):
            raise RuntimeError(f'einsum(): the number of subscripts in the equation ({letters}) '
                               f'does not match the number of dimensions ({len(shape)}) for '
                               f'operand {k} and no ellipsis was given')
    ell = ''.join(spare[:n_ell])
    explicit = []
    for t, shape in zip(terms, shapes):
        if '...' in t:
            e = len(shape) - len(t.replace('...', ''))
            t = t.replace('...', ell[n_ell - e:] if e else '')
        explicit.append(t)
    if out is None:
        counts = {}
        for t in explicit:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + ''.join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace('...', ell)
        all_in = set(''.join(explicit))
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(f'einsum(): output subscript {c} appears more than once in '
                                   'the output')
            if c not in all_in:
                raise RuntimeError(f'einsum(): output subscript {c} does not appear in the '
                                   'equation for any input operand')
    sizes = {}
    for k, (t, shape) in enumerate(zip(explicit, shapes)):
        own = {}
        for c, n in zip(t, shape):
            if c in own and own[c] != n:
                raise RuntimeError(f'einsum(): subscript {c} is repeated for operand {k} but '
                                   f'the sizes don\'t match, {own[c]} != {n}')
            own[c] = n
        for c, n in own.items():
            m = sizes.get(c)
            if m is None or m == 1:
                sizes[c] = n
            elif n != 1 and n != m:
                raise RuntimeError(f'einsum(): subscript {c} has size {n} for operand {k} '
                                   f'which does not broadcast with previously seen size {m}')
    return explicit, out, sizes


def _contracts(inputs, output):
    """Whether an einsum sums a letter shared by two operands: PyTorch computes that as a
    bmm, which autocast runs in lower precision (outer and elementwise products it does
    not)."""
    seen = set()
    for subs in inputs:
        for c in set(subs):
            if c in seen and c not in output:
                return True
            seen.add(c)
    return False


def einsum(equation, *operands):
    """PyTorch's einsum (string equation; the sublist format is not supported)."""
    if not isinstance(equation, str):
        raise TypeError('einsum(): the sublist format is not supported by dynagrad; pass an '
                        'equation string')
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    _check_tensor('einsum', *operands)
    explicit, out, sizes = _parse_einsum(equation, [tuple(t.shape) for t in operands])
    if autocast_state.active and _contracts(explicit, out):
        operands = autocast_args('lower', *operands)
    if operands:
        _same_dtype('einsum', *operands, message=f'expected scalar type '
                                                 f'{_tname(operands[0])} but found ' + ', '.join(
                                                     _tname(t) for t in operands[1:]))
    ops = []
    for t, subs in zip(operands, explicit):
        want = tuple(sizes[c] for c in subs)
        if tuple(t.shape) != want:
            # broadcast size-1 dims (a repeated letter keeps its size: it was checked equal)
            t = t.expand(*want)
        ops.append(t)
    return Einsum.apply(*ops, inputs=tuple(explicit), output=out)


def tensordot(a, b, dims=2):
    _check_tensor('tensordot', a, b)
    if autocast_state.active:
        a, b = autocast_args('lower', a, b)
    return _tensordot(a, b, dims)


def _tensordot(a, b, dims):
    if isinstance(dims, int) or (hasattr(dims, 'ndim') and dims.ndim == 0):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f'tensordot expects dims >= 0, but got dims={dims}')
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f'tensordot expects dims < ndim_a or ndim_b, but got dims={dims}')
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        da = [int(d) for d in (da if isinstance(da, (list, tuple)) else [da])]
        db = [int(d) for d in (db if isinstance(db, (list, tuple)) else [db])]
        if len(da) != len(db):
            raise RuntimeError(f'both dimension lists should have same length, got {len(da)} '
                               f'and {len(db)}')
    for dl, t in ((da, a), (db, b)):
        for d in dl:
            if not -max(t.ndim, 1) <= d < max(t.ndim, 1):
                raise IndexError(f'Dimension out of range (expected to be in range of '
                                 f'[{-max(t.ndim, 1)}, {max(t.ndim, 1) - 1}], but got {d})')
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f'contracted dimensions need to match, but first has size '
                               f'{a.shape[x]} in dim {x} and second has size {b.shape[y]} in '
                               f'dim {y}')
    _same_dtype('tensordot', a, b, message='both inputs should have same dtype')
    letters = iter(_LETTERS)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out_subs = ''.join(c for k, c in enumerate(sa) if k not in da) + ''.join(
        c for k, c in enumerate(sb) if k not in db)
    return Einsum.apply(a, b, inputs=(''.join(sa), ''.join(sb)), output=out_subs)


@method
def kron(input, other):
    _check_tensor('kron', input, other)
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = input.reshape(tuple(x for n in sa for x in (n, 1)))
    b = other.reshape(tuple(x for n in sb for x in (1, n)))
    return (a * b).reshape(tuple(x * y for x, y in zip(sa, sb)))


class Cross(Op):
    supports_complex = True
    widens_half = True
    node_name = 'LinalgCrossBackward0'

    def forward(self, a, b, dim):
        self.dim = dim
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        shape = xp.broadcast_shapes(a.shape, b.shape)
        a, b = xp.broadcast_to(a, shape), xp.broadcast_to(b, shape)
        return xp.cross(a, b, axis=dim)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = Cross.run(b, g, dim=self.dim) if b is not None else None
        gb = Cross.run(g, a, dim=self.dim) if a is not None else None
        return ga, gb


def _cross(input, other, dim, op):
    _check_tensor(op, input, other)
    if input.ndim != other.ndim:
        raise RuntimeError(f'{op}: inputs must have the same number of dimensions.')
    nd = max(input.ndim, 1)
    try:
        shape = xp.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f'{op}: the shapes {_shape(input)} and {_shape(other)} do not '
                           'broadcast') from None
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f'no dimension of size 3 in input (shapes {_shape(input)} and '
                               f'{_shape(other)})')
    if not -nd <= dim < nd:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-nd}, '
                         f'{nd - 1}], but got {dim})')
    dim %= nd
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f'{op}: inputs dimension {dim if op == "cross" else dim - nd} must '
                           f'have length 3. Got {input.shape[dim]} and {other.shape[dim]}')
    _same_dtype(op, input, other, message=f'{op}: expected both inputs to have the same '
                                          f'dtype, but got {_tname(input)} and {_tname(other)}')
    return Cross.apply(input, other, dim=dim)


@method
def cross(input, other, dim=None):
    return _cross(input, other, dim, 'cross')


def linalg_cross(input, other, *, dim=-1):
    return _cross(input, other, dim, 'linalg.cross')


def _as_list(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return list(tensors)


def multi_dot(tensors):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f'multi_dot(): expected at least 2 tensors but got {len(tensors)}')
    _check_tensor('multi_dot', *tensors)
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].reshape(1, -1)
    if last_vec:
        mats[-1] = mats[-1].reshape(-1, 1)
    for k, t in enumerate(mats):
        if t.ndim != 2:
            where = 'first' if k == 0 else 'last' if k == len(mats) - 1 else 'middle'
            want = '1D or 2D' if where != 'middle' else '2D'
            raise RuntimeError(f'multi_dot(): the {where} tensor must be {want} but got '
                               f'{tensors[k].ndim}D')
    for k in range(len(mats) - 1):
        if mats[k].shape[1] != mats[k + 1].shape[0]:
            raise RuntimeError(f'multi_dot(): tensors {k} and {k + 1} with shapes '
                               f'{_shape(tensors[k])} and {_shape(tensors[k + 1])} cannot be '
                               'multiplied')
    _same_dtype('multi_dot', *mats)
    # the cheapest order (dynamic programming over the chain: a loop over matrices only)
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(chain(i, k), chain(k + 1, j))
    out = chain(0, n - 1)
    if first_vec and last_vec:
        return out.reshape(())
    if first_vec:
        return out.reshape(-1)
    if last_vec:
        return out.reshape(-1)
    return out


def chain_matmul(*matrices):
    matrices = _as_list(matrices)
    if len(matrices) == 1:
        return matrices[0].clone()
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f'Tensor dimension is {t.ndim}, expected 2 instead.')
    return multi_dot(matrices)
