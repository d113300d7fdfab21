"""In-place ops with a sparse COO operand, and the factories that PyTorch keeps sparse for a
sparse tensor (``new``, ``new_zeros``, ``zeros_like``, ``resize_as_``...).

An in-place op whose dense forward meets a ``COO`` comes here (``Op.apply_`` hands it to
``SPARSE_KERNELS['in-place']``). The op's out-of-place sparse kernel computes the result and
it is written back as PyTorch writes it: a sparse target takes the result's indices and
values (unary ops and div_ into its own values array, so tensors taken with ``_values()``
see the write, as they share storage in PyTorch); a dense target takes the dense form of
the result. What PyTorch has no sparse kernel for is refused with its
"Could not run 'aten::op_'" error, before anything is written.
"""
import numpy as np

from .. import _dtype
from .._coo import COO, SparseRefused
from ..backend import xp
from ..autograd.sparse_dispatch import SPARSE_KERNELS, sparse_kernel_of, aten_name
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, wrap, bump_version, method, size_args
from . import arithmetic, clamping, unary, sparse as _sparse

_INT64 = np.dtype(np.int64)


def _is_sparse(x):
    return isinstance(x, Tensor) and x._data.__class__ is COO


def _type_name(d):
    return _dtype.FROM_NUMPY[d].legacy_name[:-6]


def _check_cast(op, result_dtype, target_dtype):
    r, t = _dtype.FROM_NUMPY[result_dtype], _dtype.FROM_NUMPY[target_dtype]
    if r.category > t.category:
        if op in ('add', 'sub'):
            raise RuntimeError(f"Can't convert result type {_type_name(result_dtype)} to output "
                               f'{_type_name(target_dtype)} in add operation')
        raise RuntimeError(f"result type {_type_name(result_dtype)} can't be cast to the "
                           f'desired output type {_type_name(target_dtype)}')


# ops with a sparse kernel out of place but none in place in PyTorch (its overload names)
_REFUSED_IN_PLACE = {arithmetic.Pow: 'pow_.Scalar'}


def write_back(cls, target, others, params):
    op = aten_name(cls)
    kernel = sparse_kernel_of(cls)
    if kernel is None or cls in _REFUSED_IN_PLACE:
        raise SparseRefused(_REFUSED_IN_PLACE.get(cls, op + '_')) from None
    c = target._data
    sparse_target = c.__class__ is COO
    if (sparse_target and not c.coalesced and kernel is _sparse._unary_kernel
            and not issubclass(cls, unary.Neg)):  # a sum of negated duplicates: no coalescing
        raise RuntimeError(f'{op}_ requires coalesced input')
    recording = is_grad_enabled() and any(isinstance(x, Tensor) and x._requires_grad
                                          for x in (target,) + tuple(others))
    # a recorded kernel keeps its inputs' arrays for backward, and the write replaces the
    # target's: it computes on a copy
    source = target.clone() if recording else target
    result = kernel(cls, source, *others, **params)
    if sparse_target:
        _into_sparse(cls, op, target, result, others)
    else:
        _into_dense(op, target, result)
    return target


def _into_dense(op, target, result):
    if result._data.__class__ is COO:
        result = result.to_dense()
    if tuple(result.shape) != tuple(target.shape):
        raise RuntimeError(f"{op}_: output with shape {list(target.shape)} doesn't match the "
                           f'broadcast shape {list(result.shape)}')
    _check_cast(op, result._data.dtype, target._data.dtype)
    clamping.Copy.apply_(target, result)


def _into_sparse(cls, op, target, result, others):
    c, r = target._data, result._data
    copying = cls is clamping.Copy
    if r.__class__ is not COO:
        raise RuntimeError(f'{op}_: the result of {op} here is dense, and a sparse tensor '
                           'cannot hold it in place; compute it out of place instead')
    if not copying:
        if r.shape != c.shape:
            raise RuntimeError(f"{op}_: output with shape {list(c.shape)} doesn't match the "
                               f'broadcast shape {list(r.shape)}')
        _check_cast(op, r.dtype, c.dtype)
    values = r.values if r.dtype == c.dtype else _dtype.cast(r.values, c.dtype)
    # PyTorch writes unary ops and div_ into the values (tensors from _values() see it); the
    # others give the tensor new indices and values
    keeps_storage = (not others or op == 'div') and r.indices.shape == c.indices.shape
    if keeps_storage and values.shape == c.values.shape and c.values.flags.writeable:
        c.values[...] = values
    else:
        c.indices, c.values, c.shape = r.indices, values, r.shape
    # PyTorch's mul_ by a dense operand (a number included) leaves the flag unset
    c.coalesced = r.coalesced and not (op == 'mul' and not any(_is_sparse(o) for o in others))
    c._rows = None
    if result._requires_grad:
        target._grad_fn, target._output_nr = result._grad_fn, result._output_nr
        target._requires_grad = True
    bump_version(target, op + '_')


