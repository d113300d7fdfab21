"""``dynagrad.load``: PyTorch's zip format, its legacy format, and safetensors files."""
import io
import os
import pickle
import sys
import warnings

import numpy as np

from . import rebuild, safetensors_layout, unpickler, zipformat
from .files import CheckpointError, check_seekable, file_size, is_path, name_of
from .zipformat import read_into
from .writer import LEGACY_MAGIC, LEGACY_PROTOCOL_VERSION

UNSAFE_MESSAGE = (
    'dynagrad.load defaults to weights_only=True, as torch.load does since PyTorch 2.6. '
    'Re-running `dynagrad.load` with `weights_only` set to `False` will likely succeed, but '
    'it can result in arbitrary code execution. Do it only if you got the file from a '
    'trusted source.')


def weights_only_message(message, name):
    """The text of the UnpicklingError a refused weights-only load raises, as PyTorch's."""
    if 'was not an allowed global by default' in message:
        return (f'Weights only load failed. This file ({name}) can still be loaded, to do so '
                f'you have two options, do those steps only if you trust the source of the '
                f'checkpoint. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with '
                f'`weights_only=True` please check the recommended steps in the following '
                f'error message.\n\tWeightsUnpickler error: {message}')
    text = f'Weights only load failed ({name}). {UNSAFE_MESSAGE}\n'
    if 'is blocked' not in message:
        text += ('The file asks for something weights-only loading does not allow: '
                 'WeightsUnpickler error: ')
    return text + '\n\n' + message


class Options:
    __slots__ = ('name', 'map_location', 'weights_only', 'pickle_module', 'load_args')

    def __init__(self, name, map_location, weights_only, pickle_module, load_args):
        self.name, self.map_location = name, map_location
        self.weights_only, self.pickle_module, self.load_args = (weights_only, pickle_module,
                                                                 load_args)


class Storages:
    """The storages a pickle refers to, each fetched once (``fetch(key, nbytes)`` returns
    its bytes as a writable uint8 array), typed, byte-swapped if the file's byte order is
    not this machine's, and placed by ``map_location``."""

    def __init__(self, fetch, swap, map_location, cpu_only=False):
        self.fetch, self.swap, self.map_location = fetch, swap, map_location
        self.cpu_only = cpu_only
        self.loaded = {}

    def __call__(self, pid):
        if len(pid) not in (5, 6):
            raise unpickler.Malformed(f'a storage id has {len(pid)} fields, not 5')
        _, storage_type, key, location, numel = pid[:5]
        view = pid[5] if len(pid) == 6 else None
        if isinstance(key, bytes):
            key = key.decode('ascii', 'replace')
        if isinstance(location, bytes):
            location = location.decode('ascii', 'replace')
        if not isinstance(storage_type, rebuild.StorageType) or type(key) is not str or \
                type(location) is not str or type(numel) is not int or numel < 0:
            raise unpickler.Malformed('a storage id is not (storage class, key, location, '
                                      'element count)')
        dtype = rebuild.storage_dtype(storage_type)
        storage = self.loaded.get(key)
        if storage is None:
            storage = self._load(key, dtype, numel, location)
        elif storage.dtype is not dtype or storage.array.size != numel:
            raise rebuild.LoadError(f'storage {key!r} is referred to as {numel} x '
                                    f'{storage_type} and as {storage.array.size} x '
                                    f'{storage.array.dtype}')
        if view is not None:
            storage = self._view(storage, view)
        return storage

    def _load(self, key, dtype, numel, location):
        np_dtype = np.dtype(np.uint8) if dtype is None else dtype.numpy
        raw = self.fetch(key, numel * np_dtype.itemsize)
        if dtype is not None and dtype.name == 'bool' and raw.size and raw.max() > 1:
            raise rebuild.LoadError(f'storage {key!r} is bool but holds bytes other than 0 '
                                    f'and 1 (corrupted data)')
        array = raw.view(np_dtype)
        if self.swap and np_dtype.itemsize > 1:
            array.byteswap(inplace=True)
        storage = rebuild.LoadedStorage(array, dtype, key, location)
        storage = rebuild.restore_location(storage, self.map_location)
        if self.cpu_only and storage.target != 'cpu':
            raise RuntimeError(f'dynagrad.load reads checkpoints of the legacy format onto the '
                               f'CPU only (their data follows the objects); load with '
                               f"map_location='cpu', then move the tensors to "
                               f'{storage.target}')
        self.loaded[key] = storage
        return storage

    def _view(self, storage, view):
        """A legacy file's storage view: (view key, element offset, element count)."""
        if not (isinstance(view, tuple) and len(view) == 3 and type(view[1]) is int and
                type(view[2]) is int and 0 <= view[1] and 0 <= view[2]
                and view[1] + view[2] <= storage.array.size):
            raise unpickler.Malformed('a storage view is not (key, offset, size) inside its '
                                      'storage')
        key = f'view {view[0]!r:.50}'
        got = self.loaded.get(key)
        if got is None:
            got = rebuild.LoadedStorage(storage.array[view[1]:view[1] + view[2]],
                                        storage.dtype, key, storage.location)
            got.vc, got.target = storage.vc, storage.target
            self.loaded[key] = got
        return got


