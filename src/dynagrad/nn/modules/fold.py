"""Fold and Unfold (col2im and im2col)."""
from ..module import Module
from .. import functional as F


class Fold(Module):
    """Sum sliding-block columns ``(N, C * prod(kernel_size), L)`` back into an image."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f'output_size={self.output_size}, kernel_size={self.kernel_size}, '
                f'dilation={self.dilation}, padding={self.padding}, stride={self.stride}')


class Unfold(Module):
    """Extract sliding blocks of an image as columns ``(N, C * prod(kernel_size), L)``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, dilation={self.dilation}, '
                f'padding={self.padding}, stride={self.stride}')


__all__ = ['Fold', 'Unfold']
