"""``dynagrad.cuda``: PyTorch's ``torch.cuda`` over CuPy, or its answers without CUDA.

With CuPy installed and a GPU present, 'cuda' is a device (``dynagrad.cuda._backend``
registers it the first time it is asked for) and these functions report on it: the device
count and name, synchronisation, streams and events (CuPy's), the memory counters over
CuPy's memory pool (its caching allocator), seeding of the device generator.

Without CuPy or a GPU they answer as a CPU-only PyTorch does: the queries say so
(``is_available()`` is False, ``device_count()`` 0, the memory counters 0), seeding is
accepted and does nothing (PyTorch queues it for a CUDA that never initialises),
``empty_cache`` does nothing, and what needs a device raises ``AssertionError: dynagrad not
compiled with CUDA enabled``.

Submodules (``dynagrad.cuda.amp``) load on first use, so adding one needs no edit here.
"""
import importlib
from collections import OrderedDict

from .. import _device
from .._device import as_device, backend_for, register_lazy, unavailable_error
from . import _backend

__all__ = ['is_available', 'device_count', 'is_initialized', 'init', 'manual_seed',
           'manual_seed_all', 'seed', 'seed_all', 'initial_seed', 'get_rng_state',
           'get_rng_state_all', 'set_rng_state', 'set_rng_state_all', 'synchronize',
           'current_device', 'set_device', 'get_device_name', 'get_device_capability',
           'get_device_properties', 'mem_get_info', 'ipc_collect', 'current_stream',
           'default_stream', 'set_per_process_memory_fraction', 'empty_cache',
           'memory_allocated', 'max_memory_allocated', 'memory_reserved', 'max_memory_reserved',
           'memory_stats', 'reset_peak_memory_stats', 'reset_max_memory_allocated',
           'reset_accumulated_memory_stats', 'is_bf16_supported', 'is_tf32_supported',
           'get_arch_list', 'device', 'device_of', 'Stream', 'Event', 'stream',
           'set_stream', 'current_blas_handle', 'StreamContext', 'CUDAGraph', 'graph',
           'graph_pool_handle', 'make_graphed_callables', 'is_current_stream_capturing']

register_lazy('cuda', _backend.load)

_GRAPHS = ('CUDAGraph', 'graph', 'graph_pool_handle', 'is_current_stream_capturing',
           'make_graphed_callables')   # from graphs.py, loaded on first use


def _backend_or_none():
    """The registered 'cuda' backend (loading it on first use), or None without CUDA."""
    try:
        return backend_for(as_device('cuda'))
    except AssertionError:
        return None


def _needs_cuda():
    backend = _backend_or_none()
    if backend is None:
        raise unavailable_error('cuda')
    return backend


# -- what exists ---------------------------------------------------------------------------

def is_available():
    """Whether a CUDA device can be used: CuPy imports and sees a GPU."""
    return device_count() > 0


def device_count():
    """The number of CUDA devices CuPy sees (0 without CuPy or a GPU)."""
    backend = _backend_or_none()
    return 0 if backend is None else backend.device_count()


def is_initialized():
    """Whether the CUDA backend has been loaded (PyTorch: its CUDA state initialised)."""
    return 'cuda' in _device.registered_types()


def is_bf16_supported(including_emulation=True):
    """False: CuPy has no bfloat16 arrays, so bfloat16 tensors cannot live on the device."""
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    """The CUDA architectures this build supports: none is compiled in (CuPy compiles its
    kernels for the GPU it runs on)."""
    return []


# -- seeding --------------------------------------------------------------------------------
# Device draws come from the 'cuda' default generator (dynagrad.ops.random), seeded here;
# without CUDA the seed is checked and dropped, as PyTorch queues it for a CUDA that never
# initialises.

def _cuda_generator():
    from ..ops.random import device_generator
    return device_generator('cuda') if _backend_or_none() is not None else None


