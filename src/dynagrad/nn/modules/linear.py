"""Linear layers."""
import math

from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from ... import ops
from .. import functional as F


class Linear(Module):
    """``y = x @ weight.T + bias``, initialised as PyTorch does (uniform in +-1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0
        self.weight = Parameter(ops.rand(out_features, in_features, dtype=dtype) * (2 * bound)
                                - bound)
        if bias:
            self.bias = Parameter(ops.rand(out_features, dtype=dtype) * (2 * bound) - bound)
        else:
            self.register_parameter('bias', None)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f'in_features={self.in_features}, out_features={self.out_features}, '
                f'bias={self.bias is not None}')


class Bilinear(Module):
    """``y = x1^T A x2 + b``, initialised uniformly in +-1/sqrt(in1_features) as PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in1_features)
        self.weight = Parameter(ops.rand(out_features, in1_features, in2_features,
                                         dtype=dtype) * (2 * bound) - bound)
        if bias:
            self.bias = Parameter(ops.rand(out_features, dtype=dtype) * (2 * bound) - bound)
        else:
            self.register_parameter('bias', None)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f'in1_features={self.in1_features}, in2_features={self.in2_features}, '
                f'out_features={self.out_features}, bias={self.bias is not None}')


class NonDynamicallyQuantizableLinear(Linear):
    """A plain ``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj``."""


class Identity(Module):
    """Returns its input; takes and ignores any constructor arguments, as in PyTorch."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


__all__ = ['Identity', 'Linear', 'Bilinear']