def _unpickle(data, start, storages, opts):
    """(object, end position) of the pickle at ``data[start:]``."""
    if opts.weights_only:
        encoding = opts.load_args.get('encoding', 'utf-8')
        return unpickler.SafeUnpickler(data, storages, encoding, start).load()
    stream = io.BytesIO(data)
    stream.seek(start)
    up = unpickler.full_unpickler(opts.pickle_module, stream, storages, **opts.load_args)
    obj = up.load()
    return obj, stream.tell()


# -- PyTorch's zip format ----------------------------------------------------------------------

def _load_zip(fh, opts, mapped=None):
    name = opts.name
    try:
        archive = zipformat.ZipReader(fh, file_size(fh))
    except zipformat.BadArchive as e:
        raise CheckpointError(name, str(e)) from None
    records = archive.records
    if 'constants.pkl' in records:
        raise CheckpointError(name, 'this is a TorchScript archive (torch.jit.save); dynagrad '
                                    'cannot run TorchScript. In PyTorch, torch.save the '
                                    "module's state_dict() instead")
    if 'data.pkl' not in records:
        raise CheckpointError(name, f'the zip archive has no {archive.folder}/data.pkl record: '
                                    f'it is not a PyTorch checkpoint')
    try:
        version = _small_record(archive, 'version') or _small_record(archive, '.data/version')
        byteorder = _small_record(archive, 'byteorder')
        data_pkl = archive.read('data.pkl')
    except zipformat.BadArchive as e:
        raise CheckpointError(name, str(e)) from None
    if version is not None:
        try:
            number = int(version.decode('ascii').strip())
        except (UnicodeDecodeError, ValueError):
            raise CheckpointError(name, f'its version record {bytes(version[:20])!r} is not a '
                                        f'number') from None
        if not 1 <= number <= rebuild.MAX_FILE_FORMAT_VERSION:
            raise CheckpointError(name, f'Attempted to read a PyTorch file with version '
                                        f'{number}, but the maximum supported version for '
                                        f'reading is {rebuild.MAX_FILE_FORMAT_VERSION}')
    if byteorder not in (None, b'little', b'big'):
        raise CheckpointError(name, f'its byteorder record says {bytes(byteorder[:20])!r}, '
                                    f'not little or big')
    order = sys.byteorder if byteorder is None else byteorder.decode()

    def fetch(key, nbytes):
        record = records.get(f'data/{key}')
        if record is None:
            raise rebuild.LoadError(f'storage {key!r} has no record {archive.folder}/data/{key} '
                                    f'in the archive')
        try:
            record.check_stored()
        except zipformat.BadArchive as e:
            raise rebuild.LoadError(str(e)) from None
        if record.size != nbytes:
            raise rebuild.LoadError(f'record {record.name} holds {record.size} bytes but its '
                                    f'storage needs {nbytes}: truncated, corrupted or hostile')
        if not nbytes:
            return np.empty(0, np.uint8)
        if mapped is not None:
            return np.frombuffer(mapped, np.uint8, nbytes, record.offset)
        arr = np.empty(nbytes, np.uint8)
        try:
            archive.read(f'data/{key}', into=arr)
        except zipformat.BadArchive as e:
            raise rebuild.LoadError(str(e)) from None
        return arr

    storages = Storages(fetch, order != sys.byteorder, opts.map_location)
    return _unpickle(data_pkl, 0, storages, opts)[0]


def _small_record(archive, short):
    if short not in archive.records:
        return None
    if archive.records[short].size > 64:
        raise zipformat.BadArchive(f'record {short!r} is {archive.records[short].size} bytes; '
                                   f'it holds a short text')
    return bytes(archive.read(short))


# -- PyTorch's legacy format (before 1.6) ----------------------------------------------------

def _refuse_pid(pid):
    raise unpickler.Malformed('a header pickle of the legacy format refers to a storage')


def _header_pickle(data, pos):
    return unpickler.SafeUnpickler(data, _refuse_pid, 'utf-8', pos).load()


