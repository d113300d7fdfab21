"""``dynagrad.accelerator``: PyTorch's device-neutral accelerator API.

An accelerator is any registered device backend other than the CPU (``dynagrad._device``).
dynagrad registers none, so, as in PyTorch on a machine without one, ``is_available()`` is
False, ``current_accelerator()`` None, ``device_count()`` 0, and what needs a device raises
``RuntimeError: Cannot access accelerator device when none is available.``
"""
from ._device import backend_for, current_accelerator as _current, no_accelerator_error

__all__ = ['current_accelerator', 'is_available', 'device_count', 'current_device_index',
           'current_device_idx', 'set_device_index', 'set_device_idx', 'synchronize',
           'empty_cache', 'memory_allocated', 'max_memory_allocated', 'memory_reserved',
           'max_memory_reserved', 'memory_stats', 'reset_peak_memory_stats',
           'reset_accumulated_memory_stats', 'get_memory_info', 'current_stream', 'set_stream',
           'device_index']


def current_accelerator(check_available=False):
    """The accelerator's device type (a ``dynagrad.device`` without index), or None."""
    return _current()


def is_available():
    return _current() is not None


def device_count():
    accelerator = _current()
    return 0 if accelerator is None else backend_for(accelerator).device_count()


def _needs_accelerator(*args, **kwargs):
    raise no_accelerator_error()


current_device_index = current_device_idx = set_device_index = set_device_idx = \
    synchronize = empty_cache = memory_allocated = max_memory_allocated = memory_reserved = \
    max_memory_reserved = memory_stats = reset_peak_memory_stats = \
    reset_accumulated_memory_stats = get_memory_info = current_stream = set_stream = \
    _needs_accelerator


class device_index:
    """Context manager selecting the accelerator's device ``index`` (None: no change)."""

    def __init__(self, device_index):
        self.idx = device_index

    def __enter__(self):
        if self.idx is not None:
            _needs_accelerator()

    def __exit__(self, *exc):
        return False
