"""Reading PyTorch's checkpoint format: the objects behind PyTorch's global names.

A pickle written by ``torch.save`` (or ``dynagrad.save``) names ``torch._utils`` rebuild
functions, storage classes, dtypes, ``torch.Size``... ``torch_globals()`` maps each such
name onto what dynagrad builds instead, so both unpicklers (the restricted one of
``weights_only=True`` and the full one) read PyTorch's files without torch.

Loaded tensors are views of their storage's array: tensors saved as views of each other
share memory again (and one version counter, so autograd sees an in-place write through
any of them), as they do after ``torch.load``.
"""
import codecs
from collections import Counter, OrderedDict

import numpy as np

from .. import _dtype
from ..size import Size
from ..tensor import Tensor, VersionCounter, check_device, wrap
from . import names

MAX_FILE_FORMAT_VERSION = 10        # the newest <archive>/version PyTorch 2.13 reads


class LoadError(Exception):
    """Something in the file dynagrad cannot or will not build; ``load`` names the file."""


class Unavailable:
    """A name PyTorch allows in a checkpoint but dynagrad has nothing for (a dtype or a
    tensor kind it lacks): resolving it raises ``LoadError`` saying so."""
    __slots__ = ('what',)

    def __init__(self, what):
        self.what = what


# -- storages ------------------------------------------------------------------------------

class StorageType:
    """``torch.FloatStorage`` and friends as read from a pickle: which dtype the storage's
    elements have (``None`` for ``torch.storage.UntypedStorage``, counted in bytes)."""
    __slots__ = ('name', 'dtype_name')

    def __init__(self, name, dtype_name):
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self):
        return self.name


class LoadedStorage:
    """One storage of a checkpoint: a 1-d array of its elements, where it was saved from
    (``location``) and the version counter its tensors share.

    A ``map_location`` callable receives it as ``(storage, location)``, as PyTorch's
    receive an ``UntypedStorage``; ``storage.cpu()`` and returning it (or None) keep it on
    the CPU.
    """
    __slots__ = ('array', 'dtype', 'key', 'location', 'vc', 'target')

    def __init__(self, array, dtype, key, location):
        self.array, self.dtype, self.key, self.location = array, dtype, key, location
        self.vc = VersionCounter()
        self.target = 'cpu'         # the device its tensors go to, after map_location

    @property
    def device(self):
        import dynagrad
        make = getattr(dynagrad, 'device', None)
        return make('cpu') if make is not None else 'cpu'

    def nbytes(self):
        return self.array.nbytes

    def size(self):
        return self.array.size

    __len__ = size

    def cpu(self):
        return self

    def to(self, device=None, non_blocking=False):
        if check_location(str(device)):
            self.target = str(device)
        return self

    def cuda(self, device=None, non_blocking=False):
        return self.to('cuda' if device is None else f'cuda:{device}'
                       if isinstance(device, int) else str(device))

    def __repr__(self):
        return (f'<dynagrad checkpoint storage {self.key!r}: {self.array.size} x '
                f'{self.array.dtype} from {self.location!r}>')


def check_location(location):
    """Raise what PyTorch raises on a machine without ``location``'s device; return
    whether the data must move off the CPU to get there (a device dynagrad has a backend
    for)."""
    if location in ('cpu', 'cpu:0'):
        return False
    import dynagrad
    try:
        device = dynagrad.device(location)
    except (RuntimeError, TypeError, ValueError):
        raise RuntimeError(f"don't know how to restore data location of dynagrad storage "
                           f"(tagged with {location})") from None
    if device.type == 'cpu':
        return False
    try:
        check_device(device)
    except Exception:
        kind = device.type
        raise RuntimeError(
            f'Attempting to deserialize object on a {kind.upper()} device but '
            f'dynagrad.{kind}.is_available() is False. If you are running on a CPU-only '
            f"machine, please use dynagrad.load with map_location=dynagrad.device('cpu') to "
            f'map your storages to the CPU.') from None
    return True


