"""``dynagrad.utils.dlpack``: PyTorch's module path for the DLPack exchange functions."""
from ..global_options import from_dlpack, to_dlpack  # noqa: F401

__all__ = ['from_dlpack', 'to_dlpack']
