"""Devices: ``dynagrad.device``, the device types' backends, and the default device.

A device type is a dispatch point. The backend registered for a type owns the array
namespace its tensors' arrays come from and the conversion that moves an array onto it;
factories allocate through it, ``Tensor.to`` moves through it and ``Tensor.device`` reads
the owner of a tensor's array from it. Only the CPU (NumPy, through the array door
``dynagrad.backend.xp``) is registered here; 'meta' (shapes without data,
``dynagrad._meta``) registers the first time it is asked for. A GPU backend registers its type ('cuda')
with ``register_backend`` (``dynagrad.cuda`` registers CuPy's, lazily, the first time
'cuda' is asked for) and every factory, ``to`` and ``Tensor.device`` reach it. Ops keep
calling ``xp``: while an op runs on device tensors the op mechanism points the door at
the device's library (``dynagrad.autograd.device_dispatch``), which it installs only
once a non-CPU backend is registered, so programs that never leave the CPU pay nothing.

Asking for a type nothing is registered for raises what PyTorch raises on a machine
without that device (``AssertionError: ... not compiled with CUDA enabled``), at the
call: nothing ever lands on the CPU in its place.
"""
import operator
import re
import threading

import numpy

from .backend import xp

__all__ = ['device', 'DeviceBackend', 'register_backend', 'backend_for', 'backend_of',
           'check_device', 'resolve', 'as_device', 'device_of_type', 'set_default_device',
           'get_default_device', 'default_device_set', 'current_accelerator', 'unavailable_error',
           'no_accelerator_error', 'unregister_backend', 'DEVICE_TYPES', 'CPU', 'CPU_BACKEND',
           'DEVICE_ARRAY_TYPES', 'register_lazy', 'on_backends_changed', 'accelerators',
           'mixed_devices_error', 'registered_types', 'backend_for_or_none', 'is_any_array']

# Every type PyTorch's device strings may start with, in the order its error lists them.
DEVICE_TYPES = ('cpu', 'cuda', 'ipu', 'xpu', 'mkldnn', 'opengl', 'opencl', 'ideep', 'hip',
                've', 'fpga', 'maia', 'xla', 'lazy', 'vulkan', 'mps', 'meta', 'hpu', 'mtia',
                'privateuseone')

# PyTorch's numbering of the types (c10's DeviceType): a device hashes as PyTorch's does.
_TYPE_CODES = {'cpu': 0, 'cuda': 1, 'mkldnn': 2, 'opengl': 3, 'opencl': 4, 'ideep': 5,
               'hip': 6, 'fpga': 7, 'maia': 8, 'xla': 9, 'vulkan': 10, 'xpu': 12, 'mps': 13,
               'meta': 14, 'hpu': 15, 've': 16, 'lazy': 17, 'ipu': 18, 'mtia': 19,
               'privateuseone': 20}

_DEVICE_STRING = re.compile(r'([a-zA-Z_]+)(?::([1-9][0-9]*|0))?')


