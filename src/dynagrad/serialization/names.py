"""PyTorch's names for what a checkpoint holds, shared by the writer and the readers."""
from .. import _dtype

# The typed storage class PyTorch pickles for each dtype it has one for; a dtype without
# one is pickled as an untyped storage plus the dtype (``_rebuild_tensor_v3``).
STORAGE_CLASSES = {
    'float16': 'HalfStorage', 'bfloat16': 'BFloat16Storage', 'float32': 'FloatStorage',
    'float64': 'DoubleStorage', 'complex64': 'ComplexFloatStorage',
    'complex128': 'ComplexDoubleStorage',
    'int8': 'CharStorage', 'int16': 'ShortStorage', 'int32': 'IntStorage',
    'int64': 'LongStorage', 'uint8': 'ByteStorage', 'bool': 'BoolStorage',
    'qint8': 'QInt8Storage', 'quint8': 'QUInt8Storage', 'qint32': 'QInt32Storage',
    'quint4x2': 'QUInt4x2Storage', 'quint2x4': 'QUInt2x4Storage',
}
DTYPE_OF_STORAGE = {v: k for k, v in STORAGE_CLASSES.items()}

# Every dtype name PyTorch 2.13 pickles as ``torch.<name>`` (its weights-only allowlist).
TORCH_DTYPES = (
    'float16', 'bfloat16', 'float32', 'float64', 'complex32', 'complex64', 'complex128',
    'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool',
    'qint8', 'quint8', 'qint32', 'quint4x2', 'quint2x4', 'float8_e5m2', 'float8_e4m3fn',
    'float8_e5m2fnuz', 'float8_e4m3fnuz', 'float8_e8m0fnu', 'float4_e2m1fn_x2', 'bits8',
    'bits16', 'bits1x8', 'bits2x4', 'bits4x2', 'int1', 'int2', 'int3', 'int4', 'int5', 'int6',
    'int7', 'uint1', 'uint2', 'uint3', 'uint4', 'uint5', 'uint6', 'uint7',
)


def dynagrad_dtypes():
    """name -> dynagrad dtype, for the dtypes this dynagrad has (bfloat16 joins by itself
    once ``dynagrad._dtype`` defines it)."""
    return {d.name: d for d in _dtype.ALL}


class TorchName:
    """Stands for the global ``module.name`` in a pickle being written: the pickler writes
    its GLOBAL opcode without importing ``module`` (which is torch's)."""
    __slots__ = ('module', 'name')
    _interned = {}

    def __new__(cls, module, name):
        key = (module, name)
        obj = cls._interned.get(key)
        if obj is None:
            obj = object.__new__(cls)
            obj.module, obj.name = module, name
            cls._interned[key] = obj
        return obj

    def __repr__(self):
        return f'{self.module}.{self.name}'

    def __call__(self, *args, **kwargs):     # the pickler wants a reduce's function callable
        raise TypeError(f'{self!r} is a name written by dynagrad.save, not the function')

    def __reduce__(self):
        raise TypeError(f'{self!r} is only written by dynagrad.save\'s pickler')


REBUILD_TENSOR_V2 = TorchName('torch._utils', '_rebuild_tensor_v2')
REBUILD_TENSOR_V3 = TorchName('torch._utils', '_rebuild_tensor_v3')
REBUILD_META = TorchName('torch._utils', '_rebuild_meta_tensor_no_storage')
REBUILD_PARAMETER = TorchName('torch._utils', '_rebuild_parameter')
REBUILD_PARAMETER_WITH_STATE = TorchName('torch._utils', '_rebuild_parameter_with_state')
REBUILD_FROM_TYPE_V2 = TorchName('torch._tensor', '_rebuild_from_type_v2')
TENSOR = TorchName('torch', 'Tensor')
SIZE = TorchName('torch', 'Size')
DEVICE = TorchName('torch', 'device')
UNTYPED_STORAGE = TorchName('torch.storage', 'UntypedStorage')


def storage_global(name):
    return TorchName('torch', STORAGE_CLASSES[name])


def dtype_global(name):
    return TorchName('torch', name)
