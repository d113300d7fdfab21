"""Linear algebra: products (the matmul family, einsum, tensordot, kron, cross) and the
solvers and decompositions of ``torch.linalg``, all batched over leading dimensions.

Backward formulas are the standard matrix-calculus ones, written with operators and
``.mT`` so that they run on arrays (plain backward) and on tensors (``create_graph=True``,
giving double backward). Where a formula needs another linear-algebra op (an inverse, a
solve, a decomposition), it runs it through ``_run``: on arrays the op's forward, on
tensors the recorded op, whose own backward gives the next order.

Limits (as PyTorch's): gradients of ``svd``/``eigh`` need distinct singular values /
eigenvalues; ``det``'s double backward and ``slogdet``'s backward need an invertible
matrix (``det``'s first backward also handles singular ones through the SVD); real
dtypes only (no complex). ``einsum`` takes equation strings (ellipses, broadcasting,
repeated letters / diagonals, implicit output), not the sublist format.
"""
import math
from collections import namedtuple

import numpy as np

from ..backend import xp
from ..autograd.function import Op, _NO_EDGES
from .. import _dtype
from ._formula import is_array, sign as _sign, where as _where, zeros_like as _zeros_like


class LinAlgError(RuntimeError):
    """A linear-algebra failure on valid input (singular matrix, not positive-definite)."""


# -- helpers ---------------------------------------------------------------------------


def _arr(x):
    return x._data if hasattr(x, '_data') else x


def _run(cls, *inputs, **params):
    """Run op ``cls`` inside a backward formula: on arrays its forward (the fast path), on
    tensors ``cls.apply`` so that it is recorded (its own backward gives the next order)."""
    if all(is_array(x) for x in inputs):
        node = Op.__new__(cls)
        node._saved = ()
        node.next_functions = _NO_EDGES
        return node.forward(*inputs, **params)
    return cls.apply(*inputs, **params)


def _mm(a, b):
    """``a @ b`` for arrays, tensors, or a tensor with a constant array."""
    if is_array(a) and is_array(b):
        return a @ b
    return Matmul.apply(a, b)


def _eye(n, dtype):
    return np.eye(n, dtype=dtype)


def _np_dtype(x):
    return _arr(x).dtype


def _tname(x):
    return _dtype.FROM_NUMPY[_arr(x).dtype].legacy_name[:-6]


def _type_name(dtype):
    return _dtype.FROM_NUMPY[np.dtype(dtype)].legacy_name[:-6]


def _diag_embed(v):
    """A batch of vectors ``(..., n)`` as diagonal matrices ``(..., n, n)``."""
    n = v.shape[-1]
    return v[..., None] * _eye(n, _np_dtype(v))


def _tensor(array):
    from ..tensor import Tensor
    return Tensor._make(np.asarray(array), False, None, 0, None, Tensor)


def _shape(t):
    return list(t.shape)


def _check_float(op, A, name='input'):
    kind = A._data.dtype
    if kind.kind != 'f':
        raise RuntimeError(f'{op}: Expected a floating point or complex tensor as {name}. '
                           f'Got {_tname(A)}')
    if kind == np.float16:
        raise RuntimeError(f'{op}: Low precision dtypes not supported. Got Half')


def _check_square(op, A, name='A'):
    _check_float(op, A)
    if A.ndim < 2:
        raise RuntimeError(f'{op}: The input tensor {name} must have at least 2 dimensions.')
    m, n = A.shape[-2:]
    if m != n:
        raise RuntimeError(f'{op}: {name} must be batches of square matrices, but they are '
                           f'{m} by {n} matrices')


def _check_matrices(op, A, name='A'):
    _check_float(op, A)
    if A.ndim < 2:
        raise RuntimeError(f'{op}: The input tensor {name} must have at least 2 dimensions.')


def _first_bad(bad):
    """The position of the first True in a batch of flags, for error messages."""
    bad = np.asarray(bad)
    if bad.ndim == 0:
        return ''
    idx = np.argwhere(bad)
    if not len(idx):
        return ''
    flat = int(np.ravel_multi_index(tuple(idx[0]), bad.shape))
    return f'(Batch element {flat}): '


def _singular_error(op, A, what):
    n = A.shape[-1]
    bad = np.linalg.matrix_rank(A) < n if A.size else np.zeros(A.shape[:-2], bool)
    return LinAlgError(f'{op}: {_first_bad(bad)}{what}')


# -- products ------------------------------------------------------------------------------

def _matmul_name(na, nb):
    if na == 1:
        return {1: 'DotBackward0', 2: 'SqueezeBackward4'}.get(nb, 'UnsafeViewBackward0')
    if na == 2:
        return {1: 'MvBackward0', 2: 'MmBackward0'}.get(nb, 'CloneBackward0')
    return 'UnsafeViewBackward0'


class Matmul(Op):
    """``a @ b`` with NumPy's (and PyTorch's) rules for 1-D operands and batch broadcasting."""
    promotes = True

    def forward(self, a, b, name=None):
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.nd = (a.ndim, b.ndim)
        self._node_name = name or _matmul_name(a.ndim, b.ndim)
        return xp.matmul(a, b)

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


def _same_dtype(op, *ts, message=None):
    dts = [t._data.dtype for t in ts]
    if any(d != dts[0] for d in dts):
        if message is None:
            message = (f'{op}: expected all inputs to have the same dtype, but got '
                       + ', '.join(_type_name(d) for d in dts))
        raise RuntimeError(message)