class device:
    """Where a tensor's data lives: a type ('cpu', 'cuda', ...) and an optional index.

    ``device('cuda:1')``, ``device('cuda', 1)``, ``device(type='cuda', index=1)`` and
    ``device(other_device)`` build the same device; ``device(1)`` means index 1 of the
    current accelerator, so it raises when there is none. Naming a device never checks
    that it exists (PyTorch's doesn't either); using it for a tensor does.

    As a context manager it is the default device of the factories inside the block.
    """
    __slots__ = ('_type', '_index')

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not "
                                'dynagrad.device')
            return type
        explicit = index is not None
        if explicit:
            if isinstance(index, (bool, numpy.bool_)):
                raise TypeError("device(): argument 'index' (position 2) must be int, not bool")
            try:
                index = operator.index(index)
            except TypeError:
                raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                                f'{_type_name(index)}') from None
            if index < 0:
                raise RuntimeError('Device index must not be negative')
        else:
            index = None
        if isinstance(type, bytes):
            type = type.decode()
        if isinstance(type, str):
            parsed = _parse(type)
            if explicit:
                if parsed._index is not None:
                    raise RuntimeError('type (string) must not include an index because '
                                       f'index was passed explicitly: {type}')
                return _make(parsed._type, index)
            return parsed
        if isinstance(type, (int, numpy.integer)) and not isinstance(type, (bool, numpy.bool_)):
            if index is not None:
                raise TypeError('device() received an invalid combination of arguments - got '
                                '(int, int), but expected one of:\n * (dynagrad.device device)\n'
                                ' * (str type, int index = -1)')
            return _accelerator_device(int(type))
        raise TypeError(f'device() received an invalid combination of arguments - got '
                        f'({_type_name(type)}), but expected one of:\n'
                        ' * (dynagrad.device device)\n * (str type, int index = -1)')

    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __eq__(self, other):
        if other.__class__ is not device:
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __ne__(self, other):
        if other.__class__ is not device:
            return NotImplemented
        return self._type != other._type or self._index != other._index

    def __hash__(self):
        index = -1 if self._index is None else self._index
        return (_TYPE_CODES[self._type] << 16) | (index & 0xFF)

    def __str__(self):
        return self._type if self._index is None else f'{self._type}:{self._index}'

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self):
        return (device, (self._type,) if self._index is None else (self._type, self._index))

    def __enter__(self):
        _default.stack = _default.stack + (self,)
        return self

    def __exit__(self, *exc):
        _default.stack = _default.stack[:-1]
        return False


device.__module__ = 'dynagrad'
_new_device = object.__new__


def _make(type, index):
    d = _new_device(device)
    d._type = type
    d._index = index
    return d


def _type_name(value):
    cls = value.__class__
    return cls.__name__ if cls.__module__ == 'builtins' else f'{cls.__module__}.{cls.__name__}'


_parsed = {}     # device string -> device: strings repeat ('cpu', 'cuda') and devices are immutable


def _parse(text):
    d = _parsed.get(text)
    if d is not None:
        return d
    if not text:
        raise RuntimeError('Device string must not be empty')
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f'Invalid device string: {text!r}')
    kind, index = match.groups()
    if kind not in _TYPE_CODES:
        raise RuntimeError(f'Expected one of {", ".join(DEVICE_TYPES)} device type at start of '
                           f'device string: {text}')
    d = _parsed[text] = _make(kind, None if index is None else int(index))
    return d


# -- backends -------------------------------------------------------------------------------

class DeviceBackend:
    """What one device type brings: the namespace its arrays come from, the array classes
    that live on it, and how an array from elsewhere gets onto it.

    ``xp`` has NumPy's API (``xp.zeros``, ``xp.full``, ...); ``asarray(array)`` returns
    ``array`` on this device (a copy when it was elsewhere); ``device`` is what
    ``Tensor.device`` reports for tensors on it; ``device_count()`` how many there are;
    ``special``, when not None, has ``scipy.special``'s API for its arrays (CuPy's is
    ``cupyx.scipy.special``; the CPU's, SciPy itself, is imported by the ops that use it).
    """
    __slots__ = ('type', 'xp', 'array_types', 'asarray', 'device', 'device_count', 'special')

    def __init__(self, type, xp, array_types, asarray, device_count=lambda: 1, special=None):
        self.type = type
        self.xp = xp
        self.array_types = tuple(array_types)
        self.asarray = asarray
        self.device = _make(type, None if type == 'cpu' else 0)
        self.device_count = device_count
        self.special = special

    def __repr__(self):
        return f'<device backend {self.type!r}: {self.xp!r}>'


def _to_numpy(array):
    """An array from any library as a NumPy array (copied off its device when needed)."""
    refuse = getattr(array, 'refuse_read', None)    # a meta array: no values to bring
    if refuse is not None:
        refuse()
    get = getattr(array, 'get', None)     # CuPy's way home
    return numpy.asarray(get() if callable(get) and not isinstance(array, numpy.ndarray)
                         else array)


