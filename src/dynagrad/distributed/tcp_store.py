"""``torch.distributed.TCPStore``: a key-value store that a server in one process (the
master's, on a thread) keeps for clients in any process that can reach its port.

The wire format is a frame per message: a 4-byte big-endian length, then JSON (bytes as
``{"b": base64}``). JSON rather than pickle, because anyone who can reach the port can send
a frame, and unpickling runs code. Requests are ``[op, args...]``; a blocking one (get,
wait, multi_get, queue_pop) carries its timeout and the server answers when its keys
arrive or the time ran out, so the client never guesses at the server's state.
"""
import atexit
import base64
import datetime
import errno
import json
import socket
import struct
import threading
import time
import weakref

from .stores import (DistNetworkError, DistStoreError, QueueEmptyError, Store, Table, TimedOut,
                     check_amount, check_key, check_keys, check_timeout, seconds, to_bytes)

__all__ = ['TCPStore']

_LENGTH = struct.Struct('>I')
_INIT_KEY = 'init/'          # user keys are stored under '/', so never this one
_ACCEPT_POLL = 0.2           # how often a closed server's accept loop notices
_EXIT_GRACE = 60.0           # the most seconds an exiting master serves its last clients
# the addresses of this process's own client sockets, which an exiting server need not wait
# for (they close with the process)
_LOCAL_CLIENTS = set()
_SERVERS = set()             # the servers of this process that are open


def _encode(value):
    if isinstance(value, bytes):
        return {'b': base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, dict):
        return base64.b64decode(value['b'])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _send(sock, message):
    blob = json.dumps(_encode(message)).encode()
    sock.sendall(_LENGTH.pack(len(blob)) + blob)


def _recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b''.join(chunks)


def _recv(sock):
    head = _recv_exact(sock, _LENGTH.size)
    body = head and _recv_exact(sock, _LENGTH.unpack(head)[0])
    return None if body is None else _decode(json.loads(body))


class _Server:
    """The master's table and the threads that serve it: one accepting, one per client."""

    # what clients may call on the table, with the number of arguments each takes
    _OPS = {'set': 2, 'get': 2, 'multi_get': 2, 'multi_set': 2, 'add': 2, 'append': 2,
            'compare_set': 3, 'check': 1, 'wait': 2, 'delete_key': 1, 'num_keys': 0,
            'list_keys': 0, 'queue_push': 2, 'queue_pop': 3, 'queue_len': 1}

    def __init__(self, host, port):
        self.table = Table()
        self.closed = False
        self.clients = {}       # connection: the client's address
        self.lock = threading.Lock()
        self.sock = self._listen(host, port)
        self.port = self.sock.getsockname()[1]
        self.acceptor = threading.Thread(target=self._accept, daemon=True,
                                         name=f'TCPStore:{self.port}')
        self.acceptor.start()
        _SERVERS.add(self)

    @staticmethod
    def _listen(host, port):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            try:
                sock.bind((host, port))
            except OSError as e:
                if e.errno != errno.EADDRNOTAVAIL and not isinstance(e, socket.gaierror):
                    raise
                # a name that is not one of this machine's addresses (behind NAT, say):
                # listen on all of them, as PyTorch's server always does
                sock.bind(('', port))
            sock.listen(128)
        except OSError as e:
            sock.close()
            raise DistNetworkError(
                f'The server socket has failed to listen on any local network address. '
                f'port: {port}, message: {e.strerror or e}: another process (or store) '
                f'holds it; pass port=0 for a free one, or multi_tenant=True to share a '
                f"store in this process") from None
        sock.settimeout(_ACCEPT_POLL)
        return sock

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                if self.closed:
                    conn.close()
                    break
                self.clients[conn] = conn.getpeername()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                request = _recv(conn)
                if request is None:
                    break
                _send(conn, self._answer(request))
        except (OSError, ValueError):
            pass
        finally:
            with self.lock:
                peer = self.clients.pop(conn, None)
            _LOCAL_CLIENTS.discard(peer)    # a client of this process is gone (see _disconnect)
            conn.close()

    def _answer(self, request):
        if not isinstance(request, list) or not request or \
                self._OPS.get(request[0]) != len(request) - 1:
            return ['error', 'ValueError', f'TCPStore: malformed request {str(request)[:80]}']
        try:
            return ['ok', getattr(self.table, request[0])(*request[1:])]
        except TimedOut as e:
            return ['timeout', e.keys]
        except QueueEmptyError as e:
            return ['error', 'QueueEmptyError', str(e)]
        except (ValueError, TypeError) as e:
            return ['error', type(e).__name__, str(e)]

    def serves(self, peer):
        with self.lock:
            return peer in self.clients.values()

    def remote_clients(self):
        with self.lock:
            return [c for c, peer in self.clients.items() if peer not in _LOCAL_CLIENTS]

    def close(self):
        _SERVERS.discard(self)
        with self.lock:
            self.closed = True
            clients, self.clients = list(self.clients), {}
        # the port must be free when close returns (a new master may bind it next): a
        # socket that another thread polls is only released when that poll returns
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if threading.current_thread() is not self.acceptor:
            self.acceptor.join(2 * _ACCEPT_POLL)
        for conn in clients:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# multi_tenant masters of this process that share a port share its server
