"""dynagrad.multiprocessing against torch.multiprocessing: the API, tensors between
processes through shared memory (and the memory freed after), share_memory_ / is_shared /
Module.share_memory, spawn and its errors, and Hogwild training of one shared model by
two processes.

Functions run in child processes live at module level (``spawn`` imports this module);
torch is imported inside the tests that compare with it, so those children do not load it.
"""
import gc
import multiprocessing
import os
import signal
import sys
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.multiprocessing as dmp
import dynagrad.nn as nn

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'),
                                reason='process tests run on Linux')

FORK = dmp.get_context('fork')


def shared_mappings():
    with open('/proc/self/maps') as f:
        return sum('dynagrad-shm' in line for line in f)


def settled_open_fds(target=None):
    """The number of open descriptors once it stops changing (or reaches ``target``): the
    stdlib's resource sharer closes its side of each hand-over in its own thread."""
    count = len(os.listdir('/proc/self/fd'))
    for _ in range(100):
        time.sleep(0.02)
        now = len(os.listdir('/proc/self/fd'))
        if now == target or (target is None and now == count):
            return now
        count = now
    return count


def gone(pid):
    return not os.path.exists(f'/proc/{pid}')


@pytest.fixture(autouse=True)
def no_children_left():
    yield
    gc.collect()
    assert multiprocessing.active_children() == []


# -- functions run in children --------------------------------------------------------------

def add_one_in_place(q_in, q_out):
    report_add_one(q_in.get(), q_out)


def report_add_one(t, q_out, view=None):
    with dg.no_grad():
        t.add_(1)
        if view is not None:
            view.add_(10)
    q_out.put((t.is_shared(), type(t).__name__, t.requires_grad))


def get_from(q, worker, timeout=60):
    """The next item on q, failing at once if the worker died instead."""
    import queue
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return q.get(timeout=0.1)
        except queue.Empty:
            assert worker.is_alive() or not q.empty(), f'worker exited with {worker.exitcode}'
    raise AssertionError('nothing came')


def echo(q_in, q_out):
    q_out.put(q_in.get())
    q_in.get()          # stay alive until the parent has unpickled (it fetches descriptors)


def ok(i, out):
    out[i] = i + 10


def boom(i):
    if i == 1:
        raise ValueError(f'boom {i}')
    time.sleep(30)


def killed(i):
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(30)


def exits(i):
    if i == 1:
        sys.exit(3)
    time.sleep(30)


def interrupted(i):
    raise KeyboardInterrupt


def draw(q, lib):
    lib = sys.modules[lib]
    q.put((lib.rand(3).tolist(), lib.is_grad_enabled()))


def regression_data():
    g = dg.Generator().manual_seed(0)
    x = dg.randn(256, 3, generator=g)
    y = x @ dg.tensor([[2.0], [-1.0], [0.5]]) + 0.3
    return x, y


def hogwild_train(rank, model, steps, counter):
    """One Hogwild worker: SGD on the shared model, with its own shuffling."""
    dg.manual_seed(100 + rank)
    x, y = regression_data()
    opt = dg.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        idx = dg.randint(0, len(x), (32,))
        opt.zero_grad()
        loss = ((model(x[idx]) - y[idx]) ** 2).mean()
        loss.backward()
        opt.step()
        with dg.no_grad():
            counter[rank] += 1


def loss_of(model):
    x, y = regression_data()
    with dg.no_grad():
        return float(((model(x) - y) ** 2).mean())


# -- the API --------------------------------------------------------------------------------

def test_api_matches_torch_multiprocessing():
    import torch.multiprocessing as tmp
    missing = [n for n in tmp.__all__ if not hasattr(dmp, n)]
    assert not missing
    for name in ('spawn', 'start_processes', 'ProcessContext', 'ProcessRaisedException',
                 'ProcessExitedException', 'SpawnContext', 'init_reductions'):
        assert hasattr(dmp, name), name
    # the stdlib's own objects, as torch re-exports them
    for name in ('Process', 'get_context', 'set_start_method', 'cpu_count', 'current_process'):
        assert getattr(dmp, name) is getattr(multiprocessing, name)
    assert dmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert dmp.get_sharing_strategy() == tmp.get_sharing_strategy()


def test_sharing_strategy_errors_match_torch():
    import torch.multiprocessing as tmp
    with pytest.raises(AssertionError) as want:
        tmp.set_sharing_strategy('nope')
    with pytest.raises(AssertionError) as got:
        dmp.set_sharing_strategy('nope')
    assert str(got.value) == str(want.value)
    dmp.set_sharing_strategy('file_system')
    assert dmp.get_sharing_strategy() == 'file_system'
    dmp.set_sharing_strategy('file_descriptor')


# -- share_memory_ / is_shared ------------------------------------------------------------------

