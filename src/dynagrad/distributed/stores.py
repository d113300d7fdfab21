"""``torch.distributed``'s key-value stores: ``Store``, ``HashStore``, ``PrefixStore``,
``FileStore`` (``TCPStore`` is in tcp_store.py).

Values are bytes (``str`` values are stored UTF-8 encoded); ``add`` keeps decimal integer
text. Reads of a key that is not there yet wait for it, up to the store's timeout (another
thread or process may set it), then raise ``DistStoreError``. A timeout of zero waits
forever, as PyTorch's ``kNoTimeout``.
"""
import datetime
import os
import struct
import threading
import time
import weakref

__all__ = ['DistError', 'DistStoreError', 'DistNetworkError', 'DistBackendError',
           'QueueEmptyError', 'Store', 'HashStore', 'PrefixStore', 'FileStore']

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistError(RuntimeError):
    """The base of ``torch.distributed``'s errors."""


class DistStoreError(DistError):
    """A store operation that failed, most often a key that did not arrive in time."""


class DistNetworkError(DistError):
    """A store or process group that could not reach its peer."""


class DistBackendError(DistError):
    """A communication backend that failed."""


class QueueEmptyError(DistStoreError):
    """``queue_pop(key, block=False)`` on an empty queue."""


class TimedOut(Exception):
    """Raised by a table when a wait ran out; each store words the error its own way."""

    def __init__(self, keys):
        super().__init__(keys)
        self.keys = keys


def check_key(op, key):
    if not isinstance(key, str):
        raise TypeError(f'Store.{op}(): keys must be str, got {type(key).__name__}')
    return key


def check_keys(op, keys):
    if isinstance(keys, (str, bytes)) or not hasattr(keys, '__iter__'):
        raise TypeError(f'Store.{op}(): keys must be a list of str, got '
                        f'{type(keys).__name__}: pass [key] for one key')
    return [check_key(op, k) for k in keys]


def to_bytes(op, value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(value)
    raise TypeError(f'Store.{op}(): values must be str or bytes, got {type(value).__name__}')


def check_amount(op, amount):
    if isinstance(amount, bool) or not hasattr(amount, '__index__'):
        raise TypeError(f'Store.{op}(): the amount must be an int, got {type(amount).__name__}')
    return amount.__index__()


def check_timeout(op, timeout):
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f'Store.{op}(): the timeout must be a datetime.timedelta, got '
                        f'{type(timeout).__name__}')
    return timeout


def seconds(timeout):
    """A timedelta as the seconds ``Condition.wait`` takes (None: no limit)."""
    s = timeout.total_seconds()
    return None if s <= 0 else s


def added(op, key, current, amount):
    try:
        return int(current) + amount
    except ValueError:
        raise ValueError(f'Store.{op}(): the value of key {key!r} is {current[:40]!r}, not an '
                         'integer: add() counts on keys that only add() writes') from None


def compared(current, expected, desired):
    """compare_set's rule: what the key holds afterwards and what the call returns."""
    if current is None:
        return (desired, desired) if expected == b'' else (None, expected)
    return (desired, desired) if current == expected else (current, current)


class Table:
    """A thread-safe dict of bytes with waits: HashStore's state and TCPStore's server's."""

    def __init__(self):
        self.cond = threading.Condition()
        self.data = {}
        self.queues = {}

    def _wait(self, ready, keys, timeout):
        if not self.cond.wait_for(ready, timeout):
            raise TimedOut(keys)

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def get(self, key, timeout):
        with self.cond:
            self._wait(lambda: key in self.data, [key], timeout)
            return self.data[key]

    def multi_get(self, keys, timeout):
        with self.cond:
            self._wait(lambda: all(k in self.data for k in keys), keys, timeout)
            return [self.data[k] for k in keys]

    def multi_set(self, keys, values):
        with self.cond:
            self.data.update(zip(keys, values))
            self.cond.notify_all()

    def add(self, key, amount):
        with self.cond:
            value = added('add', key, self.data.get(key, b'0'), amount)
            self.data[key] = str(value).encode()
            self.cond.notify_all()
            return value

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b'') + value
            self.cond.notify_all()

    def compare_set(self, key, expected, desired):
        with self.cond:
            new, result = compared(self.data.get(key), expected, desired)
            if new is not None:
                self.data[key] = new
                self.cond.notify_all()
            return result

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)

    def wait(self, keys, timeout):
        with self.cond:
            self._wait(lambda: all(k in self.data for k in keys), keys, timeout)

    def delete_key(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)

    def list_keys(self):
        with self.cond:
            return list(self.data)

    def queue_push(self, key, value):
        with self.cond:
            self.queues.setdefault(key, []).append(value)
            self.cond.notify_all()

    def queue_pop(self, key, block, timeout):
        with self.cond:
            if not block and not self.queues.get(key):
                raise QueueEmptyError('queue is empty')
            self._wait(lambda: bool(self.queues.get(key)), [key], timeout)
            return self.queues[key].pop(0)

    def queue_len(self, key):
        with self.cond:
            return len(self.queues.get(key, ()))


