"""Storages: the memory under a tensor, seen as bytes (``UntypedStorage``) or as elements
of one dtype (``TypedStorage``, ``FloatStorage`` and friends), as PyTorch shows it.

A dynagrad tensor's memory is the NumPy array that owns it (the root of its ``.base``
chain); every view of it has the same storage. Programs mostly use a storage to tell
whether tensors share memory (``t.untyped_storage().data_ptr()``) and how large it is
(``nbytes()``, ``size()``); element access, ``tolist``, ``fill_`` and ``copy_`` work too.
A write through a storage is not counted by autograd, as in PyTorch.
"""
import os
import warnings
import weakref

import numpy as np

from . import _dtype
from ._device import backend_of
from ._meta import MetaArray, storage_bytes
from .tensor import array_address, method

__all__ = ['UntypedStorage', 'TypedStorage', 'FloatStorage', 'DoubleStorage', 'HalfStorage',
           'BFloat16Storage', 'LongStorage', 'IntStorage', 'ShortStorage', 'CharStorage',
           'ByteStorage', 'BoolStorage', 'ComplexFloatStorage', 'ComplexDoubleStorage',
           'is_storage', 'from_file']

_TYPED_DEPRECATED = (
    'TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be '
    'the only storage class. This should only matter to you if you are using storages '
    'directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of '
    'tensor.storage()')


def _memory_of(array):
    """The whole memory block ``array`` lives in, as a flat uint8 array (no copy)."""
    if isinstance(array, MetaArray):
        flat = storage_bytes(array)
        return flat, flat
    root, base = array, array.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, 'base', None)
    if root.flags.c_contiguous:
        flat = root.reshape(-1)
    elif root.flags.f_contiguous:
        flat = root.T.reshape(-1)
    else:
        raise RuntimeError("storage: the tensor's memory is not one dense block (it views an "
                           'array made outside dynagrad); call .contiguous() first')
    return root, flat.view(np.uint8)


# The C++ element type PyTorch names in set_'s error for a storage of another dtype
_C_TYPE_NAMES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half',
                 'bfloat16': 'c10::BFloat16', 'int8': 'signed char', 'int16': 'short int',
                 'int32': 'int', 'int64': 'long int', 'uint8': 'unsigned char',
                 'uint16': 'unsigned short', 'uint32': 'unsigned int',
                 'uint64': 'unsigned long', 'bool': 'bool'}


def _bytes_from(args, what):
    """The bytes a storage constructor was asked for: a size, or a sequence of values."""
    if not args:
        return None
    if len(args) == 1 and isinstance(args[0], (int, np.integer)) and \
            not isinstance(args[0], bool):
        if args[0] < 0:
            raise RuntimeError(f'{what}: size must be non-negative, got {int(args[0])}')
        return int(args[0])
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    raise TypeError(f'{what}(): pass a size (int) or a sequence of values, got '
                    f'{", ".join(type(a).__name__ for a in args)}')