def restore_location(storage, map_location):
    """Apply ``map_location`` (None, a string, a device, a dict or a callable) to a
    storage as ``torch.load`` does; return the storage to use."""
    location = storage.location
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, bytes)):
        target = map_location
    elif callable(map_location):
        result = map_location(storage, location)
        if result is None:
            target = location
        elif isinstance(result, LoadedStorage):
            return result
        else:
            raise TypeError(f'dynagrad.load: map_location returned a '
                            f'{type(result).__name__}; a map_location callable must return '
                            f'the storage it was given (or another one), or None')
    else:
        target = map_location
    if isinstance(target, bytes):
        target = target.decode('ascii')
    target = str(target)
    if check_location(target):
        storage.target = target     # tensors are built on the CPU, then moved there
    return storage


# -- tensors ---------------------------------------------------------------------------------

def _ints(value, what):
    if type(value) not in (tuple, list, Size) or \
            not all(type(v) is int for v in value):
        raise LoadError(f'a tensor\'s {what} is {type(value).__name__}, not a tuple of ints')
    return tuple(value)


def _view(storage, offset, size, stride, dtype=None):
    """The array of a tensor: ``size`` elements of ``storage`` from element ``offset``,
    ``stride`` elements apart along each dimension (checked to lie inside the storage)."""
    if not isinstance(storage, LoadedStorage):
        raise LoadError(f'a tensor is rebuilt from a {type(storage).__name__}, not a storage')
    arr = storage.array
    if dtype is not None and arr.dtype != dtype.numpy:
        raw = arr.view(np.uint8)
        raw = raw[:raw.size - raw.size % dtype.itemsize]
        arr = raw.view(dtype.numpy)
    size, stride = _ints(size, 'size'), _ints(stride, 'stride')
    if type(offset) is not int or offset < 0:
        raise LoadError(f'a tensor\'s storage offset is {offset!r:.50}, not an int >= 0')
    if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise LoadError(f'a tensor has size {size!r:.200} and strides {stride!r:.200}: '
                        f'they must be non-negative and as many')
    numel = 1
    for n in size:
        numel *= n
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if numel else offset - 1
    if last >= arr.size:
        raise LoadError(f'a tensor of size {list(size)} and strides {list(stride)} at offset '
                        f'{offset} reaches past the end of its storage of {arr.size} '
                        f'elements (storage {storage.key!r})')
    try:
        view = np.ndarray(size, arr.dtype, buffer=arr, offset=offset * arr.itemsize,
                          strides=[s * arr.itemsize for s in stride])
    except (ValueError, TypeError, OverflowError) as e:
        raise LoadError(f'a tensor of size {list(size)} cannot be built ({e})') from None
    if any(n > 1 and s == 0 for n, s in zip(size, stride)):
        view.flags.writeable = False    # an expanded tensor: as dynagrad's expand gives
    return view


def _tensor(storage, offset, size, stride, requires_grad, dtype=None):
    t = wrap(_view(storage, offset, size, stride, dtype))
    t._vc = storage.vc
    if storage.target != 'cpu':
        t = t.to(storage.target)    # another device: each tensor moves (views do not stay
                                    # views across the move)
    if type(requires_grad) is not bool:
        raise LoadError(f'requires_grad is {type(requires_grad).__name__}, not a bool')
    if requires_grad:
        try:
            t.requires_grad_(True)
        except RuntimeError as e:
            raise LoadError(f'a tensor of dtype {t.dtype} is marked requires_grad: {e}') \
                from None
    return t


def _check_hooks(hooks):
    if hooks is not None and not isinstance(hooks, dict):
        raise LoadError(f'backward hooks are a {type(hooks).__name__}, not a dict')