def test_share_memory_in_place_like_torch():
    import torch
    for lib in (dg, torch):
        t = lib.arange(6.0).reshape(2, 3).requires_grad_()
        assert not t.is_shared()
        assert t.share_memory_() is t
        assert t.is_shared() and t.requires_grad and t.tolist() == [[0, 1, 2], [3, 4, 5]]
        assert t[1].is_shared()                     # views of shared memory are shared
        assert not (t * 2).is_shared()              # results are not
    t = dg.ones(3)
    t.share_memory_()
    data = t._data
    assert t.share_memory_()._data is data          # already shared: a no-op


def test_module_share_memory_like_torch():
    import torch
    for lib in (dg, torch):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        model[0].weight.grad = lib.zeros(4, 3)
        assert model.share_memory() is model
        assert all(p.is_shared() for p in model.parameters())
        assert all(b.is_shared() for b in model.buffers())
        assert model[0].weight.grad.is_shared()
        assert isinstance(model[0].weight, lib.nn.Parameter)


# -- tensors through queues ------------------------------------------------------------------

def test_a_shared_tensor_sent_to_a_child_is_the_same_memory():
    t = dg.zeros(4).share_memory_()
    p_in, p_out = FORK.Queue(), FORK.Queue()
    worker = FORK.Process(target=add_one_in_place, args=(p_in, p_out))
    worker.start()
    p_in.put(t)
    assert get_from(p_out, worker) == (True, 'Tensor', False)
    worker.join()
    assert t.tolist() == [1.0, 1.0, 1.0, 1.0]       # the child's write, seen here


def test_spawned_children_get_shared_tensors_as_arguments():
    ctx = dmp.get_context('spawn')
    p = nn.Parameter(dg.zeros(3)).share_memory_()
    p_out = ctx.Queue()
    # the same memory twice in one process's arguments (a tensor and a view of it)
    worker = ctx.Process(target=report_add_one, args=(p, p_out, p.detach()[1:]))
    worker.start()
    assert get_from(p_out, worker) == (True, 'Parameter', True)
    worker.join()
    assert p.tolist() == [1.0, 11.0, 11.0]


