"""``dynagrad.cuda``: what ``torch.cuda`` answers on a machine without CUDA.

dynagrad computes on the CPU with NumPy, so there is no CUDA device. As in a CPU-only
PyTorch: the queries say so (``is_available()`` is False, ``device_count()`` 0, the memory
counters 0), seeding is accepted and does nothing (PyTorch queues it for a CUDA that never
initialises), ``empty_cache`` does nothing, and what needs a device raises
``AssertionError: dynagrad not compiled with CUDA enabled``. ``is_available`` and
``device_count`` ask the device registry (``dynagrad._device``), where a GPU backend would
register 'cuda'.

Submodules (``dynagrad.cuda.amp``) load on first use, so adding one needs no edit here.
"""
import importlib
from collections import OrderedDict

from .. import _device
from .._device import as_device, backend_for, unavailable_error

__all__ = ['is_available', 'device_count', 'is_initialized', 'init', 'manual_seed',
           'manual_seed_all', 'seed', 'seed_all', 'initial_seed', 'get_rng_state',
           'get_rng_state_all', 'set_rng_state', 'set_rng_state_all', 'synchronize',
           'current_device', 'set_device', 'get_device_name', 'get_device_capability',
           'get_device_properties', 'mem_get_info', 'ipc_collect', 'current_stream',
           'default_stream', 'set_per_process_memory_fraction', 'empty_cache',
           'memory_allocated', 'max_memory_allocated', 'memory_reserved', 'max_memory_reserved',
           'memory_stats', 'reset_peak_memory_stats', 'reset_max_memory_allocated',
           'reset_accumulated_memory_stats', 'is_bf16_supported', 'is_tf32_supported',
           'get_arch_list', 'device', 'device_of']


def _no_cuda(*args, **kwargs):
    raise unavailable_error('cuda')


# -- what exists ---------------------------------------------------------------------------

def is_available():
    """Whether a CUDA device can be used: False unless a GPU backend registered 'cuda'."""
    return device_count() > 0


def device_count():
    """The number of CUDA devices: 0 without a GPU backend."""
    try:
        return backend_for(as_device('cuda')).device_count()
    except AssertionError:
        return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    """False: bfloat16 on CUDA needs a CUDA device (PyTorch's answer on a CPU-only build)."""
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    """The CUDA architectures this build supports: none."""
    return []


# -- seeding: accepted, nothing to seed ------------------------------------------------------

def manual_seed(seed):
    """Accepted and ignored, as PyTorch does without CUDA (the seed must convert to int)."""
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def get_rng_state_all():
    return []


def set_rng_state(new_state, device='cuda'):
    pass


def set_rng_state_all(new_states):
    pass


# -- memory: nothing allocated ---------------------------------------------------------------

def empty_cache():
    """Release cached device memory: there is none."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_stats(device=None):
    return OrderedDict()


# -- what needs a device: PyTorch's AssertionError ----------------------------------------
# (PyTorch's own reset_* functions fail with an AttributeError about its C module; the
# error a program can act on is this one.)

init = initial_seed = get_rng_state = synchronize = current_device = _no_cuda
get_device_name = get_device_capability = get_device_properties = mem_get_info = _no_cuda
ipc_collect = current_stream = default_stream = set_per_process_memory_fraction = _no_cuda
reset_peak_memory_stats = reset_max_memory_allocated = _no_cuda
reset_accumulated_memory_stats = _no_cuda


def _device_index(device, optional=False):
    """PyTorch's reading of a CUDA device argument as an index (-1: none)."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if device is None and optional:
        return -1
    if isinstance(device, (str, bytes, _device.device)):
        dev = as_device(device)
        if dev.type != 'cuda':
            raise ValueError(f'Expected a cuda device, but got: {dev}')
        if dev.index is not None:
            return dev.index
        if optional:
            return -1
    raise ValueError(f'Expected a dynagrad.device with a specified index or an integer, but '
                     f'got:{device}')


def set_device(device):
    """Select a CUDA device; a negative index is a no-op, as in PyTorch."""
    if _device_index(device) >= 0:
        raise unavailable_error('cuda')


class device:
    """Context manager selecting a CUDA device; entering one raises without CUDA."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx != -1:
            raise RuntimeError('dynagrad was compiled without CUDA support')

    def __exit__(self, *exc):
        return False


class device_of(device):
    """``device`` of a tensor's device (a no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def __getattr__(name):
    """Load a submodule (``amp``) on first use, as ``import dynagrad.cuda.amp`` would."""
    if not name.startswith('_'):
        try:
            return importlib.import_module(f'{__name__}.{name}')
        except ModuleNotFoundError as e:
            if e.name != f'{__name__}.{name}':
                raise
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
