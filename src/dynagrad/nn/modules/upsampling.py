"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d."""
from ..module import Module
from .. import functional as F


class Upsample(Module):
    """Resize by ``size`` or ``scale_factor`` with ``F.interpolate``'s modes."""

    def __init__(self, size=None, scale_factor=None, mode='nearest', align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        # as PyTorch: a tuple of floats, a float, or None for a falsy factor (0 included)
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f'scale_factor={self.scale_factor!r}'
        else:
            info = f'size={self.size!r}'
        return info + f', mode={self.mode!r}'


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='nearest')


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='bilinear', align_corners=True)


__all__ = ['Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d']