_backends = {}
_by_array_type = {}
# The array classes of every registered non-CPU backend. One set object, changed in place,
# so the op mechanism tells a device array from a number by one membership test.
DEVICE_ARRAY_TYPES = set()
# device type -> a function returning its backend, or None when its library or hardware is
# missing (tried once, on the first request for that type)
_lazy = {}
_listeners = []


def register_backend(backend):
    """Make ``backend.type`` usable as a device: factories, ``to`` and ``Tensor.device``
    find it from then on. The CPU's cannot be replaced (point ``dynagrad.backend.xp``
    elsewhere for that)."""
    if not isinstance(backend, DeviceBackend):
        raise TypeError(f'register_backend expects a DeviceBackend, got {_type_name(backend)}')
    if backend.type not in _TYPE_CODES:
        raise ValueError(f'unknown device type {backend.type!r}; use one of '
                         f'{", ".join(DEVICE_TYPES)}')
    if backend.type == 'cpu' and 'cpu' in _backends:
        raise ValueError('the CPU backend is built in; point dynagrad.backend.xp elsewhere '
                         'with dynagrad.backend.array_namespace instead')
    _backends[backend.type] = backend
    _changed()


def unregister_backend(type):
    """Undo ``register_backend`` (tests, or a backend that failed to initialise)."""
    if type == 'cpu':
        raise ValueError('the CPU backend cannot be removed')
    _backends.pop(type, None)
    _changed()


def _changed():
    _by_array_type.clear()
    DEVICE_ARRAY_TYPES.clear()
    for backend in accelerators():
        DEVICE_ARRAY_TYPES.update(backend.array_types)
    for listener in _listeners:
        listener()


def registered_types():
    """The device types with a backend registered now (lazy ones not yet loaded aside)."""
    return tuple(_backends)


def accelerators():
    """The registered backends other than the CPU's."""
    return [b for b in _backends.values() if b.type != 'cpu']


def on_backends_changed(listener):
    """Call ``listener()`` whenever a backend is registered or removed (the op mechanism
    installs its device dispatch then)."""
    _listeners.append(listener)


def is_any_array(value):
    """Whether ``value`` is an array of NumPy or of a registered device's library (CuPy's
    arrays are not NumPy's), as opposed to a number or a NumPy scalar."""
    cls = value.__class__
    return cls is numpy.ndarray or cls in DEVICE_ARRAY_TYPES or isinstance(value,
                                                                            numpy.ndarray)


def register_lazy(type, load):
    """Let ``load()`` make the backend of ``type`` the first time that type is asked for
    (``load`` returns the backend, or None when the device is missing: then the type stays
    unavailable and is not tried again)."""
    _lazy[type] = load


def _load_lazy(type):
    load = _lazy.pop(type, None)
    if load is None:
        return None
    backend = load()
    if backend is not None:
        register_backend(backend)
    return backend


CPU_BACKEND = DeviceBackend('cpu', xp, (numpy.ndarray, numpy.generic), _to_numpy)
register_backend(CPU_BACKEND)
CPU = CPU_BACKEND.device


def _load_meta():
    from . import _meta
    return _meta.load()


register_lazy('meta', _load_meta)


def unavailable_error(type):
    """The exception PyTorch raises for a device type its build lacks, naming dynagrad."""
    check = {'cuda': 'cuda', 'mps': 'backends.mps'}.get(type, 'accelerator')
    hint = (f'; dynagrad computes on the CPU with NumPy (choose the device with '
            f"dynagrad.{check}.is_available(), or use 'cpu')")
    if type in ('cuda', 'xpu', 'mtia'):
        return AssertionError(f'dynagrad not compiled with {type.upper()} enabled{hint}')
    return RuntimeError(f'dynagrad is not linked with support for {type} devices{hint}')


def mixed_devices_error(first, second):
    """PyTorch's error for an op given tensors on two devices (named in the order met)."""
    return RuntimeError(f'Expected all tensors to be on the same device, but found at least '
                        f'two devices, {first} and {second}!')


def no_accelerator_error():
    return RuntimeError('Cannot access accelerator device when none is available.')