class UntypedStorage:
    """Bytes of memory: ``UntypedStorage(n)`` allocates n bytes, ``UntypedStorage([..])``
    copies byte values; ``tensor.untyped_storage()`` is the memory under a tensor."""
    __slots__ = ('_bytes', '__weakref__')

    def __init__(self, *args, device=None):
        if device is not None and str(device) != 'cpu':
            raise RuntimeError(f'UntypedStorage: only CPU storages exist in dynagrad, got '
                               f'device {device!r}')
        got = _bytes_from(args, 'UntypedStorage')
        if got is None or isinstance(got, int):
            self._bytes = np.zeros(got or 0, np.uint8)
        else:
            self._bytes = np.array(got, dtype=np.uint8)

    @classmethod
    def _over(cls, flat_bytes):
        s = object.__new__(cls)
        s._bytes = flat_bytes
        return s

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """The first ``nbytes`` bytes of a file, memory-mapped: with ``shared`` writes reach
        the file (which is made or grown to ``nbytes`` as needed), without it they stay in
        this process and the file must hold ``nbytes`` bytes already."""
        path = os.fspath(filename)
        try:
            if shared:
                with open(path, 'ab') as f:     # makes it if missing; never truncates
                    if f.seek(0, os.SEEK_END) < nbytes:
                        f.truncate(nbytes)
            size = os.stat(path).st_size
        except OSError as e:
            raise RuntimeError(f'unable to open file <{path}> in '
                               f'{"read-write" if shared else "read-only"} mode: {e.strerror} '
                               f'({e.errno})') from None
        if size < nbytes:
            raise RuntimeError(f'file <{path}> size <{size}> is smaller than the required '
                               f'mapping size <{nbytes}>')
        if nbytes == 0:
            return cls._over(np.zeros(0, np.uint8))
        mapped = np.memmap(path, dtype=np.uint8, mode='r+' if shared else 'c', shape=(nbytes,))
        return cls._over(mapped.view(np.ndarray))

    def _elements(self, dtype):
        """The memory as a flat array of ``dtype``, whole elements only, no copy: what
        ``Tensor.set_`` views when given this storage (ops sit below this module, so they
        reach it through this method rather than an import)."""
        b = self._bytes
        return b[:b.size - b.size % dtype.itemsize].view(dtype.numpy)

    # -- size and place ---------------------------------------------------------------
    def nbytes(self):
        return self._bytes.size

    size = nbytes
    __len__ = nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return array_address(self._bytes)

    @property
    def device(self):
        return backend_of(self._bytes).device

    is_cuda = is_sparse = is_hpu = property(lambda self: False)

    def is_shared(self):
        return False

    def is_pinned(self, device='cuda'):
        return False

    def type(self):
        return 'dynagrad.storage.UntypedStorage'

    # -- elements ---------------------------------------------------------------------
    def _index(self, idx):
        n = self._bytes.size
        if not -n <= idx < n:
            raise IndexError(f'index {idx} out of range for storage of size {n}')
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self._bytes.size)
            if step != 1:
                raise RuntimeError(f'Trying to slice with a step of {step}, but only a step of '
                                   '1 is supported')
            return UntypedStorage._over(self._bytes[start:stop])
        return int(self._bytes[self._index(idx)])

    def __setitem__(self, idx, value):
        if isinstance(idx, slice):
            self._bytes[idx] = value
        else:
            self._bytes[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes.tolist()

    def fill_(self, value):
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        source = _bytes_of(source)
        if source.size != self._bytes.size:
            raise RuntimeError(f'copy_: the storages have {self._bytes.size} and {source.size} '
                               'bytes; they must be the same size')
        self._bytes[...] = source
        return self

    def clone(self):
        return UntypedStorage._over(self._bytes.copy())

    def cpu(self):
        return self

    def untyped(self):
        return self

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())

    def __repr__(self):
        body = '\n'.join(f' {v}' for v in self.tolist())
        footer = f'[dynagrad.storage.UntypedStorage(device={self.device}) of size {len(self)}]'
        return f'{body}\n{footer}' if body else footer

    __str__ = __repr__


def _bytes_of(storage):
    if isinstance(storage, TypedStorage):
        return storage._untyped._bytes
    if isinstance(storage, UntypedStorage):
        return storage._bytes
    raise TypeError(f'expected a storage, got {type(storage).__name__}')


class _TypedStorageMeta(type):
    """``isinstance(t.storage(), FloatStorage)`` checks the dtype, as in PyTorch."""

    def __instancecheck__(cls, obj):
        legacy = cls.__dict__.get('_legacy_dtype')
        if legacy is None:
            return super().__instancecheck__(obj)
        return isinstance(obj, TypedStorage) and obj.dtype == legacy


class TypedStorage(metaclass=_TypedStorageMeta):
    """Memory seen as elements of one dtype (PyTorch deprecates it for UntypedStorage)."""
    __slots__ = ('_untyped', 'dtype')
    _legacy_dtype = None

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if not _internal:
            warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
        dtype = self._legacy_dtype or dtype or _dtype.get_default_dtype()
        self.dtype = dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError('TypedStorage(): pass wrap_storage or sizes/data, not both')
            self._untyped = wrap_storage
            return
        got = _bytes_from(args, type(self).__name__)
        if got is None or isinstance(got, int):
            values = np.zeros(got or 0, dtype.numpy)
        else:
            values = np.array(got, dtype=dtype.numpy)
        self._untyped = UntypedStorage._over(values.view(np.uint8))

    def _values(self):
        """The memory as an array of this storage's dtype."""
        return self._untyped._elements(self.dtype)

    def _elements(self, dtype):
        """As ``UntypedStorage._elements``; a typed storage only gives its own dtype."""
        if dtype != self.dtype:
            raise RuntimeError(
                f'Expected a Storage of type {_C_TYPE_NAMES.get(dtype.name, dtype.name)} or an '
                f"UntypedStorage, but got type {_dtype.type_name(self.dtype)} for argument 1 "
                "'storage' (pass t.untyped_storage() to view its bytes as another dtype)")
        return self._untyped._elements(dtype)

    def size(self):
        return self._untyped._bytes.size // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self._untyped._bytes.size

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped.data_ptr()

    @property
    def device(self):
        return self._untyped.device

    is_cuda = is_sparse = property(lambda self: False)

    def is_shared(self):
        return False

    def is_pinned(self, device='cuda'):
        return False

    def untyped(self):
        return self._untyped

    def type(self):
        return 'dynagrad.' + self.dtype.legacy_name.replace('Tensor', 'Storage')

    def _index(self, idx):
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f'index {idx} out of range for storage of size {n}')
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError('slices are only supported in UntypedStorage.__getitem__')
        return self._values()[self._index(idx)].item()

    def __setitem__(self, idx, value):
        values = self._values()
        if isinstance(idx, slice):
            values[idx] = value
        else:
            values[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._values().tolist()

    def fill_(self, value):
        self._values()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        self._untyped.copy_(source)
        return self

    def clone(self):
        return TypedStorage(wrap_storage=self._untyped.clone(), dtype=self.dtype,
                            _internal=True)

    def cpu(self):
        return self

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())

    def __repr__(self):
        body = '\n'.join(f' {v}' for v in self.tolist())
        footer = (f'[dynagrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) '
                  f'of size {len(self)}]')
        return f'{body}\n{footer}' if body else footer

    __str__ = __repr__


