"""The zip container of PyTorch's checkpoint format, written and read strictly.

Writing mirrors what ``torch.save`` produces: every record is stored (never compressed),
its data starts on a 64-byte boundary (the local header's extra field carries the padding,
tagged ``FB``), and its CRC-32 and sizes follow the data in a data descriptor, so the data
is read once while it is written. Zip64 fields appear only where a size, an offset or the
record count needs them.

Reading checks everything a hostile archive could lie about before anything is allocated:
records read must be stored uncompressed, none may be encrypted, all lie under one
top-level folder, with
unique names, local headers that match the central directory, and data that lies inside
the file without two records overlapping. So a record's size is backed by that many bytes
of the file, and reading it allocates no more than the file holds.
"""
import struct
import zlib

ALIGNMENT = 64
CHUNK = 1 << 20                    # bytes per write call
ZIP64_LIMIT = 0xFFFFFFFF           # a size or offset at least this large needs zip64
COUNT_LIMIT = 0xFFFF               # (tests lower both to exercise the zip64 fields)
_MAX32, _MAX16 = 0xFFFFFFFF, 0xFFFF     # what a field holds when zip64 holds the value

_LOCAL = struct.Struct('<IHHHHHIIIHH')              # local file header, 30 bytes
_CENTRAL = struct.Struct('<IHHHHHHIIIHHHHHII')      # central directory header, 46 bytes
_END = struct.Struct('<IHHHHIIH')                   # end of central directory, 22 bytes
_END64 = struct.Struct('<IQHHIIQQQQ')               # zip64 end of central directory, 56
_LOCATOR64 = struct.Struct('<IIQI')                 # zip64 end locator, 20 bytes
_FLAG_DESCRIPTOR = 0x0008
_FLAG_UTF8 = 0x0800
_PAD_TAG = 0x4246                                   # b'FB', as PyTorch's writer tags it


def write_chunk(fh, chunk):
    """One write call of a save (tests make it fail part-way to simulate a crash)."""
    fh.write(chunk)


def read_into(fh, buf):
    """Fill ``buf`` from ``fh``; return how many bytes came (fewer at the end of the file)."""
    view = memoryview(buf).cast('B')
    readinto = getattr(fh, 'readinto', None)
    got = 0
    while got < len(view):
        if readinto is not None:
            n = readinto(view[got:])
        else:
            chunk = fh.read(min(len(view) - got, CHUNK))
            n = len(chunk)
            view[got:got + n] = chunk
        if not n:
            break
        got += n
    return got


class ZipWriter:
    """Writes records one after another to a binary file object; ``close`` writes the
    central directory. Only ``write`` is called on the file: it need not be seekable."""

    def __init__(self, fh, write=None):
        self.fh = fh
        self.write_chunk = write or (lambda chunk: write_chunk(fh, chunk))
        self.pos = 0
        self.entries = []           # (name bytes, crc, size, header offset, flags)

    def _put(self, data):
        view = memoryview(data)
        for start in range(0, len(view), CHUNK):
            self.write_chunk(view[start:start + CHUNK])
        self.pos += len(view)

    def add(self, name, data):
        """Add the record ``name`` (str) holding ``data`` (any buffer of bytes)."""
        encoded = name.encode('utf-8')
        view = memoryview(data).cast('B')
        size = view.nbytes
        offset = self.pos
        zip64 = size >= ZIP64_LIMIT
        flags = _FLAG_UTF8 | (_FLAG_DESCRIPTOR if size else 0)
        extra = struct.pack('<HHQQ', 1, 16, 0, 0) if zip64 else b''
        used = offset + _LOCAL.size + len(encoded) + len(extra) + 4
        extra += struct.pack('<HH', _PAD_TAG, -used % ALIGNMENT) + b'Z' * (-used % ALIGNMENT)
        marker = _MAX32 if zip64 else 0
        self._put(_LOCAL.pack(0x04034B50, 45 if zip64 else 20, flags, 0, 0, 0, 0, marker,
                              marker, len(encoded), len(extra)) + encoded + extra)
        crc = 0
        for start in range(0, size, CHUNK):
            chunk = view[start:start + CHUNK]
            crc = zlib.crc32(chunk, crc)
            self.write_chunk(chunk)
        self.pos += size
        if size:
            fmt = '<IIQQ' if zip64 else '<IIII'
            self._put(struct.pack(fmt, 0x08074B50, crc, size, size))
        self.entries.append((encoded, crc, size, offset, flags))

    def close(self):
        start = self.pos
        central = bytearray()
        for encoded, crc, size, offset, flags in self.entries:
            extra = b''
            big = []
            if size >= ZIP64_LIMIT:
                big += [size, size]
            if offset >= ZIP64_LIMIT:
                big.append(offset)
            if big:
                extra = struct.pack(f'<HH{len(big)}Q', 1, 8 * len(big), *big)
            small_size = _MAX32 if size >= ZIP64_LIMIT else size
            small_offset = _MAX32 if offset >= ZIP64_LIMIT else offset
            version = 45 if big else 20
            central += _CENTRAL.pack(0x02014B50, version, version, flags, 0, 0, 0, crc,
                                     small_size, small_size, len(encoded), len(extra), 0, 0,
                                     0, 0, small_offset) + encoded + extra
        self._put(central)
        count, cd_size = len(self.entries), len(central)
        if count >= COUNT_LIMIT or start >= ZIP64_LIMIT or cd_size >= ZIP64_LIMIT:
            end64 = self.pos
            self._put(_END64.pack(0x06064B50, _END64.size - 12, 45, 45, 0, 0, count, count,
                                  cd_size, start))
            self._put(_LOCATOR64.pack(0x07064B50, 0, end64, 1))
            big_count = count >= COUNT_LIMIT
            self._put(_END.pack(0x06054B50, 0, 0, _MAX16 if big_count else count,
                                _MAX16 if big_count else count,
                                _MAX32 if cd_size >= ZIP64_LIMIT else cd_size,
                                _MAX32 if start >= ZIP64_LIMIT else start, 0))
        else:
            self._put(_END.pack(0x06054B50, 0, 0, count, count, cd_size, start, 0))


