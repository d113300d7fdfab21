"""Ops on device tensors: the array door points at the device's library while they run.

Op code computes through the one array door (``dynagrad.backend.xp``) and never names a
device. When the tensors an op is given live on a device other than the CPU (their arrays
are CuPy's, say), this module points the door at that device's library for the op's
forward, and the backward engine does the same for each node whose gradients are device
arrays, so ``xp.zeros``, ``xp.asarray`` and friends inside an op allocate where its
inputs are. It also checks what PyTorch checks at every op: all tensors on one device
(a 0-dim CPU tensor may join a device op, as in PyTorch; it is copied over, recorded).

None of this runs for CPU-only programs: the op mechanism reaches ``dispatch`` through
the flag it already tests for vmap and the compiler (``batched.state.active``), which is
raised here only while a non-CPU backend is registered (``install``), and the engine asks
for ``backward_runner()`` once per backward pass.

The door is one object for the whole process, so a device op switches it for every
thread while it runs: a CPU op running at that moment in another thread computes with the
device's library. dynagrad's own threads (DataLoader workers are processes) never do.
"""
import functools

import numpy

from .. import _device
from .._device import DEVICE_ARRAY_TYPES, backend_of, mixed_devices_error
from ..backend import xp
from ..tensor import Tensor

__all__ = ['dispatch', 'dispatch_inplace', 'backward_runner', 'as_array', 'is_data_array',
           'install', 'call', 'current_device_type', 'device_function', 'flat_args']

_ndarray = numpy.ndarray


def _door_module():
    return xp.__dict__['_module']


def is_data_array(value):
    """Whether ``value`` is an array of some device (not a number, a NumPy scalar, None)."""
    return (value.__class__ is _ndarray
            or value.__class__ in DEVICE_ARRAY_TYPES)


def as_array(value):
    """A forward's or backward's result as an array of its device: device arrays as they
    are, NumPy scalars (what NumPy's reductions return) as 0-d arrays of the door's
    library."""
    if value.__class__ in DEVICE_ARRAY_TYPES:
        return value
    return xp.asarray(value)


def current_device_type():
    """The device type the running code computes on: that whose library the door points
    at ('cuda' inside a device op), else 'cpu'."""
    module = _door_module()
    for backend in _device.accelerators():
        if backend.xp is module:
            return backend.type
    return 'cpu'


def _device_of_inputs(inputs):
    """The backend the op runs on: that of its tensors, or None when they are all on the
    CPU. Raises PyTorch's error for tensors on two devices; a 0-dim CPU tensor goes with
    any device (PyTorch treats it as a number there)."""
    found = None
    cpu_seen = None
    for x in inputs:
        if isinstance(x, Tensor):
            data = x._data
            cls = data.__class__
            if cls in DEVICE_ARRAY_TYPES:
                backend = backend_of(data)
                if found is None:
                    if cpu_seen is not None:
                        raise mixed_devices_error(cpu_seen, backend.device)
                    found = backend
                elif backend is not found:
                    raise mixed_devices_error(found.device, backend.device)
            elif cpu_seen is None and getattr(data, 'ndim', 0) != 0:
                if found is not None:
                    raise mixed_devices_error(found.device, _device.CPU)
                cpu_seen = _device.CPU
    return found


def _onto(backend, inputs):
    """The inputs with every CPU tensor (the 0-dim ones that passed the check) copied to
    ``backend``'s device, the copy recorded so a gradient goes back to the CPU, and every
    host array an op's wrapper passed beside the tensors (a constant) copied too."""
    from .device_copy import ToDevice
    moved = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            if x._data.__class__ not in DEVICE_ARRAY_TYPES:
                if moved is None:
                    moved = list(inputs)
                moved[i] = ToDevice.apply(x, target=backend)
        elif x.__class__ is _ndarray:
            if moved is None:
                moved = list(inputs)
            moved[i] = backend.asarray(x)
    return inputs if moved is None else tuple(moved)


def _params_onto(backend, params):
    """The op's parameters with the host arrays in them (index arrays an op's Python
    wrapper built from lists, before the door pointed at the device) copied to the
    device: a device library refuses to mix them with its own arrays."""
    moved = None
    for name, value in params.items():
        new = _value_onto(backend, value)
        if new is not value:
            if moved is None:
                moved = dict(params)
            moved[name] = new
    return params if moved is None else moved


def _value_onto(backend, value):
    cls = value.__class__
    if cls is _ndarray:
        return backend.asarray(value)
    if cls is tuple or cls is list:
        items = [_value_onto(backend, v) for v in value]
        if any(a is not b for a, b in zip(items, value)):
            return cls(items)
        return value
    move = getattr(value, 'on_device', None)    # a parameter object holding arrays
    if move is not None and not isinstance(value, type):
        return move(lambda v: _value_onto(backend, v))
    return value


