"""``dynagrad.cpu``: what ``torch.cpu`` offers for device-agnostic code.

The CPU is always there: ``is_available()`` is True, one device, streams and events that
do nothing. ``dynagrad.cpu.amp`` holds PyTorch's deprecated CPU spellings of autocast and
GradScaler (loaded on first use).
"""
import contextlib
import importlib

__all__ = ['is_available', 'is_initialized', 'synchronize', 'current_device', 'current_stream',
           'stream', 'set_device', 'device_count', 'Stream', 'StreamContext', 'Event']


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    """Wait for the CPU's work: it is always done (ops run eagerly)."""


def current_device():
    return 'cpu'


def device_count():
    return 1


def set_device(device):
    """Select a CPU device: there is only one."""


class Stream:
    """A CPU stream: work runs in order anyway."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()


def current_stream(device=None):
    return _default_stream


class StreamContext(contextlib.AbstractContextManager):
    """Select ``stream`` inside the block (nothing to select on the CPU)."""

    def __init__(self, stream):
        self.stream = stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


def __getattr__(name):
    """Load a submodule (``amp``) on first use, as ``import dynagrad.cpu.amp`` would."""
    if not name.startswith('_'):
        try:
            return importlib.import_module(f'{__name__}.{name}')
        except ModuleNotFoundError as e:
            if e.name != f'{__name__}.{name}':
                raise
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
