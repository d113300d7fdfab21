"""``FloatTensor`` and friends: the legacy typed constructors.

``dynagrad.FloatTensor([1, 2])`` copies data, ``dynagrad.FloatTensor(2, 3)`` allocates
a size; ``isinstance(t, dynagrad.FloatTensor)`` checks the dtype, as in PyTorch.
"""
from . import _dtype
from .tensor import Tensor


class _LegacyTypeMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._data.dtype == cls._dtype.numpy

    def __call__(cls, *args, **kwargs):
        return Tensor._from_legacy_args(args, kwargs, cls._dtype, typed=True)

    def __repr__(cls):
        return f"<class 'dynagrad.{cls.__name__}'>"


def _legacy(d):
    return _LegacyTypeMeta(d.legacy_name, (), {'_dtype': d, 'dtype': d})


FloatTensor = _legacy(_dtype.float32)
DoubleTensor = _legacy(_dtype.float64)
HalfTensor = _legacy(_dtype.float16)
BFloat16Tensor = _legacy(_dtype.bfloat16)
LongTensor = _legacy(_dtype.int64)
IntTensor = _legacy(_dtype.int32)
ShortTensor = _legacy(_dtype.int16)
CharTensor = _legacy(_dtype.int8)
ByteTensor = _legacy(_dtype.uint8)
BoolTensor = _legacy(_dtype.bool)