def _run_on(backend, run):
    previous = _door_module()
    xp._use(backend.xp)
    try:
        return run()
    finally:
        xp._use(previous)


class _Bypass:
    """Set while ``dispatch`` runs the op itself: the op's own call of ``dispatch`` (the
    first thing ``Op.apply`` does) then lets it through, once."""
    on = False


_bypass = _Bypass()


def _apply(run):
    _bypass.on = True
    try:
        return run()
    finally:
        _bypass.on = False


def dispatch(cls, inputs, params):
    """``cls.apply(*inputs, **params)`` with the door on the inputs' device (0-dim CPU
    tensors and host index arrays in the parameters copied over first); NotImplemented
    when they are on the CPU (the op then runs as usual)."""
    if _bypass.on:
        _bypass.on = False
        return NotImplemented
    backend = _device_of_inputs(inputs)
    if backend is None:
        return NotImplemented
    moved = _onto(backend, inputs)
    moved_params = _params_onto(backend, params) if params else params
    if _door_module() is backend.xp:      # inside a device op or function already
        out = _apply(lambda: cls.apply(*moved, **moved_params))
    else:
        out = _run_on(backend, lambda: _apply(lambda: cls.apply(*moved, **moved_params)))
    _fit_broadcast(cls, moved, out)
    return out


def dispatch_inplace(cls, target, others, params):
    if _bypass.on:
        _bypass.on = False
        return NotImplemented
    backend = _device_of_inputs((target,) + tuple(others))
    if backend is None:
        return NotImplemented
    moved = _onto(backend, others)
    moved_params = _params_onto(backend, params) if params else params
    if _door_module() is backend.xp:
        return _apply(lambda: cls.apply_(target, *moved, **moved_params))
    return _run_on(backend, lambda: _apply(lambda: cls.apply_(target, *moved, **moved_params)))


def call(fn, args, kwargs, tensors=None):
    """A function that computes on its tensors' arrays itself (not through an op: index
    lookups, statistics, ``nonzero``, an optimizer's step...) run with the door on their
    device: that of the first device tensor among ``args`` and ``kwargs`` (or among
    ``tensors`` when given)."""
    backend = None
    for values in ((tensors,) if tensors is not None else (args, kwargs.values())):
        for a in flat_args(values):
            if isinstance(a, Tensor) and a._data.__class__ in DEVICE_ARRAY_TYPES:
                backend = backend_of(a._data)
                break
        if backend is not None:
            break
    # (no device check here: a CPU index tensor may index a device tensor, as in PyTorch;
    # the ops the function runs check what they are given)
    if backend is None or _door_module() is backend.xp:
        return fn(*args, **kwargs)
    return _run_on(backend, lambda: fn(*args, **kwargs))


def device_function(fn):
    """For a function that computes on its tensors' arrays itself (through ``xp``, not
    an op): run it with the door on their device when it is not the CPU (``call``). Costs
    the function one flag test while only the CPU is registered."""
    from . import batched
    state = batched.state

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if state.devices:
            return call(fn, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


def flat_args(values):
    """The values, with those in lists and tuples (one level down) in their place."""
    for v in values:
        if v.__class__ is list or v.__class__ is tuple:
            yield from v
        else:
            yield v


def _fit_broadcast(cls, inputs, out):
    """The op mechanism's fast path notes which inputs were broadcast (so their gradients
    are summed back to their shapes) by testing for NumPy's array class alone; for device
    arrays that note is taken here, after the op."""
    if out.__class__ is tuple or not isinstance(out, Tensor) or len(inputs) < 2:
        return
    node = out._grad_fn
    if node is None or node._input_meta is not None or not isinstance(node, cls):
        return
    shape = out._data.shape
    for x in inputs:
        if isinstance(x, Tensor) and x._data.shape != shape:
            node._input_meta = tuple((t._data.shape, t._data.dtype)
                                     if isinstance(t, Tensor) else None for t in inputs)
            return


# -- backward ----------------------------------------------------------------------------

def backward_runner():
    """What the engine calls to run a node in this pass: None while only the CPU is
    registered (it then calls the node itself), else ``run_node``."""
    return run_node if DEVICE_ARRAY_TYPES else None


def run_node(node, grads, create_graph, run):
    """``run(node, grads, create_graph)`` with the door on the device of the node's
    gradients."""
    for g in grads:
        if g is not None:
            data = g._data if isinstance(g, Tensor) else g
            if data.__class__ in DEVICE_ARRAY_TYPES:
                backend = backend_of(data)
                if _door_module() is not backend.xp:
                    return _run_on(backend, lambda: run(node, grads, create_graph))
            break
    return run(node, grads, create_graph)


def install():
    """Route ops through ``dispatch`` while a non-CPU backend is registered (called by the
    device registry whenever a backend comes or goes)."""
    from . import batched
    batched.set_device_dispatch(bool(DEVICE_ARRAY_TYPES))


_device.on_backends_changed(install)