def _check_tensor(op, *ts):
    from ..tensor import Tensor
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f'{op}(): argument must be a Tensor, not {type(t).__name__}')


def _xshape(shape):
    return 'x'.join(str(d) for d in shape)


def matmul(input, other):
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
        raise RuntimeError(f'expected m1 and m2 to have the same dtype, but got: '
                           f'{_dtype.FROM_NUMPY[a.dtype].name} != '
                           f'{_dtype.FROM_NUMPY[b.dtype].name}')
    if a.dtype == np.bool_:
        raise NotImplementedError('"matmul" not implemented for \'Bool\'')
    if a.ndim > 2 or b.ndim > 2:
        sa, sb = a.shape[:-2], b.shape[:-2] if b.ndim > 1 else ()
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            raise RuntimeError(f'matmul: the batch dimensions of shapes {list(a.shape)} and '
                               f'{list(b.shape)} do not broadcast') from None
    return Matmul.apply(input, other)


def mm(input, mat2):
    _check_tensor('mm', input, mat2)
    if input.ndim != 2:
        raise RuntimeError(f'self must be a matrix, got {input.ndim}-D tensor')
    if mat2.ndim != 2:
        raise RuntimeError(f'mat2 must be a matrix, got {mat2.ndim}-D tensor')
    return matmul(input, mat2)


def bmm(input, mat2):
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
    return Matmul.apply(input, mat2, name='BmmBackward0')


def mv(input, vec):
    _check_tensor('mv', input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f'vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}')
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f'size mismatch, got input ({input.shape[0]}), mat '
                           f'({_xshape(input.shape)}), vec ({vec.shape[0]})')
    _same_dtype('mv', input, vec)
    return Matmul.apply(input, vec)


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


def dot(input, other):
    _check_dot('dot', input, other)
    return Matmul.apply(input, other)


def vdot(input, other):
    """``input`` conjugated (a no-op for real tensors) dotted with ``other``."""
    _check_dot('vdot', input, other)
    return Matmul.apply(input, other, name='VdotBackward0')


def outer(input, vec2):
    _check_tensor('outer', input, vec2)
    for name, t in (('self', input), ('vec2', vec2)):
        if t.ndim != 1:
            raise RuntimeError(f'outer: Expected 1-D argument {name}, but got {t.ndim}-D')
    return input.reshape(-1, 1) * vec2


ger = outer


def inner(input, other):
    _check_tensor('inner', input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f'inner() the last dimension must match on both input tensors but '
                           f'got shapes {_shape(input)} and {_shape(other)}')
    _same_dtype('inner', input, other, message='both inputs should have same dtype')
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


# -- beta * input + alpha * (products) ---------------------------------------------------

class AddMatmul(Op):
    """``beta * input + alpha * prod`` for addmm, addmv, baddbmm and addbmm (the batch of
    products summed). With ``beta == 0`` the input is ignored (NaN in it does not propagate)."""

    def forward(self, inp, m1, m2, beta=1, alpha=1, kind='addmm'):
        need_i, need_1, need_2 = self.needs_input_grad[:3]
        self.save_for_backward(m1 if need_2 else None, m2 if need_1 else None)
        self.beta, self.alpha, self.kind = beta, alpha, kind
        self._node_name = kind.capitalize() + 'Backward0'
        prod = m1 @ m2
        if kind == 'addbmm':
            prod = prod.sum(0)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            out = np.broadcast_to(prod, np.broadcast_shapes(prod.shape, inp.shape))
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


def _check_addmm_input(op, input, shape):
    try:
        ok = np.broadcast_shapes(tuple(input.shape), tuple(shape)) == tuple(shape)
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


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _check_addmm(input, mat1, mat2)
    return AddMatmul.apply(input, mat1, mat2, beta=beta, alpha=alpha, kind='addmm')


def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    _check_addmm(input, mat1, mat2, 'addmm_')
    return AddMatmul.apply_(input, mat1, mat2, beta=beta, alpha=alpha, kind='addmm')


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


def addmv(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec)
    return AddMatmul.apply(input, mat, vec, beta=beta, alpha=alpha, kind='addmv')


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec, 'addmv_')
    return AddMatmul.apply_(input, mat, vec, beta=beta, alpha=alpha, kind='addmv')


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


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('baddbmm', input, batch1, batch2, False)
    return AddMatmul.apply(input, batch1, batch2, beta=beta, alpha=alpha, kind='baddbmm')


def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('baddbmm_', input, batch1, batch2, False)
    return AddMatmul.apply_(input, batch1, batch2, beta=beta, alpha=alpha, kind='baddbmm')


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('addbmm', input, batch1, batch2, True)
    return AddMatmul.apply(input, batch1, batch2, beta=beta, alpha=alpha, kind='addbmm')


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    _check_batches('addbmm_', input, batch1, batch2, True)
    return AddMatmul.apply_(input, batch1, batch2, beta=beta, alpha=alpha, kind='addbmm')


# -- einsum and friends ------------------------------------------------------------------

_LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


