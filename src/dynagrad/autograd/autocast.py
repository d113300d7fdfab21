"""Autocast: the state ``dynagrad.amp.autocast`` sets, and the casting of an op's inputs.

Ops declare their category as the class attribute ``autocast`` ('lower': run in the
autocast dtype; 'fp32': run in float32; 'promote': run in the widest floating dtype of the
inputs), read by ``Op.apply``, which calls ``autocast_inputs``; a function whose own checks
or composition need the inputs cast first calls ``autocast_args`` itself. Both cost one flag
test (``autocast_state.active``) while no autocast region is active anywhere.
"""
import threading

import numpy as np

from .. import _dtype
from .._device import DEVICE_ARRAY_TYPES, backend_of
from ..tensor import Tensor
from .device_dispatch import flat_args
from .grad_mode import state as _grad_state

class _AutocastFlag:
    """Process-wide: is autocast enabled on the CPU in any thread? (The hot path's test.)"""
    __slots__ = ('active', 'threads', 'lock')

    def __init__(self):
        self.active = False
        self.threads = 0          # threads with CPU autocast enabled
        self.lock = threading.Lock()


autocast_state = _AutocastFlag()


class _AutocastThreadState(threading.local):
    """Per thread, as in PyTorch: enabled flags and dtypes per device type, the nesting of
    autocast regions and the cache of casted weights."""

    def __init__(self):
        self.enabled = {}         # device type -> bool
        self.dtypes = {}          # device type -> dtype (unset: bfloat16 on the CPU)
        self.nesting = 0
        self.cache_enabled = True
        self.cache = {}           # (id(leaf), dtype) -> (leaf, its cast)


autocast_thread_state = _AutocastThreadState()


def set_cpu_autocast(enabled, device_type='cpu'):
    """Turn autocast for ``device_type`` ('cpu', or 'cuda' when it is registered) on or off
    in this thread, keeping the process-wide flag right."""
    tls = autocast_thread_state
    enabled = bool(enabled)
    if tls.enabled.get(device_type, False) == enabled:
        return
    tls.enabled[device_type] = enabled
    flag = autocast_state
    with flag.lock:
        flag.threads += 1 if enabled else -1
        flag.active = flag.threads > 0


def _eligible(x):
    """A floating tensor autocast may cast: float64 and non-float tensors are left alone."""
    if not isinstance(x, Tensor):
        return False
    d = x._data.dtype
    return d.kind in 'fV' and d.char != 'd'


def _autocast_cast(x, target):
    if not _eligible(x) or x._data.dtype == target.numpy:
        return x
    tls = autocast_thread_state
    # PyTorch caches the lower-precision copy of a float32 leaf that requires grad (a
    # weight) for the rest of the region, so all its uses share one cast node.
    if (tls.cache_enabled and target is not _dtype.float32 and x._requires_grad
            and x._grad_fn is None and x._base is None and x._data.dtype == np.float32
            and _grad_state.grad_enabled):
        key = (id(x), target)
        hit = tls.cache.get(key)
        if hit is not None and hit[0] is x:
            return hit[1]
        y = x.to(target)
        tls.cache[key] = (x, y)
        return y
    return x.to(target)


def _autocast_target(kind, args, device_type):
    lower = autocast_thread_state.dtypes.get(device_type) or (
        _dtype.bfloat16 if device_type == 'cpu' else _dtype.float16)
    if kind == 'lower':
        return lower
    if kind == 'fp32':
        return _dtype.float32
    target = lower   # 'promote'
    for x in flat_args(args):
        if isinstance(x, Tensor) and x._data.dtype.kind in 'fV':
            target = _dtype.promote_types(target, x.dtype)
    return target


def _autocast_device(args):
    """The device type whose autocast region governs an op on ``args``: its tensors'."""
    for x in flat_args(args):
        if isinstance(x, Tensor):
            data = x._data
            if data.__class__ in DEVICE_ARRAY_TYPES:
                return backend_of(data).type
            return 'cpu'
    return 'cpu'


def autocast_args(kind, *args):
    """``args`` cast as an op of autocast category ``kind`` runs them, when CPU autocast is
    enabled in this thread (else unchanged). Lists and tuples of tensors are cast inside."""
    device_type = _autocast_device(args)
    if not autocast_thread_state.enabled.get(device_type, False):
        return args
    target = _autocast_target(kind, args, device_type)
    return tuple(type(x)(_autocast_cast(t, target) for t in x)
                 if x.__class__ is list or x.__class__ is tuple else _autocast_cast(x, target)
                 for x in args)


def autocast_inputs(kind, inputs, params):
    """Op.apply's hook: an op called with an explicit ``dtype=`` is not eligible."""
    if params.get('dtype') is not None:
        return inputs
    return autocast_args(kind, *inputs)


def clear_autocast_cache():
    autocast_thread_state.cache.clear()