class Store:
    """A key-value store shared by the threads or processes of a job (the base class;
    subclasses written in Python override the operations they offer)."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = check_timeout('set_timeout', timeout)

    def __reduce_ex__(self, protocol):
        # as PyTorch's: a store is a live connection or a shared table, which a copy in
        # another process would not share
        raise TypeError(f"cannot pickle '{type(self).__name__}' object")

    def _absent(self, op):
        raise NotImplementedError(f'{type(self).__name__} does not implement Store.{op}()')

    def set(self, key, value):
        self._absent('set')

    def get(self, key):
        self._absent('get')

    def add(self, key, amount):
        self._absent('add')

    def compare_set(self, key, expected_value, desired_value):
        self._absent('compare_set')

    def append(self, key, value):
        # stores that cannot append atomically do it in two steps, as PyTorch's base does
        old = self.get(key) if self.check([key]) else b''
        self.set(key, old + to_bytes('append', value))

    def multi_get(self, keys):
        return [self.get(k) for k in check_keys('multi_get', keys)]

    def multi_set(self, keys, values):
        keys, values = check_keys('multi_set', keys), list(values)
        if len(keys) != len(values):
            raise ValueError(f'Store.multi_set(): {len(keys)} keys but {len(values)} values')
        for k, v in zip(keys, values):
            self.set(k, v)

    def check(self, keys):
        self._absent('check')

    def wait(self, keys, timeout=None):
        self._absent('wait')

    def delete_key(self, key):
        self._absent('delete_key')

    def num_keys(self):
        self._absent('num_keys')

    def list_keys(self):
        self._absent('list_keys')

    def queue_push(self, key, value):
        raise NotImplementedError('queue support is not implemented.')

    def queue_pop(self, key, block=True):
        raise NotImplementedError('queue support is not implemented.')

    def queue_len(self, key):
        raise NotImplementedError('queue support is not implemented.')

    def has_extended_api(self):
        return True

    def clone(self):
        return self

    def barrier(self, key, world_size, timeout=None):
        """Block until ``world_size`` callers reached the barrier named ``key``."""
        check_key('barrier', key)
        if self.add(f'{key}/num_members', 1) == world_size:
            self.set(f'{key}/last_member', b'1')
        self.wait([f'{key}/last_member'], self.timeout if timeout is None else timeout)


class HashStore(Store):
    """A store in this process's memory, shared by its threads."""

    def __init__(self):
        super().__init__()
        self._table = Table()

    def _call(self, method, *args, timeout=None):
        try:
            return getattr(self._table, method)(*args)
        except TimedOut:
            raise DistStoreError('Wait timeout') from None

    def _limit(self, timeout=None):
        return seconds(self.timeout if timeout is None else check_timeout('wait', timeout))

    def set(self, key, value):
        self._table.set(check_key('set', key), to_bytes('set', value))

    def get(self, key):
        return self._call('get', check_key('get', key), self._limit())

    def multi_get(self, keys):
        return self._call('multi_get', check_keys('multi_get', keys), self._limit())

    def add(self, key, amount):
        return self._table.add(check_key('add', key), check_amount('add', amount))

    def append(self, key, value):
        self._table.append(check_key('append', key), to_bytes('append', value))

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(check_key('compare_set', key),
                                       to_bytes('compare_set', expected_value),
                                       to_bytes('compare_set', desired_value))

    def check(self, keys):
        return self._table.check(check_keys('check', keys))

    def wait(self, keys, timeout=None):
        self._call('wait', check_keys('wait', keys), self._limit(timeout))

    def delete_key(self, key):
        return self._table.delete_key(check_key('delete_key', key))

    def num_keys(self):
        return self._table.num_keys()

    def list_keys(self):
        return self._table.list_keys()

    def queue_push(self, key, value):
        self._table.queue_push(check_key('queue_push', key), to_bytes('queue_push', value))

    def queue_pop(self, key, block=True):
        return self._call('queue_pop', check_key('queue_pop', key), bool(block), self._limit())

    def queue_len(self, key):
        return self._table.queue_len(check_key('queue_len', key))


