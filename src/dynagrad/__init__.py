"""dynagrad: automatic differentiation with dynamic graphs, on NumPy, with PyTorch's API."""
from ._dtype import (dtype, float16, float32, float64, int8, int16, int32, int64, uint8,  # noqa
                     bool, half, float, double, short, int, long, get_default_dtype,
                     set_default_dtype, promote_types, bfloat16, finfo, iinfo, uint16,
                     uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
                     float8_e5m2fnuz, float8_e8m0fnu, complex64, complex128, cfloat, cdouble)
from .size import Size  # noqa: F401
from ._layout import (layout, strided, memory_format, contiguous_format,  # noqa: F401
                      channels_last, channels_last_3d, preserve_format, sparse_coo,
                      sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged)
from ._device import device, set_default_device, get_default_device  # noqa: F401
from .backend import (set_num_threads, get_num_threads, set_num_interop_threads,  # noqa: F401
                      get_num_interop_threads)
from .tensor import Tensor  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,  # noqa
                                 inference_mode, is_inference_mode_enabled)
from .ops import *  # noqa: F401,F403
from .ops import conversion as _conversion  # noqa: F401  (Tensor.to, Tensor.new_tensor)
from .ops.creation import Generator, default_generator  # noqa: F401
from .ops.linalg_solvers import TOP_LEVEL as _LINALG_TOP_LEVEL  # noqa: E402
globals().update(_LINALG_TOP_LEVEL)   # triangular_solve, the legacy cholesky/qr/svd, ...
from .ops.linalg_lowrank import svd_lowrank, pca_lowrank, lobpcg  # noqa: F401,E402
from ._tensor_str import set_printoptions, get_printoptions  # noqa: F401
from .legacy_types import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor,  # noqa
                           LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
                           BoolTensor)
from . import autograd, nn, optim, linalg, random, sparse  # noqa: F401,E402
from . import multiprocessing, functional  # noqa: F401,E402
from . import cuda, accelerator, mps, backends  # noqa: F401,E402
from .backends import (set_float32_matmul_precision,  # noqa: F401,E402
                       get_float32_matmul_precision)
from .nn.functional import cdist  # noqa: F401,E402  (torch.cdist is top-level too)
from .nn.functional.toplevel import *  # noqa: F401,F403,E402
from .global_options import *  # noqa: F401,F403,E402
from .random import thread_safe_generator  # noqa: F401,E402
from .storage import (UntypedStorage, TypedStorage, FloatStorage, DoubleStorage,  # noqa: F401,E402
                      HalfStorage, BFloat16Storage, LongStorage, IntStorage, ShortStorage,
                      CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
                      ComplexDoubleStorage, from_file)
Storage = FloatStorage   # PyTorch's legacy alias
from .amp import GradScaler  # noqa: F401,E402  (torch.GradScaler is torch.amp.GradScaler)
from . import amp, cpu  # noqa: F401,E402
from .amp.autocast_mode import (autocast, is_autocast_enabled, set_autocast_enabled,  # noqa
                                get_autocast_dtype, set_autocast_dtype,
                                is_autocast_cache_enabled, set_autocast_cache_enabled,
                                clear_autocast_cache, autocast_increment_nesting,
                                autocast_decrement_nesting, is_autocast_cpu_enabled,
                                set_autocast_cpu_enabled, get_autocast_cpu_dtype,
                                set_autocast_cpu_dtype, get_autocast_gpu_dtype,
                                set_autocast_gpu_dtype)


# Imported on first use, to keep `import dynagrad` short: a training script that never
# loads data through DataLoader, saves a checkpoint, trains on several processes or draws
# its graph does not pay for the zip/pickle machinery, the workers, MPI or graphviz glue.
from .lazy import lazy_exports  # noqa: E402
__getattr__, __dir__ = lazy_exports(__name__, {
    'utils': 'utils', 'serialization': 'serialization', 'viz': 'viz', 'onnx': 'onnx',
    'testing': 'testing', 'distributions': 'distributions', 'distributed': 'distributed',
    'func': 'func', 'vmap': 'func', 'special': 'special', 'fft': 'fft',
    'compiler': 'compiler', 'compile': 'compiler', 'jit': 'jit', 'export': 'export',
    'save': 'serialization', 'load': 'serialization', '_dynamo': '_dynamo',
    'torch_version': 'torch_version', 'library': 'library', '_utils': '_utils',
    'profiler': 'profiler', 'hub': 'hub', 'nested': 'nested', '_jit_internal': '_jit_internal',
    '_C': '_C', 'overrides': 'overrides',
    # PyTorch's API version, which libraries check (version.py says why)
    '__version__': 'version', 'version': 'version'})


def result_type(tensor1, tensor2):
    from ._dtype import result_type as _rt
    return _rt(tensor1, tensor2)


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + '.' + type(obj).__qualname__


# __torch_function__ (see _torch_function): each Tensor method its own object now, before
# programs capture them; the dispatch itself waits for a class that overrides it.
from . import _torch_function as _tf  # noqa: E402
_tf.separate_methods()
_tf.watch()
del _tf
