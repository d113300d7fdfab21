"""Checkpoints: ``save(obj, f)`` and ``load(f)``, in the safetensors format.

A checkpoint is one safetensors file. Its tensors are the tensors of ``obj``; everything
else (the nesting of dicts, lists and tuples, numbers, strings, bools, ``None``, each
tensor's ``requires_grad`` flag and whether it was a ``Parameter``) is JSON in the file's
metadata, where tensors are referenced by their key. A tensor's key is its path in the
object: a state dict ``{'fc.weight': w}`` stores ``w`` under ``fc.weight``, so the file is
what ``safetensors.torch.save_file(state_dict)`` would write and PyTorch reads it with
``safetensors.torch.load_file``. In the other direction, a safetensors file written by
PyTorch (or anyone) loads as a dict of name -> tensor.

Safety:

* Loading never executes code from the file: no pickle anywhere, only JSON and raw bytes.
* Every file is checked before any tensor is built: header length, JSON, dtypes, shapes
  against byte counts, offsets inside the file, no overlaps or holes. dynagrad files also
  carry a CRC-32 per tensor and a SHA-256 of the header content, so flipped bytes are
  found. Any problem raises ``CheckpointError`` (a ``RuntimeError``) naming the file and
  what is wrong.
* Writes to a path are atomic: the bytes go to a temporary file in the same directory,
  which is flushed, fsynced and renamed over the target (``os.replace``), then the
  directory is fsynced. A crash or an exception mid-save leaves the previous file as it
  was and removes the temporary file. (Writes to a file object are plain writes.)

Needs the ``safetensors`` package (``pip install dynagrad[checkpoints]``), imported only
when a checkpoint is saved or loaded.
"""
import hashlib
import json
import math
import os
import secrets
import stat
import zlib
from collections import OrderedDict

import numpy as np

from .tensor import Tensor, check_device, wrap
from .size import Size

__all__ = ['save', 'load', 'CheckpointError']

_FORMAT_VERSION = '1'
_MAX_HEADER = 100 * 1024 * 1024          # the safetensors library's own limit
_CHUNK = 1 << 20                         # bytes per write call

# safetensors dtype names <-> NumPy dtypes dynagrad has (little-endian on disk).
_TO_NUMPY = {'F16': '<f2', 'F32': '<f4', 'F64': '<f8', 'I8': 'i1', 'I16': '<i2',
             'I32': '<i4', 'I64': '<i8', 'U8': 'u1', 'BOOL': '?'}
_FROM_NUMPY = {np.dtype(v).newbyteorder('='): k for k, v in _TO_NUMPY.items()}
_OTHER_DTYPES = {'BF16', 'U16', 'U32', 'U64', 'F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'F4', 'F6_E2M3',
                 'F6_E3M2', 'C64', 'C128', 'F128'}


class CheckpointError(RuntimeError):
    """A checkpoint file that cannot be read: truncated, corrupted, hostile or unsupported.

    ``path`` names the file, ``reason`` says what is wrong.
    """

    def __init__(self, path, reason):
        self.path = path
        self.reason = reason
        super().__init__(f'dynagrad.load: cannot read {path!r}: {reason}')


def _safetensors_numpy():
    try:
        import safetensors.numpy as stn
    except ImportError as e:
        raise ImportError('dynagrad.save and dynagrad.load write and read safetensors files '
                          'and need the safetensors package: pip install dynagrad[checkpoints]'
                          ) from e
    return stn


# -- encoding the object -----------------------------------------------------------------

_SCALARS = (type(None), bool, int, float, str)