def _load_legacy(fh, opts):
    name = opts.name
    data = bytearray(file_size(fh) - fh.tell())
    del data[read_into(fh, data):]
    magic, pos = _header_pickle(data, 0)
    if type(magic) is not int or magic != LEGACY_MAGIC:
        raise CheckpointError(name, 'Invalid magic number; corrupt file?')
    version, pos = _header_pickle(data, pos)
    if type(version) is not int or version != LEGACY_PROTOCOL_VERSION:
        raise CheckpointError(name, f'Invalid protocol version: {version!r:.50}')
    info, pos = _header_pickle(data, pos)
    if not isinstance(info, dict):
        raise CheckpointError(name, 'the legacy header\'s system info is not a dict')
    little = info.get('little_endian', True)
    if type(little) is not bool:
        raise CheckpointError(name, 'the legacy header\'s little_endian flag is not a bool')
    budget = [len(data) - pos]          # bytes the storages may take: what the file holds

    def fetch(key, nbytes):
        budget[0] -= nbytes + 8
        if budget[0] < 0:
            raise rebuild.LoadError('its storages declare more bytes than the file holds: '
                                    'truncated or hostile')
        return np.zeros(nbytes, np.uint8)

    swap = little != (sys.byteorder == 'little')
    storages = Storages(fetch, False, opts.map_location, cpu_only=True)
    obj, pos = _unpickle(data, pos, storages, opts)
    keys, pos = _header_pickle(data, pos)
    if type(keys) is not list:
        raise CheckpointError(name, 'the legacy storage key list is not a list')
    filled = set()
    for key in keys:
        storage = storages.loaded.get(key) if type(key) is str else None
        if storage is None or key in filled:
            raise CheckpointError(name, f'the legacy storage key list names {key!r:.50}, which '
                                        f'no tensor uses (or twice)')
        if pos + 8 > len(data):
            raise CheckpointError(name, 'the file ends before all storages: truncated')
        numel = int.from_bytes(data[pos:pos + 8], 'little' if little else 'big', signed=True)
        nbytes = storage.array.nbytes
        if numel != storage.array.size or pos + 8 + nbytes > len(data):
            raise CheckpointError(name, f'storage {key!r} holds {numel} elements in the file '
                                        f'but {storage.array.size} in its id, or runs past '
                                        f'the end: truncated or corrupted')
        raw = np.frombuffer(data, np.uint8, nbytes, pos + 8)
        if storage.array.dtype == np.bool_ and raw.size and raw.max() > 1:
            raise CheckpointError(name, f'storage {key!r} is bool but holds bytes other than 0 '
                                        f'and 1 (corrupted data)')
        storage.array.view(np.uint8)[:] = raw
        if swap and storage.array.itemsize > 1:
            storage.array.byteswap(inplace=True)
        pos += 8 + nbytes
        filled.add(key)
    missing = [k for k in storages.loaded if not k.startswith('view ') and k not in filled]
    if missing:
        raise CheckpointError(name, f'storages {missing[:5]} have no data in the file')
    return obj


# -- load ---------------------------------------------------------------------------------------

def _truthy(name):
    return os.environ.get(name, '').lower() in ('1', 'y', 'yes', 'true')


