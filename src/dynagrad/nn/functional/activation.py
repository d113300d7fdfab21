"""Activation functions, and the softmax family."""
from ...backend import xp
from ...autograd.function import Op
from ...ops import _formula as fm
from ... import ops as _ops


class LogSoftmax(Op):
    float_result = True

    def forward(self, x, dim):
        self.dim = dim
        shifted = x - x.max(axis=dim, keepdims=True)
        out = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        self.save_for_backward(out)
        return out

    def backward(self, g):
        out, = self.saved_tensors
        d = self.dim
        return g - fm.exp(out) * _sum_keepdim(g, d)


class Softmax(Op):
    float_result = True

    def forward(self, x, dim):
        self.dim = dim
        e = xp.exp(x - x.max(axis=dim, keepdims=True))
        out = e / e.sum(axis=dim, keepdims=True)
        self.save_for_backward(out)
        return out

    def backward(self, g):
        out, = self.saved_tensors
        gy = g * out
        return gy - out * _sum_keepdim(gy, self.dim)


def _sum_keepdim(g, dim):
    shape = list(g.shape)
    shape[dim] = 1
    return g.sum((dim,)).reshape(tuple(shape))


def _wrap_dim(dim, ndim):
    if dim is None:
        # PyTorch's legacy implicit choice (it warns): 0 for 0-, 1- and 3-D input, else 1.
        return 0 if ndim in (0, 1, 3) else 1
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f'Dimension out of range (expected to be in range of '
                         f'[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})')
    return dim % max(ndim, 1)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return LogSoftmax.apply(input, dim=_wrap_dim(dim, input.ndim))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return Softmax.apply(input, dim=_wrap_dim(dim, input.ndim))




def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return _ops.relu(input)


def tanh(input):
    return _ops.tanh(input)


def sigmoid(input):
    return _ops.sigmoid(input)


__all__ = ['relu', 'tanh', 'sigmoid', 'softmax', 'log_softmax']