def manual_seed(seed):
    """Seed the CUDA generator (the seed must convert to int)."""
    seed = int(seed)
    generator = _cuda_generator()
    if generator is not None:
        generator.manual_seed(seed)


def manual_seed_all(seed):
    manual_seed(seed)


def seed():
    generator = _cuda_generator()
    if generator is not None:
        generator.seed()


def seed_all():
    seed()


def initial_seed():
    generator = _cuda_generator()
    if generator is None:
        raise unavailable_error('cuda')
    return generator.initial_seed()


def get_rng_state(device='cuda'):
    generator = _cuda_generator()
    if generator is None:
        raise unavailable_error('cuda')
    return generator.get_state()


def get_rng_state_all():
    generator = _cuda_generator()
    return [] if generator is None else [generator.get_state()]


def set_rng_state(new_state, device='cuda'):
    generator = _cuda_generator()
    if generator is not None:
        generator.set_state(new_state)


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


# -- memory: CuPy's memory pool ----------------------------------------------------------------

def empty_cache():
    """Hand the pool's unused blocks back to the driver (nothing to do without CUDA)."""
    backend = _backend_or_none()
    if backend is not None:
        backend.pool().free_all_blocks()


def memory_allocated(device=None):
    """Bytes held by live device arrays (the pool's used bytes); 0 without CUDA."""
    backend = _backend_or_none()
    return 0 if backend is None else backend.allocated()


def max_memory_allocated(device=None):
    """The most bytes ever held at once since start or ``reset_peak_memory_stats``."""
    backend = _backend_or_none()
    return 0 if backend is None else backend.max_allocated()


def memory_reserved(device=None):
    """Bytes the pool holds from the driver, used or cached."""
    backend = _backend_or_none()
    return 0 if backend is None else backend.reserved()


def max_memory_reserved(device=None):
    return memory_reserved(device)


def memory_stats(device=None):
    backend = _backend_or_none()
    if backend is None:
        return OrderedDict()
    return OrderedDict([('allocated_bytes.all.current', backend.allocated()),
                        ('allocated_bytes.all.peak', backend.max_allocated()),
                        ('reserved_bytes.all.current', backend.reserved())])


def reset_peak_memory_stats(device=None):
    _needs_cuda().reset_peak()


reset_max_memory_allocated = reset_peak_memory_stats


def reset_accumulated_memory_stats(device=None):
    _needs_cuda()


def mem_get_info(device=None):
    """(free, total) bytes of the device, as the driver reports them."""
    free, total = _needs_cuda().cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def set_per_process_memory_fraction(fraction, device=None):
    backend = _needs_cuda()
    if not 0 <= fraction <= 1:
        raise ValueError(f'Invalid fraction value: {fraction}. Allowed range: 0~1')
    total = backend.cupy.cuda.runtime.memGetInfo()[1]
    backend.pool().set_limit(size=int(total * fraction))


# -- the device, synchronisation ------------------------------------------------------------

def init():
    _needs_cuda()


def synchronize(device=None):
    """Wait for every kernel queued on the device to finish."""
    _needs_cuda().cupy.cuda.Device().synchronize()


def current_device():
    """The index of the current device: dynagrad addresses one, 0."""
    _needs_cuda()
    return 0


def _properties(device=None):
    backend = _needs_cuda()
    index = _device_index(device, optional=True)
    return backend.cupy.cuda.runtime.getDeviceProperties(max(index, 0))


def get_device_name(device=None):
    name = _properties(device)['name']
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None):
    props = _properties(device)
    return int(props['major']), int(props['minor'])


class _DeviceProperties:
    """What ``get_device_properties`` returns: the fields programs read most."""

    def __init__(self, props):
        name = props['name']
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.total_memory = int(props['totalGlobalMem'])
        self.major, self.minor = int(props['major']), int(props['minor'])
        self.multi_processor_count = int(props['multiProcessorCount'])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f'minor={self.minor}, total_memory={self.total_memory >> 20}MB, '
                f'multi_processor_count={self.multi_processor_count})')


