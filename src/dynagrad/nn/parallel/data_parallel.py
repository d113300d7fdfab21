"""``DataParallel`` on a CPU-only library: as PyTorch's ``DataParallel`` without GPUs, it
holds the module (state dict keys get the ``module.`` prefix) and runs it as it is."""
from ..module import Module

__all__ = ['DataParallel', 'data_parallel']


class DataParallel(Module):
    """Wraps ``module``; with no accelerator there is nothing to replicate onto, so
    ``device_ids`` is ``[]`` and ``forward`` calls the module directly."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim
        self.output_device = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form: ``module(*inputs, **module_kwargs)`` (no devices to spread over)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
