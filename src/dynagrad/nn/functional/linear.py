"""Linear layers: ``linear`` as one fused op (PyTorch's addmm), and ``bilinear``."""
from ...backend import xp
from ...autograd.function import Op, autocast_args, autocast_state


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


__all__ = ['linear', 'bilinear']
