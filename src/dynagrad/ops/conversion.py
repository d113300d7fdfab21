"""Tensor methods that make a tensor of another dtype, on another device or from new data:
``to``, ``new_tensor``.

They are ops-level because a conversion is recorded (``ToCopyBackward0``: the ``Cast`` op
for a dtype, ``ToDevice`` for a device); the Tensor's other conversions (``float()``,
``type()``, ``cpu()``, ``cuda()``...) call ``to``.
"""
from .. import _dtype
from .._device import as_device, backend_of, device, resolve
from ..autograd.device_copy import ToDevice
from ..tensor import Tensor, method
from .creation import tensor
from .pointwise import Cast

__all__ = ['parse_to']

_builtin_float = float

_TO_KEYWORDS = frozenset(('device', 'dtype', 'non_blocking', 'copy', 'memory_format', 'tensor'))
_TO_SIGNATURES = (
    ' * (dynagrad.device device = None, dynagrad.dtype dtype = None, bool non_blocking = False, '
    'bool copy = False, *, dynagrad.memory_format memory_format = None)\n'
    ' * (dynagrad.dtype dtype, bool non_blocking = False, bool copy = False, *, '
    'dynagrad.memory_format memory_format = None)\n'
    ' * (Tensor tensor, bool non_blocking = False, bool copy = False, *, '
    'dynagrad.memory_format memory_format = None)\n')


def _kind(value):
    cls = value.__class__
    if isinstance(value, Tensor):
        return 'Tensor'
    if cls is _dtype.dtype:
        return 'dynagrad.dtype'
    if cls is device:
        return 'dynagrad.device'
    return cls.__name__ if cls.__module__ == 'builtins' else f'{cls.__module__}.{cls.__name__}'


def _invalid(fn, args, kwargs):
    got = ', '.join([_kind(a) for a in args] + [f'{k}={_kind(v)}' for k, v in kwargs.items()])
    if kwargs and not args:
        got += ', '          # PyTorch's spelling of a keyword-only call
    return TypeError(f'{fn}() received an invalid combination of arguments - got ({got}), but '
                     f'expected one of:\n{_TO_SIGNATURES}')


def _is_device_like(value):
    return (value is None or value.__class__ is device or isinstance(value, (str, bytes))
            or (isinstance(value, int) and not isinstance(value, bool)))


def _as_dtype(value, fn, args, kwargs):
    if value is None or value.__class__ is _dtype.dtype:
        return value
    if value is _builtin_float:      # Python's float is double precision to PyTorch
        return _dtype.float64
    if isinstance(value, (str, bytes, Tensor)) or _is_device_like(value):
        raise _invalid(fn, args, kwargs)
    return _dtype.to_dtype(value)


def parse_to(args, kwargs, fn='to'):
    """PyTorch's three forms of ``to``, as ``(device, dtype, non_blocking, copy)``:
    ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` and
    ``to(tensor, non_blocking=False, copy=False)`` (that tensor's device and dtype), each
    with ``memory_format=`` (accepted: arrays here are always contiguous as made).
    ``device`` comes back as a ``dynagrad.device`` (not checked for availability) or None.
    """
    if kwargs.keys() - _TO_KEYWORDS:
        raise _invalid(fn, args, kwargs)
    if len(args) > 4:
        raise TypeError(f'{fn}() takes from 0 to 4 positional arguments but {len(args)} were '
                        'given')
    dev, dtype, other = kwargs.get('device'), kwargs.get('dtype'), kwargs.get('tensor')
    flags = args
    if args:
        first = args[0]
        if isinstance(first, Tensor):
            if other is not None or 'device' in kwargs or 'dtype' in kwargs or len(args) > 3:
                raise _invalid(fn, args, kwargs)
            other, flags = first, args[1:]
        elif _is_device_like(first):
            if 'device' in kwargs or other is not None:
                raise _invalid(fn, args, kwargs)
            dev, flags = first, args[1:]
            if flags:
                if 'dtype' in kwargs:
                    raise _invalid(fn, args, kwargs)
                dtype, flags = flags[0], flags[1:]
        else:
            if 'device' in kwargs or 'dtype' in kwargs or other is not None or len(args) > 3:
                raise _invalid(fn, args, kwargs)
            dtype, flags = first, args[1:]
    elif other is not None and ('device' in kwargs or 'dtype' in kwargs):
        raise _invalid(fn, args, kwargs)
    non_blocking = flags[0] if flags else kwargs.get('non_blocking', False)
    copy = flags[1] if len(flags) > 1 else kwargs.get('copy', False)
    if not (isinstance(non_blocking, bool) and isinstance(copy, bool)):
        raise _invalid(fn, args, kwargs)
    if other is not None:
        if not isinstance(other, Tensor):
            raise _invalid(fn, args, kwargs)
        return other.device, other.dtype, non_blocking, copy
    if not _is_device_like(dev):
        raise _invalid(fn, args, kwargs)
    return as_device(dev), _as_dtype(dtype, fn, args, kwargs), non_blocking, copy


@method()
def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; returns self
    when nothing changes (unless ``copy=True``). An unavailable device raises here."""
    cls = args[0].__class__ if len(args) == 1 and not kwargs else None
    if cls is _dtype.dtype:             # the common cases, kept fast: to(dtype), to(device)
        dev, dtype, copy = None, args[0], False
    elif cls is device or cls is str:
        dev, dtype, copy = as_device(args[0]), None, False
    else:
        dev, dtype, _, copy = parse_to(args, kwargs)
    source = backend_of(self._data)
    target = source if dev is None else resolve(dev)
    if target is not source:
        out = self if dtype is None else Cast.apply(self, dtype=dtype.numpy)
        return ToDevice.apply(out, target=target)
    if dtype is not None and dtype.numpy != self._data.dtype:
        return Cast.apply(self, dtype=dtype.numpy)
    if dev is not None and dev.index is None and dev.type == source.type:
        dev = source.device         # 'cuda' names the current device, which holds it
    if copy or (dev is not None and dev != source.device):
        # a copy, recorded as PyTorch records it (also for 'cpu:1', which it never aliases)
        return Cast.apply(self, dtype=self._data.dtype)
    return self


@method()
def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    """A tensor holding a copy of ``data``, with this tensor's dtype and device unless
    given."""
    return tensor(data, dtype=dtype or self.dtype,
                  device=backend_of(self._data).device if device is None else device,
                  requires_grad=requires_grad)
