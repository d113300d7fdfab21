"""dynagrad.utils.safetensors: files interchangeable with safetensors.torch's."""
import os
import sys

import numpy as np
import pytest
import safetensors.torch as st
import torch

import dynagrad as dg
from dynagrad.serialization import CheckpointError, zipformat
from dynagrad.utils import safetensors as dst

DTYPES = ['float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool']
if hasattr(dg, 'bfloat16'):
    DTYPES.append('bfloat16')


def values(t):
    """A tensor's values as a NumPy array (bfloat16 widened: NumPy has no such dtype)."""
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    return (t.float() if str(t.dtype).endswith('bfloat16') else t).numpy()


def sample(dtype, shape=(2, 3)):
    return dg.tensor(np.arange(int(np.prod(shape))).reshape(shape) - 2, dtype=getattr(dg, dtype))


@pytest.mark.parametrize('dtype', DTYPES)
def test_dynagrad_file_loads_in_safetensors_torch(tmp_path, dtype):
    tensors = {'w': sample(dtype), 'scalar': sample(dtype, ()), 'empty': sample(dtype, (0, 2))}
    dst.save_file(tensors, tmp_path / 'm.safetensors', metadata={'epoch': '3'})
    loaded = st.load_file(str(tmp_path / 'm.safetensors'))
    assert set(loaded) == set(tensors)
    for k, t in tensors.items():
        assert str(loaded[k].dtype) == f'torch.{dtype}'
        assert tuple(loaded[k].shape) == tuple(t.shape)
        np.testing.assert_array_equal(values(loaded[k]), values(t))
    assert st.load(dst.save(tensors)).keys() == loaded.keys()
    from safetensors import safe_open
    with safe_open(str(tmp_path / 'm.safetensors'), 'pt') as f:
        assert f.metadata() == {'epoch': '3'}


@pytest.mark.parametrize('dtype', DTYPES)
def test_safetensors_torch_file_loads_in_dynagrad(tmp_path, dtype):
    tensors = {'a': torch.arange(6).reshape(2, 3).to(getattr(torch, dtype)),
               'b': torch.ones((), dtype=getattr(torch, dtype))}
    st.save_file(tensors, str(tmp_path / 't.safetensors'))
    for out in (dst.load_file(tmp_path / 't.safetensors'),
                dst.load(st.save(tensors)),
                dg.load(tmp_path / 't.safetensors')):        # dynagrad.load reads them too
        assert set(out) == set(tensors)
        for k, t in tensors.items():
            assert type(out[k]) is dg.Tensor and out[k].dtype == getattr(dg, dtype)
            np.testing.assert_array_equal(values(out[k]), values(t))
            out[k].zero_()                   # writable, and owned by the caller


def test_torch_model_weights_round_trip(tmp_path):
    net = torch.nn.Linear(3, 2)
    st.save_file(net.state_dict(), str(tmp_path / 'lin.safetensors'))
    lin = dg.nn.Linear(3, 2)
    lin.load_state_dict(dst.load_file(str(tmp_path / 'lin.safetensors')))
    dst.save_file(dict(lin.state_dict()), tmp_path / 'back.safetensors')
    net2 = torch.nn.Linear(3, 2)
    net2.load_state_dict(st.load_file(str(tmp_path / 'back.safetensors')))
    assert torch.equal(net2.weight, net.weight) and torch.equal(net2.bias, net.bias)


def test_what_safetensors_torch_refuses_is_refused_alike():
    x = dg.arange(6.0)
    with pytest.raises(ValueError, match='Expected a dict of'):
        dst.save([x])
    with pytest.raises(ValueError, match='Key `a` is invalid, expected dynagrad.Tensor'):
        dst.save({'a': 1})
    with pytest.raises(RuntimeError, match='Some tensors share memory'):
        dst.save({'a': x, 'b': x[2:]})
    with pytest.raises(ValueError, match='non contiguous tensor: `t`'):
        dst.save({'t': x.reshape(2, 3).t()})
    with pytest.raises(ValueError, match='metadata'):
        dst.save({'a': x}, metadata={'k': 1})
    dst.save({'a': x[:2], 'b': x[2:]})     # neighbouring slices do not overlap


def test_corrupted_and_foreign_dtype_files(tmp_path):
    raw = st.save({'w': torch.ones(2, dtype=torch.uint16)})     # U16 loads now
    assert dst.load(raw)['w'].dtype == dg.uint16
    raw = st.save({'w': torch.ones(2, dtype=torch.complex64)})
    with pytest.raises(CheckpointError, match="'w' has dtype C64, which dynagrad does not"):
        dst.load(raw)
    good = dst.save({'w': dg.ones(4)})
    with pytest.raises(CheckpointError, match='outside the data section'):
        dst.load(good[:-1])
    (tmp_path / 'bad.safetensors').write_bytes(good[:5])
    with pytest.raises(CheckpointError, match='bad.safetensors.*truncated'):
        dst.load_file(tmp_path / 'bad.safetensors')
    with pytest.raises(RuntimeError, match='CUDA device'):
        dst.load_file(tmp_path / 'bad.safetensors', device='cuda')


def test_save_file_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / 'w.safetensors'
    dst.save_file({'w': dg.ones(3)}, path)
    before = path.read_bytes()

    def fail(fh, chunk):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(zipformat, 'write_chunk', fail)
    with pytest.raises(OSError, match='No space left'):
        dst.save_file({'w': dg.zeros(3)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['w.safetensors']


def test_missing_package_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, 'safetensors', None)
    monkeypatch.setitem(sys.modules, 'safetensors.numpy', None)
    with pytest.raises(ImportError, match=r'pip install dynagrad\[checkpoints\]'):
        dst.save_file({'a': dg.ones(1)}, tmp_path / 'c')
    assert os.listdir(tmp_path) == []
    assert dg.utils.safetensors is dst