_TENANTS = weakref.WeakValueDictionary()
_TENANTS_LOCK = threading.Lock()


class _ServerHandle:
    """What a master TCPStore holds. When its last holder is gone the server retires: it
    closes at once if only this process's clients are connected, otherwise once the other
    processes' clients have left (a rank that finished first must not take the store away
    from one still reading its last keys); an exiting process waits for that too."""

    def __init__(self, server):
        self.server = server
        weakref.finalize(self, _retire, server).atexit = False


def _drain_then_close(server):
    deadline = time.monotonic() + _EXIT_GRACE
    while time.monotonic() < deadline and server.remote_clients():
        time.sleep(0.02)
    server.close()


def _retire(server):
    if server.remote_clients():
        threading.Thread(target=_drain_then_close, args=(server,), daemon=True).start()
    else:
        server.close()


@atexit.register
def _serve_last_clients():
    for server in list(_SERVERS):
        _drain_then_close(server)


class TCPStore(Store):
    """A store served over TCP by the master (``is_master=True``) to every process that
    connects to ``host_name:port``. With ``world_size`` and ``wait_for_workers=True``, the
    master's constructor returns once ``world_size`` stores (itself included) joined."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=datetime.timedelta(seconds=300), wait_for_workers=True,
                 multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__()
        if not isinstance(host_name, str):
            raise TypeError(f'TCPStore(): host_name must be str, got {type(host_name).__name__}')
        port = check_amount('TCPStore', port)
        if not 0 <= port < 65536:
            raise ValueError(f'TCPStore(): port must be in [0, 65535], got {port}')
        if world_size is not None:
            world_size = check_amount('TCPStore', world_size)
        self._timeout = check_timeout('TCPStore', timeout)
        self.host, self.libuvBackend = host_name, bool(use_libuv)
        self._handle = self._serve(host_name, port, multi_tenant) if is_master else None
        self.port = self._handle.server.port if is_master else port
        self._lock = threading.Lock()
        self._sock = self._connect()
        address = self._sock.getsockname()
        _LOCAL_CLIENTS.add(address)
        weakref.finalize(self, self._disconnect, self._sock, address)
        if world_size is not None and wait_for_workers:
            self._wait_for_workers(world_size, is_master)

    @staticmethod
    def _serve(host, port, multi_tenant):
        with _TENANTS_LOCK:
            handle = _TENANTS.get(port) if multi_tenant and port else None
            if handle is None:
                handle = _ServerHandle(_Server(host, port))
                if multi_tenant:
                    _TENANTS[handle.server.port] = handle
            return handle

    def _connect(self):
        limit = seconds(self._timeout)
        deadline = None if limit is None else time.monotonic() + limit
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=limit)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                # the master may not listen yet: clients start in any order
                if deadline is not None and time.monotonic() > deadline:
                    raise DistNetworkError(
                        f'The client socket has timed out after '
                        f'{int(limit * 1000)}ms while trying to connect to '
                        f'({self.host}, {self.port}).') from None
                time.sleep(0.05)

    @staticmethod
    def _disconnect(sock, address):
        sock.close()
        # While this process's server still lists the connection, the address stays known
        # as local: a master store dying retires its server at once, and must not take its
        # own closing client for another process's (the server forgets the address when it
        # sees the connection end).
        if not any(server.serves(address) for server in list(_SERVERS)):
            _LOCAL_CLIENTS.discard(address)

    def _wait_for_workers(self, world_size, is_master):
        self._request('add', _INIT_KEY, 1)
        if not is_master:
            return
        limit = seconds(self._timeout)
        start = time.monotonic()
        while True:
            joined = int(self._request('get', _INIT_KEY, None))
            if joined >= world_size:
                return
            if limit is not None and time.monotonic() - start > limit:
                raise DistStoreError(f'Timed out after {int(limit)} seconds waiting for '
                                     f'clients. {joined}/{world_size} clients joined.')
            time.sleep(0.01)

    def _request(self, op, *args):
        with self._lock:
            try:
                _send(self._sock, [op, *args])
                answer = _recv(self._sock)
            except OSError as e:
                raise DistNetworkError(f'TCPStore.{op}(): {e.strerror or e}: the connection '
                                       f'to {self.host}:{self.port} failed') from None
        if answer is None:
            raise DistNetworkError('Failed to recv, got 0 bytes. Connection was likely closed. '
                                   'Did the remote server shutdown or crash?')
        status, *rest = answer
        if status == 'ok':
            return rest[0]
        if status == 'timeout':
            # only a request with a time limit, its last argument, can run out of time
            raise DistStoreError(f'wait timeout after {int(args[-1] * 1000)}ms, keys: '
                                 + ', '.join(rest[0]))
        kind, message = rest
        raise {'QueueEmptyError': QueueEmptyError, 'TypeError': TypeError}.get(
            kind, ValueError)(message)

    def _limit(self, timeout=None):
        return seconds(self._timeout if timeout is None else check_timeout('wait', timeout))

    def set(self, key, value):
        self._request('set', '/' + check_key('set', key), to_bytes('set', value))

    def get(self, key):
        return self._request('get', '/' + check_key('get', key), self._limit())

    def multi_get(self, keys):
        return self._request('multi_get', ['/' + k for k in check_keys('multi_get', keys)],
                             self._limit())

    def multi_set(self, keys, values):
        keys, values = check_keys('multi_set', keys), [to_bytes('multi_set', v) for v in values]
        if len(keys) != len(values):
            raise ValueError(f'Store.multi_set(): {len(keys)} keys but {len(values)} values')
        self._request('multi_set', ['/' + k for k in keys], values)

    def add(self, key, amount):
        return self._request('add', '/' + check_key('add', key), check_amount('add', amount))

    def append(self, key, value):
        self._request('append', '/' + check_key('append', key), to_bytes('append', value))

    def compare_set(self, key, expected_value, desired_value):
        return self._request('compare_set', '/' + check_key('compare_set', key),
                             to_bytes('compare_set', expected_value),
                             to_bytes('compare_set', desired_value))

    def check(self, keys):
        return self._request('check', ['/' + k for k in check_keys('check', keys)])

    def wait(self, keys, timeout=None):
        self._request('wait', ['/' + k for k in check_keys('wait', keys)], self._limit(timeout))

    def delete_key(self, key):
        return self._request('delete_key', '/' + check_key('delete_key', key))

    def num_keys(self):
        # the workers' join counter counts, as PyTorch documents ("typically one greater")
        return self._request('num_keys')

    def list_keys(self):
        return [k[1:] for k in self._request('list_keys') if k.startswith('/')]

    def queue_push(self, key, value):
        self._request('queue_push', '/' + check_key('queue_push', key),
                      to_bytes('queue_push', value))

    def queue_pop(self, key, block=True):
        return self._request('queue_pop', '/' + check_key('queue_pop', key), bool(block),
                             self._limit())

    def queue_len(self, key):
        return self._request('queue_len', '/' + check_key('queue_len', key))

    def clone(self):
        """A new connection to the same server, for another thread."""
        return TCPStore(self.host, self.port, timeout=self._timeout,
                        use_libuv=self.libuvBackend)

    def __repr__(self):
        server = f'TCPServer(port={self.port})' if self._handle else '<nullptr>'
        return f'TCPStore(client=TCPClient({self.host}:{self.port}), server={server})'
