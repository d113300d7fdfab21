"""``dynagrad.utils``: helpers around training, as ``torch.utils``."""
from . import data, checkpoint, safetensors  # noqa: F401

__all__ = ['data', 'checkpoint', 'safetensors']
