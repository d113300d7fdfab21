"""Linear layers as ops: ``x @ W.T + b`` in one node, as PyTorch's addmm."""
from ...backend import xp
from ...autograd.function import Op


class Linear(Op):
    """``y = x @ weight.T (+ bias)``; the weight's gradient comes out contiguous."""
    promotes = True

    def forward(self, x, weight, bias=None):
        if x.ndim == 2:
            self._node_name = 'AddmmBackward0' if bias is not None else 'MmBackward0'
        else:
            self._node_name = 'LinearBackward0'
        need_x, need_w = self.needs_input_grad[:2]
        self.save_for_backward(x if need_w else None, weight if need_x else None)
        out = xp.matmul(x, weight.T)
        if bias is not None:
            out += bias
        return out

    def backward(self, g):
        x, weight = self.saved_tensors
        gx = g @ weight if weight is not None else None
        gw = gb = None
        if x is not None:
            n_out, n_in = g.shape[-1], x.shape[-1]
            # (N, out).T @ (N, in): one GEMM straight into the weight's (out, in) layout.
            gw = g.reshape((-1, n_out)).mT @ x.reshape((-1, n_in))
        needs = self.needs_input_grad
        if len(needs) > 2 and needs[2]:
            gb = g.reshape((-1, g.shape[-1])).sum((0,))
        return gx, gw, gb


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (PyTorch's ``F.linear``)."""
    in_features = weight.shape[-1]
    if input.ndim == 0 or input.shape[-1] != in_features:
        shape = 'x'.join(str(d) for d in (input.shape if input.ndim else (1,)))
        raise RuntimeError(f'linear: mat1 and mat2 shapes cannot be multiplied ({shape} and '
                           f'{in_features}x{weight.shape[0]}): the input\'s last dimension must '
                           f'equal weight.shape[1] = {in_features}')
    if bias is None:
        return Linear.apply(input, weight)
    return Linear.apply(input, weight, bias)


__all__ = ['linear']
