"""dtypes as PyTorch names them, backed by NumPy dtypes, and PyTorch's type promotion."""
import numpy as np

__all__ = ['dtype', 'float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64',
           'uint8', 'bool', 'half', 'float', 'double', 'short', 'int', 'long',
           'get_default_dtype', 'set_default_dtype', 'promote_types', 'result_type']

# Categories order the kinds the way PyTorch promotes across them.
_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    __slots__ = ('name', 'numpy', 'category', 'itemsize', 'legacy_name')

    def __init__(self, name, numpy_dtype, category, legacy_name):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.category = category
        self.itemsize = self.numpy.itemsize
        self.legacy_name = legacy_name

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_signed(self):
        return self.name not in ('uint8', 'bool')

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return 'dynagrad.' + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = half = dtype('float16', np.float16, _FLOAT, 'HalfTensor')
float32 = float = dtype('float32', np.float32, _FLOAT, 'FloatTensor')
float64 = double = dtype('float64', np.float64, _FLOAT, 'DoubleTensor')
int8 = dtype('int8', np.int8, _INT, 'CharTensor')
int16 = short = dtype('int16', np.int16, _INT, 'ShortTensor')
int32 = int = dtype('int32', np.int32, _INT, 'IntTensor')
int64 = long = dtype('int64', np.int64, _INT, 'LongTensor')
uint8 = dtype('uint8', np.uint8, _INT, 'ByteTensor')
bool = dtype('bool', np.bool_, _BOOL, 'BoolTensor')

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool)
FROM_NUMPY = {d.numpy: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def _by_name(name):
    return _BY_NAME[name]


_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    d = to_dtype(d)
    if d.category != _FLOAT:
        raise TypeError(f'only floating-point types are supported as the default type, got {d}')
    _default_float = d


def to_dtype(d):
    """Accept a dynagrad dtype, a NumPy dtype or type, or a Python type."""
    if d.__class__ is dtype:
        return d
    if d is builtins_float:
        return _default_float
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    legacy = getattr(d, '_dtype', None)  # FloatTensor and the other legacy type classes
    if legacy.__class__ is dtype:
        return legacy
    try:
        return FROM_NUMPY[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f'dynagrad has no dtype for {d!r}; use one of '
                        + ', '.join(repr(x) for x in ALL)) from None


def from_numpy_dtype(np_dtype):
    try:
        return FROM_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported "
                        'types are: float64, float32, float16, int64, int32, int16, int8, uint8, '
                        'and bool.') from None


import builtins as _builtins  # noqa: E402  (the names float/int/bool are dtypes in this module)
builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool


def promote_types(a, b):
    """PyTorch's promotion of two dtypes: the higher category wins; within one, NumPy's rule."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return FROM_NUMPY[np.promote_types(a.numpy, b.numpy)]


def scalar_category(x):
    if x.__class__ is builtins_bool or isinstance(x, np.bool_):
        return _BOOL
    if isinstance(x, (builtins_int, np.integer)):
        return _INT
    return _FLOAT


_CATEGORY_DEFAULT = {_BOOL: bool, _INT: int64}


def result_type(*operands):
    """The dtype PyTorch gives an op over tensors and Python scalars.

    Three priority levels: tensors with dimensions, zero-dim tensors, then Python
    scalars. A lower level only matters when it brings a higher category.
    """
    dim_t = zero_t = None
    scalar_cat = -1
    for x in operands:
        data = getattr(x, '_data', None)
        if data is None:
            scalar_cat = max(scalar_cat, scalar_category(x))
            continue
        d = FROM_NUMPY[data.dtype]
        if data.ndim:
            dim_t = d if dim_t is None else promote_types(dim_t, d)
        else:
            zero_t = d if zero_t is None else promote_types(zero_t, d)
    result = dim_t
    if zero_t is not None:
        if result is None or zero_t.category > result.category:
            result = zero_t
    if scalar_cat >= 0 and (result is None or scalar_cat > result.category):
        result = _default_float if scalar_cat == _FLOAT else _CATEGORY_DEFAULT[scalar_cat]
    return result