def _default_weights_only(pickle_module):
    """PyTorch's default and its two environment switches (they keep their torch names, as
    the environments of PyTorch programs set them)."""
    if _truthy('TORCH_FORCE_WEIGHTS_ONLY_LOAD'):
        return True
    if _truthy('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'):
        warnings.warn('Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since '
                      'the `weights_only` argument was not explicitly passed to '
                      '`dynagrad.load`, forcing weights_only=False.', UserWarning,
                      stacklevel=3)
        return False
    return pickle_module is None


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved with ``dynagrad.save`` or ``torch.save``.

    ``f``: a path or a seekable binary file object. ``map_location``: None, a device or
    device string ('cpu'), a dict of location -> location, or a callable
    ``(storage, location) -> storage or None``, as in ``torch.load``; a device this machine
    lacks raises PyTorch's error. ``weights_only`` (True unless ``pickle_module`` is given):
    unpickle only tensors, containers, numbers, strings and what ``add_safe_globals``
    allows, never running code from the file; ``weights_only=False`` unpickles anything,
    as ``pickle`` does, so only for files you trust. ``mmap=True`` maps the file instead
    of reading it (zip format, ``f`` a path): tensors view the mapped pages,
    copy-on-write. Also reads files in PyTorch's legacy format and safetensors files
    (dynagrad's earlier checkpoints among them).

    A truncated, corrupted or malformed file raises ``CheckpointError`` naming it; a
    weights-only load that meets a global it does not allow raises
    ``pickle.UnpicklingError`` saying how to allow it.
    """
    if weights_only is None or _truthy('TORCH_FORCE_WEIGHTS_ONLY_LOAD'):
        weights_only = _default_weights_only(pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError('Can not safely load weights when explicit pickle_module is '
                               'specified')
        if pickle_load_args:
            warnings.warn('pickle_load_args only works if `weights_only=False`.',
                          stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault('encoding', 'utf-8')
    opts = Options(name_of(f), map_location, bool(weights_only), pickle_module,
                   pickle_load_args)
    if is_path(f):
        with open(os.fsdecode(f), 'rb') as fh:
            return _load_file(fh, opts, os.fsdecode(f) if mmap else None)
    if not hasattr(f, 'read'):
        raise TypeError(f'dynagrad.load: f must be a path or a binary file object, not '
                        f'{type(f).__name__}')
    check_seekable(f, opts.name)
    if mmap:
        head = f.read(4)
        f.seek(-len(head), io.SEEK_CUR)
        if head == b'PK\x03\x04':
            raise ValueError('f must be a file path in order to use the mmap argument')
    return _load_file(f, opts, None, mmap_wanted=bool(mmap))


def _load_file(fh, opts, mmap_path, mmap_wanted=False):
    name = opts.name
    start = fh.tell()
    head = fh.read(16)
    fh.seek(start)
    if not isinstance(head, (bytes, bytearray)):
        raise TypeError(f'dynagrad.load: the file object must be opened in binary mode (read() '
                        f'returned {type(head).__name__})')
    try:
        if not head:
            raise CheckpointError(name, 'the file is empty (0 bytes)')
        if head[:4] in (b'PK\x03\x04', b'PK\x05\x06'):
            if mmap_path is not None:
                return _load_mapped(fh, opts, mmap_path)
            return _load_zip(fh, opts)
        if mmap_path is not None or mmap_wanted:
            shown = f'{mmap_path}, ' if mmap_path is not None else ''
            raise RuntimeError(f'mmap can only be used with files saved with '
                               f'`dynagrad.save({shown}_use_new_zipfile_serialization=True), '
                               f'please dynagrad.save your checkpoint with this option in '
                               f'order to use mmap.')
        if head[:1] == b'\x80':
            return _load_legacy(fh, opts)
        if safetensors_layout.looks_like(head):
            return safetensors_layout.load(fh.read(), name, opts.map_location)
        raise CheckpointError(name, f'it is neither PyTorch\'s zip format, its legacy format, '
                                    f'nor a safetensors file (it starts with {bytes(head[:8])!r})')
    except unpickler.Refused as e:
        raise pickle.UnpicklingError(weights_only_message(str(e), name)) from None
    except unpickler.Malformed as e:
        raise CheckpointError(name, f'its pickle is malformed: {e}') from None
    except rebuild.LoadError as e:
        raise CheckpointError(name, str(e)) from None
    except (pickle.UnpicklingError, EOFError) as e:
        if opts.weights_only:
            raise
        raise CheckpointError(name, f'its pickle is malformed ({type(e).__name__}: {e})') \
            from e


def _load_mapped(fh, opts, path):
    import mmap
    mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    try:
        return _load_zip(fh, opts, mapped)
    except BaseException:
        try:
            mapped.close()
        except BufferError:
            pass            # an array still views it; it closes when that goes
        raise


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint (zip format) names that weights-only loading would refuse:
    neither in PyTorch's allowlist nor marked safe, as 'module.name' strings. The pickle is
    read, not run."""
    import pickletools
    name = name_of(f)
    fh = open(os.fsdecode(f), 'rb') if is_path(f) else f
    try:
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
        if head != b'PK\x03\x04':
            raise ValueError('Expected input to be a checkpoint returned by dynagrad.save or '
                             'torch.save')
        try:
            archive = zipformat.ZipReader(fh, file_size(fh))
            data = bytes(archive.read('data.pkl'))
        except (zipformat.BadArchive, KeyError) as e:
            raise CheckpointError(name, f'no readable data.pkl record ({e})') from None
    finally:
        if fh is not f:
            fh.close()
    allowed = set(rebuild.torch_globals()) | set(unpickler.user_table())
    found, strings = set(), []
    try:
        for op, arg, _pos in pickletools.genops(data):
            if op.name == 'GLOBAL':
                module, global_name = arg.split(' ', 1)
                found.add('.'.join(unpickler.fix_name(module, global_name)))
            elif op.name == 'STACK_GLOBAL' and len(strings) >= 2:
                found.add(f'{strings[-2]}.{strings[-1]}')
            elif isinstance(arg, str):
                strings.append(arg)
    except ValueError as e:
        raise CheckpointError(name, f'its pickle is malformed ({e})') from None
    return sorted(found - allowed)
