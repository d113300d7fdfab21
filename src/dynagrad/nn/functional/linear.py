"""Linear layers: ``linear`` as one fused op (PyTorch's addmm), ``bilinear``,
``grouped_mm`` (one product per group of rows, columns or batch), and the float8 GEMMs
``scaled_mm`` / ``scaled_grouped_mm`` with their ``ScalingType`` / ``SwizzleType`` enums."""
import enum

from ... import _dtype
from ...backend import blas_thread_count, native_kernel, xp
from ...autograd.function import Op, is_array
from ...autograd.autocast import autocast_args, autocast_state


def _linear_node_name(x_ndim, w_ndim, has_bias):
    """PyTorch's grad_fn for each case of ``F.linear`` (it dispatches to different kernels)."""
    if w_ndim == 1:
        if x_ndim == 1:
            return 'AddBackward0' if has_bias else 'DotBackward0'
        return 'MvBackward0' if x_ndim == 2 else 'UnsafeViewBackward0'
    if x_ndim == 1:
        return 'ViewBackward0' if has_bias else 'SqueezeBackward4'
    if x_ndim == 2:
        return 'AddmmBackward0' if has_bias else 'MmBackward0'
    return 'ViewBackward0' if has_bias else 'UnsafeViewBackward0'


# native.linalg's MAX_ROWS, MAX_WORK and MAX_SERIAL_ROWS (not imported: dynagrad.native
# loads numba): the few-row kernel's bounds, and its bound while BLAS has one thread
_SMALL_ROWS = 64
_SMALL_WORK = 1 << 23
_SERIAL_ROWS = 1024
# rows of the output's gradient from which its bias gradient is a matrix-vector product
_GEMV_ROWS = 64


def _few_rows(x, weight, bias):
    """``x @ weight.T (+ bias)`` by the native kernel where OpenBLAS's transposed-operand
    product is slower (a few rows; any batch up to 1,024 rows while BLAS has one thread);
    None: no kernel, BLAS runs."""
    linear_rows = native_kernel('linear', x)
    if linear_rows is None or (
            (x.size > _SMALL_ROWS * x.shape[-1] or x.size * weight.shape[0] > _SMALL_WORK)
            and blas_thread_count() > 1):
        return None
    rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
    if not rows.flags.c_contiguous:
        rows = xp.ascontiguousarray(rows)
    fused_bias = bias is not None and bias.shape == weight.shape[:1] and bias.dtype == x.dtype
    out = linear_rows(rows, weight, bias if fused_bias else None)
    if x.ndim != 2:
        out = out.reshape(x.shape[:-1] + out.shape[-1:])
    if bias is not None and not fused_bias:
        out = out + bias
    return out


