"""Linear layers: ``linear`` as one fused op (PyTorch's addmm), ``bilinear``, and
``grouped_mm`` (one product per group of rows, columns or batch)."""
from ...backend import xp
from ...autograd.function import Op, autocast_args, autocast_state, is_array


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


class LinearOp(Op):
    """``y = x @ weight.T (+ bias)``; the weight's gradient comes out contiguous.

    ``weight`` is (out, in) or a vector (in,); ``bias`` broadcasts against the output (the
    mechanism sums its gradient back to its shape).
    """
    widens_half = True
    node_name = 'LinearBackward0'

    def forward(self, x, weight, bias=None):
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, weight if need_x else None)
        self.w_ndim = weight.ndim
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
                # (N, out).T @ (N, in): one GEMM straight into the weight's (out, in) layout.
                gw = g.reshape((-1, n_out)).mT @ x.reshape((-1, n_in))
        needs = self.needs_input_grad
        gb = g if len(needs) > 2 and needs[2] else None
        return gx, gw, gb


def _dims(t):
    return 'x'.join(str(d) for d in t.shape)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (PyTorch's ``F.linear``); input (*, in), weight (out, in)."""
    if autocast_state.active:
        input, weight, bias = autocast_args('lower', input, weight, bias)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f'linear: both arguments to linear need to be at least 1D, but they '
                           f'are {input.ndim}D and {weight.ndim}D')
    if weight.ndim > 2:
        raise RuntimeError(f'linear: t() expects a tensor with <= 2 dimensions, but self is '
                           f'{weight.ndim}D (weight must be (out_features, in_features))')
    in_features = weight.shape[-1]
    if input.shape[-1] != in_features:
        w = f'{in_features}x{weight.shape[0]}' if weight.ndim == 2 else f'{in_features}'
        raise RuntimeError(f'linear: mat1 and mat2 shapes cannot be multiplied ({_dims(input)} '
                           f'and {w}): the input\'s last dimension must equal weight.shape[-1] '
                           f'= {in_features}')
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f'linear: expected m1 and m2 to have the same dtype, but got: '
                           f'{input.dtype} != {weight.dtype}')
    if bias is None:
        return LinearOp.named(_linear_node_name(input.ndim, weight.ndim, False)).apply(
            input, weight)
    if bias._data.dtype != input._data.dtype:
        raise RuntimeError(f'linear: self and mat2 must have the same dtype, but got '
                           f'{bias.dtype} (bias) and {input.dtype} (input)')
    if weight.ndim == 1 and input.ndim > 1:
        raise RuntimeError('linear: mat2 must be a matrix, got 1-D tensor (a 1-D weight takes '
                           'no bias with a batched input)')
    return LinearOp.named(_linear_node_name(input.ndim, weight.ndim, True)).apply(
        input, weight, bias)


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


__all__ = ['linear', 'bilinear', 'grouped_mm']
