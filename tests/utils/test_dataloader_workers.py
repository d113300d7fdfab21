"""DataLoader with worker processes against torch.utils.data: batches, order, seeding,
worker info, persistent workers, options and their errors, exceptions from workers,
shutdown in every way a pass can end (no process left, no hang), and batches through
shared memory (no memory left mapped, no descriptor left open).

Datasets live at module level so that ``spawn`` workers can import them; torch is
imported inside the tests that compare with it, so those workers do not load it.
"""
import gc
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.utils.data as dud
from dynagrad.multiprocessing import reductions
from dynagrad.utils.data import dataloader as dataloader_module

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'),
                                reason='worker processes are tested on Linux')

START_METHODS = multiprocessing.get_all_start_methods()


def sig(x):
    """A library-neutral description of a batch: containers, tensor shapes, dtypes, values."""
    if hasattr(x, 'detach') and hasattr(x, 'shape'):
        return ('T', tuple(x.shape), str(x.dtype).split('.')[-1], x.detach().tolist())
    if isinstance(x, dict):
        return (type(x).__name__, [(k, sig(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [sig(v) for v in x])
    return (type(x).__name__, x)


def gone(pid):
    """The process has exited and been reaped (no zombie either)."""
    return not os.path.exists(f'/proc/{pid}')


def assert_no_workers(pids):
    assert pids, 'the test collected no worker pids'
    assert multiprocessing.active_children() == []
    alive = [pid for pid in pids if not gone(pid)]
    assert not alive, f'worker processes left behind: {alive}'


def torch_error(run):
    """Run torch code that should raise; return (exception type, message), with torch's
    iterator freed at once (its exception's traceback would keep it and its workers)."""
    try:
        run()
    except Exception as e:
        found = type(e), str(e)
        e.__traceback__ = None
        return found
    raise AssertionError('torch raised nothing')


def shared_mappings():
    """This process's mappings of dynagrad's shared memory files."""
    with open('/proc/self/maps') as f:
        return sum('dynagrad-shm' in line for line in f)


def open_fds():
    return len(os.listdir('/proc/self/fd'))


def settled_open_fds(target=None):
    """The number of open descriptors once it stops changing (or reaches ``target``): the
    index queues' feeder threads close their pipes on their own time."""
    import time
    count = open_fds()
    for _ in range(100):
        time.sleep(0.02)
        now = open_fds()
        if now == target or (target is None and now == count):
            return now
        count = now
    return count


# -- datasets (plain classes: torch's DataLoader takes them too) -------------------------

class Squares:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {'x': np.full(3, i, np.float32), 'y': i * i, 'name': f's{i}'}


class WhoAmI:
    """Each sample says which process made it and what its random generators gave."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = dud.get_worker_info()
        return {'i': i, 'pid': os.getpid(), 'id': info.id, 'seed': info.seed,
                'num_workers': info.num_workers, 'initial_seed': dg.initial_seed(),
                'py': random.random(), 'np': float(np.random.random()),
                'dg': float(dg.rand(1)), 'grad': dg.is_grad_enabled(),
                'same_dataset': info.dataset is self}


class Range(dud.IterableDataset):
    """start..stop, sharded over the workers when ``shard``."""

    def __init__(self, start, stop, shard=True):
        self.start, self.stop, self.shard = start, stop, shard

    def __iter__(self):
        info = dud.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.stop))
        return iter(range(self.start + info.id, self.stop, info.num_workers))


class Failing:
    def __init__(self, n=8, bad=3, exc=ValueError):
        self.n, self.bad, self.exc = n, bad, exc

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f'bad item {i}')
        return i


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class FailingTwoArg(Failing):
    def __getitem__(self, i):
        if i == self.bad:
            raise TwoArgError(1, 2)
        return i


class FailingLocalClass(Failing):
    def __getitem__(self, i):
        class Local(Exception):
            pass
        if i == self.bad:
            raise Local('from a class the main process cannot import')
        return i


class Unpicklable(Failing):
    def __getitem__(self, i):
        return (lambda: i) if i == self.bad else i


class Dies:
    """Item ``bad`` ends its worker: by a signal, or by os._exit."""

    def __init__(self, how, bad=3):
        self.how, self.bad = how, bad

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == 'exit':
                os._exit(0)
            os.kill(os.getpid(), signal.SIGKILL)
        return os.getpid()


class Blocks:
    """Samples large enough to travel through shared memory (or not, ``nbytes`` small)."""

    def __init__(self, n, nbytes, kind='tensor'):
        self.n, self.nbytes, self.kind = n, nbytes, kind

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        a = np.arange(self.nbytes // 4, dtype=np.float32) + i
        return dg.from_numpy(a) if self.kind == 'tensor' else a


class Gate:
    """Item 0 waits until item 5 has been made. With two workers, round robin, two tasks
    ahead each, task 5 is only handed out once the main process has taken batch 3."""

    def __init__(self, event):
        self.event = event

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 0:
            assert self.event.wait(30)
        if i == 5:
            self.event.set()
        return i


class Sleepy:
    def __init__(self, seconds, at=1):
        self.seconds, self.at = seconds, at

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == self.at:
            import time
            time.sleep(self.seconds)
        return os.getpid()


def set_marker(worker_id):
    global _MARKER
    _MARKER = f'init {worker_id}'


def failing_init(worker_id):
    raise KeyError(f'init of worker {worker_id}')


_MARKER = None


class ReadsMarker:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return _MARKER


def collate_to_numpy(batch):
    return np.stack(batch)


def collate_and_report(batch):
    """default_collate, and whether its batch came out in shared memory (in the worker)."""
    out = dud.default_collate(batch)
    return out, out.is_shared()


@pytest.fixture(autouse=True)
def collect_garbage():
    """A loader that raised may sit in a reference cycle (torch's do): freed after each
    test, so that no test sees another's workers. (The tests that check how workers are
    freed check before this runs.)"""
    yield
    gc.collect()


@pytest.fixture
def quick_shutdown(monkeypatch):
    """Shutting down terminates a busy worker after 0.5 s instead of 5 s."""
    monkeypatch.setattr(dataloader_module, '_SHUTDOWN_TIMEOUT', 0.5)


# -- batches and order --------------------------------------------------------------------

@pytest.mark.parametrize('kw', [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                dict(batch_size=None), dict(batch_size=2, prefetch_factor=1),
                                dict(batch_size=1, prefetch_factor=5),
                                dict(batch_size=2, sampler=[9, 0, 4, 4, 2]),
                                dict(batch_sampler=[[1, 2, 3], [0], [9, 8]])],
                         ids=lambda kw: '-'.join(f'{k}={v}' for k, v in kw.items()))
def test_batches_match_torch_in_sampler_order(kw):
    import torch.utils.data as tud
    got = dud.DataLoader(Squares(10), num_workers=2, **kw)
    want = tud.DataLoader(Squares(10), num_workers=0,
                          **{k: v for k, v in kw.items() if k != 'prefetch_factor'})
    assert len(got) == len(want)
    assert sig(list(got)) == sig(list(want))
    assert sig(list(got)) == sig(list(want))        # a second pass, new workers


@pytest.mark.parametrize('method', START_METHODS)
def test_start_methods(method):
    for context in (method, multiprocessing.get_context(method)):
        loader = dud.DataLoader(WhoAmI(), batch_size=2, num_workers=2,
                                multiprocessing_context=context)
        batches = list(loader)
        assert [b['i'].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert [b['id'].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
        pids = {p for b in batches for p in b['pid'].tolist()}
        assert len(pids) == 2 and os.getpid() not in pids
        assert loader.multiprocessing_context is not None
        assert loader.multiprocessing_context.get_start_method() == method
        assert_no_workers(pids)


def test_shuffle_order_and_main_generator_do_not_depend_on_workers():
    ds = dud.TensorDataset(dg.arange(40))
    runs = []
    for workers in (0, 2):
        dg.manual_seed(5)
        loader = dud.DataLoader(ds, batch_size=6, shuffle=True, num_workers=workers)
        orders = [[int(v) for (b,) in loader for v in b.tolist()] for _ in range(2)]
        runs.append((orders, float(dg.rand(1))))
    assert runs[0] == runs[1]
    assert sorted(runs[0][0][0]) == list(range(40)) and runs[0][0][0] != runs[0][0][1]


def test_in_order_false_returns_batches_as_they_are_ready():
    event = multiprocessing.get_context('fork').Event()
    got = [int(b) for b in dud.DataLoader(Gate(event), batch_size=None, num_workers=2,
                                          in_order=False)]
    assert sorted(got) == list(range(8))
    assert got.index(3) < got.index(0)      # item 0 could only be made after batch 3 came


def test_iterator_len_and_the_main_process_has_no_worker_info():
    loader = dud.DataLoader(Squares(10), batch_size=3, num_workers=2)
    it = iter(loader)
    assert len(it) == len(loader) == 4
    assert dud.get_worker_info() is None
    del it


# -- seeding and worker info ----------------------------------------------------------------

def test_worker_seeding_follows_torch():
    def run(seed, **kw):
        dg.manual_seed(seed)
        loader = dud.DataLoader(WhoAmI(), batch_size=None, num_workers=2, **kw)
        return [[{k: v for k, v in s.items() if k != 'pid'} for s in loader]
                for _ in range(2)]

    first = run(3)
    for epoch in first:
        for s in epoch:
            assert s['seed'] - s['id'] == epoch[0]['seed'] - epoch[0]['id']    # base + id
            assert s['initial_seed'] == s['seed'] and s['num_workers'] == 2
            assert s['same_dataset']
        by_worker = {w: [s for s in epoch if s['id'] == w] for w in (0, 1)}
        for w, samples in by_worker.items():
            seed = samples[0]['seed']
            # Python's random and dynagrad's generator are seeded with base + id, as torch
            py = random.Random(seed)
            assert [s['py'] for s in samples] == [py.random() for _ in samples]
            g = dg.Generator().manual_seed(seed)
            assert [s['dg'] for s in samples] == [float(dg.rand(1, generator=g))
                                                  for _ in samples]
        # NumPy differs between workers (torch seeds it per worker too)
        assert by_worker[0][0]['np'] != by_worker[1][0]['np']
    assert first[0][0]['seed'] != first[1][0]['seed']          # a new base seed per pass
    assert first == run(3)                                      # manual_seed repeats it all
    assert first != run(4)
    g_runs = [run(seed, generator=dg.Generator().manual_seed(9)) for seed in (1, 2)]
    assert [s['seed'] for s in g_runs[0][0]] == [s['seed'] for s in g_runs[1][0]]


def test_worker_info_repr_and_frozen_like_torch():
    import dataclasses
    from torch.utils.data._utils.worker import WorkerInfo as TorchWorkerInfo
    from dynagrad.utils.data._utils.worker import WorkerInfo
    mine = WorkerInfo(id=1, num_workers=2, seed=5, dataset='d')
    assert repr(mine) == repr(TorchWorkerInfo(id=1, num_workers=2, seed=5, dataset='d'))
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'id'"):
        mine.id = 3


def test_worker_init_fn_runs_in_each_worker_after_seeding():
    loader = dud.DataLoader(ReadsMarker(), batch_size=None, num_workers=2,
                            worker_init_fn=set_marker)
    assert list(loader) == ['init 0', 'init 1', 'init 0', 'init 1']
    assert _MARKER is None                  # the main process ran no init


def test_worker_init_fn_error_is_raised_in_the_main_process():
    loader = dud.DataLoader(Squares(4), batch_size=None, num_workers=1,
                            worker_init_fn=failing_init)
    with pytest.raises(KeyError) as e:
        list(loader)
    text = str(e.value)
    assert text.startswith('Caught KeyError in DataLoader worker process 0.\nOriginal '
                           'Traceback (most recent call last):')
    assert "KeyError: 'init of worker 0'" in text


def test_fork_workers_inherit_grad_mode_as_torch():
    import torch
    import torch.utils.data as tud

    class TorchGrad:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return torch.is_grad_enabled()

    for enabled in (False, True):
        with dg.set_grad_enabled(enabled), torch.set_grad_enabled(enabled):
            got = [s['grad'] for s in dud.DataLoader(WhoAmI(), batch_size=None,
                                                     num_workers=1)]
            want = list(tud.DataLoader(TorchGrad(), batch_size=None, num_workers=1))
        assert got == [enabled] * 8 and want == [enabled] * 2


# -- IterableDataset --------------------------------------------------------------------------

@pytest.mark.parametrize('shard', [True, False])
@pytest.mark.parametrize('batch_size,drop_last', [(None, False), (2, False), (3, True),
                                                  (4, False)])
def test_iterable_dataset_with_workers_matches_torch(shard, batch_size, drop_last):
    import torch.utils.data as tud

    class TorchStream(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            if not shard:
                return iter(range(1, 12))
            return iter(range(1 + info.id, 12, info.num_workers))

    got = list(dud.DataLoader(Range(1, 12, shard), batch_size=batch_size, drop_last=drop_last,
                              num_workers=2))
    want = list(tud.DataLoader(TorchStream(), batch_size=batch_size, drop_last=drop_last,
                               num_workers=2))
    assert sig(got) == sig(want)


# -- persistent workers -------------------------------------------------------------------------

def test_persistent_workers_live_across_passes():
    dg.manual_seed(0)
    loader = dud.DataLoader(WhoAmI(), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert iter(loader) is it                    # one iterator, reset, as torch
    passes = [list(loader) for _ in range(3)]
    pids = {p for b in passes[0] for p in b['pid'].tolist()}
    for batches in passes:
        assert [b['i'].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert {p for b in batches for p in b['pid'].tolist()} == pids
    # as torch: the seeds are drawn once, when the workers start
    assert passes[0][0]['seed'].tolist() == passes[2][0]['seed'].tolist()
    # a pass left early: its leftovers do not leak into the next
    for b in loader:
        break
    assert [b['i'].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    del loader, it, b
    gc.collect()
    assert_no_workers(pids)


def test_persistent_workers_restart_an_iterable_dataset():
    loader = dud.DataLoader(Range(0, 7), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    assert sorted(v for b in first for v in b) == list(range(7))
    assert [b.tolist() for b in loader] == first
    del loader


# -- options -----------------------------------------------------------------------------------

@pytest.mark.parametrize('kw', [dict(num_workers=2, prefetch_factor=-1),
                                dict(num_workers=2, multiprocessing_context='bogus'),
                                dict(num_workers=0, multiprocessing_context='spawn'),
                                dict(num_workers=2, multiprocessing_context=3)],
                         ids=['prefetch', 'bad_method', 'context_without_workers', 'bad_type'])
def test_option_errors_match_torch(kw):
    import torch.utils.data as tud
    with pytest.raises((ValueError, TypeError)) as want:
        tud.DataLoader(Squares(4), **kw)
    with pytest.raises(want.type) as got:
        dud.DataLoader(Squares(4), **kw)
    assert str(got.value) == str(want.value)


@pytest.mark.filterwarnings('ignore::pytest.PytestUnraisableExceptionWarning')  # torch's __del__
def test_iteration_errors_match_torch():
    import torch.utils.data as tud
    for kw in (dict(num_workers=2, prefetch_factor=0), dict(num_workers=0, timeout=3)):
        with pytest.raises(AssertionError) as want:
            iter(tud.DataLoader(Squares(4), **kw))
        with pytest.raises(AssertionError) as got:
            iter(dud.DataLoader(Squares(4), **kw))
        assert str(got.value) == str(want.value)


def test_defaults_match_torch():
    import torch.utils.data as tud
    for kw in (dict(num_workers=2), dict(num_workers=0), dict(num_workers=2, prefetch_factor=4)):
        got, want = dud.DataLoader(Squares(4), **kw), tud.DataLoader(Squares(4), **kw)
        assert (got.prefetch_factor, got.persistent_workers, got.in_order, got.timeout) == \
            (want.prefetch_factor, want.persistent_workers, want.in_order, want.timeout)


def test_multiprocessing_context_can_be_set_later():
    loader = dud.DataLoader(Squares(4), num_workers=2)
    loader.multiprocessing_context = 'spawn'
    assert loader.multiprocessing_context.get_start_method() == 'spawn'
    with pytest.raises(ValueError, match='should specify a valid start method'):
        loader.multiprocessing_context = 'nope'


def test_pin_memory_warns_as_torch_without_accelerator():
    import torch.utils.data as tud
    texts = []
    for mod, ds in ((tud, Squares(2)), (dud, Squares(2))):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter('always')
            batches = list(mod.DataLoader(ds, batch_size=2, pin_memory=True, num_workers=1))
        assert len(batches) == 1
        texts.append([(w.category, str(w.message)) for w in rec])
    assert texts[0] == texts[1] and len(texts[0]) == 1


def test_more_workers_than_cpus_warns_as_torch():
    import torch.utils.data as tud
    too_many = len(os.sched_getaffinity(0)) + 1
    texts = []
    for mod in (tud, dud):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter('always')
            mod.DataLoader(Squares(2), num_workers=too_many)
        texts.append([(w.category, str(w.message)) for w in rec])
    assert texts[0] == texts[1] and len(texts[0]) == 1


@pytest.mark.usefixtures('quick_shutdown')
def test_timeout_raises_as_torch():
    it = iter(dud.DataLoader(Sleepy(20), batch_size=None, num_workers=1, timeout=0.5))
    pid = next(it)
    with pytest.raises(RuntimeError, match=r'^DataLoader timed out after 0\.5 seconds$'):
        next(it)
    del it
    assert_no_workers([pid])


# -- exceptions in workers ------------------------------------------------------------------------

def test_worker_exception_is_reraised_with_its_traceback_as_torch():
    import torch.utils.data as tud
    got, want = [], []
    for mod, out in ((dud, got), (tud, want)):
        it = iter(mod.DataLoader(Failing(), batch_size=2, num_workers=2))
        for _ in range(4):
            try:
                out.append(next(it).tolist())
            except ValueError as e:
                out.append(str(e))
                e.__traceback__ = None
        del it
    assert got[0] == want[0] == [0, 1] and got[2:] == want[2:] == [[4, 5], [6, 7]]
    head = ('Caught ValueError in DataLoader worker process 1.\n'
            'Original Traceback (most recent call last):\n')
    assert want[1].startswith(head) and got[1].startswith(head)
    assert got[1].endswith('ValueError: bad item 3\n')
    assert __file__ in got[1] and "raise self.exc(f'bad item {i}')" in got[1]


def test_worker_key_error_reads_as_torch():
    import torch.utils.data as tud
    want_type, want = torch_error(lambda: list(tud.DataLoader(
        Failing(exc=KeyError), batch_size=None, num_workers=1)))
    with pytest.raises(want_type) as e:
        list(dud.DataLoader(Failing(exc=KeyError), batch_size=None, num_workers=1))
    got = str(e.value)
    assert got.split('\n')[:2] == want.split('\n')[:2]
    assert got.startswith('Caught KeyError in DataLoader worker process 0.\n')
    assert got.endswith("KeyError: 'bad item 3'\n")


@pytest.mark.parametrize('ds,exc,words', [
    (FailingTwoArg(), RuntimeError, r'Caught TwoArgError in DataLoader worker process 0\.'),
    (FailingLocalClass(), RuntimeError, r'Caught Local in DataLoader worker process 0\.'),
    (Unpicklable(), Exception, r'Caught (PicklingError|AttributeError) in DataLoader worker '
                               r'process 0\.'),
], ids=['two_arg_exception', 'unimportable_exception', 'unpicklable_batch'])
def test_worker_errors_that_cannot_travel_as_they_are(ds, exc, words):
    with pytest.raises(exc) as e:
        list(dud.DataLoader(ds, batch_size=None, num_workers=1))
    assert re.match(words, str(e.value))
    assert 'in DataLoader worker process 0.\nOriginal Traceback' in str(e.value)


def test_non_leaf_tensors_refused_as_torch():
    class Graph:
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return dg.ones(2, requires_grad=True) * 2

    with pytest.raises(RuntimeError, match='Cowardly refusing to serialize non-leaf tensor '
                                           'which requires_grad'):
        list(dud.DataLoader(Graph(), batch_size=None, num_workers=1))


# -- shutdown: no process left, no hang ---------------------------------------------------------

def test_breaking_out_of_the_loop_stops_the_workers():
    pids = set()
    for pid in dud.DataLoader(Sleepy(0), batch_size=None, num_workers=2):
        pids.add(pid)
        if len(pids) == 2:
            break
    assert_no_workers(pids)


def test_deleting_the_iterator_stops_the_workers():
    loader = dud.DataLoader(Sleepy(0), batch_size=None, num_workers=2)
    it = iter(loader)
    pids = {next(it), next(it)}
    assert len(pids) == 2
    del it
    assert_no_workers(pids)


def test_garbage_collection_stops_the_workers():
    it = iter(dud.DataLoader(Sleepy(0), batch_size=None, num_workers=2))
    pids = {next(it), next(it)}
    it.cycle = it                # only the cycle collector can free it
    del it
    gc.collect()
    assert_no_workers(pids)


def test_keyboard_interrupt_in_the_loop_stops_the_workers():
    pids = set()
    with pytest.raises(KeyboardInterrupt):
        for pid in dud.DataLoader(Sleepy(0), batch_size=None, num_workers=2):
            pids.add(int(pid))
            if len(pids) == 2:
                raise KeyboardInterrupt
    assert_no_workers(pids)


CTRL_C_SCRIPT = '''
import multiprocessing, signal, sys
# A program started from a terminal turns Ctrl-C into KeyboardInterrupt; one started in the
# background of a non-interactive shell (as CI may run the suite) inherits SIGINT ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {here!r})
import dynagrad.utils.data as dud
from dynagrad.utils.data import dataloader
dataloader._SHUTDOWN_TIMEOUT = 0.5
from test_dataloader_workers import Sleepy
pids = []
try:
    for pid in dud.DataLoader(Sleepy(30, at=2), batch_size=None, num_workers=2):
        pids.append(pid)
        if len(pids) == 2:      # the next batch takes 30 s: Ctrl-C comes while we wait
            print(*pids, flush=True)
except KeyboardInterrupt:
    print('interrupted', flush=True)
print('workers left:', multiprocessing.active_children(), flush=True)
'''


def test_ctrl_c_stops_the_program_and_its_workers():
    script = CTRL_C_SCRIPT.format(here=os.path.dirname(__file__))
    # Its own session, so that Ctrl-C (SIGINT to the foreground process group: the main
    # process and its workers) can be sent to it alone.
    proc = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2, proc.stderr.read()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert out.splitlines() == ['interrupted', 'workers left: []'], err
    assert all(gone(pid) or _zombie(pid) for pid in pids)


@pytest.mark.parametrize('how', ['signal', 'exit'])
def test_a_worker_that_dies_is_reported_as_torch(how):
    import torch.utils.data as tud
    pattern = r'^DataLoader worker \(pid\(s\) (\d+)\) exited unexpectedly'
    if how == 'signal':     # (torch notices a worker's exit(0) only after 5 s)
        want_type, want = torch_error(lambda: list(tud.DataLoader(
            Dies(how), batch_size=None, num_workers=2)))
        assert want_type is RuntimeError and re.match(pattern, want)
    pids = []
    with pytest.raises(RuntimeError) as e:
        for pid in dud.DataLoader(Dies(how), batch_size=None, num_workers=2):
            pids.append(pid)
    got = re.match(pattern, str(e.value))
    assert got, str(e.value)
    assert ('killed by signal' if how == 'signal' else 'exited with code 0') in str(e.value)
    # items 0, 1, 2 came from workers 0, 1, 0; worker 1 died making item 3
    assert len(pids) == 3 and int(got.group(1)) == pids[1] != pids[0]
    assert_no_workers(set(pids))


@pytest.mark.usefixtures('quick_shutdown')
def test_a_worker_killed_from_outside_does_not_hang_the_loop():
    it = iter(dud.DataLoader(Sleepy(20, at=5), batch_size=None, num_workers=2))
    pids = [next(it), next(it)]
    os.kill(pids[0], signal.SIGKILL)
    with pytest.raises(RuntimeError, match=rf'DataLoader worker \(pid\(s\) {pids[0]}\) exited '
                                           rf'unexpectedly'):
        for _ in range(4):
            next(it)
    assert_no_workers(pids)
    with pytest.raises(RuntimeError, match='shut down'):
        next(it)


ORPHAN_SCRIPT = '''
import os, sys
sys.path.insert(0, {here!r})
import dynagrad.utils.data as dud
from dynagrad.utils.data import dataloader
dataloader.MP_STATUS_CHECK_INTERVAL = 0.2
from test_dataloader_workers import Sleepy
loader = dud.DataLoader(Sleepy(0), batch_size=None, num_workers=2, persistent_workers=True)
print(' '.join(str(p) for p in sorted(set(loader))), flush=True)
os._exit(0)       # no clean-up at all
'''


def test_workers_of_a_dead_main_process_exit():
    script = ORPHAN_SCRIPT.format(here=os.path.dirname(__file__))
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2
    for pid in pids:
        # orphans are reparented, and reaped by their new parent when they exit
        for _ in range(200):
            if gone(pid) or _zombie(pid):
                break
            import time
            time.sleep(0.05)
        assert gone(pid) or _zombie(pid), f'worker {pid} outlived its main process'


def _zombie(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except FileNotFoundError:
        return True


# -- shared memory ---------------------------------------------------------------------------------

@pytest.mark.parametrize('method', ['fork', 'spawn'])
def test_large_batches_arrive_in_shared_memory_and_leave_nothing_behind(method):
    list(dud.DataLoader(Blocks(2, 8), num_workers=1, multiprocessing_context=method))
    gc.collect()        # (a first spawn starts the stdlib's resource tracker, for good)
    shm_before = {n for n in os.listdir('/dev/shm') if 'dynagrad' in n}
    maps_before, fds_before = shared_mappings(), settled_open_fds()
    loader = dud.DataLoader(Blocks(6, 1 << 18), batch_size=2, num_workers=2,
                            multiprocessing_context=method)
    batches = list(loader)
    for k, batch in enumerate(batches):
        assert batch.is_shared()
        want = np.arange(1 << 16, dtype=np.float32) + np.array([[2 * k], [2 * k + 1]])
        np.testing.assert_array_equal(batch.numpy(), want)
    assert shared_mappings() >= len(batches)
    small = list(dud.DataLoader(Blocks(4, 64), batch_size=2, num_workers=1,
                                multiprocessing_context=method))
    assert not any(b.is_shared() for b in small)       # cheaper pickled
    del batches, batch, small, loader
    gc.collect()
    assert shared_mappings() == maps_before
    assert settled_open_fds(fds_before) == fds_before
    assert {n for n in os.listdir('/dev/shm') if 'dynagrad' in n} == shm_before


def test_numpy_batches_and_many_tensors_in_one_batch():
    # a custom collate_fn returning NumPy: the arrays are shared too
    batches = list(dud.DataLoader(Blocks(4, 1 << 17, 'numpy'), batch_size=2, num_workers=1,
                                  collate_fn=collate_to_numpy))
    assert all(isinstance(b, np.ndarray) and reductions.is_shared_array(b) for b in batches)
    np.testing.assert_array_equal(batches[1][1], np.arange(1 << 15, dtype=np.float32) + 3)
    # more descriptors than one message can carry (300 tensors of 64 KiB)
    loader = dud.DataLoader(Blocks(300, 1 << 16), batch_size=300, num_workers=1,
                            collate_fn=list)
    (batch,) = list(loader)
    assert len(batch) == 300 and all(t.is_shared() for t in batch)
    assert [float(t[0]) for t in batch] == list(range(300))


class TwoViews:
    """A shared tensor and a view of it in one sample: one memory file, sent once."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        t = dg.full((4, 1 << 14), float(i)).share_memory_()
        return t, t[1:3]


def test_views_of_one_shared_tensor_stay_views():
    for base, view in dud.DataLoader(TwoViews(), batch_size=None, num_workers=1):
        assert base.is_shared() and view.is_shared()
        view.fill_(7.0)
        assert base[1:3].eq(7.0).all() and base[0].eq(base[3]).all()
        assert np.shares_memory(base.numpy(), view.numpy())


def test_workers_stack_batches_straight_into_shared_memory():
    class Stacked:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return dg.full((128, 128), float(i))

    ((batch, stacked_in_shared_memory),) = list(dud.DataLoader(
        Stacked(), batch_size=4, num_workers=1, collate_fn=collate_and_report))
    assert stacked_in_shared_memory
    assert batch.is_shared() and batch.shape == (4, 128, 128)
    assert batch[:, 0, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    # in the main process default_collate stacks in private memory
    assert not dud.default_collate([dg.full((128, 128), 1.0)] * 4).is_shared()