def set_state(obj, state):
    """Set the attributes saved with a tensor (PyTorch pickles a tensor's ``__dict__``).
    Names the Tensor class defines (its data, its autograd state) are never set."""
    if state is None:
        return obj
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is None:
            continue
        if not isinstance(part, dict):
            raise LoadError(f'a tensor\'s saved attributes are a {type(part).__name__}, not '
                            f'a dict')
        for k, v in part.items():
            if type(k) is not str or hasattr(Tensor, k):
                raise LoadError(f'a tensor\'s saved attributes name {k!r:.50}, which is not '
                                f'an attribute a file may set')
            obj.__dict__[k] = v
    return obj


def rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(storage, storage_offset, size, stride, False)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      metadata=None):
    _check_hooks(backward_hooks)
    return _tensor(storage, storage_offset, size, stride, requires_grad)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      dtype, metadata=None):
    _check_hooks(backward_hooks)
    if not isinstance(dtype, _dtype.dtype):
        raise LoadError(f'a tensor\'s dtype is a {type(dtype).__name__}, not a dtype')
    return _tensor(storage, storage_offset, size, stride, requires_grad, dtype)


def rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """A meta tensor: PyTorch saves its dtype, size and strides, no storage."""
    from ..ops.creation import empty_strided
    if not isinstance(dtype, _dtype.dtype):
        raise LoadError(f'a meta tensor\'s dtype is a {type(dtype).__name__}, not a dtype')
    size, stride = _ints(size, 'size'), _ints(stride, 'stride')
    if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise LoadError(f'a meta tensor has size {size!r:.200} and strides {stride!r:.200}')
    if type(requires_grad) is not bool:
        raise LoadError(f'requires_grad is {type(requires_grad).__name__}, not a bool')
    return empty_strided(size, stride, dtype=dtype, device='meta',
                         requires_grad=requires_grad)


def _parameter_class():
    from ..nn.parameter import Parameter
    return Parameter


def rebuild_parameter(data, requires_grad, backward_hooks):
    _check_hooks(backward_hooks)
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise LoadError(f'a Parameter is rebuilt from ({type(data).__name__}, '
                        f'{type(requires_grad).__name__}), not (Tensor, bool)')
    try:
        return _parameter_class()(data, requires_grad)
    except RuntimeError as e:
        raise LoadError(f'a Parameter of dtype {data.dtype} is marked requires_grad: {e}') \
            from None


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


REBUILDERS = (rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter,
              rebuild_parameter_with_state)


def rebuild_from_type_v2(func, new_type, args, state):
    """A tensor of class ``new_type`` (a Tensor subclass, or Tensor with attributes)."""
    if func not in REBUILDERS or type(args) is not tuple:
        raise LoadError(f'a tensor subclass is rebuilt by {func!r:.80}, not by one of '
                        f'PyTorch\'s tensor rebuild functions')
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise LoadError(f'a tensor is to become a {new_type!r:.80}, which is not a '
                            f'Tensor class')
        ret = Tensor._make(ret._data, ret._requires_grad, None, 0, ret._vc, new_type)
    setstate = getattr(type(ret), '__setstate__', None)
    if state and setstate is not None and setstate is not getattr(Tensor, '__setstate__', None):
        ret.__setstate__(state)
        return ret
    return set_state(ret, state)


def rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, Tensor) or not isinstance(dtype, _dtype.dtype):
        raise LoadError('a device tensor is rebuilt from something other than a CPU tensor '
                        'and a dtype')
    t = data if data._data.dtype == dtype.numpy else wrap(data._data.astype(dtype.numpy))
    if check_location(str(device)):
        t = t.to(str(device))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _unsupported(what):
    def rebuild(*args, **kwargs):
        raise LoadError(f'the file holds {what}, which dynagrad does not have')
    rebuild.__name__ = f'unsupported ({what})'
    return rebuild


def get_layout(name):
    if name == 'torch.strided':
        return 'strided'        # what dynagrad's Tensor.layout returns
    raise LoadError(f'the file holds layout {name!r:.50}; dynagrad has only torch.strided')


