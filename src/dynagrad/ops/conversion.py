"""Tensor methods that make a tensor of another dtype or from new data: ``to``, ``new_tensor``.

They are ops-level because a dtype change is recorded (``ToCopyBackward0``, through the
``Cast`` op); the Tensor's other conversions (``float()``, ``type()``...) call ``to``.
"""
from .. import _dtype
from ..tensor import Tensor, Device, check_device, method
from .creation import tensor
from .pointwise import Cast

__all__ = []


@method()
def to(self, *args, **kwargs):
    """``to(dtype)``, ``to('cpu')``, ``to(other)``; returns self when nothing changes."""
    dtype = kwargs.get('dtype')
    copy = kwargs.get('copy', False)
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, Device)) or a is None:
            check_device(a)
        else:
            dtype = _dtype.to_dtype(a)
    check_device(kwargs.get('device'))
    if dtype is None or dtype.numpy == self._data.dtype:
        return self.clone() if copy else self
    return Cast.apply(self, dtype=dtype.numpy)


@method()
def new_tensor(self, data, dtype=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)