class Einsum(Op):
    """``np.einsum`` over explicit subscripts (the function form removes ellipses and
    broadcasting first). The gradient of operand i is the einsum of the output gradient
    with the other operands into operand i's subscripts; letters summed only inside
    operand i come back as a broadcast (a ones vector), repeated letters (diagonals) as
    a product with an identity tensor."""

    def forward(self, *arrays, inputs, output):
        self.inputs, self.output = inputs, output
        need = self.needs_input_grad[:len(arrays)]
        keep = [any(need[j] for j in range(len(arrays)) if j != i) for i in range(len(arrays))]
        self.save_for_backward(*(a if k else None for a, k in zip(arrays, keep)))
        self.sizes = {}
        for subs, a in zip(inputs, arrays):
            self.sizes.update(zip(subs, a.shape))
        eq = ','.join(inputs) + '->' + output
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
                        operands.append(np.ones(self.sizes[c], dtype))
                        avail.add(c)
            grads.append(_run(Einsum, *operands, inputs=tuple(terms), output=target))
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


def einsum(equation, *operands):
    """PyTorch's einsum (string equation; the sublist format is not supported)."""
    if not isinstance(equation, str):
        raise TypeError('einsum(): the sublist format is not supported by dynagrad; pass an '
                        'equation string')
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    _check_tensor('einsum', *operands)
    explicit, out, sizes = _parse_einsum(equation, [tuple(t.shape) for t in operands])
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


def tensordot(a, b, dims=2, out=None):
    _check_tensor('tensordot', a, b)
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


def kron(input, other):
    _check_tensor('kron', input, other)
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = input.reshape(tuple(x for n in sa for x in (n, 1)))
    b = other.reshape(tuple(x for n in sb for x in (1, n)))
    return (a * b).reshape(tuple(x * y for x, y in zip(sa, sb)))


class Cross(Op):
    node_name = 'LinalgCrossBackward0'

    def forward(self, a, b, dim):
        self.dim = dim
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        return xp.cross(a, b, axis=dim)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = _run(Cross, b, g, dim=self.dim) if b is not None else None
        gb = _run(Cross, g, a, dim=self.dim) if a is not None else None
        return ga, gb


def _cross(input, other, dim, op):
    _check_tensor(op, input, other)
    if input.ndim != other.ndim:
        raise RuntimeError(f'{op}: inputs must have the same number of dimensions.')
    nd = max(input.ndim, 1)
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
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


def cross(input, other, dim=None):
    return _cross(input, other, dim, 'cross')


def linalg_cross(input, other, *, dim=-1):
    return _cross(input, other, dim, 'linalg.cross')


class _PowerZero(Op):
    """``A ** 0``: identity matrices, with a zero gradient (torch records a copy)."""
    node_name = 'CopyBackwards'

    def forward(self, A):
        return np.broadcast_to(_eye(A.shape[-1], A.dtype), A.shape).copy()

    def backward(self, g):
        return g * 0


def matrix_power(input, n):
    _check_tensor('matrix_power', input)
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        if input.ndim < 2:
            raise RuntimeError('linalg.matrix_power: The input tensor A must have at least 2 '
                               'dimensions.')
        raise RuntimeError(f'linalg.matrix_power: A must be batches of square matrices, but '
                           f'they are {input.shape[-2]} by {input.shape[-1]} matrices')
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f'matrix_power(): argument \'n\' must be int, not {type(n).__name__}')
    if n == 0:
        return _PowerZero.apply(input)
    a = input
    if n < 0:
        a = inv(input)
        if n == -1:
            return a
        n = -n
    if n == 1:
        return a.clone()
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


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


# -- torch.linalg: inverses, determinants, solvers ------------------------------------------

class Inv(Op):
    node_name = 'LinalgInvExBackward0'

    def forward(self, A):
        try:
            out = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            raise _singular_error('linalg.inv', A, 'The diagonal element is zero, the inversion '
                                  'could not be completed because the input matrix is '
                                  'singular.') from None
        self.save_for_backward(out)
        return out

    def backward(self, g):
        Ai, = self.saved_tensors
        AiT = Ai.mT
        return -_mm(_mm(AiT, g), AiT)


def inv(A):
    _check_tensor('linalg.inv', A)
    _check_square('linalg.inv', A)
    return Inv.apply(A)


def _adjugate_T(A):
    """The transposed adjugate (the gradient of det) through the SVD: defined for singular A."""
    U, S, Vh = np.linalg.svd(A)
    n = S.shape[-1]
    others = np.where(np.eye(n, dtype=bool), 1, S[..., None, :])    # S_j, with 1 on j == i
    prods = others.prod(-1)                                        # prod_{j != i} S_j
    sign = np.linalg.det(U) * np.linalg.det(Vh)
    return sign[..., None, None] * ((U * prods[..., None, :]) @ Vh)


class Det(Op):
    node_name = 'LinalgDetBackward0'

    def forward(self, A):
        with np.errstate(over='ignore'):         # an overflowing det is inf, as in torch
            d = np.asarray(np.linalg.det(A), A.dtype)
        self.save_for_backward(A, d)
        return d

    def backward(self, g):
        A, d = self.saved_tensors
        if is_array(g):
            try:
                return (g * d)[..., None, None] * np.linalg.inv(A).mT
            except np.linalg.LinAlgError:
                return g[..., None, None] * _adjugate_T(A)
        return (g * d)[..., None, None] * _run(Inv, A).mT


def det(A):
    _check_tensor('linalg.det', A)
    _check_square('linalg.det', A)
    return Det.apply(A)


_slogdet_result = namedtuple('linalg_slogdet', ['sign', 'logabsdet'])
_slogdet_result_torch = namedtuple('slogdet', ['sign', 'logabsdet'])