def make_device(*args):
    import dynagrad
    make = getattr(dynagrad, 'device', None)
    if make is not None:
        return make(*args)
    if not args or type(args[0]) is not str:
        raise LoadError('torch.device is called with something other than a device string')
    return args[0] if len(args) == 1 else f'{args[0]}:{args[1]}'


# -- the names ----------------------------------------------------------------------------------

_TABLE = None


def torch_globals():
    """'module.name' -> object, for every global PyTorch's weights-only loader allows
    (what dynagrad has no counterpart for maps to ``Unavailable``)."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    import dynagrad
    table = {
        'torch._utils._rebuild_tensor': rebuild_tensor,
        'torch._utils._rebuild_tensor_v2': rebuild_tensor_v2,
        'torch._utils._rebuild_tensor_v3': rebuild_tensor_v3,
        'torch._utils._rebuild_parameter': rebuild_parameter,
        'torch._utils._rebuild_parameter_with_state': rebuild_parameter_with_state,
        'torch._utils._rebuild_device_tensor_from_cpu_tensor':
            rebuild_device_tensor_from_cpu_tensor,
        'torch._utils._rebuild_device_tensor_from_numpy':
            _unsupported('a tensor rebuilt from a NumPy array on a device'),
        'torch._utils._rebuild_qtensor': _unsupported('a quantized tensor'),
        'torch._utils._rebuild_sparse_tensor': _unsupported('a sparse tensor'),
        'torch._utils._rebuild_nested_tensor': _unsupported('a nested tensor'),
        'torch._utils._rebuild_wrapper_subclass':
            _unsupported('a wrapper tensor subclass (such as a DTensor)'),
        'torch._utils._rebuild_meta_tensor_no_storage': rebuild_meta_tensor_no_storage,
        'torch._tensor._rebuild_from_type_v2': rebuild_from_type_v2,
        'torch.Tensor': Tensor,
        'torch.nn.parameter.Parameter': _parameter_class(),
        'torch.Size': Size,
        'torch.device': make_device,
        'torch.serialization._get_layout': get_layout,
        'torch.storage.UntypedStorage': StorageType('torch.storage.UntypedStorage', None),
        'torch.storage.TypedStorage':
            Unavailable('a storage pickled as an object (torch.storage.TypedStorage)'),
        'collections.OrderedDict': OrderedDict,
        'collections.Counter': Counter,
        '_codecs.encode': codecs.encode,
        'builtins.bytearray': bytearray,
        'builtins.set': set,
        'builtins.complex': complex,
    }
    have = names.dynagrad_dtypes()
    for name in names.TORCH_DTYPES:
        table[f'torch.{name}'] = have.get(name) or Unavailable(f'dtype torch.{name}')
    for dtype_name, cls in names.STORAGE_CLASSES.items():
        for module in ('torch', 'torch.cuda'):
            table[f'{module}.{cls}'] = StorageType(f'{module}.{cls}', dtype_name)
    for d in have.values():
        legacy = getattr(dynagrad, d.legacy_name, None)
        if legacy is not None:
            table[f'torch.{d.legacy_name}'] = legacy
    for scheme in ('per_tensor_affine', 'per_tensor_symmetric', 'per_channel_affine',
                   'per_channel_symmetric', 'per_channel_affine_float_qparams'):
        table[f'torch.{scheme}'] = Unavailable(f'a quantized tensor (torch.{scheme})')
    _TABLE = table
    return table


def storage_dtype(storage_type):
    """The dynagrad dtype of a storage class's elements (None: untyped, in bytes)."""
    if storage_type.dtype_name is None:
        return None
    dt = names.dynagrad_dtypes().get(storage_type.dtype_name)
    if dt is None:
        raise LoadError(f'the file holds a tensor of dtype torch.{storage_type.dtype_name} '
                        f'({storage_type.name}), which dynagrad does not have')
    return dt