# ---------------------------------------------------------------------------------------
# kernels of the in-place-only ops

def _empty_coo(shape, sparse_dim, dtype):
    shape = tuple(shape)
    return COO(xp.zeros((sparse_dim, 0), _INT64), xp.zeros((0,) + shape[sparse_dim:], dtype),
               shape, True)


def _zero_kernel(cls, x, value=0):
    c = x._data
    return wrap(_empty_coo(c.shape, c.sparse_dim, c.dtype))


def _copy_kernel(cls, x, src, non_blocking=False):
    if not (_is_sparse(x) and _is_sparse(src)):
        raise RuntimeError('copy_() between dense and sparse Tensors is not implemented! Found '
                           f'self type = {x.type()} and src type = {src.type()}')
    c = src._data
    return wrap(COO(c.indices.copy(), c.values.copy(), c.shape, c.coalesced))


SPARSE_KERNELS['in-place'] = write_back
SPARSE_KERNELS[clamping.Zero] = _zero_kernel
SPARSE_KERNELS[clamping.Copy] = _copy_kernel


# ---------------------------------------------------------------------------------------
# factories

def sparse_zeros(shape, sparse_dim, dtype, requires_grad=False):
    """An all-zero sparse tensor (no stored entries) of ``shape``."""
    out = wrap(_empty_coo(shape, sparse_dim, dtype.numpy))
    return out.requires_grad_(True) if requires_grad else out


def sparse_like(fill, input, dtype, requires_grad):
    """``zeros_like``/``empty_like`` of a sparse tensor: sparse, with no entries. Another fill
    would store every element, which PyTorch refuses (its fill_ has no sparse kernel)."""
    if fill is not None and (isinstance(fill, Tensor) or fill != 0):
        raise SparseRefused('fill_')
    c = input._data
    return sparse_zeros(c.shape, c.sparse_dim, dtype or input.dtype, requires_grad)


def sparse_new(self, *args, **kwargs):
    """``Tensor.new`` on a sparse tensor: an empty sparse tensor of a size, or one made of
    indices and values (``new(indices, values[, size])``)."""
    from ..size import Size
    if kwargs.keys() - {'device'}:
        raise TypeError(f'new() received an invalid combination of arguments: unexpected '
                        f'keyword {sorted(kwargs.keys() - {"device"})[0]!r}')
    if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
        return _sparse.sparse_coo_tensor(*args)
    if not args:
        return sparse_zeros((0,), 1, self.dtype)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
           for a in args):
        return sparse_zeros(args, len(args), self.dtype)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        raise TypeError('SparseTensor.new(sequence) only accepts sizes.  Please use '
                        'dynagrad.sparse_coo_tensor() or construct a strided tensor and convert '
                        'it to sparse via to_sparse.')
    raise TypeError(f'new() received an invalid combination of arguments - got '
                    f'({", ".join(type(a).__name__ for a in args)}), but expected one of: '
                    '(int... size), (Tensor indices, Tensor values[, tuple size])')


# Tensor.new and the new_* factories of a sparse tensor (tensor.py makes the dense ones; the
# layer below ops cannot build a sparse tensor's autograd-aware construction)
_dense_new = Tensor.new
_dense_new_filled = Tensor._new_filled


@method('new')
def new(self, *args, **kwargs):
    if self._data.__class__ is COO:
        return sparse_new(self, *args, **kwargs)
    return _dense_new(self, *args, **kwargs)


@method('_new_filled')
def _new_filled(self, fill, size, dtype, device, requires_grad):
    if self._data.__class__ is not COO:
        return _dense_new_filled(self, fill, size, dtype, device, requires_grad)
    if fill is not None and fill != 0:      # every element stored: PyTorch's fill_ refuses
        raise SparseRefused('fill_')
    size = size_args(size)
    return sparse_zeros(size, len(size), dtype or self.dtype, requires_grad)