class Slogdet(Op):
    node_name = 'LinalgSlogdetBackward0'

    def forward(self, A):
        sign, lad = np.linalg.slogdet(A)
        self.save_for_backward(A)
        return np.asarray(sign, A.dtype), np.asarray(lad, A.dtype)

    def backward(self, g_sign=None, g_lad=None):
        A, = self.saved_tensors
        if g_lad is None:
            return _zeros_like(A)
        if is_array(g_lad):
            try:
                return g_lad[..., None, None] * np.linalg.inv(A).mT
            except np.linalg.LinAlgError:
                raise _singular_error('linalg.slogdet', A, 'the gradient of logabsdet is not '
                                      'defined for a singular matrix') from None
        return g_lad[..., None, None] * _run(Inv, A).mT


def linalg_slogdet(A):
    _check_tensor('linalg.slogdet', A)
    _check_square('linalg.slogdet', A)
    return _slogdet_result(*Slogdet.apply(A))


def slogdet(input):
    _check_tensor('slogdet', input)
    _check_square('linalg.slogdet', input)
    return _slogdet_result_torch(*Slogdet.apply(input))


def logdet(input):
    """log(det(A)): NaN where det < 0, -inf where det == 0."""
    _check_tensor('logdet', input)
    _check_square('linalg.slogdet', input)
    sign, lad = Slogdet.apply(input)
    from .pointwise import where
    return where(sign < 0, float('nan'), lad)


class Solve(Op):
    """X with A X = B (B a batch of matrices, or of vectors when ``vector``)."""
    node_name = 'LinalgSolveExBackward0'

    def forward(self, A, B, vector=False):
        self.vector = vector
        if vector:
            B = B[..., None]
        try:
            X = np.linalg.solve(A, B)
        except np.linalg.LinAlgError:
            raise _singular_error('torch.linalg.solve', A, 'The solver failed because the input '
                                  'matrix is singular.') from None
        need_a, need_b = self.needs_input_grad[:2]
        out = X[..., 0] if vector else X
        self.save_for_backward(A if (need_a or need_b) else None, out if need_a else None)
        return out

    def backward(self, g):
        A, X = self.saved_tensors
        gB = _run(Solve, A.mT, g, vector=self.vector)
        gA = None
        if X is not None:
            gA = -(gB[..., :, None] * X[..., None, :]) if self.vector else -_mm(gB, X.mT)
        return gA, (gB if self.needs_input_grad[1] else None)


def solve(A, B, *, left=True):
    _check_tensor('linalg.solve', A, B)
    _check_square('linalg.solve', A)
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f'linalg.solve: Expected A and B to have the same dtype, but found A '
                           f'of type {_tname(A)} and B of type {_tname(B)} instead')
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    rows = B.shape[-1] if vector else (B.shape[-2] if B.ndim >= 2 else None)
    if rows != n:
        bs = 'x'.join(str(d) for d in B.shape[-2:]) if B.ndim >= 2 else str(B.shape[0])
        raise RuntimeError(f'linalg.solve: Incompatible shapes of A and B for the equation AX = '
                           f'B ({n}x{n} and {bs})')
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1 if vector else -2]))
    except ValueError:
        raise RuntimeError(f'linalg.solve: the batch dimensions of A {_shape(A)} and B '
                           f'{_shape(B)} do not broadcast') from None
    return Solve.apply(A, B, vector=vector)


# -- decompositions -----------------------------------------------------------------------

def _tril_mask(n, dtype, k=0):
    return np.tril(np.ones((n, n), dtype), k)


class Cholesky(Op):
    node_name = 'LinalgCholeskyExBackward0'

    def forward(self, A, upper=False):
        self.upper = upper
        try:
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise _cholesky_error(A) from None
        out = L.mT.copy() if upper else L
        self.save_for_backward(out)
        return out

    def backward(self, g):
        L, = self.saved_tensors
        if self.upper:
            L, g = L.mT, g.mT
        n = L.shape[-1]
        dtype = _np_dtype(L)
        phi = _tril_mask(n, dtype, -1) + 0.5 * _eye(n, dtype)
        P = _mm(L.mT, g * _tril_mask(n, dtype)) * phi
        Li = _run(Inv, L)
        S = _mm(_mm(Li.mT, P), Li)
        return (S + S.mT) * 0.5


def _cholesky_error(A):
    n = A.shape[-1]
    bad = np.zeros(A.shape[:-2], bool)
    order = np.full(A.shape[:-2], n + 1)
    for k in range(n, 0, -1):                 # leading minors (error path only)
        fails = ~(np.linalg.det(A[..., :k, :k]) > 0)
        order = np.where(fails, k, order)
        bad |= fails
    where = _first_bad(bad)
    first = int(np.ravel(order)[np.argmax(np.ravel(bad))]) if bad.any() else 1
    return LinAlgError(f'linalg.cholesky: {where}The factorization could not be completed '
                       f'because the input is not positive-definite (the leading minor of '
                       f'order {first} is not positive-definite).')


def cholesky(A, *, upper=False):
    _check_tensor('linalg.cholesky', A)
    _check_square('linalg.cholesky', A)
    return Cholesky.apply(A, upper=upper)


_qr_result = namedtuple('linalg_qr', ['Q', 'R'])


def _copy_upper(M):
    """The symmetric matrix with M's upper triangle (diagonal included)."""
    n = M.shape[-1]
    dtype = _np_dtype(M)
    up = np.triu(np.ones((n, n), dtype))
    strict = np.triu(np.ones((n, n), dtype), 1)
    return M * up + (M * strict).mT


