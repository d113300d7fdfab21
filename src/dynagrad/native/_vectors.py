"""LLVM IR helpers for the kernels written as numba intrinsics (``linalg.py``,
``conv_direct.py``): numba has no vector type, so their register tiles of 64-byte vectors
are spelled in llvmlite's IR."""
from llvmlite import ir
from numba import types
from numba.core import cgutils


def item_pointer(context, builder, array, ty, index):
    """The address of ``array[index]`` (an array struct of numba type ``ty``) in LLVM IR."""
    return cgutils.get_item_pointer2(
        context, builder, array.data, cgutils.unpack_tuple(builder, array.shape),
        cgutils.unpack_tuple(builder, array.strides), ty.layout, index)


def vector_setup(context, builder, signature, args, count):
    """For an intrinsic's code: its first ``count`` arguments as array structs, then the
    LLVM scalar type of their dtype, its size in bytes, the lanes of a 64-byte vector, that
    vector type and the index type."""
    arrays = [context.make_array(t)(context, builder, a)
              for t, a in zip(signature.args[:count], args[:count])]
    dtype = signature.args[0].dtype
    scalar = context.get_value_type(dtype)
    size = dtype.bitwidth // 8
    lanes = 64 // size
    return (arrays, scalar, size, lanes, ir.VectorType(scalar, lanes),
            context.get_value_type(types.intp))


def fma(builder, vector, lanes, size):
    """LLVM's fused multiply-add over ``vector`` (``lanes`` values of ``size`` bytes)."""
    return cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vector, [vector] * 3), f'llvm.fma.v{lanes}f{size * 8}')


def splat(builder, vector, lanes, value):
    """``value`` (a scalar) in every lane of a ``vector``."""
    i32 = ir.IntType(32)
    undef = ir.Constant(vector, ir.Undefined)
    return builder.shuffle_vector(builder.insert_element(undef, value, ir.Constant(i32, 0)),
                                  undef, ir.Constant(ir.VectorType(i32, lanes), None))