class _Encoder:
    """Turns ``obj`` into a JSON-able tree plus a dict of key -> array."""

    def __init__(self):
        self.arrays = {}        # key -> contiguous little-endian array
        self.by_id = {}         # id(tensor) -> key, so a tensor saved twice is stored once
        self.keep = []          # objects whose ids are in by_id
        self.active = set()     # containers on the current path (cycle check)

    def key_for(self, path):
        base = '.'.join(path) if path else 'tensor'
        key, n = base, 1
        while key in self.arrays or key == '__metadata__':
            n += 1
            key = f'{base}#{n}'
        return key

    def array(self, obj, arr, path):
        if id(obj) in self.by_id:
            return self.by_id[id(obj)]
        arr = np.asarray(arr)
        name = _FROM_NUMPY.get(arr.dtype.newbyteorder('='))
        if name is None:
            raise TypeError(f'dynagrad.save: cannot store an array of dtype {arr.dtype} (at '
                            f'{_where(path)}); supported: float16/32/64, int8/16/32/64, uint8, '
                            f'bool')
        arr = arr.astype(np.dtype(_TO_NUMPY[name]), order='C', copy=False)   # keeps 0-d
        key = self.key_for(path)
        self.arrays[key] = arr
        self.by_id[id(obj)] = key
        self.keep.append(obj)
        return key

    def encode(self, obj, path):
        if isinstance(obj, float) and not math.isfinite(obj):
            return {'float': repr(obj)}
        if type(obj) in _SCALARS:
            return obj
        if isinstance(obj, Tensor):
            from .nn.parameter import Parameter
            node = {'tensor': self.array(obj, obj._data, path),
                    'requires_grad': bool(obj._requires_grad)}
            if isinstance(obj, Parameter):
                node['parameter'] = True
            return node
        if isinstance(obj, np.ndarray) and type(obj) is np.ndarray:
            return {'ndarray': self.array(obj, obj, path)}
        if isinstance(obj, np.generic):
            if np.dtype(obj.dtype).newbyteorder('=') not in _FROM_NUMPY:
                raise TypeError(f'dynagrad.save: cannot store a NumPy {obj.dtype} scalar (at '
                                f'{_where(path)})')
            return {'npscalar': self.array(np.array(obj), np.array(obj), path)}
        if type(obj) in (list, tuple, Size, dict, OrderedDict):
            if id(obj) in self.active:
                raise ValueError(f'dynagrad.save: the object contains itself (at '
                                 f'{_where(path)}); cannot store a cycle')
            self.active.add(id(obj))
            try:
                return self.container(obj, path)
            finally:
                self.active.discard(id(obj))
        raise TypeError(f'dynagrad.save: cannot store an object of type '
                        f'{type(obj).__module__}.{type(obj).__qualname__} (at {_where(path)}); '
                        f'a checkpoint holds tensors, NumPy arrays, and dicts, lists and tuples '
                        f'of them, of numbers, strings, bools and None')

    def container(self, obj, path):
        if type(obj) is list:
            return [self.encode(v, path + (str(i),)) for i, v in enumerate(obj)]
        if type(obj) in (tuple, Size):
            tag = 'tuple' if type(obj) is tuple else 'size'
            return {tag: [self.encode(v, path + (str(i),)) for i, v in enumerate(obj)]}
        items = []
        for k, v in obj.items():
            items.append([self.key(k, path), self.encode(v, path + (str(k),))])
        return {'dict' if type(obj) is dict else 'odict': items}

    def key(self, k, path):
        if isinstance(k, float) and not math.isfinite(k):
            return {'float': repr(k)}
        if type(k) in _SCALARS:
            return k
        if type(k) is tuple:
            return {'tuple': [self.key(v, path) for v in k]}
        raise TypeError(f'dynagrad.save: cannot store a dict key of type {type(k).__name__} '
                        f'(at {_where(path)}); keys must be strings, numbers, bools, None or '
                        f'tuples of them')


def _where(path):
    return repr('.'.join(path)) if path else 'the top level'