def _qr_back_tall(Q, R, gQ, gR):
    """gA for A = QR with Q (m, n), R (n, n) square upper triangular."""
    M = _mm(gR, R.mT) - _mm(Q.mT, gQ)
    b = gQ + _mm(Q, _copy_upper(M))
    return _run(Solve, R, b.mT).mT              # b R^{-T}


class Qr(Op):
    node_name = 'LinalgQrBackward0'

    def forward(self, A, mode='reduced'):
        self.mode = mode
        self.mn = A.shape[-2:]
        if mode == 'r':
            R = np.linalg.qr(A, mode='r')
            return np.empty((0,), A.dtype), np.asarray(R)
        Q, R = np.linalg.qr(A, mode=mode)
        self.save_for_backward(Q, R)
        return Q, R

    def backward(self, gQ=None, gR=None):
        m, n = self.mn
        if self.mode == 'r':
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if self.mode == 'complete' and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        Q, R = self.saved_tensors
        if gQ is None:
            gQ = _zeros_like(Q)
        if gR is None:
            gR = _zeros_like(R)
        if m >= n:
            return _qr_back_tall(Q, R, gQ, gR)
        from .indexing import IndexScatter
        R1, R2 = R[..., :, :m], R[..., :, m:]
        gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
        Y = _mm(Q, R2)
        gX = _qr_back_tall(Q, R1, gQ + _mm(Y, gR2.mT), gR1)
        gY = _mm(Q, gR2)
        shape = tuple(Q.shape[:-2]) + (m, n)
        return (IndexScatter.apply_any(gX, (Ellipsis, slice(0, m)), shape)
                + IndexScatter.apply_any(gY, (Ellipsis, slice(m, n)), shape))


def qr(A, mode='reduced'):
    _check_tensor('linalg.qr', A)
    if mode not in ('reduced', 'complete', 'r'):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrices('linalg.qr', A)
    return _qr_result(*Qr.apply(A, mode=mode))


_svd_result = namedtuple('linalg_svd', ['U', 'S', 'Vh'])


def _svd_back(U, S, Vh, gU, gS, gVh):
    """gA for A = U diag(S) Vh (reduced: U (m, k), S (k), Vh (k, n)); needs distinct S."""
    if gU is None and gVh is None:
        if gS is None:
            return None
        return _mm(U * gS[..., None, :], Vh)
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    dtype = _np_dtype(S)
    eye = _eye(k, dtype)
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None] + eye          # E_ij = S_j^2 - S_i^2, 1 on the diag
    inner = 0
    if gU is not None:
        UhgU = _mm(U.mT, gU)
        inner = (UhgU - UhgU.mT) / E * S[..., None, :]
    if gVh is not None:
        VhgV = _mm(Vh, gVh.mT)
        inner = inner + S[..., :, None] * ((VhgV - VhgV.mT) / E)
    if gS is not None:
        inner = inner + _diag_embed(gS)
    gA = _mm(_mm(U, inner), Vh)
    if gU is not None and m > k:
        gA = gA + _mm((gU - _mm(U, UhgU)) / S[..., None, :], Vh)
    if gVh is not None and n > k:
        gA = gA + _mm(U, (gVh - _mm(VhgV.mT, Vh)) / S[..., :, None])
    return gA


class Svd(Op):
    node_name = 'LinalgSvdBackward0'

    def forward(self, A, full_matrices=True):
        U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
        self.save_for_backward(U, S, Vh)
        self.k = S.shape[-1]
        return U, S, Vh

    def backward(self, gU=None, gS=None, gVh=None):
        U, S, Vh = self.saved_tensors
        k = self.k
        if U.shape[-1] != k:
            U = U[..., :, :k]
            gU = gU[..., :, :k] if gU is not None else None
        if Vh.shape[-2] != k:
            Vh = Vh[..., :k, :]
            gVh = gVh[..., :k, :] if gVh is not None else None
        return _svd_back(U, S, Vh, gU, gS, gVh)


class Svdvals(Op):
    node_name = 'LinalgSvdBackward0'

    def forward(self, A):
        if self.needs_input_grad[0]:
            U, S, Vh = np.linalg.svd(A, full_matrices=False)
            self.save_for_backward(A, U, Vh)
            return S
        return np.linalg.svd(A, compute_uv=False)

    def backward(self, gS):
        A, U, Vh = self.saved_tensors
        if not is_array(gS):                 # recompute U, Vh as functions of A
            U, _, Vh = _run(Svd, A, full_matrices=False)
        return _mm(U * gS[..., None, :], Vh)


def svd(A, full_matrices=True, *, driver=None):
    _check_tensor('linalg.svd', A)
    _check_matrices('linalg.svd', A)
    return _svd_result(*Svd.apply(A, full_matrices=full_matrices))


def svdvals(A, *, driver=None):
    _check_tensor('linalg.svdvals', A)
    _check_matrices('linalg.svdvals', A)
    return Svdvals.apply(A)


_eigh_result = namedtuple('linalg_eigh', ['eigenvalues', 'eigenvectors'])