class PrefixStore(Store):
    """``store`` seen through a namespace: every key is ``prefix + '/' + key`` in it."""

    def __init__(self, prefix, store):
        super().__init__()
        if not isinstance(prefix, str):
            raise TypeError(f'PrefixStore(): the prefix must be str, got {type(prefix).__name__}')
        if not isinstance(store, Store):
            raise TypeError('PrefixStore(): store must be a torch.distributed Store, got '
                            f'{type(store).__name__}')
        self.prefix, self.underlying_store = prefix, store
        self._timeout = store.timeout

    @property
    def _underlying_non_prefix_store(self):
        store = self.underlying_store
        while isinstance(store, PrefixStore):
            store = store.underlying_store
        return store

    def set_timeout(self, timeout):
        super().set_timeout(timeout)
        self.underlying_store.set_timeout(timeout)

    def _k(self, op, key):
        return f'{self.prefix}/{check_key(op, key)}'

    def set(self, key, value):
        self.underlying_store.set(self._k('set', key), value)

    def get(self, key):
        return self.underlying_store.get(self._k('get', key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k('add', key), amount)

    def append(self, key, value):
        self.underlying_store.append(self._k('append', key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k('compare_set', key), expected_value,
                                                 desired_value)

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._k('multi_get', k)
                                                for k in check_keys('multi_get', keys)])

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._k('multi_set', k)
                                         for k in check_keys('multi_set', keys)], values)

    def check(self, keys):
        return self.underlying_store.check([self._k('check', k) for k in check_keys('check', keys)])

    def wait(self, keys, timeout=None):
        keys = [self._k('wait', k) for k in check_keys('wait', keys)]
        if timeout is None:
            self.underlying_store.wait(keys)
        else:
            self.underlying_store.wait(keys, timeout)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k('delete_key', key))

    def num_keys(self):
        # as PyTorch's: the underlying store's count, other namespaces included
        return self.underlying_store.num_keys()

    def list_keys(self):
        start = self.prefix + '/'
        return [k[len(start):] for k in self.underlying_store.list_keys() if k.startswith(start)]

    def queue_push(self, key, value):
        self.underlying_store.queue_push(self._k('queue_push', key), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._k('queue_pop', key), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._k('queue_len', key))

    def has_extended_api(self):
        return self.underlying_store.has_extended_api()

    def clone(self):
        return PrefixStore(self.prefix, self.underlying_store.clone())


# FileStore's file is a log of records, each <op byte><key length><value length><key><value>
# (lengths as unsigned 32-bit little-endian): processes append under an exclusive lock and
# replay what others appended since their last read, so no record is ever rewritten.
_HEAD = struct.Struct('<cII')
_SET, _DELETE = b'S', b'D'
_REFCOUNT = 'cleanup/refcount'     # user keys are stored under '/', so never this one
_POLL = 0.01


def _flock(f, exclusive):
    try:
        import fcntl
    except ImportError:                       # not POSIX: only this process's lock
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_UN)


