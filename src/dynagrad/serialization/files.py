"""Files: atomic writes, the names errors give them, and the one error type of a bad file."""
import io
import os
import stat

from . import zipformat


class CheckpointError(RuntimeError):
    """A checkpoint file that cannot be read: truncated, corrupted, hostile or unsupported.

    ``path`` names the file, ``reason`` says what is wrong.
    """

    def __init__(self, path, reason, who='dynagrad.load'):
        self.path = path
        self.reason = reason
        super().__init__(f'{who}: cannot read {path!r}: {reason}')


def is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def name_of(f):
    """How errors name ``f``: its path, or the name of an open file, or '<file object>'."""
    if is_path(f):
        return os.fsdecode(f)
    name = getattr(f, 'name', None)
    return os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else '<file object>'


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


def atomic_write(path, write, who='dynagrad.save'):
    """Call ``write(fh)`` on a temporary file in ``path``'s directory, then flush, fsync
    and rename it over ``path`` and fsync the directory. Any failure (an exception, a
    KeyboardInterrupt) removes the temporary file and leaves ``path`` as it was."""
    path = os.path.abspath(os.fsdecode(path))
    directory, base = os.path.split(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f'{who}: {path!r} is a directory')
    if not os.path.isdir(directory):
        raise RuntimeError(f'Parent directory {directory} does not exist.')
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = os.path.join(directory, f'.{base}.{os.urandom(6).hex()}.tmp')
    # 0o666 through the umask, as open(path, 'wb') would create it.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_BINARY', 0), 0o666)
    try:
        with os.fdopen(fd, 'wb') as fh:
            write(fh)
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


def write_bytes(fh, data):
    """Write ``data`` in chunks, each through ``zipformat.write_chunk``."""
    view = memoryview(data).cast('B')
    for start in range(0, len(view), zipformat.CHUNK):
        zipformat.write_chunk(fh, view[start:start + zipformat.CHUNK])


def check_writable(f, who='dynagrad.save'):
    if not is_path(f) and not hasattr(f, 'write'):
        raise TypeError(f'{who}: f must be a path or a binary file object, not '
                        f'{type(f).__name__}')


def file_size(fh):
    """The size of a seekable file object, leaving its position where it was."""
    here = fh.tell()
    end = fh.seek(0, io.SEEK_END)
    fh.seek(here)
    return end


def check_seekable(fh, name):
    try:
        fh.seek(fh.tell())
    except (io.UnsupportedOperation, AttributeError, OSError) as e:
        raise type(e)(f'{e}. You can only dynagrad.load from a file that is seekable. Please '
                      f'pre-load the data into a buffer like io.BytesIO and try to load from '
                      f'it instead ({name})') from None

