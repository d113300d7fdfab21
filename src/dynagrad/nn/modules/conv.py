"""Convolution layers."""
import math

from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from .. import functional as F
from .. import init
from ... import ops


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        if len(value) != n:
            raise ValueError(f'expected {n} values, got {len(value)}: {value}')
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    _n = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode='zeros', device=None,
                 dtype=None, output_padding=0):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError('groups must be a positive integer')
        if in_channels % groups:
            raise ValueError('in_channels must be divisible by groups')
        if out_channels % groups:
            raise ValueError('out_channels must be divisible by groups')
        if padding_mode not in ('zeros', 'reflect', 'replicate', 'circular'):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ('same', 'valid'):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == 'same' and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(ops.empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)), bias uniform in +-1/sqrt(fan_in).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = '{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}'
        n = self._n
        if self.padding != (0,) * n:
            s += ', padding={padding}'
        if self.dilation != (1,) * n:
            s += ', dilation={dilation}'
        if self.output_padding != (0,) * n:
            s += ', output_padding={output_padding}'
        if self.groups != 1:
            s += ', groups={groups}'
        if self.bias is None:
            s += ', bias=False'
        if self.padding_mode != 'zeros':
            s += ', padding_mode={padding_mode}'
        return s.format(**self.__dict__)

    def _padded(self, input):
        """Non-zero padding modes pad explicitly, then convolve without padding."""
        if self.padding_mode == 'zeros':
            return input, self.padding
        if self.padding == 'valid':
            return input, 0
        pad = []
        if self.padding == 'same':  # the extra element of an odd total goes on the right
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pad += [total // 2, total - total // 2]
        else:
            for p in reversed(self.padding):
                pad += [p, p]
        return F.pad(input, pad, mode=self.padding_mode), 0


class Conv1d(_ConvNd):
    _n = 1

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv1d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    _n = 2

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    _n = 3

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros',
                 device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        if padding_mode != 'zeros':
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        """The output padding that makes the output ``output_size`` (spatial sizes, or the
        whole shape); each size must lie within one stride of the smallest output."""
        if output_size is None:
            return self.output_padding
        n = self._n
        leading = 2 if input.dim() == n + 2 else 1
        output_size = [int(s) for s in output_size]
        if len(output_size) == leading + n:
            output_size = output_size[leading:]
        if len(output_size) != n:
            raise ValueError(f'ConvTranspose{n}D: for {input.dim()}D input, output_size must '
                             f'have {n} or {leading + n} elements (got {len(output_size)})')
        smallest = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        largest = [low + self.stride[d] - 1 for d, low in enumerate(smallest)]
        for size, low, high in zip(output_size, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f'requested an output size of {output_size}, but valid sizes '
                                 f'range from {smallest} to {largest} (for an input of '
                                 f'{input.shape[leading:]})')
        return tuple(size - low for size, low in zip(output_size, smallest))


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1
    _fn = 'conv_transpose1d'


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2
    _fn = 'conv_transpose2d'


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3
    _fn = 'conv_transpose3d'


__all__ = ['Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d',
           'ConvTranspose3d']

_LAZY = ('LazyConv1d', 'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d',
         'LazyConvTranspose3d')


def __getattr__(name):
    # PyTorch defines the lazy convolutions here; they live in lazy.py, which imports this
    # module, so they are reached on first use.
    if name in _LAZY:
        from . import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