class LinearOp(Op):
    """``y = x @ weight.T (+ bias)``; the weight's gradient comes out contiguous.

    ``weight`` is (out, in) or a vector (in,); ``bias`` broadcasts against the output (the
    mechanism sums its gradient back to its shape).
    """
    widens_half = True
    supports_complex = True
    node_name = 'LinearBackward0'

    def forward(self, x, weight, bias=None):
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, weight if need_x else None)
        self.w_ndim = weight.ndim
        self.vector_bias = bias is not None and bias.ndim == 1 and bias.dtype == x.dtype
        if (weight.ndim == 2 and x.ndim and x.shape[-1] == weight.shape[1]
                and 0 < x.size <= _SERIAL_ROWS * x.shape[-1] and weight.__class__ is x.__class__
                and weight.dtype == x.dtype and weight.flags.c_contiguous):
            out = _few_rows(x, weight, bias)
            if out is not None:
                return out
        if self.vector_bias and weight.ndim == 2 and x.ndim >= 2 and x.flags.c_contiguous \
                and weight.flags.c_contiguous and weight.dtype == x.dtype:
            folded = native_kernel('linear_bias', x)
            if folded is not None and weight.__class__ is x.__class__:
                out = folded(x.reshape(-1, x.shape[-1]), weight, bias)
                if out is not None:
                    return out.reshape(x.shape[:-1] + out.shape[-1:])
        if weight.ndim == 2 and x.ndim > 2:
            # (B, L, in) as one (B*L, in) matrix: one GEMM instead of NumPy's loop of B
            # smaller ones, half the time at a transformer's sizes.
            out = xp.matmul(x.reshape(-1, x.shape[-1]), weight.T)
            out = out.reshape(x.shape[:-1] + out.shape[-1:])
        else:
            out = xp.matmul(x, weight.T if weight.ndim == 2 else weight)
        if bias is not None:
            if out.dtype == bias.dtype and out.ndim and bias.ndim <= 1:
                out += bias     # the product is a fresh array: no second one for the sum
            else:
                out = out + bias
        return out

    def backward(self, g):
        x, weight = self.saved_tensors
        gx = gw = None
        if self.w_ndim == 1:
            if weight is not None:
                gx = g.reshape(tuple(g.shape) + (1,)) * weight
            if x is not None:
                n_in = x.shape[-1]
                gw = g.reshape((-1,)) @ x.reshape((-1, n_in))
        else:
            if weight is not None:
                gx = (g.reshape((-1, g.shape[-1])) @ weight).reshape(
                    tuple(g.shape[:-1]) + (weight.shape[-1],)) if g.ndim > 2 else g @ weight
            if x is not None:
                n_out, n_in = g.shape[-1], x.shape[-1]
                g2, x2 = g.reshape((-1, n_out)), x.reshape((-1, n_in))
                if g2.shape[0] == 1:
                    # one row (batch 1): an outer product, a broadcast multiply at memory
                    # speed (BLAS runs a GEMM with an inner dim of 1 about 2x slower)
                    gw = g2.mT * x2
                else:
                    # (N, out).T @ (N, in): one GEMM straight into the (out, in) layout.
                    gw = g2.mT @ x2
        needs = self.needs_input_grad
        gb = None
        if len(needs) > 2 and needs[2]:
            gb = g
            if self.vector_bias and g.ndim > 1 and is_array(g):
                g2 = g.reshape((-1, g.shape[-1]))
                if g2.shape[0] >= _GEMV_ROWS:
                    # the sum over rows as ones @ g: BLAS's matrix-vector product reads g
                    # once at memory speed, about twice as fast as NumPy's sum over axis 0
                    # (the LSTM language model's (700, 10000) decoder gradient: 0.8 ms
                    # against 1.8)
                    gb = xp.ones(g2.shape[0], g2.dtype) @ g2
        return gx, gw, gb


