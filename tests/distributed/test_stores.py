"""distributed/stores.py and tcp_store.py: the key-value stores, each scenario run on
torch's stores and dynagrad's and compared; threads and processes sharing one store."""
import datetime
import gc
import os
import pickle
import socket
import subprocess
import sys
import threading
import time

import pytest
import torch.distributed as theirs

import dynagrad.distributed as mine

SHORT = datetime.timedelta(seconds=0.3)
SRC = os.path.join(os.path.dirname(__file__), '..', '..', 'src')


def make(d, kind, tmp_path):
    if kind == 'hash':
        return d.HashStore()
    if kind == 'file':
        return d.FileStore(str(tmp_path / f'{d.__name__}.store'), 1)
    if kind == 'prefix':
        return d.PrefixStore('pre', d.HashStore())
    return d.TCPStore('127.0.0.1', 0, 1, True, timeout=datetime.timedelta(seconds=10))


def scenario(store):
    """What a program sees from one store: results and error types, by step."""
    out = []

    def keys():
        # torch's FileStore lists its internal reference count as 'efcount/'
        return sorted(k for k in store.list_keys() if k != 'efcount/')

    def step(f):
        try:
            out.append(f())
        except Exception as e:          # noqa: BLE001 - the type is what is compared
            base = [c.__name__ for c in type(e).__mro__]
            out.append(('raised', 'DistStoreError' in base or 'RuntimeError' in base
                        and 'Timeout' in str(e), type(e).__name__ if 'Dist' not in
                        type(e).__name__ else 'Dist'))
    step(lambda: store.set('a', '1'))
    step(lambda: store.set('b', b'\x00\xffbytes'))
    step(lambda: store.get('a'))
    step(lambda: store.get('b'))
    step(lambda: store.add('a', 4))
    step(lambda: store.add('n', -2))
    step(lambda: store.add('n', 0))
    step(lambda: store.get('a'))
    step(lambda: store.compare_set('a', '5', 'six'))
    step(lambda: store.compare_set('a', 'wrong', 'x'))
    step(lambda: store.compare_set('fresh', '', 'v'))
    step(lambda: store.compare_set('absent', 'e', 'v'))
    step(lambda: store.check(['a', 'fresh']))
    step(lambda: store.check(['a', 'absent']))
    step(lambda: store.append('ap', 'x'))
    step(lambda: store.append('ap', b'yz'))
    step(lambda: store.get('ap'))
    step(lambda: store.multi_set(['m1', 'm2'], ['1', b'2']))
    step(lambda: store.multi_get(['m2', 'm1']))
    step(keys)
    step(lambda: store.delete_key('m1'))
    step(lambda: store.delete_key('m1'))
    step(keys)
    step(lambda: store.set_timeout(SHORT))
    step(lambda: store.timeout)
    step(lambda: store.get('never'))
    step(lambda: store.wait(['a', 'never']))
    step(lambda: store.wait(['a'], SHORT))
    step(lambda: store.wait(['never'], datetime.timedelta(seconds=0.1)))
    step(lambda: store.has_extended_api())
    step(lambda: store.barrier('bar', 1))
    step(lambda: store.set(1, 'a'))
    step(lambda: store.wait('a'))
    step(lambda: pickle.dumps(store))
    return out


@pytest.mark.parametrize('kind', ['hash', 'file', 'prefix', 'tcp'])
def test_stores_answer_as_torch(kind, tmp_path):
    assert scenario(make(mine, kind, tmp_path)) == scenario(make(theirs, kind, tmp_path))


@pytest.mark.parametrize('kind', ['hash', 'tcp'])
def test_queues_as_torch(kind, tmp_path):
    got = []
    for d in (mine, theirs):
        s = make(d, kind, tmp_path)
        s.set_timeout(SHORT)
        s.queue_push('q', 'a')
        s.queue_push('q', b'b')
        seen = [s.queue_len('q'), s.queue_pop('q'), s.queue_pop('q', block=False),
                s.queue_len('q'), s.queue_len('other'), s.num_keys()]
        with pytest.raises(d.QueueEmptyError, match='queue is empty'):
            s.queue_pop('q', block=False)
        with pytest.raises(d.DistStoreError):
            s.queue_pop('q')
        got.append(seen)
    assert got[0] == got[1]
    with pytest.raises(NotImplementedError, match='queue support is not implemented'):
        make(mine, 'file', tmp_path).queue_push('q', 'a')


def test_error_classes_as_torch():
    for name in ['DistError', 'DistStoreError', 'DistNetworkError', 'DistBackendError',
                 'QueueEmptyError']:
        assert [c.__name__ for c in getattr(mine, name).__mro__] == \
            [c.__name__ for c in getattr(theirs, name).__mro__]
    for name in ['HashStore', 'FileStore', 'TCPStore', 'PrefixStore']:
        assert issubclass(getattr(mine, name), mine.Store)