def get_device_properties(device=None):
    return _DeviceProperties(_properties(device))


def ipc_collect():
    _needs_cuda()


def current_blas_handle():
    return _needs_cuda().cupy.cuda.device.get_cublas_handle()


# -- streams and events: CuPy's ------------------------------------------------------------

class Stream:
    """A CUDA stream (CuPy's): kernels queued while it is current (``with stream``) run
    in order on it."""

    def __new__(cls, device=None, priority=0, **kwargs):
        backend = _needs_cuda()
        self = super().__new__(cls)
        self._stream = backend.cupy.cuda.Stream(non_blocking=True)
        self.device = _device.device('cuda', 0)
        self.priority = priority
        return self

    @classmethod
    def _wrapping(cls, cupy_stream):
        self = super().__new__(cls)
        self._stream = cupy_stream
        self.device = _device.device('cuda', 0)
        self.priority = 0
        return self

    @property
    def cuda_stream(self):
        return self._stream.ptr

    def synchronize(self):
        self._stream.synchronize()

    def query(self):
        done = getattr(self._stream, 'done', None)
        return True if done is None else bool(done)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def wait_event(self, event):
        wait = getattr(self._stream, 'wait_event', None)
        if wait is not None:
            wait(event._event)
        else:
            event.synchronize()

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self):
        self._stream.__enter__()
        return self

    def __exit__(self, *exc):
        return self._stream.__exit__(*exc)

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return f'<dynagrad.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>'


class Event:
    """A CUDA event (CuPy's): ``record`` it on a stream, then ``elapsed_time`` between two
    events in milliseconds."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        backend = _needs_cuda()
        self._cupy = backend.cupy
        self._event = backend.cupy.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                              interprocess=interprocess)
        self.enable_timing = enable_timing

    def record(self, stream=None):
        self._event.record(None if stream is None else stream._stream)

    def synchronize(self):
        self._event.synchronize()

    def query(self):
        return bool(self._event.done)

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError('Both events must be created with argument '
                               "'enable_timing=True'.")
        return float(self._cupy.cuda.get_elapsed_time(self._event, end_event._event))


def current_stream(device=None):
    return Stream._wrapping(_needs_cuda().cupy.cuda.get_current_stream())


def default_stream(device=None):
    return Stream._wrapping(_needs_cuda().cupy.cuda.Stream.null)


def set_stream(stream):
    if stream is not None:
        stream._stream.use()


class StreamContext:
    """Context manager making ``stream`` current (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def stream(stream):
    """``StreamContext(stream)``: ``with dynagrad.cuda.stream(s):`` runs the block on ``s``."""
    return StreamContext(stream)


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
    """Select a CUDA device: dynagrad addresses one, index 0; a negative index is a no-op,
    as in PyTorch."""
    index = _device_index(device)
    if index < 0:
        return
    backend = _needs_cuda()
    if index >= 1:
        raise RuntimeError(f'dynagrad addresses one CUDA device (cuda:0); cuda:{index} was '
                           f'asked for ({backend.device_count()} visible)')


class device:
    """Context manager selecting a CUDA device (only cuda:0 is addressed)."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx != -1:
            if _backend_or_none() is None:
                raise RuntimeError('dynagrad was compiled without CUDA support')
            set_device(self.idx)
            self.prev_idx = 0

    def __exit__(self, *exc):
        return False


class device_of(device):
    """``device`` of a tensor's device (a no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def __getattr__(name):
    """Load a submodule (``amp``) on first use, as ``import dynagrad.cuda.amp`` would."""
    if name in _GRAPHS:
        return getattr(importlib.import_module(f'{__name__}.graphs'), name)
    if not name.startswith('_'):
        try:
            return importlib.import_module(f'{__name__}.{name}')
        except ModuleNotFoundError as e:
            if e.name != f'{__name__}.{name}':
                raise
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