def _eigh_back(L, V, gL, gV):
    """gA (symmetric) for A = V diag(L) V^T; needs distinct eigenvalues when gV is given."""
    inner = _diag_embed(gL) if gL is not None else 0
    if gV is not None:
        n = L.shape[-1]
        dtype = _np_dtype(L)
        eye = _eye(n, dtype)
        VtgV = _mm(V.mT, gV)
        E = L[..., None, :] - L[..., :, None] + eye       # E_ij = L_j - L_i, 1 on the diag
        inner = inner + (VtgV - VtgV.mT) * 0.5 / E * (1 - eye)
    return _mm(_mm(V, inner), V.mT)


class Eigh(Op):
    node_name = 'LinalgEighBackward0'

    def forward(self, A, UPLO='L'):
        L, V = np.linalg.eigh(A, UPLO=UPLO)
        self.save_for_backward(L, V)
        return L, V

    def backward(self, gL=None, gV=None):
        L, V = self.saved_tensors
        return _eigh_back(L, V, gL, gV)


class Eigvalsh(Op):
    node_name = 'LinalgEighBackward0'

    def forward(self, A, UPLO='L'):
        self.UPLO = UPLO
        if self.needs_input_grad[0]:
            L, V = np.linalg.eigh(A, UPLO=UPLO)
            self.save_for_backward(A, V)
            return L
        return np.linalg.eigvalsh(A, UPLO=UPLO)

    def backward(self, gL):
        A, V = self.saved_tensors
        if not is_array(gL):
            _, V = _run(Eigh, A, UPLO=self.UPLO)
        return _mm(V * gL[..., None, :], V.mT)


def _check_uplo(UPLO):
    if UPLO not in ('L', 'U', 'l', 'u'):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def eigh(A, UPLO='L'):
    _check_tensor('linalg.eigh', A)
    UPLO = _check_uplo(UPLO)
    _check_square('linalg.eigh', A)
    return _eigh_result(*Eigh.apply(A, UPLO=UPLO))


def eigvalsh(A, UPLO='L'):
    _check_tensor('linalg.eigvalsh', A)
    UPLO = _check_uplo(UPLO)
    _check_square('linalg.eigvalsh', A)
    return Eigvalsh.apply(A, UPLO=UPLO)


def _pinv_back(A, P, gP):
    """gA for P = pinv(A) (constant rank): Golub and Pereyra's formula."""
    m, n = A.shape[-2], A.shape[-1]
    dtype = _np_dtype(A)
    PT = P.mT
    gA = -_mm(_mm(PT, gP), PT)
    gA = gA + _mm(_mm(_eye(m, dtype) - _mm(A, P), gP.mT), _mm(P, PT))
    gA = gA + _mm(_mm(PT, P), _mm(gP.mT, _eye(n, dtype) - _mm(P, A)))
    return gA


def _pinv_array(A, atol, rtol, hermitian):
    if hermitian:
        L, V = np.linalg.eigh(A)
        absL = np.abs(L)
        top = absL.max(-1, keepdims=True, initial=0)
        keep = absL > np.maximum(atol, rtol * top)
        Linv = np.where(keep, 1 / np.where(keep, L, 1), 0)
        return (V * Linv[..., None, :]) @ V.mT
    U, S, Vh = np.linalg.svd(A, full_matrices=False)
    top = S.max(-1, keepdims=True, initial=0)
    keep = S > np.maximum(atol, rtol * top)
    Sinv = np.where(keep, 1 / np.where(keep, S, 1), 0)
    return (Vh.mT * Sinv[..., None, :]) @ U.mT


class Pinv(Op):
    node_name = 'LinalgPinvBackward0'

    def forward(self, A, atol=0.0, rtol=0.0, hermitian=False):
        P = _pinv_array(A, atol, rtol, hermitian).astype(A.dtype, copy=False)
        self.save_for_backward(A, P)
        return P

    def backward(self, g):
        A, P = self.saved_tensors
        return _pinv_back(A, P, g)


def _tolerances(A, atol, rtol):
    if hasattr(atol, '_data'):
        atol = atol._data
    if hasattr(rtol, '_data'):
        rtol = rtol._data
    if rtol is None:
        eps = np.finfo(A._data.dtype).eps
        rtol = 0.0 if (atol is not None and np.any(np.asarray(atol) > 0)) else \
            eps * max(A.shape[-2], A.shape[-1])
    if atol is None:
        atol = 0.0
    return (np.asarray(atol)[..., None] if np.ndim(atol) else atol,
            np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    _check_tensor('linalg.pinv', A)
    if A.ndim < 2 or A._data.dtype.kind != 'f' or A._data.dtype == np.float16:
        raise RuntimeError(f'linalg.pinv({_tname(A)}{{{_shape(A)}}}): expected a tensor with 2 '
                           'or more dimensions of float, double, cfloat or cdouble types')
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol)
    return Pinv.apply(A, atol=atol, rtol=rtol, hermitian=hermitian)


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    _check_tensor('linalg.matrix_rank', A)
    _check_matrices('linalg.matrix_rank', A)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    a = A._data
    if hermitian:
        S = np.abs(np.linalg.eigvalsh(a))
    else:
        S = np.linalg.svd(a, compute_uv=False)
    top = S.max(-1, keepdims=True, initial=0)
    rank = (S > np.maximum(atol, rtol * top)).sum(-1).astype(np.int64)
    return _tensor(rank)


_lstsq_result = namedtuple('linalg_lstsq', ['solution', 'residuals', 'rank', 'singular_values'])


