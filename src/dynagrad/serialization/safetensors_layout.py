"""Reading safetensors files: dynagrad's checkpoints before it wrote PyTorch's format, and
any safetensors file (loaded as a dict of name -> tensor, as ``torch.load`` loads a
``.safetensors`` path).

A dynagrad checkpoint of that layout keeps the object's structure as JSON in the file's
metadata (``dynagrad.object``) with a CRC-32 per tensor and a SHA-256 of the header, so
flipped bytes are found. Everything is checked before any tensor is built: header
length, JSON, dtypes, shapes against byte counts, offsets inside the file, no overlaps or
holes. No pickle is involved. NumPy decodes the data; the safetensors package is not
needed.
"""
import hashlib
import json
import math
import zlib
from collections import OrderedDict

import numpy as np

from ..size import Size
from ..tensor import wrap
from .files import CheckpointError
from . import names, rebuild

FORMAT_VERSION = '1'
MAX_HEADER = 100 * 1024 * 1024          # the safetensors library's own limit

# safetensors dtype names -> dynagrad dtype names (little-endian on disk). Those dynagrad
# lacks (bfloat16 until it has one) are refused with a clear message.
DTYPE_NAMES = {'F16': 'float16', 'BF16': 'bfloat16', 'F32': 'float32', 'F64': 'float64',
               'I8': 'int8', 'I16': 'int16', 'I32': 'int32', 'I64': 'int64', 'U8': 'uint8',
               'U16': 'uint16', 'U32': 'uint32', 'U64': 'uint64', 'BOOL': 'bool',
               'F8_E4M3': 'float8_e4m3fn', 'F8_E5M2': 'float8_e5m2',
               'F8_E8M0': 'float8_e8m0fnu'}
_OTHER_DTYPES = {'F4', 'F6_E2M3',
                 'F6_E3M2', 'C64', 'C128', 'F128'}


def disk_dtypes():
    """safetensors dtype name -> little-endian NumPy dtype, for the dtypes dynagrad has."""
    have = names.dynagrad_dtypes()
    return {k: have[v].numpy.newbyteorder('<') for k, v in DTYPE_NAMES.items() if v in have}


def looks_like(head):
    """Whether the first bytes of a file are a safetensors header: a little-endian length,
    then a JSON object."""
    return len(head) >= 9 and head[8:9] == b'{'


def checksum(obj_json, crc_json, specs):
    """SHA-256 over everything in the header that says what the tensors are."""
    text = json.dumps([obj_json, crc_json, sorted(specs)], separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def parse_header(buf, name, who='dynagrad.load'):
    """Check the whole layout; return (metadata, [(key, dtype, shape, begin, end)], start)."""
    def bad(reason):
        return CheckpointError(name, reason, who)

    size = len(buf)
    if size < 8:
        raise bad(f'truncated file: {size} bytes, shorter than the 8-byte header length')
    n = int.from_bytes(buf[:8], 'little')
    if n > MAX_HEADER:
        raise bad(f'header length {n} is over the {MAX_HEADER}-byte limit (not a '
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
    to_numpy = disk_dtypes()
    entries = []
    for key, info in header.items():
        if not isinstance(info, dict) or set(info) != {'dtype', 'shape', 'data_offsets'}:
            raise bad(f'tensor {key!r}: header entry must hold exactly dtype, shape and '
                      f'data_offsets, got {info!r:.200}')
        dt, shape, offs = info['dtype'], info['shape'], info['data_offsets']
        if dt not in to_numpy:
            if dt in _OTHER_DTYPES or dt in DTYPE_NAMES:
                raise bad(f'tensor {key!r} has dtype {dt}, which dynagrad does not have '
                          f'(it has {", ".join(to_numpy)}); convert it in PyTorch first')
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
        need = math.prod(shape) * to_numpy[dt].itemsize
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


def decode_arrays(buf, name, entries, start, who='dynagrad.load'):
    """key -> writable native-order array (a copy of the file's bytes)."""
    arrays = {}
    to_numpy = disk_dtypes()
    for key, dt, shape, begin, end in entries:
        disk = to_numpy[dt]
        a = np.frombuffer(buf, disk, math.prod(shape), start + begin).reshape(shape)
        if dt == 'BOOL':
            raw = np.frombuffer(buf, np.uint8, end - begin, start + begin)
            if raw.size and raw.max() > 1:
                raise CheckpointError(name, f'tensor {key!r} is BOOL but holds bytes other '
                                            f'than 0 and 1 (corrupted data)', who)
        arrays[key] = a.astype(disk.newbyteorder('='), copy=True)
    return arrays


def load(buf, name, map_location=None):
    """The object in the safetensors file whose bytes are ``buf``."""
    if map_location is not None and not callable(map_location):
        locations = map_location.values() if isinstance(map_location, dict) else [map_location]
        for loc in locations:
            rebuild.check_location(str(loc))
    meta, entries, start = parse_header(buf, name)
    if any(k.startswith('dynagrad') for k in meta):   # one corrupted key name is not enough
        return _load_dynagrad(buf, name, meta, entries, start)     # to pass as a plain file
    return load_plain(buf, name, entries, start)


def load_plain(buf, name, entries, start, who='dynagrad.load'):
    """name -> tensor, in the order of the data."""
    arrays = decode_arrays(buf, name, entries, start, who)
    return {key: wrap(arrays[key]) for key, *_rest in sorted(entries, key=lambda e: e[3])}


def _load_dynagrad(buf, name, meta, entries, start):
    version = meta.get('dynagrad.format', FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise CheckpointError(name, f'dynagrad checkpoint format {version!r:.20} is not one '
                                    f'this version reads ({FORMAT_VERSION!r}); it may come '
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
    if checksum(obj_json, crc_json, specs) != meta['dynagrad.sha256']:
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
    arrays = decode_arrays(buf, name, entries, start)
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
                from ..nn.parameter import Parameter
                t = Parameter(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        except RuntimeError as e:
            raise self.bad(f'tensor {key!r}: {e}') from None
        self.made[key] = t
        return t
