"""Platforms without processes or threads (Pyodide): what degrades and what says why.

Natively the platform is stood in for by setting sys.platform to 'emscripten'; the browser
checks (web/) run this same file inside Pyodide, where nothing is stood in for.
"""
import contextlib
import errno
import io
import subprocess
import sys
import warnings

import pytest

import dynagrad as dg
from dynagrad.utils.data import DataLoader, TensorDataset, get_worker_info


@pytest.fixture
def emscripten(monkeypatch):
    if sys.platform != 'emscripten':
        monkeypatch.setattr(sys, 'platform', 'emscripten')


def batches(loader):
    return [b[0].tolist() for b in loader]


def test_set_num_threads_is_a_silent_no_op(emscripten):
    before = dg.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        dg.set_num_threads(4)
    assert dg.get_num_threads() == before
    with pytest.raises(RuntimeError, match='positive integer'):
        dg.set_num_threads(0)   # the argument is still checked as PyTorch checks it


@pytest.mark.parametrize('persistent', [False, True])
def test_dataloader_workers_load_in_the_main_process_with_one_warning(emscripten, persistent):
    data = TensorDataset(dg.arange(10.0))
    expected = batches(DataLoader(data, batch_size=4))
    seen = []

    def record(_):
        seen.append(get_worker_info())

    loader = DataLoader(data, batch_size=4, num_workers=3, persistent_workers=persistent,
                        worker_init_fn=record)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert batches(loader) == expected
        assert batches(loader) == expected  # a second epoch, persistent or not
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert 'emscripten' in message and 'main process' in message and 'num_workers=3' in message
    assert caught[0].filename == __file__   # points at the user's loop, not at dynagrad
    assert seen == []                         # no worker started, so none was initialised


def test_dataloader_with_workers_shuffles_like_the_main_process(emscripten):
    data = TensorDataset(dg.arange(20.0))
    dg.manual_seed(3)
    expected = batches(DataLoader(data, batch_size=5, shuffle=True))
    dg.manual_seed(3)
    with pytest.warns(UserWarning, match='main process'):
        assert batches(DataLoader(data, batch_size=5, shuffle=True, num_workers=2)) == expected


def test_spawn_names_the_platform(emscripten):
    import dynagrad.multiprocessing as mp
    with pytest.raises(RuntimeError, match=r'emscripten \(Pyodide') as info:
        mp.spawn(print, nprocs=2)
    assert 'start_processes needs processes' in str(info.value)


STAND_INS = '''
import dynagrad.multiprocessing as mp
class Worker(mp.Process):  # a program that subclasses Process still imports
    pass
for make in (lambda: Worker(target=print), mp.Queue, mp.Pipe, mp.Lock, lambda: mp.Pool(2)):
    try:
        make()
    except RuntimeError as e:
        print(e)
'''


def test_multiprocessing_classes_name_the_platform():
    if sys.platform == 'emscripten':
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(STAND_INS, {'__name__': 'stand_ins'})
        lines = out.getvalue().splitlines()
    else:
        # The stand-ins are chosen at import, so natively a fresh interpreter stands in.
        code = "import sys; sys.platform = 'emscripten'\n" + STAND_INS
        lines = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                               check=True).stdout.splitlines()
    assert [line.split(' needs ')[0] for line in lines] == [
        f'dynagrad.multiprocessing.{n}' for n in ('Process', 'Queue', 'Pipe', 'Lock', 'Pool')]
    assert all('emscripten (Pyodide' in line for line in lines)


def test_the_ddp_launcher_names_the_platform(emscripten, capsys):
    from dynagrad.distributed import run
    with pytest.raises(SystemExit) as info:
        run.main(['--nproc-per-node', '2', 'train.py'])
    assert 'dynagrad.distributed launcher' in str(info.value.code)
    assert 'Pyodide' in str(info.value.code) and 'mpirun' not in str(info.value.code)


def test_rendering_a_graph_names_the_platform_and_keeps_the_source(emscripten, monkeypatch):
    graphviz = pytest.importorskip('graphviz')
    from graphviz.backend import execute
    from dynagrad import viz
    if sys.platform == 'emscripten' and not hasattr(sys, '_emscripten_info'):
        # natively: what Pyodide's subprocess raises for any program
        def refuse(*args, **kwargs):
            raise OSError(errno.ENOTSUP, 'emscripten does not support processes.')
        monkeypatch.setattr(execute.subprocess, 'Popen', refuse)
        monkeypatch.setattr(execute.subprocess, 'run', refuse)
    x = dg.ones(3, requires_grad=True)
    dot = viz.make_dot((x * 2).sum())
    with pytest.raises(RuntimeError, match='Graphviz compiled to WebAssembly') as info:
        dot.pipe(format='svg')
    assert 'emscripten' in str(info.value) and isinstance(info.value.__cause__, OSError)
    assert 'MulBackward0' in dot.source