def backend_for(dev):
    """The backend of device ``dev`` (a ``device``), or the error PyTorch gives without it."""
    backend = _backends.get(dev._type)
    if backend is None:
        backend = _load_lazy(dev._type)
        if backend is None:
            raise unavailable_error(dev._type)
    return backend


def backend_for_or_none(type):
    """The backend registered for device type ``type`` now, or None (nothing is loaded)."""
    return _backends.get(type)


def backend_of(array):
    """The backend that owns ``array`` (the CPU for NumPy arrays and anything unknown)."""
    cls = array.__class__
    backend = _by_array_type.get(cls)
    if backend is None:
        backend = CPU_BACKEND
        for candidate in _backends.values():
            if candidate is not CPU_BACKEND and isinstance(array, candidate.array_types):
                backend = candidate
                break
        _by_array_type[cls] = backend
    return backend


def current_accelerator():
    """The device type of the registered accelerator (anything but the CPU), or None."""
    for type in list(_lazy):
        if type != 'meta':      # not an accelerator; loading it would slow every op
            _load_lazy(type)
    for backend in _backends.values():
        if backend is not CPU_BACKEND and backend.device_count() > 0:
            return _make(backend.type, None)
    return None


def _accelerator_device(index):
    if index < 0:
        raise RuntimeError('Device index must not be negative')
    accelerator = current_accelerator()
    if accelerator is None:
        raise no_accelerator_error()
    return _make(accelerator._type, index)


def device_of_type(kind, dev):
    """``Tensor.cuda(dev)`` and friends: ``dev`` (None, an index, a string or a device) as a
    device of type ``kind``."""
    if dev is None:
        return _parse(kind)
    if isinstance(dev, int) and not isinstance(dev, bool):
        return device(dev)      # an index of the current accelerator, as in PyTorch
    dev = as_device(dev)
    if dev._type != kind:
        raise RuntimeError(f'Invalid device, must be {kind} device')
    return dev


def as_device(value):
    """``value`` (a device, a device string, an int) as a ``device``; None stays None."""
    if value is None or value.__class__ is device:
        return value
    if isinstance(value, str):
        return _parse(value)
    if isinstance(value, (bytes, int, numpy.integer)) and not isinstance(value, bool):
        return device(value)
    raise TypeError(f"argument 'device' must be dynagrad.device, not {_type_name(value)}")


# -- the default device -------------------------------------------------------------------

class _DefaultDevice(threading.local):
    """The factories' default device, per thread as in PyTorch: what ``set_default_device``
    set, unless a ``with device(...)`` block is open (the innermost one wins)."""
    chosen = None
    stack = ()


_default = _DefaultDevice()


def set_default_device(device):
    """Make factories without ``device=`` allocate on ``device`` in this thread (None: the
    CPU again). Naming an unavailable device is accepted; using it raises, as in PyTorch."""
    _default.chosen = as_device(device)


def _current_default():
    stack = _default.stack
    return stack[-1] if stack else _default.chosen


def default_device_set():
    """Whether factories have a default device other than the CPU's implicit one (then it
    wins even over the device of a tensor passed as data, as in PyTorch)."""
    return _default.chosen is not None or bool(_default.stack)


def get_default_device():
    """The device factories allocate on when given none (an unavailable one raises here)."""
    dev = _current_default()
    if dev is None:
        return CPU
    backend = backend_for(dev)
    if dev._index is None and backend is not CPU_BACKEND:
        return backend.device
    return dev


def resolve(dev=None):
    """The backend that a factory asked for ``device=dev`` allocates with: ``dev``'s (a
    device, string or int), else the default device's. Raises for an unavailable device."""
    if dev is None:
        if _default.chosen is None and not _default.stack:
            return CPU_BACKEND
        dev = _current_default()
    elif dev.__class__ is not device:
        dev = as_device(dev)
    if dev._type == 'cpu':
        return CPU_BACKEND
    return backend_for(dev)


def check_device(device=None):
    """Raise PyTorch's error unless ``device`` (None: the default device) is usable;
    return its backend."""
    return resolve(device)
