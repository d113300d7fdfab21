"""``dynagrad.backends.cudnn``: cuDNN's flags with PyTorch's defaults; there is no cuDNN."""
from ._flags import BoolFlag, flag_module, set_flags

benchmark_limit = None


def is_available():
    return False


def version():
    """cuDNN's version: None, as PyTorch reports without it."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN could take ``tensor``: never, without cuDNN."""
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Context manager setting all the flags inside the block (PyTorch's defaults for the
    ones not given), restoring them after."""
    return set_flags(_module, enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32)


_module = flag_module(__name__,
                      enabled=BoolFlag(True, 'set_enabled_cudnn'),
                      benchmark=BoolFlag(False, 'set_benchmark_cudnn'),
                      deterministic=BoolFlag(False, 'set_deterministic_cudnn'),
                      allow_tf32=BoolFlag(True, 'set_allow_tf32_cudnn'))