def _typed_class(d):
    name = d.legacy_name.replace('Tensor', 'Storage')

    def __new__(cls, *args, device=None):
        warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
        s = object.__new__(TypedStorage)
        TypedStorage.__init__(s, *args, dtype=d, device=device, _internal=True)
        return s

    cls = _TypedStorageMeta(name, (TypedStorage,), {
        '__slots__': (), '_legacy_dtype': d, '__new__': __new__,
        '__doc__': f'Legacy constructor of a {d} TypedStorage: a size or a sequence.'})
    cls.dtype = d
    return cls


FloatStorage = _typed_class(_dtype.float32)
DoubleStorage = _typed_class(_dtype.float64)
HalfStorage = _typed_class(_dtype.float16)
BFloat16Storage = _typed_class(_dtype.bfloat16)
LongStorage = _typed_class(_dtype.int64)
IntStorage = _typed_class(_dtype.int32)
ShortStorage = _typed_class(_dtype.int16)
CharStorage = _typed_class(_dtype.int8)
ByteStorage = _typed_class(_dtype.uint8)
BoolStorage = _typed_class(_dtype.bool)
ComplexFloatStorage = _typed_class(_dtype.complex64)
ComplexDoubleStorage = _typed_class(_dtype.complex128)
_BY_DTYPE = {c.dtype: c for c in (FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage,
                                   LongStorage, IntStorage, ShortStorage, CharStorage,
                                   ByteStorage, BoolStorage, ComplexFloatStorage,
                                   ComplexDoubleStorage)}


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-D tensor of ``size`` elements over a memory-mapped file (see
    ``UntypedStorage.from_file`` for ``shared``)."""
    from .ops.creation import asarray
    dtype = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if device is not None and str(device) != 'cpu':
        raise RuntimeError('from_file: only CPU tensors can be mapped to files')
    storage = UntypedStorage.from_file(filename, bool(shared), size * dtype.itemsize)
    return asarray(storage, dtype=dtype, requires_grad=requires_grad)


def _load_from_bytes(b):
    """The storage a PyTorch pickle of a tensor holds (its legacy-format bytes): what
    ``torch.storage._load_from_bytes`` is called for when such a pickle loads."""
    import io
    from .serialization import load
    return load(io.BytesIO(b))


def is_storage(obj):
    """Whether ``obj`` is a storage (untyped or typed)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


# -- the Tensor's side -------------------------------------------------------------------

# One UntypedStorage object per memory block while someone holds it, so that
# ``t.untyped_storage() is t.untyped_storage()`` as in PyTorch. Keyed by the owning
# array's id: the storage keeps that array alive, so the id is not reused meanwhile.
_live = weakref.WeakValueDictionary()


@method
def untyped_storage(self):
    """The memory under this tensor (shared by all its views), as bytes."""
    root, flat = _memory_of(self._data)
    s = _live.get(id(root))
    if s is None or s._bytes.size != flat.size or s.data_ptr() != array_address(flat):
        s = _live[id(root)] = UntypedStorage._over(flat)
    return s


@method
def storage(self):
    """The memory under this tensor as elements of its dtype (deprecated, as in PyTorch:
    prefer ``untyped_storage()``)."""
    warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=2)
    return TypedStorage(wrap_storage=untyped_storage(self), dtype=self.dtype, _internal=True)


@method
def storage_type(self):
    """The legacy storage class of this tensor's dtype (``FloatStorage`` for float32)."""
    return _BY_DTYPE[self.dtype]