@pytest.mark.parametrize('nbytes,shared', [(64, False), (1 << 20, True)])
def test_unshared_tensors_are_copied(nbytes, shared):
    t = dg.arange(nbytes // 4, dtype=dg.float32)
    q_in, q_out = FORK.Queue(), FORK.Queue()
    worker = FORK.Process(target=echo, args=(q_in, q_out))
    worker.start()
    q_in.put(t)
    back = get_from(q_out, worker)
    q_in.put(None)
    worker.join()
    assert back.tolist() == t.tolist() and back.dtype == t.dtype
    assert back.is_shared() == shared       # large ones travel through shared memory
    assert not t.is_shared()                # the sender's tensor stays as it was
    back.add_(1)
    assert t[1].item() == 1.0


def test_views_and_subclasses_keep_their_layout_and_type():
    base = dg.arange(12.0).reshape(3, 4).share_memory_()
    view = base.t()[1:]                             # strided, offset view
    param = nn.Parameter(dg.ones(2)).share_memory_()
    back_view, back_param = ForkingPickler.loads(ForkingPickler.dumps((view, param)))
    assert back_view.tolist() == view.tolist() and back_view.stride() == view.stride()
    assert type(back_param) is nn.Parameter and back_param.requires_grad
    back_view[0, 0] = 100.0                         # same memory as base, here too
    assert base[0, 1].item() == 100.0


def test_non_leaf_tensors_are_refused_like_torch():
    import torch
    import torch.multiprocessing  # noqa: F401  (registers torch's reducers)
    with pytest.raises(RuntimeError) as want:
        ForkingPickler.dumps(torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as got:
        ForkingPickler.dumps(dg.ones(2, requires_grad=True) * 2)
    assert str(got.value) == str(want.value)
    leaf = ForkingPickler.loads(ForkingPickler.dumps(dg.ones(2, requires_grad=True)))
    assert leaf.requires_grad and leaf.is_leaf


def test_only_dynagrad_types_are_registered():
    # plain NumPy arrays pickle as they always did through multiprocessing
    a = np.arange(1 << 18, dtype=np.float32)
    back = ForkingPickler.loads(ForkingPickler.dumps(a))
    assert type(back) is np.ndarray and not dmp.reductions.is_shared_array(back)
    np.testing.assert_array_equal(back, a)


def test_shared_memory_is_freed():
    # (the first descriptor sent starts the stdlib's resource sharer: a socket, for good)
    ForkingPickler.loads(ForkingPickler.dumps(dg.zeros(1 << 16).share_memory_()))
    gc.collect()
    before = shared_mappings()
    fds = settled_open_fds()
    shm_before = sorted(n for n in os.listdir('/dev/shm') if 'dynagrad' in n)
    t = dg.zeros(1 << 16).share_memory_()
    copies = [ForkingPickler.loads(ForkingPickler.dumps(t)) for _ in range(3)]
    assert shared_mappings() == before + 1          # one mapping per memory file, reused
    assert all(c.is_shared() for c in copies)
    del t, copies
    gc.collect()
    assert shared_mappings() == before
    assert settled_open_fds(fds) == fds
    assert sorted(n for n in os.listdir('/dev/shm') if 'dynagrad' in n) == shm_before


# -- spawn ----------------------------------------------------------------------------------

def test_spawn_runs_fn_with_its_index():
    out = dg.zeros(2).share_memory_()
    assert dmp.spawn(ok, args=(out,), nprocs=2) is None
    assert out.tolist() == [10.0, 11.0]


def test_spawn_error_reads_as_torch():
    import torch.multiprocessing as tmp
    with pytest.raises(tmp.ProcessRaisedException) as want:
        tmp.start_processes(boom, nprocs=2, start_method='fork')
    with pytest.raises(dmp.ProcessRaisedException) as got:
        dmp.start_processes(boom, nprocs=2, start_method='fork')
    head = ('\n\n-- Process 1 terminated with the following error:\n'
            'Traceback (most recent call last):\n')
    assert str(want.value).startswith(head) and str(got.value).startswith(head)
    assert str(got.value).endswith('ValueError: boom 1\n')
    assert got.value.error_index == 1 and gone(got.value.error_pid)
    assert isinstance(got.value, dmp.ProcessException)


@pytest.mark.parametrize('fn,words,code,signal_name', [
    (killed, 'process 0 terminated with signal SIGKILL', -9, 'SIGKILL'),
    (exits, 'process 1 terminated with exit code 3', 3, None),
])
def test_spawn_exit_reads_as_torch(fn, words, code, signal_name):
    import torch.multiprocessing as tmp
    with pytest.raises(tmp.ProcessExitedException) as want:
        tmp.start_processes(fn, nprocs=2, start_method='fork')
    with pytest.raises(dmp.ProcessExitedException) as got:
        dmp.start_processes(fn, nprocs=2, start_method='fork')
    assert str(got.value) == str(want.value) == words
    assert (got.value.exit_code, got.value.signal_name) == \
        (want.value.exit_code, want.value.signal_name) == (code, signal_name)


def test_spawn_join_false_and_keyboard_interrupt_in_a_child():
    context = dmp.start_processes(interrupted, nprocs=2, join=False, start_method='fork')
    assert isinstance(context, dmp.ProcessContext) and len(context.pids()) == 2
    while not context.join():
        pass
    assert context.join() is True
    assert all(p.exitcode == 0 for p in context.processes)


def test_spawn_warnings_and_errors_match_torch():
    import torch.multiprocessing as tmp
    texts = []
    for mod in (tmp, dmp):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter('always')
            mod.spawn(interrupted, nprocs=1, start_method='fork')
        texts.append([(w.category, str(w.message).replace('torch.', 'dynagrad.'))
                      for w in rec])
    assert texts[0] == texts[1] and len(texts[0]) == 1
    for mod in (tmp, dmp):
        with pytest.raises(ValueError, match="cannot find context for 'bogus'"):
            mod.start_processes(ok, nprocs=1, start_method='bogus')


def test_forked_children_inherit_generator_and_grad_mode_as_torch():
    import torch
    for lib in (torch, dg):
        lib.manual_seed(7)
        q = FORK.Queue()
        with lib.no_grad():
            children = [FORK.Process(target=draw, args=(q, lib.__name__)) for _ in range(2)]
            for c in children:
                c.start()
            got = [get_from(q, children[0]) for _ in children]
        for c in children:
            c.join()
        # each child goes on with the parent's stream from where it was, and its grad mode:
        # reseed per process (manual_seed(seed + rank)) for different streams
        assert got[0] == got[1] == (lib.rand(3).tolist(), False)


# -- Hogwild --------------------------------------------------------------------------------

@pytest.mark.parametrize('start', ['fork', 'spawn'])
def test_hogwild_two_processes_train_one_shared_model(start):
    dg.manual_seed(0)
    model = nn.Linear(3, 1)
    model.share_memory()
    counter = dg.zeros(2).share_memory_()
    first_loss = loss_of(model)
    steps = 150
    if start == 'fork':
        procs = [dmp.Process(target=hogwild_train, args=(rank, model, steps, counter))
                 for rank in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        assert [p.exitcode for p in procs] == [0, 0]
    else:
        dmp.spawn(hogwild_train, args=(model, steps, counter), nprocs=2)
    # both processes ran, and their updates landed in this process's model
    assert counter.tolist() == [steps, steps]
    assert loss_of(model) < first_loss / 100
    np.testing.assert_allclose(model.weight.detach().numpy(), [[2.0, -1.0, 0.5]], atol=0.05)
    np.testing.assert_allclose(model.bias.detach().numpy(), [0.3], atol=0.05)