def _checksum(obj_json, crc_json, specs):
    """SHA-256 over everything in the header that says what the tensors are."""
    text = json.dumps([obj_json, crc_json, sorted(specs)], separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _serialize(obj):
    enc = _Encoder()
    tree = enc.encode(obj, ())
    stn = _safetensors_numpy()
    obj_json = json.dumps(tree, separators=(',', ':'), allow_nan=False)
    crcs = {k: zlib.crc32(memoryview(a).cast('B')) if a.size else 0
            for k, a in enc.arrays.items()}
    crc_json = json.dumps(crcs, separators=(',', ':'), sort_keys=True)
    specs = [[k, _FROM_NUMPY[a.dtype.newbyteorder('=')], list(a.shape)]
             for k, a in enc.arrays.items()]
    metadata = {'format': 'pt', 'dynagrad.format': _FORMAT_VERSION,
                'dynagrad.object': obj_json, 'dynagrad.crc32': crc_json,
                'dynagrad.sha256': _checksum(obj_json, crc_json, specs)}
    return stn.save(enc.arrays, metadata=metadata)


# -- writing -----------------------------------------------------------------------------

def _write_chunk(fh, chunk):
    """One write of the save loop (tests make it fail part-way to simulate a crash)."""
    fh.write(chunk)


def _write_all(fh, data):
    view = memoryview(data)
    for start in range(0, len(view), _CHUNK):
        _write_chunk(fh, view[start:start + _CHUNK])


def _fsync_dir(directory):
    if not hasattr(os, 'O_DIRECTORY'):
        return          # Windows: directories cannot be opened for fsync
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path, data):
    path = os.path.abspath(path)
    directory, base = os.path.split(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f'dynagrad.save: {path!r} is a directory')
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = os.path.join(directory, f'.{base}.{secrets.token_hex(6)}.tmp')
    # 0o666 through the umask, as open(path, 'wb') would create it.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_BINARY', 0), 0o666)
    try:
        with os.fdopen(fd, 'wb') as fh:
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def save(obj, f):
    """Save ``obj`` (a tensor, or dicts/lists/tuples of tensors, NumPy arrays, numbers,
    strings, bools and None, such as model and optimizer state dicts) to ``f``.

    ``f`` is a path (written atomically: the previous file survives any failure) or a
    binary file object. The file is safetensors; see the module docstring.
    """
    data = _serialize(obj)      # everything that can fail on the object fails before any I/O
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        _atomic_write(path, data)
        return
    if not hasattr(f, 'write'):
        raise TypeError(f'dynagrad.save: f must be a path or a binary file object, not '
                        f'{type(f).__name__}')
    _write_all(f, data)
    if hasattr(f, 'flush'):
        f.flush()


# -- reading -----------------------------------------------------------------------------