def test_tcp_store_counts_its_workers_key_and_says_what_timed_out():
    for d in (mine, theirs):
        s = d.TCPStore('127.0.0.1', 0, 1, True, timeout=SHORT)
        alone = d.TCPStore('127.0.0.1', 0, None, True, wait_for_workers=False)
        assert (s.num_keys(), s.list_keys(), alone.num_keys()) == (1, [], 0)
        assert isinstance(s.port, int) and s.port > 0 and s.host == '127.0.0.1'
        with pytest.raises(d.DistStoreError, match=r'wait timeout after 300ms, keys: /k1, /k2'):
            s.wait(['k1', 'k2'])
        with pytest.raises(d.DistNetworkError, match='failed to listen'):
            d.TCPStore('127.0.0.1', s.port, 1, True, timeout=SHORT)
        with pytest.raises(d.DistStoreError, match=r'waiting for clients. 1/2 clients joined'):
            d.TCPStore('127.0.0.1', 0, 2, True, timeout=SHORT)


def test_tcp_client_without_server_times_out():
    start = time.monotonic()
    with pytest.raises(mine.DistNetworkError, match='timed out after 300ms while trying'):
        mine.TCPStore('127.0.0.1', _free_port(), timeout=SHORT)
    assert time.monotonic() - start < 5


def test_tcp_server_releases_its_port_with_its_last_store():
    # in a fresh interpreter: in the suite's own, another test's traceback or frame may
    # still hold a store, keeping its server (rightly) alive
    code = """if True:
        import datetime, gc
        import dynagrad.distributed as mine
        free = mine.TCPStore('127.0.0.1', 0, None, True, wait_for_workers=False)
        port = free.port
        del free
        gc.collect()
        try:
            mine.TCPStore('127.0.0.1', port, timeout=datetime.timedelta(milliseconds=300))
        except mine.DistNetworkError:
            pass
        else:
            raise SystemExit('the server still answers')
        again = mine.TCPStore('127.0.0.1', port, 1, True)
        print(again.port == port)
    """
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})
    assert out.stdout.strip() == 'True', out.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_tcp_store_shared_by_threads_with_waits():
    port = _free_port()
    clients = []

    def worker(i):
        # started before the master listens: the client retries until it can connect
        c = mine.TCPStore('127.0.0.1', port, 3, False, timeout=datetime.timedelta(seconds=20))
        c.set(f'from{i}', str(i))
        c.add('count', 10)
        # each waits for the other's key, which arrives while it waits
        clients.append((c.get(f'from{1 - i}'), c.multi_get(['from0', 'from1'])))
        c.barrier('done', 3)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    # returns once both workers joined
    master = mine.TCPStore('127.0.0.1', port, 3, True, timeout=datetime.timedelta(seconds=20),
                           multi_tenant=True)
    master.barrier('done', 3)
    for t in threads:
        t.join(20)
    assert sorted(clients) == [(b'0', [b'0', b'1']), (b'1', [b'0', b'1'])]
    assert master.get('count') == b'20'
    # a second master of this process on the port, multi-tenant, shares the server
    tenant = mine.TCPStore('127.0.0.1', master.port, is_master=True, multi_tenant=True)
    assert tenant.get('count') == b'20'
    other = master.clone()
    other.set('cloned', 'yes')
    assert master.get('cloned') == b'yes'


_CLIENT = '''
import datetime, sys
import dynagrad.distributed as d
kind, where, rank = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == 'tcp':
    s = d.TCPStore('127.0.0.1', int(where), timeout=datetime.timedelta(seconds=60))
else:
    s = d.FileStore(where, 3)
    s.set_timeout(datetime.timedelta(seconds=60))
s.set(f'rank{rank}', str(rank * 10))
total = s.add('sum', rank)
s.barrier('all', 3)
print(sorted(s.get(f'rank{r}').decode() for r in range(3)), s.get('sum').decode())
'''


@pytest.mark.parametrize('kind', ['tcp', 'file'])
def test_processes_meet_through_a_store(kind, tmp_path):
    if kind == 'tcp':
        store = mine.TCPStore('127.0.0.1', 0, 3, True, timeout=datetime.timedelta(seconds=60),
                              wait_for_workers=False)
        where = str(store.port)
    else:
        where = str(tmp_path / 'shared.store')
        store = mine.FileStore(where, 3)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    procs = [subprocess.Popen([sys.executable, '-c', _CLIENT, kind, where, str(r)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (1, 2)]
    store.set_timeout(datetime.timedelta(seconds=60))
    store.set('rank0', '0')
    store.add('sum', 0)
    store.barrier('all', 3)
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert [o.strip() for o, _ in outs] == ["['0', '10', '20'] 3"] * 2
    if kind == 'file':
        del store       # the last of the three FileStores removes the file
        assert not os.path.exists(where)