class Lstsq(Op):
    """The minimum-norm least-squares solution ``pinv(A) @ B`` (A of any rank) and, when
    ``residuals``, the squared residual norms of its columns."""
    node_name = 'LinalgLstsqBackward0'

    def forward(self, A, B, rtol, vector=False, residuals=False):
        self.rtol, self.vector, self.residuals = rtol, vector, residuals
        B_ = B[..., None] if vector else B
        P = _pinv_array(A, 0.0, rtol, False).astype(A.dtype, copy=False)
        X = P @ B_
        if residuals:
            res = ((A @ X - B_) ** 2).sum(-2)           # (..., k): k = 1 for a vector B
        else:
            res = np.zeros((0,), A.dtype)
        X = X[..., 0] if vector else X
        self.save_for_backward(A, B, X, P)
        return X, res

    def backward(self, gX=None, gres=None):
        A, B, X, P = self.saved_tensors
        if self.vector:
            B, X = B[..., None], X[..., None]
            gX = gX[..., None] if gX is not None else None

        gA = gB = 0
        if gX is not None:
            if not is_array(gX):               # P as a function of A, for the next order
                P = _run(Pinv, A, atol=0.0, rtol=self.rtol)
            gB = _mm(P.mT, gX)
            if self.needs_input_grad[0]:
                gA = _pinv_back(A, P, _mm(gX, B.mT))
        if self.residuals and gres is not None:
            # X minimises the residual, so only the explicit dependence on A and B remains
            r = (_mm(A, X) - B) * (2 * gres[..., None, :])
            gA = gA + _mm(r, X.mT)
            gB = gB - r
        if self.vector and not isinstance(gB, int):
            gB = gB[..., 0]
        return (gA if self.needs_input_grad[0] and not isinstance(gA, int) else None,
                gB if self.needs_input_grad[1] and not isinstance(gB, int) else None)


def lstsq(A, B, rcond=None, *, driver=None):
    _check_tensor('linalg.lstsq', A, B)
    _check_matrices('linalg.lstsq', A)
    if driver not in (None, 'gels', 'gelsy', 'gelsd', 'gelss'):
        raise RuntimeError(f'torch.linalg.lstsq: parameter `driver` should be one of (gels, '
                           f'gelsy, gelsd, gelss), but got {driver}')
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f'torch.linalg.lstsq: Expected input and other to have the same '
                           f'dtype, but got input\'s dtype {_tname(A)} and other\'s dtype '
                           f'{_tname(B)}')
    vector = B.ndim == A.ndim - 1
    m, n = A.shape[-2:]
    rows = B.shape[-1] if vector else (B.shape[-2] if B.ndim >= 2 else None)
    if rows != m:
        raise RuntimeError(f'torch.linalg.lstsq: input.size(-2) should match other.size(-2) '
                           f'(got {m} and {rows})')
    driver = driver or 'gelsy'
    eps = np.finfo(A._data.dtype).eps
    rtol = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    a = A._data
    S = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (0,), a.dtype)
    top = S.max(-1, keepdims=True, initial=0)
    rank = (S > rtol * top).sum(-1).astype(np.int64)
    with_res = driver != 'gelsy' and m > n and bool(np.all(rank == n))
    X, res = Lstsq.apply(A, B, rtol=rtol, vector=vector, residuals=with_res)
    sv = S if driver in ('gelsd', 'gelss') else np.zeros((0,), a.dtype)
    rank_t = _tensor(rank) if driver != 'gels' else _tensor(np.zeros((0,), np.int64))
    return _lstsq_result(X, res, rank_t, _tensor(sv))


# -- norms -----------------------------------------------------------------------------

class VectorNorm(Op):
    node_name = 'LinalgVectorNormBackward0'

    def forward(self, x, ord=2, dim=None, keepdim=False):
        self.ord, self.dim, self.keepdim, self.ndim = ord, dim, keepdim, x.ndim
        a = np.abs(x)
        if ord == math.inf:
            out = a.max(axis=dim, keepdims=keepdim)
        elif ord == -math.inf:
            out = a.min(axis=dim, keepdims=keepdim)
        elif ord == 0:
            out = (x != 0).sum(axis=dim, keepdims=keepdim).astype(x.dtype)
        elif ord == 1:
            out = a.sum(axis=dim, keepdims=keepdim)
        elif ord == 2:
            out = np.sqrt((x * x).sum(axis=dim, keepdims=keepdim))
        else:
            out = (a ** ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord)
        out = np.asarray(out, x.dtype)
        self.save_for_backward(x, out if ord not in (0, 1) else None)
        return out

    def backward(self, g):
        x, out = self.saved_tensors
        if self.ord == 0:
            return _zeros_like(x)
        if not self.keepdim and self.dim is not None:
            shape = list(x.shape)
            for d in self.dim:
                shape[d] = 1
            g = g.reshape(tuple(shape))
            if out is not None:
                out = out.reshape(tuple(shape))
        p = self.ord
        if p == 1:
            return g * _sign(x)
        if p in (math.inf, -math.inf):
            mask = (np.abs(_arr(x)) == _arr(out)).astype(_np_dtype(x))
            count = mask.sum(axis=self.dim, keepdims=True)
            return g * _sign(x) * (mask / count)
        zero = _arr(out) == 0
        safe = _where(zero, 1.0, out)
        if p == 2:
            return g * x / safe
        ax = x * _sign(x)
        return g * _sign(x) * ax ** (p - 1) / safe ** (p - 1)


