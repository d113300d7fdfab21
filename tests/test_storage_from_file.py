"""UntypedStorage.from_file, asarray over a storage, and what loading PyTorch's files and
pickles through ``dynagrad.run.install()`` needs (safetensors' loader, ``torch._utils``),
against torch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import dynagrad


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / 'bytes.bin'
    path.write_bytes(bytes(range(40)))
    return path


@pytest.mark.parametrize('nbytes', [0, 10, 40])
def test_from_file_reads_the_bytes_as_torch(data_file, nbytes):
    mine = dynagrad.UntypedStorage.from_file(str(data_file), False, nbytes)
    theirs = torch.UntypedStorage.from_file(str(data_file), False, nbytes)
    assert mine.nbytes() == theirs.nbytes() == nbytes
    assert mine.tolist() == theirs.tolist()
    for dtype in ('uint8', 'int16', 'float32', None):
        if nbytes == 0 and dtype:
            continue
        m = dynagrad.asarray(mine, dtype=getattr(dynagrad, dtype) if dtype else None)
        t = torch.asarray(theirs, dtype=getattr(torch, dtype) if dtype else None)
        assert str(m.dtype).split('.')[1] == str(t.dtype).split('.')[1]
        np.testing.assert_array_equal(m.numpy(), t.numpy())


def test_private_mapping_leaves_the_file_and_shared_writes_it(tmp_path, data_file):
    mine = dynagrad.UntypedStorage.from_file(data_file, False, 8)
    mine[0] = 99
    assert data_file.read_bytes()[0] == 0 and mine[0] == 99
    fresh = tmp_path / 'made.bin'
    shared = dynagrad.UntypedStorage.from_file(str(fresh), True, 8)
    shared[1] = 7
    view = dynagrad.asarray(shared, dtype=dynagrad.uint8)
    view[2] = 5    # a tensor over the storage writes the file too
    del shared, view
    reference = tmp_path / 'torch.bin'
    theirs = torch.UntypedStorage.from_file(str(reference), True, 8)
    theirs[1] = 7
    theirs[2] = 5
    del theirs
    assert fresh.read_bytes() == reference.read_bytes() == bytes([0, 7, 5, 0, 0, 0, 0, 0])


def test_from_file_errors_as_torch(tmp_path, data_file):
    for call in (lambda S: S.from_file(str(data_file), False, 1000),
                 lambda S: S.from_file(str(tmp_path / 'missing'), False, 4)):
        with pytest.raises(RuntimeError) as theirs:
            call(torch.UntypedStorage)
        with pytest.raises(RuntimeError) as mine:
            call(dynagrad.UntypedStorage)
        assert str(mine.value) == str(theirs.value)


LOAD = '''
import pickle, sys
import dynagrad.run
dynagrad.run.install()
from safetensors.torch import load_file
import torch
loaded = load_file(sys.argv[1])
assert torch is sys.modules['dynagrad'], torch  # served by dynagrad (named torch, see run.py)
for name, t in loaded.items():
    print(name, t.dtype, tuple(t.shape), t.float().tolist())
with open(sys.argv[2], 'rb') as f:
    obj = pickle.load(f)
print(type(obj['p']).__module__, obj['p'].requires_grad, obj['t'].tolist(), obj['g'].requires_grad)
'''


def test_safetensors_loader_and_plain_pickles_of_torch_tensors_run_on_dynagrad(tmp_path):
    safetensors_torch = pytest.importorskip('safetensors.torch')
    import pickle
    tensors = {'a': torch.arange(6.).view(2, 3), 'b': torch.tensor([1, 2, 3]),
               'c': torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
               'd': torch.tensor([[True, False]])}
    st = tmp_path / 'w.safetensors'
    safetensors_torch.save_file(tensors, str(st))
    pk = tmp_path / 'w.pkl'
    with open(pk, 'wb') as f:
        pickle.dump({'t': torch.arange(6.).view(2, 3)[:, 1:],
                     'p': torch.nn.Parameter(torch.ones(2)),
                     'g': torch.ones(2, requires_grad=True)}, f)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(__import__('pathlib').Path(dynagrad.__file__).parent.parent)] +
        [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, '-c', LOAD, str(st), str(pk)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    expected = [f'{name} dynagrad.{str(t.dtype).split(".")[1]} {tuple(t.shape)} '
                f'{t.float().tolist()}' for name, t in safetensors_torch.load_file(str(st)).items()]
    lines = proc.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted(expected)
    assert lines[-1] == 'dynagrad.nn.parameter True [[1.0, 2.0], [4.0, 5.0]] True'


def test_torch_utils_names():
    from dynagrad import _utils
    for name in ('_rebuild_tensor', '_rebuild_tensor_v2', '_rebuild_tensor_v3',
                 '_rebuild_parameter', '_rebuild_parameter_with_state'):
        assert callable(getattr(_utils, name)) and hasattr(torch._utils, name)


def test_toplevel_from_file_as_torch(data_file, tmp_path):
    for kwargs in ({'size': 4, 'dtype': 'int16'}, {'size': 0}, {'size': 2, 'dtype': 'float64'},
                   {'size': 10, 'shared': False}):
        dt = kwargs.pop('dtype', None)
        m = dynagrad.from_file(str(data_file), dtype=getattr(dynagrad, dt) if dt else None,
                               **kwargs)
        t = torch.from_file(str(data_file), dtype=getattr(torch, dt) if dt else None, **kwargs)
        assert str(m.dtype).split('.')[1] == str(t.dtype).split('.')[1]
        np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert dynagrad.from_file(str(data_file), size=1, dtype=dynagrad.float64,
                              requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match='is smaller than the required mapping size <400>'):
        dynagrad.from_file(str(data_file), size=100)
    shared = dynagrad.from_file(str(tmp_path / 'new.bin'), shared=True, size=3,
                                dtype=dynagrad.int32)
    shared[1] = 258
    del shared
    assert (tmp_path / 'new.bin').read_bytes() == bytes([0] * 4 + [2, 1, 0, 0] + [0] * 4)
