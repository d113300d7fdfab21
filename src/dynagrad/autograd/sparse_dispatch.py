"""Sparse dispatch: an op meeting a sparse operand runs the sparse kernel registered for it.

A dense forward meeting a sparse input raises ``SparseRefused`` (see ``dynagrad._coo``),
and ``Op.apply`` hands the call here instead: dense calls pay nothing for it.
"""
from .._coo import SparseRefused

# op class -> fn(cls, *inputs, **params), registered by dynagrad.ops.sparse (and the
# write-back of in-place kernels under the key 'in-place')
SPARSE_KERNELS = {}


def aten_name(cls):
    name = cls._node_name
    name = name[:name.rfind('Backward')] if 'Backward' in name else name
    return ''.join('_' + c.lower() if c.isupper() and i else c.lower()
                   for i, c in enumerate(name))


def sparse_kernel_of(cls):
    for k in cls.__mro__:
        kernel = SPARSE_KERNELS.get(k)
        if kernel is not None:
            return kernel
    return None


def run_sparse_kernel(cls, inputs, params):
    kernel = sparse_kernel_of(cls)
    if kernel is None:
        raise SparseRefused(aten_name(cls)) from None
    return kernel(cls, *inputs, **params)


def run_sparse_kernel_inplace(cls, target, others, params):
    # dynagrad.ops.sparse registers how a kernel's result is written back into the target
    # (SPARSE_KERNELS['in-place']); without it, the op is refused as PyTorch refuses it
    write_back = SPARSE_KERNELS.get('in-place')
    if write_back is None:
        raise SparseRefused(aten_name(cls) + '_') from None
    return write_back(cls, target, others, params)