def _norm_dims(dim, ndim, op):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = max(ndim, 1)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, '
                             f'{n - 1}], but got {d})')
        out.append(d % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f'{op}: dim {list(dims)} appears multiple times in the list of dims')
    return tuple(sorted(out)) if ndim else None


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    _check_tensor('linalg.vector_norm', x)
    if x._data.dtype.kind != 'f':
        raise RuntimeError(f'linalg.vector_norm: Expected a floating point or complex tensor as '
                           f'input. Got {_tname(x)}')
    if isinstance(ord, str) or isinstance(ord, bool):
        raise TypeError(f'linalg_vector_norm(): argument \'ord\' must be Number, not '
                        f'{type(ord).__name__}')
    if dtype is not None:
        x = x.to(dtype)
    dims = _norm_dims(dim, x.ndim, 'linalg.vector_norm')
    if dims == () and dim is not None:
        dims = None
    if ord in (math.inf, -math.inf) or ord < 0:
        size = x.numel() if dims is None else int(np.prod([x.shape[d] for d in dims]))
        if size == 0:
            raise RuntimeError(f'linalg.vector_norm cannot compute the {ord} norm on an empty '
                               'tensor because the operation does not have an identity')
    if dims is None and keepdim and x.ndim:
        dims = tuple(range(x.ndim))
    return VectorNorm.apply(x, ord=float(ord), dim=dims, keepdim=keepdim)


class _Extreme(Op):
    """amax / amin over one dim (ties share the gradient equally, as torch's amax)."""

    def forward(self, x, dim, keepdim, smallest):
        self._node_name = 'AminBackward0' if smallest else 'AmaxBackward0'
        out = x.min(axis=dim, keepdims=True) if smallest else x.max(axis=dim, keepdims=True)
        mask = (x == out).astype(x.dtype)
        self.weights = mask / mask.sum(axis=dim, keepdims=True)
        self.dim, self.keepdim = dim, keepdim
        return out if keepdim else out.squeeze(dim)

    def backward(self, g):
        if not self.keepdim:
            g = _unsqueeze(g, self.dim % self.weights.ndim)
        return g * self.weights


def _unsqueeze(g, d):
    shape = list(g.shape)
    shape.insert(d, 1)
    return g.reshape(tuple(shape))


def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    _check_tensor('linalg.matrix_norm', A)
    if A.ndim < 2:
        raise RuntimeError('linalg.matrix_norm: The input tensor A must have at least 2 '
                           'dimensions.')
    if A._data.dtype.kind != 'f':
        raise RuntimeError(f'linalg.matrix_norm: Expected a floating point or complex tensor '
                           f'as input. Got {_tname(A)}')
    if dtype is not None:
        A = A.to(dtype)
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got {dims}')
    _norm_dims(dims, A.ndim, 'linalg.matrix_norm')
    d0, d1 = (d % A.ndim for d in dims)
    if isinstance(ord, str):
        if ord not in ('fro', 'nuc'):
            raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    if ord == 'fro':
        return VectorNorm.apply(A, ord=2.0, dim=tuple(sorted((d0, d1))), keepdim=keepdim)
    if A.shape[d0] == 0 or A.shape[d1] == 0:
        if ord in (-1, -2, -math.inf, 'nuc', 2):
            raise RuntimeError(f'linalg.matrix_norm: The norm of order {ord} is not defined '
                               'for empty matrices')
    if ord in (1, -1, math.inf, -math.inf):
        # inf: the largest row sum; 1: the largest column sum
        sum_dim, max_dim = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = A.abs().sum(sum_dim, keepdim=keepdim)
        if not keepdim and max_dim > sum_dim:
            max_dim -= 1
        return _Extreme.apply(sums, dim=max_dim, keepdim=keepdim, smallest=ord < 0)
    # 2, -2 and 'nuc' go through the singular values of the matrices moved last
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    order = rest + [d0, d1]
    S = svdvals(A.permute(*order))
    if ord == 'nuc':
        out = S.sum(-1)
    else:
        out = _Extreme.apply(S, dim=-1, keepdim=False, smallest=ord < 0)
    if keepdim:
        out = out.reshape(tuple(out.shape) + (1, 1)).permute(*np.argsort(order).tolist())
    return out


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm."""
    _check_tensor('linalg.norm', A)
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
        if len(dim) == 1:
            dim = dim[0]
    if ord is None:
        if isinstance(dim, tuple):
            return matrix_norm(A, 'fro', dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f'linalg.norm: If dim is not specified but ord is, the input must be '
                           f'1D or 2D. Got {A.ndim}D.')
    if isinstance(dim, tuple):
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f'linalg.norm: If dim is specified, it mut be of length 1 or 2. Got '
                           f'{dim} with ord={ord}')
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


inverse = inv

__all__ = ['matmul', 'mm', 'bmm', 'mv', 'dot', 'vdot', 'outer', 'ger', 'inner', 'addmm',
           'addmv', 'addbmm', 'baddbmm', 'einsum', 'tensordot', 'kron', 'cross',
           'matrix_power', 'chain_matmul', 'det', 'slogdet', 'logdet', 'inverse', 'pinverse']
METHODS = {name: globals()[name] for name in
           ('matmul', 'mm', 'bmm', 'mv', 'dot', 'vdot', 'outer', 'ger', 'inner', 'addmm',
            'addmv', 'addbmm', 'baddbmm', 'addmm_', 'addmv_', 'addbmm_', 'baddbmm_', 'kron',
            'cross', 'matrix_power', 'det', 'slogdet', 'logdet', 'inverse', 'pinverse')}