class BadArchive(Exception):
    """The archive is not one this reader accepts; the message says why."""


class Record:
    __slots__ = ('name', 'offset', 'size', 'crc', 'compressed')

    def __init__(self, name, offset, size, crc, compressed):
        self.name, self.offset, self.size, self.crc = name, offset, size, crc
        self.compressed = compressed

    def check_stored(self):
        if self.compressed:
            raise BadArchive(f'record {self.name!r:.100} is compressed; PyTorch checkpoints '
                             f'store their records uncompressed')


class ZipReader:
    """The records of a PyTorch archive in a seekable binary file object ``fh``.

    ``records`` maps each name below the top-level folder (``data.pkl``, ``data/0``) to a
    ``Record`` giving where its data starts in the file, its size and its CRC-32.
    """

    def __init__(self, fh, file_size):
        import zipfile
        self.fh = fh
        try:
            archive = zipfile.ZipFile(fh)
            infos = archive.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
                struct.error, OverflowError, UnicodeDecodeError) as e:
            raise BadArchive(f'not a readable zip archive ({e}): truncated or corrupted') \
                from None
        if not infos:
            raise BadArchive('the zip archive holds no records')
        prefix = infos[0].filename.split('/', 1)[0] + '/'
        self.folder = prefix[:-1]
        self.records = {}
        spans = []
        for info in infos:
            name = info.filename
            if not name.startswith(prefix) or name == prefix:
                raise BadArchive(f'record {name!r:.100} is not inside the archive folder '
                                 f'{self.folder!r:.100}')
            short = name[len(prefix):]
            if short in self.records:
                raise BadArchive(f'the archive holds record {name!r:.100} twice')
            if info.flag_bits & 0x1:
                raise BadArchive(f'record {name!r:.100} is encrypted')
            compressed = info.compress_type != zipfile.ZIP_STORED
            if not compressed and info.compress_size != info.file_size:
                raise BadArchive(f'record {name!r:.100} is stored but its sizes differ '
                                 f'(corrupted)')
            start = self._data_start(info, file_size)
            end = start + info.compress_size
            if end > file_size:
                raise BadArchive(f'record {name!r:.100} declares {info.compress_size} bytes but '
                                 f'the file ends {file_size - start} bytes after its start: '
                                 f'truncated or hostile')
            spans.append((info.header_offset, end, name))
            self.records[short] = Record(name, start, info.file_size, info.CRC, compressed)
        spans.sort()
        for (_, end, name), (begin, _, other) in zip(spans, spans[1:]):
            if begin < end:
                raise BadArchive(f'records {name!r:.100} and {other!r:.100} overlap in the '
                                 f'file (a hostile archive)')

    def _data_start(self, info, file_size):
        offset = info.header_offset
        if offset < 0 or offset + _LOCAL.size > file_size:
            raise BadArchive(f'record {info.filename!r:.100}: its header offset {offset} lies '
                             f'outside the file')
        self.fh.seek(offset)
        header = self.fh.read(_LOCAL.size)
        if len(header) < _LOCAL.size:
            raise BadArchive(f'record {info.filename!r:.100}: truncated local header')
        fields = _LOCAL.unpack(header)
        if fields[0] != 0x04034B50:
            raise BadArchive(f'record {info.filename!r:.100}: no local header at offset '
                             f'{offset} (corrupted)')
        name_len, extra_len = fields[9], fields[10]
        name = self.fh.read(name_len)
        if name != info.orig_filename.encode('utf-8') and \
                name.decode('cp437', 'replace') != info.orig_filename:
            raise BadArchive(f'record {info.filename!r:.100}: its local header names '
                             f'{name[:100]!r} (corrupted)')
        return offset + _LOCAL.size + name_len + extra_len

    def read(self, short, into=None):
        """The bytes of record ``short`` (checked against its CRC-32), read into ``into``
        (a writable buffer of exactly the record's size) when given."""
        rec = self.records[short]
        rec.check_stored()
        buf = bytearray(rec.size) if into is None else into
        view = memoryview(buf).cast('B')
        self.fh.seek(rec.offset)
        if read_into(self.fh, view) < rec.size:
            raise BadArchive(f'record {rec.name!r} ends early: the file is truncated')
        if zlib.crc32(view) != rec.crc:
            raise BadArchive(f'record {rec.name!r} is corrupted (its CRC-32 does not match)')
        return buf
