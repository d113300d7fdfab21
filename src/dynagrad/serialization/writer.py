"""Writing PyTorch's checkpoint format without importing torch.

The object is pickled (protocol 2 by default, as ``torch.save``) by a pickler that writes
each tensor as PyTorch does: a call of ``torch._utils._rebuild_tensor_v2`` on a storage
(a persistent id ``('storage', torch.FloatStorage, key, 'cpu', numel)``), an element
offset, the size, the strides and ``requires_grad``. The ``torch...`` globals are written
by name from stand-ins (``names.TorchName``), so torch need not be installed.

A tensor's storage is the memory its array views: the last NumPy array of its ``.base``
chain. Tensors viewing the same memory with the same dtype share one storage,
so views are saved once and stay views of each other when loaded, in dynagrad and in
PyTorch. As in PyTorch, the whole memory is saved, even if only a slice of it is a tensor
of the object (``clone()`` a small view of a large tensor to save just the view). A tensor
whose memory cannot be described as a storage plus element offset and non-negative
element strides (negative or byte-misaligned strides from NumPy) is saved as a contiguous
copy of its own; so is a tensor viewing the same memory as another with a different dtype,
which PyTorch refuses to save at all.
"""
import io
import os
import pickle
import sys
from collections import OrderedDict

import numpy as np

from .. import _dtype
from .._meta import contiguous_strides as _contiguous_strides
from ..size import Size
from ..tensor import CPU, Tensor, wrap
from . import names, zipformat
from .files import atomic_write, check_writable, is_path, write_bytes

DEFAULT_PROTOCOL = 2
FILE_FORMAT_VERSION = b'3\n'        # what torch 2.13 writes in <archive>/version
LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
LEGACY_PROTOCOL_VERSION = 1001


class StorageRef:
    """What a pickled tensor refers to: written as the persistent id ``pid``."""
    __slots__ = ('pid', 'data', 'keep')

    def __init__(self, pid, data, keep):
        self.pid, self.data, self.keep = pid, data, keep


def user_state(t):
    """The attributes a user set on tensor ``t``: PyTorch pickles them with it. The
    attributes the Tensor class declares (dynagrad's own bookkeeping) are not saved."""
    d = t.__dict__
    if not d:
        return None
    state = {k: v for k, v in d.items() if not hasattr(Tensor, k)}
    return state or None


def _byte_region(root):
    """The bytes of a contiguous array, as a 1-d uint8 array; None if not contiguous."""
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    return np.asarray(root).ravel(order='K').view(np.uint8)


