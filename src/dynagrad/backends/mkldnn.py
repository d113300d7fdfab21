"""``dynagrad.backends.mkldnn``: oneDNN's flags with PyTorch's defaults.

``is_available()`` is False: PyTorch's CPU builds link oneDNN and say True, but dynagrad
computes with NumPy, so code that checks it before calling oneDNN-only paths
(``Tensor.to_mkldnn``) takes the plain path here.
"""
from ._flags import BoolFlag, flag_module, set_flags


def is_available():
    return False


def flags(enabled=False, deterministic=False):
    """Context manager setting the flags inside the block, restoring them after."""
    return set_flags(_module, enabled=enabled, deterministic=deterministic)


_module = flag_module(__name__,
                      enabled=BoolFlag(True, 'set_enabled_mkldnn'),
                      deterministic=BoolFlag(False, 'set_deterministic_mkldnn'))