def _read(f):
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        with open(path, 'rb') as fh:
            return path, fh.read()
    if not hasattr(f, 'read'):
        raise TypeError(f'dynagrad.load: f must be a path or a binary file object, not '
                        f'{type(f).__name__}')
    name = getattr(f, 'name', None)
    name = os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else '<file object>'
    buf = f.read()
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f'dynagrad.load: the file object must be opened in binary mode (read() '
                        f'returned {type(buf).__name__})')
    return name, bytes(buf)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _parse_header(buf, name):
    """Check the whole layout; return (metadata, [(key, dtype, shape, begin, end)], start)."""
    def bad(reason):
        return CheckpointError(name, reason)

    size = len(buf)
    if size == 0:
        raise bad('the file is empty (0 bytes)')
    if buf[:4] == b'PK\x03\x04':
        raise bad('this is a zip archive, as torch.save writes (with pickled objects inside); '
                  'dynagrad reads safetensors files only and never unpickles. In PyTorch, '
                  'convert it with safetensors.torch.save_file(torch.load(path), new_path)')
    if size < 8:
        raise bad(f'truncated file: {size} bytes, shorter than the 8-byte header length')
    n = int.from_bytes(buf[:8], 'little')
    if n > _MAX_HEADER:
        raise bad(f'header length {n} is over the {_MAX_HEADER}-byte limit (not a '
                  f'safetensors file, corrupted, or hostile)')
    if n > size - 8:
        raise bad(f'header length {n} runs past the end of the file ({size - 8} bytes follow '
                  f'the length field): truncated or not a safetensors file')
    try:
        header = json.loads(buf[8:8 + n].decode('utf-8'))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise bad(f'the header is not valid JSON ({type(e).__name__}: {e})') from None
    if not isinstance(header, dict):
        raise bad(f'the header is a JSON {type(header).__name__}, not an object')
    meta = header.pop('__metadata__', None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise bad('the header\'s __metadata__ is not an object of strings')
    data_len = size - 8 - n
    entries = []
    for key, info in header.items():
        if not isinstance(info, dict) or set(info) != {'dtype', 'shape', 'data_offsets'}:
            raise bad(f'tensor {key!r}: header entry must hold exactly dtype, shape and '
                      f'data_offsets, got {info!r:.200}')
        dt, shape, offs = info['dtype'], info['shape'], info['data_offsets']
        if dt not in _TO_NUMPY:
            if dt in _OTHER_DTYPES:
                raise bad(f'tensor {key!r} has dtype {dt}, which dynagrad does not have '
                          f'(it has {", ".join(_TO_NUMPY)}); convert it in PyTorch first')
            raise bad(f'tensor {key!r} has an unknown dtype {dt!r:.50}')
        if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
            raise bad(f'tensor {key!r}: shape {shape!r:.200} is not a list of non-negative '
                      f'integers')
        if not (isinstance(offs, list) and len(offs) == 2 and all(map(_is_int, offs))
                and 0 <= offs[0] <= offs[1]):
            raise bad(f'tensor {key!r}: data_offsets {offs!r:.200} are not [begin, end] with '
                      f'0 <= begin <= end')
        begin, end = offs
        if end > data_len:
            raise bad(f'tensor {key!r}: data offsets [{begin}, {end}] lie outside the data '
                      f'section, which holds {data_len} bytes: truncated or hostile file')
        need = math.prod(shape) * np.dtype(_TO_NUMPY[dt]).itemsize
        if need != end - begin:
            raise bad(f'tensor {key!r}: dtype {dt} and shape {shape} need {need} bytes but its '
                      f'data offsets [{begin}, {end}] span {end - begin}')
        entries.append((key, dt, shape, begin, end))
    pos, prev = 0, None
    for key, dt, shape, begin, end in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin < pos:
            raise bad(f'tensors {prev!r} and {key!r} overlap in the data section')
        if begin > pos:
            raise bad(f'{begin - pos} bytes of the data section before tensor {key!r} belong '
                      f'to no tensor (corrupted offsets)')
        pos, prev = end, key
    if pos != data_len:
        raise bad(f'the data section holds {data_len} bytes but the tensors cover {pos}: '
                  f'trailing bytes (corrupted or not a safetensors file)')
    return meta, entries, 8 + n


def _decode_arrays(buf, name, entries, start):
    stn = _safetensors_numpy()
    try:
        loaded = stn.load(buf)
    except Exception as e:   # the library's SafetensorError; our checks should catch it first
        raise CheckpointError(name, f'safetensors could not read it ({e})') from None
    arrays = {}
    for key, dt, shape, begin, end in entries:
        a = loaded.get(key)
        if a is None or list(a.shape) != shape:
            raise CheckpointError(name, f'tensor {key!r} did not decode as its header says')
        if dt == 'BOOL':
            raw = np.frombuffer(buf, np.uint8, end - begin, start + begin)
            if raw.size and raw.max() > 1:
                raise CheckpointError(name, f'tensor {key!r} is BOOL but holds bytes other '
                                            f'than 0 and 1 (corrupted data)')
        a = a.astype(a.dtype.newbyteorder('='), copy=False)
        if not a.flags.writeable or not a.flags.c_contiguous:
            a = a.copy()
        arrays[key] = a
    return arrays


def _check_map_location(map_location):
    if map_location is None or callable(map_location):
        return      # a callable can only move storages between devices; all is on the CPU
    if isinstance(map_location, dict):
        for v in map_location.values():
            check_device(v)
        return
    check_device(map_location)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None):
    """Load what ``save`` wrote (or any safetensors file, as a dict of name -> tensor).

    Never executes code from the file, whatever ``weights_only`` says (there is no pickle).
    ``map_location`` may only name the CPU (dynagrad's one device). A file that is
    truncated, corrupted or malformed raises ``CheckpointError`` naming it.
    """
    if pickle_module is not None:
        raise TypeError('dynagrad.load never unpickles: checkpoints are safetensors files, '
                        'so pickle_module is not supported')
    _check_map_location(map_location)
    name, buf = _read(f)
    meta, entries, start = _parse_header(buf, name)
    if any(k.startswith('dynagrad') for k in meta):   # one corrupted key name is not enough
        return _load_dynagrad(buf, name, meta, entries, start)     # to pass as a plain file
    arrays = _decode_arrays(buf, name, entries, start)
    out = {}
    for key, *_rest in sorted(entries, key=lambda e: e[3]):
        out[key] = wrap(arrays[key])
    return out