def _place(arr, start, usable, itemsize):
    """(element offset, element strides) of ``arr`` in a storage starting at address
    ``start`` with ``usable`` bytes, or None if it does not fit one."""
    offset = arr.__array_interface__['data'][0] - start
    if offset < 0 or offset % itemsize:
        return None
    if not arr.size:                # NumPy's zero strides; PyTorch's are row-major
        return offset // itemsize, _contiguous_strides(arr.shape)
    extent = offset
    strides = []
    for n, st in zip(arr.shape, arr.strides):
        if n <= 1 and (st < 0 or st % itemsize):
            st = 0                  # a stride nothing steps along: any value is right
        if st < 0 or st % itemsize:
            return None
        strides.append(st // itemsize)
        if arr.size:
            extent += (n - 1) * st
    if arr.size:
        extent += itemsize
    if extent > usable:
        return None
    return offset // itemsize, tuple(strides)


_DEVICE = type(CPU)         # dynagrad.device


class TorchPickler(pickle._Pickler):
    """The standard library's pickler, taught to write tensors, sizes, dtypes and devices
    under PyTorch's names. (The Python implementation, because the C one must import a
    global's module to write it.)"""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, legacy=False):
        super().__init__(file, protocol)
        self.storages = []              # StorageRef, in key order
        self._roots = {}                # (id(root array), dtype) -> (StorageRef, start, bytes)
        self._legacy = legacy
        from ..nn.parameter import Parameter
        self._parameter = Parameter

    def persistent_id(self, obj):
        if type(obj) is StorageRef:
            return tuple(list(obj.pid))     # a new tuple each time, as torch.save writes it
        return None

    def save_torch_name(self, obj):
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f'{obj.module}\n{obj.name}\n'.encode('utf-8'))
        self.memoize(obj)
    dispatch[names.TorchName] = save_torch_name

    def save_dtype(self, obj):
        self.save(names.dtype_global(obj.name))
    dispatch[_dtype.dtype] = save_dtype

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        cls = type(obj)
        if cls is Size:
            return names.SIZE, (tuple(obj),)
        if cls is _DEVICE:
            index = obj.index
            return names.DEVICE, ((obj.type,) if index is None else (obj.type, index))
        return NotImplemented

    # -- tensors ---------------------------------------------------------------------

    def _reduce_tensor(self, t):
        if isinstance(t, self._parameter):
            data = wrap(t._data)
            state = user_state(t)
            if state:
                return names.REBUILD_PARAMETER_WITH_STATE, (data, bool(t._requires_grad),
                                                            OrderedDict(), state)
            return names.REBUILD_PARAMETER, (data, bool(t._requires_grad), OrderedDict())
        arr, location = t._data, 'cpu'
        device = t.device
        if device.type == 'meta':       # no data: PyTorch saves what it is, not its bytes
            return names.REBUILD_META, (names.dtype_global(t.dtype.name), tuple(arr.shape),
                                        t.stride(), bool(t._requires_grad))
        if device.type != 'cpu':        # saved as PyTorch saves it: the bytes, and where from
            arr, location = t.detach().cpu()._data, str(device)
        storage, offset, strides = self._storage_of(arr, location)
        args = (storage, offset, tuple(arr.shape), strides, bool(t._requires_grad),
                OrderedDict())
        rebuild = names.REBUILD_TENSOR_V2
        dtype_name = _dtype.FROM_NUMPY[arr.dtype].name
        if dtype_name not in names.STORAGE_CLASSES:
            # no typed storage class (uint16/32/64): torch writes an untyped storage and
            # names the dtype in _rebuild_tensor_v3's last argument
            rebuild, args = names.REBUILD_TENSOR_V3, args + (names.dtype_global(dtype_name),)
        state = user_state(t)
        cls = type(t)
        if cls.__module__.startswith('dynagrad.'):
            cls = Tensor        # dynagrad's own subclasses (0.3's Variable): torch has none
        if cls is Tensor and not state:
            return rebuild, args
        new_type = names.TENSOR if cls is Tensor else cls
        return names.REBUILD_FROM_TYPE_V2, (rebuild, new_type, args, state or {})

    def _storage_of(self, arr, location):
        dt = _dtype.FROM_NUMPY.get(arr.dtype)
        if dt is None or dt.name not in names.TORCH_DTYPES:
            raise pickle.PicklingError(f'dynagrad.save: cannot save a tensor of dtype '
                                       f'{arr.dtype}')
        itemsize = arr.dtype.itemsize
        root, base = arr, arr.base
        while base is not None:         # through NumPy's views and as_strided's wrappers
            if isinstance(base, np.ndarray):
                root = base
            base = getattr(base, 'base', None)
        key = (id(root), dt.name, location)
        entry = self._roots.get(key)
        if entry is None:
            region = _byte_region(root)
            if region is not None:
                usable = region.nbytes - region.nbytes % itemsize
                entry = (self._new_storage(dt, region[:usable], root, location),
                         region.__array_interface__['data'][0], usable)
                self._roots[key] = entry
        if entry is not None:
            placed = _place(arr, entry[1], entry[2], itemsize)
            if placed is not None:
                return entry[0], placed[0], placed[1]
        copy = np.array(arr, order='C', copy=True)
        ref = self._new_storage(dt, copy.reshape(-1).view(np.uint8), copy, location)
        return ref, 0, _contiguous_strides(arr.shape)

    def _new_storage(self, dt, data, keep, location):
        key = str(len(self.storages))
        if dt.name in names.STORAGE_CLASSES:
            pid = ('storage', names.storage_global(dt.name), key, location,
                   data.nbytes // dt.itemsize)
        else:                           # untyped: its size counts bytes
            pid = ('storage', names.UNTYPED_STORAGE, key, location, data.nbytes)
        if self._legacy:
            pid += (None,)
        ref = StorageRef(pid, data, keep)
        self.storages.append(ref)
        return ref


def pickle_object(obj, protocol, legacy=False):
    """(pickle bytes, storages) of ``obj``. Everything that can fail on the object fails
    here, before any file is touched."""
    buf = io.BytesIO()
    pickler = TorchPickler(buf, protocol, legacy)
    try:
        pickler.dump(obj)
    except RecursionError:
        raise RecursionError('dynagrad.save: the object is nested too deeply to pickle') \
            from None
    return buf.getvalue(), pickler.storages


def archive_name(f):
    """The folder inside the zip: the file's name without its extension, as PyTorch
    names it, or 'archive' for a file object."""
    if is_path(f):
        return os.path.splitext(os.path.basename(os.fsdecode(f)))[0] or 'archive'
    return 'archive'


def write_zip(fh, folder, data_pkl, storages, byteorder_record=True):
    writer = zipformat.ZipWriter(fh)
    prefix = folder + '/'
    writer.add(prefix + 'data.pkl', data_pkl)
    writer.add(prefix + '.format_version', b'1')
    writer.add(prefix + '.storage_alignment', str(zipformat.ALIGNMENT).encode())
    if byteorder_record:
        writer.add(prefix + 'byteorder', sys.byteorder.encode())
    for ref in storages:
        writer.add(f'{prefix}data/{ref.pid[2]}', ref.data)
    writer.add(prefix + 'version', FILE_FORMAT_VERSION)
    serial = int.from_bytes(os.urandom(17), 'little') % 10 ** 40     # 40 digits, as torch's
    writer.add(prefix + '.data/serialization_id', f'{serial:040d}'.encode())
    writer.close()


def write_legacy(fh, obj_pickle, storages, protocol):
    """The format of PyTorch before 1.6 (``_use_new_zipfile_serialization=False``): five
    pickles (magic number, protocol version, system info, the object, the storage keys),
    then each storage as its element count (int64) and its bytes."""
    head = io.BytesIO()
    for part in (LEGACY_MAGIC, LEGACY_PROTOCOL_VERSION,
                 {'protocol_version': LEGACY_PROTOCOL_VERSION,
                  'little_endian': sys.byteorder == 'little',
                  'type_sizes': {'short': 2, 'int': 4, 'long': 4}}):
        pickle._Pickler(head, protocol).dump(part)
    write_bytes(fh, head.getvalue())
    write_bytes(fh, obj_pickle)
    keys = io.BytesIO()
    pickle._Pickler(keys, protocol).dump(sorted((ref.pid[2] for ref in storages), key=int))
    write_bytes(fh, keys.getvalue())
    for ref in sorted(storages, key=lambda r: int(r.pid[2])):
        write_bytes(fh, np.int64(ref.pid[4]).tobytes())
        write_bytes(fh, ref.data)


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` in PyTorch's checkpoint format (what ``torch.save`` writes).

    ``f`` is a path (str or os.PathLike; written atomically: a failure mid-save leaves
    the previous file as it was) or a binary file object. ``obj`` is anything picklable:
    tensors, Parameters, state dicts, nested containers, numbers, strings, NumPy arrays,
    whole modules. The file loads in PyTorch (``torch.load``) and in ``dynagrad.load``.
    """
    check_writable(f)
    if pickle_module is not None and pickle_module is not pickle:
        raise TypeError(f'dynagrad.save pickles with its own pickler (built on the standard '
                        f'pickle module) to write PyTorch\'s names; pickle_module='
                        f'{getattr(pickle_module, "__name__", pickle_module)!r} is not '
                        f'supported')
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f'dynagrad.save: pickle_protocol must be an int from 2 to '
                         f'{pickle.HIGHEST_PROTOCOL}, got {pickle_protocol!r}')
    legacy = not _use_new_zipfile_serialization
    data_pkl, storages = pickle_object(obj, pickle_protocol, legacy)

    if legacy:
        def write(fh):
            write_legacy(fh, data_pkl, storages, pickle_protocol)
    else:
        folder = archive_name(f)

        def write(fh):
            write_zip(fh, folder, data_pkl, storages, not _disable_byteorder_record)
    if is_path(f):
        atomic_write(f, write)
        return
    write(f)
    if hasattr(f, 'flush'):
        f.flush()