def _dims(t):
    return 'x'.join(str(d) for d in t.shape)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (PyTorch's ``F.linear``); input (*, in), weight (out, in)."""
    if autocast_state.active:
        input, weight, bias = autocast_args('lower', input, weight, bias)
    x, w = input._data, weight._data    # read once: every token of a sampling loop runs this
    x_nd, w_nd = x.ndim, w.ndim
    if x_nd == 0 or w_nd == 0:
        raise RuntimeError(f'linear: both arguments to linear need to be at least 1D, but they '
                           f'are {x_nd}D and {w_nd}D')
    if w_nd > 2:
        raise RuntimeError(f'linear: t() expects a tensor with <= 2 dimensions, but self is '
                           f'{w_nd}D (weight must be (out_features, in_features))')
    in_features = w.shape[-1]
    if x.shape[-1] != in_features:
        w_dims = f'{in_features}x{w.shape[0]}' if w_nd == 2 else f'{in_features}'
        raise RuntimeError(f'linear: mat1 and mat2 shapes cannot be multiplied ({_dims(input)} '
                           f'and {w_dims}): the input\'s last dimension must equal '
                           f'weight.shape[-1] = {in_features}')
    if x.dtype != w.dtype:
        raise RuntimeError(f'linear: expected m1 and m2 to have the same dtype, but got: '
                           f'{input.dtype} != {weight.dtype}')
    if bias is None:
        return LinearOp.named(_linear_node_name(x_nd, w_nd, False)).apply(input, weight)
    if bias._data.dtype != x.dtype:
        raise RuntimeError(f'linear: self and mat2 must have the same dtype, but got '
                           f'{bias.dtype} (bias) and {input.dtype} (input)')
    if w_nd == 1 and x_nd > 1:
        raise RuntimeError('linear: mat2 must be a matrix, got 1-D tensor (a 1-D weight takes '
                           'no bias with a batched input)')
    return LinearOp.named(_linear_node_name(x_nd, w_nd, True)).apply(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1 @ weight[o] @ input2 (+ bias[o])`` (PyTorch's ``F.bilinear``).

    One GEMM of ``input1`` (B, in1) with the weight laid out as (in1, out*in2), then a
    product with ``input2`` summed over in2; composed of recorded ops, so it differentiates
    any number of times.
    """
    if weight.ndim != 3:
        raise RuntimeError(f'bilinear(): weight must be 3-dimensional (out, in1, in2), but got '
                           f'weight of size {list(weight.shape)}')
    if input1.ndim == 0 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f'bilinear(): input batch dimensions do not match: got '
                           f'{list(input1.shape[:-1])} and {list(input2.shape[:-1])}')
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f'bilinear(): input1 size does not match weight size: got '
                           f'{input1.shape[-1]} but expected {in1}')
    if input2.shape[-1] != in2:
        raise RuntimeError(f'bilinear(): input2 size does not match weight size: got '
                           f'{input2.shape[-1]} but expected {in2}')
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_f):
        raise RuntimeError(f'bilinear(): bias size does not match weight size: got '
                           f'{bias.shape[-1] if bias.ndim else 0} but expected {out_f}')
    dt = input1._data.dtype
    for name, t in (('input2', input2), ('weight', weight), ('bias', bias)):
        if t is not None and t._data.dtype != dt:
            raise RuntimeError(f'bilinear(): expected scalar type {input1.dtype} but found '
                               f'{t.dtype} ({name})')
    lead = tuple(input1.shape[:-1])
    a = input1.reshape(-1, in1)
    t = a @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    y = (t.reshape(-1, out_f, in2) * input2.reshape(-1, 1, in2)).sum(-1)
    y = y.reshape(lead + (out_f,))
    return y if bias is None else y + bias


# ---------------------------------------------------------------------------------------
# grouped_mm: one matrix product per group (a Mixture-of-Experts layer's experts). Groups
# are either a leading dimension (3-D operands) or slices of a 2-D operand's jagged
# dimension ending at ``offs`` (int32). Rows/columns past ``offs[-1]`` come out zero.

def _grouped_arrays(a, b, ends):
    """The forward on arrays; ``ends`` is None (3-D x 3-D) or the groups' end offsets."""
    if ends is None:
        return xp.matmul(a, b)
    starts = (0,) + ends[:-1]
    if a.ndim == 2 and b.ndim == 3:          # a's rows in groups: (M, K) x (G, K, N)
        out = xp.zeros((a.shape[0], b.shape[-1]), dtype=a.dtype)
        for i, (s, e) in enumerate(zip(starts, ends)):
            out[s:e] = a[s:e] @ b[i]
    elif a.ndim == 3:                        # b's columns in groups: (G, M, K) x (K, N)
        out = xp.zeros((a.shape[1], b.shape[-1]), dtype=a.dtype)
        for i, (s, e) in enumerate(zip(starts, ends)):
            out[:, s:e] = a[i] @ b[:, s:e]
    else:                                    # the shared K in groups: (M, K) x (K, N)
        out = xp.zeros((len(ends), a.shape[0], b.shape[-1]), dtype=a.dtype)
        for i, (s, e) in enumerate(zip(starts, ends)):
            out[i] = a[:, s:e] @ b[s:e]
    return out


class GroupedMm(Op):
    """``out = grouped(a, b)``; its gradients are grouped products of the same kind with the
    other operand transposed: ``ga = grouped(g, b^T)``, ``gb = grouped(a^T, g)``, which
    also zeroes the gradient of the rows/columns past the last offset."""
    widens_half = True
    node_name = 'GroupedMmBackward0'

    def forward(self, a, b, ends=None):
        self.ends = ends
        need_a, need_b = self.needs_input_grad[:2]
        self.save_for_backward(a if need_b else None, b if need_a else None)
        return _grouped_arrays(a, b, ends)

    def backward(self, g):
        a, b = self.saved_tensors
        if is_array(g):
            ga = None if b is None else _grouped_arrays(g, b.mT, self.ends)
            gb = None if a is None else _grouped_arrays(a.mT, g, self.ends)
        else:        # create_graph: the same product, recorded
            ga = None if b is None else GroupedMm.apply(g, b.mT, ends=self.ends)
            gb = None if a is None else GroupedMm.apply(a.mT, g, ends=self.ends)
        return ga, gb


_GROUPED_MM_DTYPES = ('float32', 'bfloat16', 'float16')


def _scalar_type_name(dt):
    """PyTorch's C++ name of a dtype in its messages: Double, Int, BFloat16, Half."""
    return dt.legacy_name[:-len('Tensor')]


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """One matrix product per group (PyTorch's ``F.grouped_mm``, on its CPU rules).

    - 3-D x 3-D, ``offs`` None: ``(G, M, K) x (G, K, N) -> (G, M, N)``, a batched matmul.
    - 2-D x 3-D: ``mat_a``'s rows form the groups: ``(M, K) x (G, K, N) -> (M, N)``.
    - 3-D x 2-D: ``mat_b``'s columns form the groups: ``(G, M, K) x (K, N) -> (M, N)``.
    - 2-D x 2-D: the shared K forms the groups: ``(M, K) x (K, N) -> (G, M, N)``.

    ``offs`` (1-D int32, one entry per group, non-decreasing) holds each group's end along
    the jagged dimension; entries past ``offs[-1]`` are ignored (their result is zero).
    float32, bfloat16 and float16; ``out_dtype`` must be ``mat_a``'s dtype on CPU and
    ``bias`` is refused, as PyTorch does.
    """
    for name, t in (('mat_a', mat_a), ('mat_b', mat_b)):
        if t.dtype.name not in _GROUPED_MM_DTYPES:
            raise RuntimeError(f'Expected {name} to be Float32, BFloat16 or Float16 matrix, got '
                               f'{_scalar_type_name(t.dtype)}')
    for name, t in (('mat_a', mat_a), ('mat_b', mat_b)):
        if t.ndim not in (2, 3):
            raise RuntimeError(f'{name} has to be 2 or 3d (got a {t.ndim}-D tensor of shape '
                               f'{tuple(t.shape)})')
    if mat_a.dtype is not mat_b.dtype:
        raise RuntimeError(f'grouped_mm: expected m1 and m2 to have the same dtype, but got: '
                           f'{mat_a.dtype} != {mat_b.dtype}')
    both_3d = mat_a.ndim == 3 and mat_b.ndim == 3
    if (offs is None) != both_3d:
        raise RuntimeError('Have to provide offsets if there is a 2d matrix, or no offset if '
                           'both matrices are 3d')
    ends = None
    if offs is not None:
        if offs.dtype.name != 'int32':
            raise RuntimeError(f'Offsets have to be int32, got {offs.dtype}')
        if offs.ndim != 1:
            raise RuntimeError(f'offs has to be 1D, got a {offs.ndim}-D tensor')
        ends = tuple(int(e) for e in offs._data.tolist())
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError(f'grouped_mm: batched dimension has to match, got {mat_a.shape[0]} '
                           f'(mat_a) and {mat_b.shape[0]} (mat_b)')
    if ends is not None:
        groups = mat_a.shape[0] if mat_a.ndim == 3 else mat_b.shape[0] if mat_b.ndim == 3 \
            else None
        if groups is not None and len(ends) != groups:
            raise RuntimeError(f'grouped_mm: matrix batch sizes have to match: offs has '
                               f'{len(ends)} entries for {groups} groups')
        jagged = (mat_a.shape[0] if mat_b.ndim == 3 else
                  mat_b.shape[1] if mat_a.ndim == 3 else mat_a.shape[1])
        if any(e > f for e, f in zip(ends, ends[1:])) or (ends and (ends[0] < 0 or
                                                                   ends[-1] > jagged)):
            raise RuntimeError(f'grouped_mm: offs must be non-decreasing offsets within the '
                               f'jagged dimension of size {jagged}, got {list(ends)}')
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError(f'grouped_mm: contraction dimension of mat_a and mat_b must match, '
                           f'got {mat_a.shape[-1]} and {mat_b.shape[-2]}')
    if bias is not None:
        raise RuntimeError('grouped_mm: Bias not supported yet')
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError(f'Grouped gemm output dtype must match `mat_a` dtype (got '
                           f'{out_dtype} for {mat_a.dtype})')
    return GroupedMm.apply(mat_a, mat_b, ends=ends)


__all__ = ['linear', 'bilinear', 'grouped_mm', 'scaled_mm', 'scaled_grouped_mm', 'ScalingType',
           'SwizzleType']


# ---------------------------------------------------------------------------------------
# scaled_mm: a float8 GEMM whose operands carry decoding scales. The CPU computes it in
# float32 - ``(a @ b) * scale_a * scale_b (+ bias)`` - and rounds once into output_dtype.
# Only TensorWise (one scale per operand) and RowWise (one per row of a, one per column of
# b) are supported there; the block-wise recipes and swizzled scales are CUDA-only.

class _EnumInt(enum.Enum):
    """PyTorch's recipe enums: members convert with ``int()`` but compare unequal to ints."""

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


class _ScalingType(_EnumInt):
    """Supported Tensor scaling types."""
    TensorWise = 0          # single scale per tensor
    RowWise = 1             # scale per row of the tensor
    BlockWise1x16 = 2       # scale per 16 contiguous values
    BlockWise1x32 = 3       # scale per 32 contiguous values
    BlockWise1x128 = 4      # scale per 128 contiguous values
    BlockWise128x128 = 5    # scale per 128x128 tile


class _SwizzleType(_EnumInt):
    """Supported scale swizzle types."""
    NO_SWIZZLE = 0          # no swizzling
    SWIZZLE_32_4_4 = 1      # Blackwell-style 32x4x4 swizzle


# PyTorch names the classes with a leading underscore (their repr is <_ScalingType.RowWise: 1>)
# and exports them as ScalingType / SwizzleType.
ScalingType = _ScalingType
SwizzleType = _SwizzleType

_SCALE_FLOAT8 = frozenset(d.name for d in _dtype.FLOAT8)
_BIAS_DTYPES = ('float32', 'bfloat16', 'float16')


class ScaledMm(Op):
    """``(a @ b) * scale_a * scale_b (+ bias)`` in float32, rounded into ``out_dtype``.

    PyTorch has no derivative for it: a result that needs a gradient records a node whose
    backward refuses, as PyTorch's does."""
    node_name = 'NotImplemented'

    def forward(self, a, b, scale_a, scale_b, bias=None, out_dtype=None, tensorwise=True):
        f32 = xp.float32
        out = xp.matmul(a.astype(f32), b.astype(f32))
        if tensorwise:      # any singleton shape, (1, 1, 1) included, is one number
            scale_a, scale_b = scale_a.reshape(()), scale_b.reshape(())
        # the scales' product first, as one factor: PyTorch's rounding in float32
        out *= scale_a * scale_b
        if bias is not None:
            out += bias.astype(f32).reshape(-1)
        return _dtype.cast(out, out_dtype)

    def backward(self, g):
        raise RuntimeError('derivative for aten::_scaled_mm_v2 is not implemented '
                           '(F.scaled_mm has no gradient in PyTorch either)')


def _one(value):
    """A scale or recipe argument as one item: PyTorch takes a list too, of which the CPU
    supports a single entry (None: an empty list or more than one entry)."""
    if isinstance(value, (list, tuple)):
        return value[0] if len(value) == 1 else None
    return value


def _check_enum(value, name, enum_cls):
    """PyTorch reads ``.value`` off each recipe/swizzle first: anything else is refused with
    its AttributeError, before any shape or dtype check."""
    items = value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        if not isinstance(item, enum_cls):
            raise AttributeError(f"{type(item).__name__!r} object has no attribute 'value' "
                                 f"(scaled_mm: {name} must be a F.{enum_cls.__name__[1:]} "
                                 f"or a list of them)")


def _scaling_error(mat_a, scale_a, mat_b, scale_b):
    def desc(t, name, last_sep):
        if t is None:           # an empty list of scales
            return f'{name}=None'
        return (f'{name}.dtype()={_scalar_type_name(t.dtype)}, {name}.size()={list(t.shape)}'
                f'{last_sep}{name}.stride()={list(t.stride())}')
    a_desc, b_desc = desc(scale_a, 'scale_a', ', '), desc(scale_b, 'scale_b', ' and ')
    m, n = mat_a.shape[0], mat_b.shape[1]
    return ValueError(
        'Invalid scaling configuration.\n'
        '- For TensorWise scaling, a and b should be float8, scales should be float and '
        'singletons.\n'
        f'- For RowWise scaling, a and b should be float8, scales should be float, scale_a '
        f'should be ({m}, 1) and scale_b should be (1, {n}), and both should be '
        f'contiguous.\n'
        f'Got mat_a.dtype()={_scalar_type_name(mat_a.dtype)}, {a_desc}, '
        f'mat_b.dtype()={_scalar_type_name(mat_b.dtype)}, {b_desc}')


def _check_rowwise_scales(scale_a, scale_b, m, n):
    for name, t in (('scale_a', scale_a), ('scale_b', scale_b)):
        if t.ndim == 0:
            raise IndexError(f'Dimension specified as 0 but tensor has no dimensions '
                             f'(scaled_mm: RowWise {name} must be 2-D)')
        if t.ndim == 1:
            raise IndexError(f'Dimension out of range (expected to be in range of [-1, 0], '
                             f'but got 1) (scaled_mm: RowWise {name} must be 2-D)')
    if tuple(scale_a.shape) != (m, 1):
        raise ValueError(f'scale_a must have shape [{m}, 1], got [{list(scale_a.shape)}]')
    if scale_b.numel() != n:
        raise ValueError(f'scale_b must have {n} Float elements, got {scale_b.numel()}')
    if tuple(scale_b.shape) != (1, n):
        raise RuntimeError(f'scaled_mm: scale_b must have shape [1, {n}] (one scale per '
                           f'column of mat_b), got {list(scale_b.shape)}')


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=_dtype.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    """``mm(mat_a, mat_b)`` of float8 matrices decoded by their scales (PyTorch's
    ``F.scaled_mm``, on its CPU rules).

    ``(mat_a @ mat_b) * scale_a * scale_b + bias``, computed in float32 and rounded once
    into ``output_dtype`` (None: ``mat_a``'s dtype). Both operands are 2-D float8 of any of
    the five formats (mixed formats too); the recipes, both the same:

    - ``ScalingType.TensorWise``: each scale is one float32 element;
    - ``ScalingType.RowWise``: ``scale_a`` is (M, 1) and ``scale_b`` (1, N), float32.

    ``bias`` has N elements (float32, bfloat16 or float16). The block-wise recipes are
    refused, as on PyTorch's CPU, and so is ``SwizzleType.SWIZZLE_32_4_4`` when both swizzles
    are given (a lone swizzle is ignored there); ``contraction_dim`` and ``use_fast_accum``
    change nothing on the CPU. No gradient (PyTorch defines none).
    """
    _check_enum(scale_recipe_a, 'scale_recipe_a', _ScalingType)
    _check_enum(scale_recipe_b, 'scale_recipe_b', _ScalingType)
    for name, swizzle in (('swizzle_a', swizzle_a), ('swizzle_b', swizzle_b)):
        if swizzle is not None:
            _check_enum(swizzle, name, _SwizzleType)
    for name, t in (('mat_a', mat_a), ('mat_b', mat_b)):
        if t.ndim != 2:
            raise ValueError(f'{name} must be a matrix (scaled_mm takes 2-D operands, got a '
                             f'{t.ndim}-D tensor of shape {tuple(t.shape)})')
    if mat_a.shape[1] != mat_b.shape[0]:
        raise ValueError(f'mat_a and mat_b shapes cannot be multiplied ({_dims(mat_a)} and '
                         f'{_dims(mat_b)})')
    m, n = mat_a.shape[0], mat_b.shape[1]
    if bias is not None:
        if bias.numel() != n:
            raise ValueError(f'Bias must be size {n} but got {bias.numel()}')
        if bias.dtype.name not in _BIAS_DTYPES:
            raise ValueError(f'Bias must be Float32 or BFloat16 or Half, but got '
                             f'{_scalar_type_name(bias.dtype)}')
    if swizzle_a is not None and swizzle_b is not None:
        # PyTorch's CPU rule: a swizzle counts only when both are given, and then the first
        # entry of each (the one scale the CPU supports)
        firsts = [s[0] if isinstance(s, (list, tuple)) else s
                  for s in (swizzle_a, swizzle_b) if s != [] and s != ()]
        if any(s is _SwizzleType.SWIZZLE_32_4_4 for s in firsts):
            raise ValueError('CPU does not support swizzle. (scaled_mm: pass '
                             'SwizzleType.NO_SWIZZLE or None; swizzled scales are for CUDA)')
    one_a, one_b = _one(scale_a), _one(scale_b)
    recipe_a, recipe_b = _one(scale_recipe_a), _one(scale_recipe_b)
    # the message describes the first scale of a list (None for an empty one), as PyTorch's
    shown_a = one_a if one_a is not None else (scale_a[0] if len(scale_a) else None)
    shown_b = one_b if one_b is not None else (scale_b[0] if len(scale_b) else None)
    valid = (one_a is not None and one_b is not None and recipe_a is not None
             and recipe_a is recipe_b
             and recipe_a in (_ScalingType.TensorWise, _ScalingType.RowWise)
             and mat_a.dtype.name in _SCALE_FLOAT8 and mat_b.dtype.name in _SCALE_FLOAT8
             and one_a.dtype.name == 'float32' and one_b.dtype.name == 'float32')
    if not valid:
        raise _scaling_error(mat_a, shown_a, mat_b, shown_b)
    if recipe_a is _ScalingType.TensorWise:
        for name, t in (('scale_a', one_a), ('scale_b', one_b)):
            if t.numel() != 1:
                raise ValueError(f'{name} must have 1 Float element (TensorWise scaling '
                                 f'takes one scale per operand, got shape {tuple(t.shape)})')
    else:
        _check_rowwise_scales(one_a, one_b, m, n)
    out_dtype = mat_a.dtype if output_dtype is None else output_dtype
    inputs = (mat_a, mat_b, one_a, one_b) + (() if bias is None else (bias,))
    return ScaledMm.apply(*inputs, out_dtype=out_dtype.numpy,
                          tensorwise=recipe_a is _ScalingType.TensorWise)


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=_dtype.bfloat16, contraction_dim=(), use_fast_accum=False):
    """PyTorch's ``F.scaled_grouped_mm``: a grouped ``scaled_mm`` that PyTorch runs on CUDA
    only. On the CPU every call is refused with PyTorch's NotImplementedError (after the
    recipes' type check, which comes first there too); use ``scaled_mm`` per group."""
    _check_enum(scale_recipe_a, 'scale_recipe_a', _ScalingType)
    _check_enum(scale_recipe_b, 'scale_recipe_b', _ScalingType)
    raise NotImplementedError(
        "Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend: "
        "scaled_grouped_mm has no CPU kernel (PyTorch runs it on CUDA only). Call "
        "F.scaled_mm on each group instead.")
