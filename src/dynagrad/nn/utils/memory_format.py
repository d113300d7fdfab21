"""Convolution weight memory formats: lay the weights of a model's convolutions out in
``channels_last`` (``channels_last_3d``) order, as PyTorch does before channels-last
training. The values and every result stay the same; only the strides change."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ['convert_conv2d_weight_memory_format', 'convert_conv3d_weight_memory_format']


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        weight = module.weight.detach().contiguous(memory_format=memory_format)
        module.weight.data = weight
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of ``module``'s Conv2d/ConvTranspose2d layers in ``memory_format``;
    returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """The weights of ``module``'s Conv3d/ConvTranspose3d layers in ``memory_format``;
    returns ``module``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
