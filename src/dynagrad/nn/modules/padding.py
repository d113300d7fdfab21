"""Padding modules: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d/2d/3d).

Each stores ``padding`` as PyTorch does (an int becomes ``2 * dims`` copies, a sequence a
tuple as given) and calls ``F.pad``, which checks the sizes.
"""
from ..module import Module
from .. import functional as F


def _padding(value, dims):
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * (2 * dims)


class _ConstantPadNd(Module):
    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _padding(padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, 'constant', self.value)

    def extra_repr(self):
        return f'padding={self.padding}, value={self.value}'


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class _ModePadNd(Module):
    """Padding by a mode of ``F.pad`` (reflect, replicate, circular)."""
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f'{self.padding}'


class _ReflectionPadNd(_ModePadNd):
    _mode = 'reflect'


class ReflectionPad1d(_ReflectionPadNd):
    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    _dims = 3


class _ReplicationPadNd(_ModePadNd):
    _mode = 'replicate'


class ReplicationPad1d(_ReplicationPadNd):
    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    _dims = 3


class _CircularPadNd(_ModePadNd):
    _mode = 'circular'

    def forward(self, input):
        dims = self._dims
        if input.ndim not in (dims + 1, dims + 2):
            raise ValueError(f'expected {dims + 1}D or {dims + 2}D input (got {input.ndim}D '
                             f'input)')
        return F.pad(input, self.padding, 'circular')


class CircularPad1d(_CircularPadNd):
    _dims = 1


class CircularPad2d(_CircularPadNd):
    _dims = 2


class CircularPad3d(_CircularPadNd):
    _dims = 3


__all__ = ['ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ZeroPad1d', 'ZeroPad2d',
           'ZeroPad3d', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d',
           'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'CircularPad1d',
           'CircularPad2d', 'CircularPad3d']