def _load_dynagrad(buf, name, meta, entries, start):
    version = meta.get('dynagrad.format', _FORMAT_VERSION)
    if version != _FORMAT_VERSION:
        raise CheckpointError(name, f'dynagrad checkpoint format {version!r:.20} is not one '
                                    f'this version reads ({_FORMAT_VERSION!r}); it may come '
                                    f'from a newer dynagrad')
    keys = ('dynagrad.format', 'dynagrad.object', 'dynagrad.crc32', 'dynagrad.sha256')
    odd = sorted(k for k in meta if k.startswith('dynagrad') and k not in keys)
    missing = [k for k in keys if k not in meta]
    if odd or missing:
        raise CheckpointError(name, f'the dynagrad metadata is corrupted (missing: '
                                    f'{", ".join(missing) or "none"}; unknown: '
                                    f'{", ".join(repr(k[:40]) for k in odd) or "none"})')
    obj_json, crc_json = meta['dynagrad.object'], meta['dynagrad.crc32']
    specs = [[k, dt, shape] for k, dt, shape, _b, _e in entries]
    if _checksum(obj_json, crc_json, specs) != meta['dynagrad.sha256']:
        raise CheckpointError(name, 'the header checksum does not match: the header (tensor '
                                    'names, dtypes, shapes or the object metadata) is '
                                    'corrupted')
    try:
        crcs = json.loads(crc_json)
        tree = json.loads(obj_json)
    except (ValueError, RecursionError) as e:
        raise CheckpointError(name, f'the object metadata is not valid JSON ({e})') from None
    if (not isinstance(crcs, dict) or set(crcs) != {e[0] for e in entries}
            or not all(_is_int(v) for v in crcs.values())):
        raise CheckpointError(name, 'the CRC table does not list exactly the file\'s tensors')
    for key, dt, shape, begin, end in entries:
        crc = zlib.crc32(memoryview(buf)[start + begin:start + end]) if end > begin else 0
        if crc != crcs[key]:
            raise CheckpointError(name, f'the data of tensor {key!r} is corrupted (CRC-32 '
                                        f'{crc:#010x}, expected {crcs[key]:#010x})')
    arrays = _decode_arrays(buf, name, entries, start)
    try:
        return _Decoder(arrays, name).decode(tree)
    except RecursionError:
        raise CheckpointError(name, 'the object metadata is nested too deeply') from None


class _Decoder:
    def __init__(self, arrays, name):
        self.arrays = arrays
        self.name = name
        self.made = {}      # key -> object, so a tensor saved twice loads as one object

    def bad(self, what):
        return CheckpointError(self.name, f'malformed object metadata: {what}')

    def array(self, key):
        if not isinstance(key, str) or key not in self.arrays:
            raise self.bad(f'reference to a tensor {key!r:.100} the file does not hold')
        return self.arrays[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or not node:
            raise self.bad(f'unexpected {node!r:.100}')
        if 'tensor' in node:
            return self.tensor(node)
        if len(node) != 1:
            raise self.bad(f'unexpected {node!r:.100}')
        (tag, val), = node.items()
        if tag in ('ndarray', 'npscalar'):
            a = self.array(val)
            if val in self.made:
                return self.made[val]
            out = a if tag == 'ndarray' else a[()]
            self.made[val] = out
            return out
        if tag == 'float' and val in ('nan', 'inf', '-inf'):
            return float(val)
        if tag in ('tuple', 'size') and isinstance(val, list):
            items = tuple(self.decode(v) for v in val)
            return items if tag == 'tuple' else Size(items)
        if tag in ('dict', 'odict') and isinstance(val, list):
            out = {} if tag == 'dict' else OrderedDict()
            for item in val:
                if not (isinstance(item, list) and len(item) == 2):
                    raise self.bad(f'dict item {item!r:.100} is not a [key, value] pair')
                k = self.decode(item[0])
                try:
                    out[k] = self.decode(item[1])
                except TypeError:
                    raise self.bad(f'unhashable dict key {k!r:.100}') from None
            return out
        raise self.bad(f'unknown node {node!r:.100}')

    def tensor(self, node):
        key = node['tensor']
        if set(node) - {'tensor', 'requires_grad', 'parameter'}:
            raise self.bad(f'unexpected {node!r:.100}')
        a = self.array(key)
        if key in self.made:
            return self.made[key]
        requires_grad = node.get('requires_grad', False) is True
        t = wrap(a)
        try:
            if node.get('parameter') is True:
                from .nn.parameter import Parameter
                t = Parameter(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        except RuntimeError as e:
            raise self.bad(f'tensor {key!r}: {e}') from None
        self.made[key] = t
        return t
