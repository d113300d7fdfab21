"""dynagrad.fft: PyTorch's torch.fft namespace (the ops live in ops/spectral.py).

float32 and float64 inputs (and complex64/complex128); integers compute in the default
float dtype; half precision is refused, as PyTorch's CPU kernels refuse it.
"""
from .ops.spectral import (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2,  # noqa
                           irfft2, rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn,
                           fftfreq, rfftfreq, fftshift, ifftshift)
from .tensor import Tensor  # noqa: F401  (torch.fft exports it too)
from .ops.out_args import give_out, FACTORY

__all__ = ['fft', 'ifft', 'fft2', 'ifft2', 'fftn', 'ifftn', 'rfft', 'irfft', 'rfft2', 'irfft2',
           'rfftn', 'irfftn', 'hfft', 'ihfft', 'hfft2', 'ihfft2', 'hfftn', 'ihfftn', 'fftfreq',
           'rfftfreq', 'fftshift', 'ifftshift']


# the forms that take out= in PyTorch (see ops/out_args.py)
give_out(globals(), 'fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft '
                    'ihfft hfft2 ihfft2 hfftn ihfftn')
give_out(globals(), 'fftfreq rfftfreq', FACTORY)
del give_out, FACTORY
