"""``dynagrad.nn.attention``: which scaled-dot-product-attention kernels may run.

dynagrad has one implementation of ``scaled_dot_product_attention`` (the math one, on
arrays); ``sdpa_kernel`` sets and restores the same switches PyTorch's does
(``dynagrad.backends.cuda.flash_sdp_enabled()``, ...), so code that selects a backend for a
block runs and reads back what it set.
"""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ['SDPBackend', 'sdpa_kernel', 'WARN_FOR_UNFUSED_KERNELS']

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value


_SWITCHES = {SDPBackend.MATH: (_cuda.enable_math_sdp, _cuda.math_sdp_enabled),
             SDPBackend.FLASH_ATTENTION: (_cuda.enable_flash_sdp, _cuda.flash_sdp_enabled),
             SDPBackend.EFFICIENT_ATTENTION: (_cuda.enable_mem_efficient_sdp,
                                              _cuda.mem_efficient_sdp_enabled),
             SDPBackend.CUDNN_ATTENTION: (_cuda.enable_cudnn_sdp, _cuda.cudnn_sdp_enabled)}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, only ``backends`` (one or a list) are enabled."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError('Backend must be an instance of SDPBackend or a list of SDPBackend '
                             f'instances, got {type(backends).__name__}')
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    before = {b: is_on() for b, (_, is_on) in _SWITCHES.items()}
    try:
        for b, (enable, _) in _SWITCHES.items():
            enable(b in chosen)
        yield {}
    finally:
        for b, (enable, _) in _SWITCHES.items():
            enable(before[b])