class _LogFile:
    """The replayed state of a FileStore's file (no reference to the store, so that the
    store's finalizer can release the file)."""

    def __init__(self, path):
        self.path, self.offset, self.data = path, 0, {}
        self.lock = threading.Lock()
        with open(path, 'ab'):
            pass

    def run(self, change):
        """Replay the file, then call ``change(data)`` under the file's lock; records it
        returns as [(op, key, value)] are appended. Returns change's second result."""
        with self.lock, open(self.path, 'r+b') as f:
            _flock(f, True)
            try:
                f.seek(self.offset)
                self._replay(f.read())
                records, result = change(self.data)
                if records:
                    blob = b''.join(_HEAD.pack(op, len(k.encode()), len(v)) + k.encode() + v
                                    for op, k, v in records)
                    f.seek(0, os.SEEK_END)
                    f.write(blob)
                    f.flush()
                    self._replay(blob)
                return result
            finally:
                _flock(f, False)

    def _replay(self, blob):
        at = 0
        while at + _HEAD.size <= len(blob):
            op, nk, nv = _HEAD.unpack_from(blob, at)
            at += _HEAD.size
            key, value = blob[at:at + nk].decode(), blob[at + nk:at + nk + nv]
            at += nk + nv
            if op == _SET:
                self.data[key] = value
            else:
                self.data.pop(key, None)
        self.offset += at

    def release(self):
        """Count this store out; the last one removes the file, as PyTorch's FileStore."""
        def leave(data):
            left = int(data.get(_REFCOUNT, b'1')) - 1
            return [(_SET, _REFCOUNT, str(left).encode())], left
        try:
            if self.run(leave) <= 0:
                os.remove(self.path)
        except OSError:
            pass


class FileStore(Store):
    """A store in a file that the processes of one machine (or of a shared file system)
    open by the same path; the file is removed when the last of them is closed."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        if not isinstance(file_name, (str, os.PathLike)):
            raise TypeError(f'FileStore(): file_name must be a path, got '
                            f'{type(file_name).__name__}')
        self.path = os.fspath(file_name)
        self.world_size = world_size
        try:
            self._log = _LogFile(self.path)
        except OSError as e:
            raise DistStoreError(f'FileStore(): cannot open {self.path!r}: {e.strerror}') from None
        self._log.run(lambda d: ([(_SET, _REFCOUNT, str(int(d.get(_REFCOUNT, b'0')) + 1)
                                   .encode())], None))
        weakref.finalize(self, self._log.release)

    def _read(self, read):
        return self._log.run(lambda d: (None, read(d)))

    def _until(self, keys, timeout, message):
        limit = seconds(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        while not self._read(lambda d: all('/' + k in d for k in keys)):
            if deadline is not None and time.monotonic() > deadline:
                # a plain RuntimeError, as PyTorch's FileStore raises
                raise RuntimeError(message)
            time.sleep(_POLL)

    def set(self, key, value):
        record = (_SET, '/' + check_key('set', key), to_bytes('set', value))
        self._log.run(lambda d: ([record], None))

    def get(self, key):
        self._until([check_key('get', key)], self.timeout, f'Timeout waiting for key: {key} '
                    f'after {int(self.timeout.total_seconds() * 1000)} ms')
        return self._read(lambda d: d['/' + key])

    def add(self, key, amount):
        k, amount = '/' + check_key('add', key), check_amount('add', amount)

        def change(d):
            value = added('add', key, d.get(k, b'0'), amount)
            return [(_SET, k, str(value).encode())], value
        return self._log.run(change)

    def append(self, key, value):
        k, value = '/' + check_key('append', key), to_bytes('append', value)
        self._log.run(lambda d: ([(_SET, k, d.get(k, b'') + value)], None))

    def compare_set(self, key, expected_value, desired_value):
        k = '/' + check_key('compare_set', key)
        expected = to_bytes('compare_set', expected_value)
        desired = to_bytes('compare_set', desired_value)

        def change(d):
            new, result = compared(d.get(k), expected, desired)
            return ([(_SET, k, new)] if new is not None else None), result
        return self._log.run(change)

    def check(self, keys):
        keys = check_keys('check', keys)
        return self._read(lambda d: all('/' + k in d for k in keys))

    def wait(self, keys, timeout=None):
        self._until(check_keys('wait', keys),
                    self.timeout if timeout is None else check_timeout('wait', timeout),
                    'Wait timeout')

    def delete_key(self, key):
        k = '/' + check_key('delete_key', key)
        # True even for a key that was not there, as PyTorch's FileStore answers
        return self._log.run(lambda d: ([(_DELETE, k, b'')] if k in d else None, True))

    def has_extended_api(self):
        return False

    def num_keys(self):
        # the reference count is a key as well, as in PyTorch's count
        return self._read(len)

    def list_keys(self):
        return self._read(lambda d: [k[1:] for k in d if k.startswith('/')])
