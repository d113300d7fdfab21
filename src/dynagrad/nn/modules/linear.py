"""Linear layers."""
import math

from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from ... import ops
from .. import functional as F
from .. import init


class Linear(Module):
    """``y = x @ weight.T + bias``, initialised as PyTorch does (uniform in +-1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ops.empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_features, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's draws in PyTorch's order, so a seeded model starts from the same weights
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features else 0
            init.uniform_(self.bias, -bound, bound)

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
        self.weight = Parameter(ops.empty(out_features, in1_features, in2_features,
                                          dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_features, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

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


def __getattr__(name):
    # PyTorch defines LazyLinear here; it lives with the other lazy modules (lazy.py imports
    # this module, so the name resolves on first use)
    if name == 'LazyLinear':
        from .lazy import LazyLinear
        return LazyLinear
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
