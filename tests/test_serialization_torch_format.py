"""Checkpoints in PyTorch's own format, both ways: what dynagrad.save writes loads in
torch.load (weights_only=True), what torch.save writes loads in dynagrad.load, with equal
values, dtypes, shapes, strides, storage sharing, flags and structure."""
import collections
import io
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.serialization as ser
from dynagrad.nn import Parameter
from dynagrad.serialization import CheckpointError

DTYPES = ['float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool']
if hasattr(dg, 'bfloat16'):
    DTYPES.append('bfloat16')
SHAPES = [(), (0,), (5,), (2, 3), (0, 4), (2, 1, 3)]


def dg_tensor(dtype, shape):
    data = (np.arange(int(np.prod(shape))) - 2).reshape(shape)
    return dg.tensor(data, dtype=getattr(dg, dtype))


def to_torch(buf):
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def to_dg(buf, **kw):
    buf.seek(0)
    return dg.load(buf, **kw)


def dg_save(obj, **kw):
    buf = io.BytesIO()
    dg.save(obj, buf, **kw)
    return buf


def torch_save(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf


def values(t):
    """A tensor's values as a NumPy array (bfloat16 widened: NumPy has no such dtype)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    t = t.detach()
    return (t.float() if str(t.dtype).endswith('bfloat16') else t).numpy()


def assert_same_tensor(d, t):
    """A dynagrad tensor and a torch tensor agree in everything a checkpoint carries."""
    assert str(d.dtype).split('.')[1] == str(t.dtype).split('.')[1]
    assert tuple(d.shape) == tuple(t.shape)
    if t.numel():   # an empty tensor's strides are arbitrary (torch keeps NumPy's zeros)
        assert tuple(d.stride()) == tuple(t.stride())
    assert d.requires_grad == t.requires_grad
    assert isinstance(d, Parameter) == isinstance(t, torch.nn.Parameter)
    np.testing.assert_array_equal(values(d), values(t))


def assert_same(d, t):
    if isinstance(d, dg.Tensor):
        assert_same_tensor(d, t)
    elif isinstance(d, dict):
        assert type(d).__name__ == type(t).__name__
        assert list(d) == list(t)
        for k in d:
            assert_same(d[k], t[k])
    elif isinstance(d, (list, tuple)):
        assert type(d).__name__ == type(t).__name__ or (type(d) is dg.Size)
        assert len(d) == len(t)
        for x, y in zip(d, t):
            assert_same(x, y)
    elif isinstance(d, float) and np.isnan(d):
        assert np.isnan(t)
    else:
        assert d == t and type(d) is type(t)


# -- dynagrad -> torch -------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('shape', SHAPES, ids=str)
def test_every_dtype_and_shape_loads_in_torch(dtype, shape):
    t = dg_tensor(dtype, shape)
    out = to_torch(dg_save(t))
    assert type(out) is torch.Tensor
    assert_same_tensor(t, out)


def test_views_share_one_storage_in_torch():
    base = dg.arange(24.0).reshape(4, 6)
    obj = {'base': base, 't': base.t(), 'row': base[1], 'col': base[:, 2], 'block': base[1:3, 2:5],
           'step': base[::2, ::3], 'flat': base.reshape(-1), 'expanded': dg.ones(3).expand(4, 3)}
    out = to_torch(dg_save(obj))
    for k, v in obj.items():
        assert_same_tensor(v, out[k])
    ptr = out['base'].untyped_storage().data_ptr()
    for k in ('t', 'row', 'col', 'block', 'step', 'flat'):
        assert out[k].untyped_storage().data_ptr() == ptr, k
    assert out['row'].storage_offset() == 6 and out['block'].storage_offset() == 8
    assert out['expanded'].stride() == (0, 1)
    out['t'][0, 1] = 100.0               # a write through one view shows in the others
    assert out['base'][1, 0] == 100.0 and out['col'][1] != 100.0 and out['row'][0] == 100.0


def test_numpy_layouts_torch_cannot_describe_are_saved_as_copies():
    a = np.arange(12.0).reshape(3, 4)
    fortran = dg.from_numpy(np.asfortranarray(a))
    reversed_ = dg.from_numpy(a[::-1])                     # negative strides
    as_int = dg.from_numpy(a.view(np.int64))              # same memory, other dtype
    base = dg.from_numpy(a)
    out = to_torch(dg_save({'f': fortran, 'r': reversed_, 'i': as_int, 'b': base}))
    assert out['f'].stride() == (1, 3)
    np.testing.assert_array_equal(out['f'].numpy(), a)
    np.testing.assert_array_equal(out['r'].numpy(), a[::-1])
    assert out['r'].stride() == (4, 1)
    np.testing.assert_array_equal(out['i'].numpy(), a.view(np.int64))
    np.testing.assert_array_equal(out['b'].numpy(), a)


def test_requires_grad_parameters_and_non_leaves_in_torch():
    w = Parameter(dg.randn(3, 2))
    frozen = Parameter(dg.randn(2), requires_grad=False)
    leaf = dg.randn(3, requires_grad=True)
    obj = {'w': w, 'frozen': frozen, 'leaf': leaf, 'nonleaf': leaf * 2, 'again': w}
    out = to_torch(dg_save(obj))
    assert type(out['w']) is torch.nn.Parameter and out['w'].requires_grad
    assert type(out['frozen']) is torch.nn.Parameter and not out['frozen'].requires_grad
    assert out['leaf'].requires_grad and out['leaf'].is_leaf
    assert out['nonleaf'].requires_grad and out['nonleaf'].is_leaf
    assert out['again'] is out['w']
    for k in ('w', 'frozen', 'leaf'):
        assert_same_tensor(obj[k], out[k])


def test_variables_of_the_0_3_api_load_in_torch_as_tensors(monkeypatch):
    from dynagrad.autograd import Variable
    from dynagrad.tensor import legacy
    monkeypatch.setattr(legacy, 'active', legacy.active)     # a Variable turns 0.3 mode on
    v = Variable(dg.ones(2), requires_grad=True)
    out = to_torch(dg_save({'v': v}))
    assert type(out['v']) is torch.Tensor and out['v'].requires_grad
    assert out['v'].tolist() == [1.0, 1.0]


def test_tensor_and_parameter_attributes_reach_torch():
    t = dg.ones(2)
    t.note = 'hello'
    p = Parameter(dg.zeros(2))
    p.tag = 7
    out = to_torch(dg_save({'t': t, 'p': p}))
    assert out['t'].note == 'hello' and type(out['t']) is torch.Tensor
    assert out['p'].tag == 7 and type(out['p']) is torch.nn.Parameter


def test_nested_python_values_in_torch():
    obj = {'int': 3, 'neg': -70000, 'big': 2 ** 70, 'float': 2.5, 'inf': float('inf'),
           'nan': float('nan'), 'str': 'héllo ✓', 'none': None, 'bool': True,
           'list': [1, [2, (3, 'x')]], 'tuple': (), 'set': {1, 2}, 'bytes': b'\x00\xff',
           'complex': 1 + 2j, (1, 'a'): 'tuple key', 2.5: 'float key', None: 'none key',
           'size': dg.Size([2, 3]), 'dtype': dg.float16, 'device': dg.device('cpu'),
           'od': collections.OrderedDict([('b', 1), ('a', 2)])}
    out = to_torch(dg_save(obj))
    assert out['size'] == torch.Size([2, 3]) and type(out['size']) is torch.Size
    assert out['dtype'] is torch.float16 and out['device'] == torch.device('cpu')
    for k in obj:
        if k not in ('size', 'dtype', 'device'):
            assert_same(obj[k], out[k])


def test_module_state_dict_loads_into_torch_module():
    dg.manual_seed(0)
    net = dg.nn.Sequential(dg.nn.Conv2d(1, 4, 3), dg.nn.BatchNorm2d(4), dg.nn.ReLU(),
                           dg.nn.Flatten(), dg.nn.Linear(4 * 4 * 4, 3))
    net(dg.randn(2, 1, 6, 6))            # moves the batch-norm running statistics
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                               torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(64, 3))
    sd = net.state_dict()
    out = to_torch(dg_save(sd))
    assert list(out) == list(tnet.state_dict()) == list(sd)
    tnet.load_state_dict(out)
    net.eval()
    tnet.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(tnet(torch.from_numpy(x)).detach().numpy(),
                               net(dg.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_optimizer_state_dict_loads_into_torch_optimizer():
    dg.manual_seed(0)
    net = dg.nn.Linear(3, 2)
    opt = dg.optim.Adam(net.parameters(), lr=0.01)
    net(dg.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    out = to_torch(dg_save(sd))
    tnet = torch.nn.Linear(3, 2)
    topt = torch.optim.Adam(tnet.parameters(), lr=0.01)
    topt.load_state_dict(out)
    assert list(out['state'][0]) == list(sd['state'][0])
    assert out['param_groups'][0]['params'] == [0, 1]
    assert_same(sd['state'], out['state'])


# -- torch -> dynagrad -------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('shape', SHAPES, ids=str)
def test_every_dtype_and_shape_from_torch(dtype, shape):
    data = (np.arange(int(np.prod(shape))) - 2).reshape(shape)
    t = torch.tensor(data).to(getattr(torch, dtype))
    out = to_dg(torch_save(t))
    assert type(out) is dg.Tensor
    assert_same_tensor(out, t)


def test_torch_views_stay_linked_in_dynagrad():
    base = torch.arange(24.0).reshape(4, 6)
    obj = {'base': base, 't': base.t(), 'row': base[1], 'block': base[1:3, 2:5],
           'step': base[::2, ::3], 'expanded': torch.ones(3).expand(4, 3)}
    out = to_dg(torch_save(obj))
    for k, v in obj.items():
        assert_same_tensor(out[k], v)
    for k in ('t', 'row', 'block', 'step'):
        assert np.shares_memory(out[k].numpy(), out['base'].numpy()), k
    out['t'].add_(0)                 # one storage, one version counter
    version = out['base']._version
    out['row'].mul_(2)
    assert out['base']._version == version + 1
    np.testing.assert_array_equal(out['base'][1].numpy(), 2 * np.arange(6.0, 12.0))
    np.testing.assert_array_equal(out['t'][:, 1].numpy(), 2 * np.arange(6.0, 12.0))


def test_torch_parameters_and_flags_in_dynagrad():
    w = torch.nn.Parameter(torch.randn(3, 2))
    frozen = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    leaf = torch.randn(3, requires_grad=True)
    w.tag = 5
    out = to_dg(torch_save({'w': w, 'frozen': frozen, 'leaf': leaf, 'again': w}))
    assert type(out['w']) is Parameter and out['w'].requires_grad and out['w'].tag == 5
    assert type(out['frozen']) is Parameter and not out['frozen'].requires_grad
    assert out['leaf'].requires_grad and out['leaf'].is_leaf
    assert out['again'] is out['w']
    out['w'].sum().backward()
    assert out['w'].grad.tolist() == [[1.0, 1.0]] * 3


def test_torch_values_and_containers_in_dynagrad():
    t = torch.ones(2)
    t.note = 'hi'
    obj = {'int': 3, 'big': -2 ** 70, 'float': 2.5, 'str': 'héllo', 'none': None,
           'list': [1, [2, (3, 'x')]], 'set': {1, 2},
           'bytes': b'\x00\xff', 'bytearray': bytearray(b'ab'), 'complex': 1 - 2j,
           'size': torch.Size([2, 3]), 'dtype': torch.int64, 'device': torch.device('cpu'),
           'counter': collections.Counter('aab'), 't': t,
           'od': collections.OrderedDict([('b', 1), ('a', 2)])}
    out = to_dg(torch_save(obj))
    assert out['size'] == dg.Size([2, 3]) and type(out['size']) is dg.Size
    assert out['dtype'] is dg.int64 and out['device'] == dg.device('cpu')
    assert out['t'].note == 'hi' and type(out['t']) is dg.Tensor
    assert out['counter'] == collections.Counter('aab') and type(out['counter']) is \
        collections.Counter
    for k in ('int', 'big', 'float', 'str', 'none', 'list', 'set', 'bytes', 'bytearray',
              'complex', 'od'):
        assert out[k] == obj[k] and type(out[k]) is type(obj[k]), k
    assert list(out['od']) == ['b', 'a']


def test_torch_module_state_dict_keeps_metadata_and_loads_into_dynagrad():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                               torch.nn.Tanh(), torch.nn.Linear(8, 2))
    tnet(torch.randn(5, 4))
    sd = tnet.state_dict()
    out = to_dg(torch_save(sd))
    assert type(out) is collections.OrderedDict and list(out) == list(sd)
    assert out._metadata == sd._metadata
    net = dg.nn.Sequential(dg.nn.Linear(4, 8), dg.nn.BatchNorm1d(8), dg.nn.Tanh(),
                           dg.nn.Linear(8, 2))
    assert list(net.state_dict()) == list(out)
    net.load_state_dict(out)
    tnet.eval()
    net.eval()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(net(dg.from_numpy(x)).detach().numpy(),
                               tnet(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # ...and the metadata survives a dynagrad round trip back to torch.
    again = to_torch(dg_save(out))
    assert again._metadata == sd._metadata


def test_torch_optimizer_state_dict_loads_into_dynagrad_optimizer():
    torch.manual_seed(0)
    tnet = torch.nn.Linear(3, 2)
    topt = torch.optim.Adam(tnet.parameters(), lr=0.01)
    tnet(torch.randn(4, 3)).sum().backward()
    topt.step()
    sd = topt.state_dict()
    out = to_dg(torch_save(sd))
    net = dg.nn.Linear(3, 2)
    opt = dg.optim.Adam(net.parameters(), lr=0.01)
    net(dg.randn(4, 3)).sum().backward()
    opt.step()
    assert list(opt.state_dict()['state'][0]) == list(out['state'][0])
    assert sorted(opt.state_dict()['param_groups'][0]) == sorted(out['param_groups'][0])
    opt.load_state_dict(out)
    assert_same(opt.state_dict()['state'][0], sd['state'][0])


# -- the file itself -----------------------------------------------------------------------

def test_data_pkl_is_byte_identical_to_torchs():
    tnet = torch.nn.Linear(3, 2)
    net = dg.nn.Linear(3, 2)
    tsd, dsd = tnet.state_dict(), net.state_dict()
    dsd._metadata = tsd._metadata
    extra = [1, -2.5, 2 ** 70, 'é', None, (1, (2,)), {3}, b'ab', 1j, True]
    theirs = zipfile.ZipFile(torch_save({'m': tsd, 'p': tnet.weight, 'x': extra}))
    ours = zipfile.ZipFile(dg_save({'m': dsd, 'p': net.weight, 'x': extra}))
    assert ours.read('archive/data.pkl') == theirs.read('archive/data.pkl')
    assert ours.namelist() == theirs.namelist()
    for name in ('version', 'byteorder', '.format_version', '.storage_alignment'):
        assert ours.read(f'archive/{name}') == theirs.read(f'archive/{name}'), name
    serial = ours.read('archive/.data/serialization_id')
    assert len(serial) == 40 and serial.isdigit()


def test_records_are_stored_and_64_byte_aligned(tmp_path):
    dg.save({'a': dg.ones(3), 'b': dg.ones(5, dtype=dg.int8), 'c': dg.zeros(0)},
            tmp_path / 'model.ckpt.pt')
    raw = (tmp_path / 'model.ckpt.pt').read_bytes()
    with zipfile.ZipFile(tmp_path / 'model.ckpt.pt') as archive:
        assert archive.testzip() is None
        assert archive.namelist()[0] == 'model.ckpt/data.pkl'    # as torch names it
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            start = info.header_offset + 30 + len(info.filename.encode()) + \
                int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], 'little')
            assert start % 64 == 0, info.filename


def test_zip64_fields_read_by_torch_and_zipfile(monkeypatch):
    from dynagrad.serialization import zipformat
    monkeypatch.setattr(zipformat, 'ZIP64_LIMIT', 40)     # every size and offset over it
    monkeypatch.setattr(zipformat, 'COUNT_LIMIT', 3)      # and too many records
    obj = {'a': dg.arange(100.0), 'b': dg.ones(3, dtype=dg.int64), 'c': dg.randn(4, 5).t()}
    buf = dg_save(obj)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as archive:
        assert archive.testzip() is None
        assert b'PK\x06\x06' in buf.getvalue()          # the zip64 end record
    assert_same(obj, to_torch(buf))
    assert_same(to_dg(buf), to_torch(buf))


def test_pickle_protocols(tmp_path):
    obj = {'w': dg.randn(2, 2), 'b': b'xy', 'n': [1, 2]}
    for protocol in (2, 3, 4, 5):
        buf = dg_save(obj, pickle_protocol=protocol)
        assert_same(obj, to_dg(buf))
        buf.seek(0)
        assert_same(obj, torch.load(buf, weights_only=False))
    with pytest.raises(ValueError, match='pickle_protocol'):
        dg.save(obj, io.BytesIO(), pickle_protocol=1)


def test_legacy_format_both_ways():
    obj = {'x': dg.arange(6.0), 'w': Parameter(dg.ones(2, 2)), 'n': 3}
    obj['v'] = obj['x'][1:4]
    buf = dg_save(obj, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(io.BytesIO(buf.getvalue()))
    out = to_torch(buf)
    assert out['v'].untyped_storage().data_ptr() == out['x'].untyped_storage().data_ptr()
    assert_same(obj, out)
    assert_same(to_dg(buf), out)
    base = torch.arange(6.0)
    theirs = torch_save({'x': base, 'v': base[2:], 'p': torch.nn.Parameter(torch.ones(2))},
                        _use_new_zipfile_serialization=False)
    mine = to_dg(theirs)
    assert type(mine['p']) is Parameter
    mine['v'].add_(10)
    assert mine['x'].tolist() == [0.0, 1.0, 12.0, 13.0, 14.0, 15.0]


def test_weights_only_refusal_matches_torch():
    class Evil:
        def __reduce__(self):
            return (os.system, ('echo pwned',))

    buf = torch_save({'w': torch.ones(1), 'evil': Evil()})
    with pytest.raises(pickle.UnpicklingError) as theirs:
        to_torch(buf)
    with pytest.raises(pickle.UnpicklingError) as ours:
        to_dg(buf)
    for text in ('Weights only load failed', 'whose module posix is blocked'):
        assert text in str(theirs.value) and text in str(ours.value)
    assert "'<file object>'" in str(ours.value) or '<file object>' in str(ours.value)


def test_numpy_arrays_need_allowlisting_as_in_torch():
    arr = np.arange(3, dtype=np.float32)
    allow = [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
             type(np.dtype(np.float32))]
    for buf in (torch_save({'a': arr}), dg_save({'a': arr})):
        with pytest.raises(pickle.UnpicklingError, match='_reconstruct was not an allowed'):
            to_torch(buf)
        with pytest.raises(pickle.UnpicklingError, match='_reconstruct was not an allowed'):
            to_dg(buf)
        with torch.serialization.safe_globals(allow):
            np.testing.assert_array_equal(to_torch(buf)['a'], arr)
        with ser.safe_globals(allow):
            out = to_dg(buf)['a']
        assert type(out) is np.ndarray and out.dtype == np.float32
        np.testing.assert_array_equal(out, arr)
        np.testing.assert_array_equal(to_dg(buf, weights_only=False)['a'], arr)


def test_unsafe_globals_listed_as_torch_lists_them():
    buf = torch_save({'a': np.arange(3), 'w': torch.ones(2)})
    buf.seek(0)
    theirs = sorted(torch.serialization.get_unsafe_globals_in_checkpoint(buf))
    buf.seek(0)
    assert ser.get_unsafe_globals_in_checkpoint(buf) == theirs


def test_map_location_for_a_cuda_checkpoint():
    # A checkpoint saved from a GPU names 'cuda:0' as its storages' location.
    buf = torch_save({'w': torch.arange(3.0)})
    buf = rewrite_records(buf, {'archive/data.pkl': lambda pkl: pkl.replace(
        b'X\x03\x00\x00\x00cpu', b'X\x06\x00\x00\x00cuda:0')})
    message = 'Attempting to deserialize object on a CUDA device'
    with pytest.raises(RuntimeError, match=message):
        to_torch(buf)
    with pytest.raises(RuntimeError, match=message + r" but dynagrad.cuda.is_available\(\) is "
                                                     r"False"):
        to_dg(buf)
    for location in ('cpu', dg.device('cpu'), {'cuda:0': 'cpu'}, lambda s, loc: s.cpu(),
                     lambda storage, loc: storage):
        assert to_dg(buf, map_location=location)['w'].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match=message):
        to_dg(buf, map_location=lambda storage, loc: None)     # None: the default restore
    with pytest.raises(RuntimeError, match=message):
        to_dg(buf, map_location={'cuda:1': 'cpu'})


@pytest.mark.filterwarnings('ignore::DeprecationWarning')
def test_torchscript_archive_is_refused_clearly(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, str(tmp_path / 'ts.pt'))
    with pytest.raises(CheckpointError, match='TorchScript archive'):
        dg.load(tmp_path / 'ts.pt', weights_only=False)


def test_big_endian_file_is_byte_swapped():
    buf = torch_save({'w': torch.tensor([1.5, -2.0]),
                      'i': torch.tensor([1, 256], dtype=torch.int16)})

    def swap(data, dtype):
        return np.frombuffer(data, dtype).byteswap().tobytes()
    buf = rewrite_records(buf, {'archive/byteorder': lambda _: b'big',
                                'archive/data/0': lambda d: swap(d, np.float32),
                                'archive/data/1': lambda d: swap(d, np.int16)})
    out = to_dg(buf)
    assert out['w'].tolist() == [1.5, -2.0] and out['i'].tolist() == [1, 256]
    assert out['w'].dtype == dg.float32 and out['w']._data.dtype.isnative


def rewrite_records(buf, changes):
    """A copy of a zip checkpoint with some records' bytes changed (stored, uncompressed)."""
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            data = src.read(name)
            if name in changes:
                data = changes[name](data)
            dst.writestr(name, data)
    return out


@pytest.mark.filterwarnings('ignore:torch.quantize_per_tensor')
@pytest.mark.filterwarnings('ignore:Sparse CSR tensor support')
@pytest.mark.filterwarnings('ignore:ComplexHalf support is experimental')
def test_dtypes_dynagrad_lacks_are_refused_by_name():
    lacking = [(torch.complex32, 'complex32')]
    if not hasattr(dg, 'bfloat16'):
        lacking.append((torch.bfloat16, 'bfloat16'))
    for dtype, name in lacking:
        with pytest.raises(CheckpointError, match=f'torch.{name}.*dynagrad does not have'):
            to_dg(torch_save({'w': torch.ones(2, dtype=dtype)}))
    with pytest.raises(CheckpointError, match='torch.quint8.*dynagrad does not have'):
        to_dg(torch_save(torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)))
    with pytest.raises(CheckpointError, match='layout .torch.sparse_coo.; dynagrad has only'):
        to_dg(torch_save(torch.ones(2, 2).to_sparse()))


def test_a_saved_torch_module_needs_weights_only_false_and_then_names_the_problem():
    buf = torch_save(torch.nn.Linear(2, 2))
    with pytest.raises(pickle.UnpicklingError, match='torch.nn.modules.linear.Linear was not '
                                                     'an allowed global'):
        to_dg(buf)
    with pytest.raises(CheckpointError, match="save its state_dict"):
        to_dg(buf, weights_only=False)


def test_a_saved_dynagrad_module_loads_in_torch_only_as_weights():
    net = dg.nn.Linear(2, 2)
    buf = dg_save(net)
    with pytest.raises(pickle.UnpicklingError, match='Weights only load failed'):
        to_torch(buf)
    assert sys.modules.get('dynagrad') is dg


@pytest.mark.parametrize('env,explicit,loads', [
    ({}, None, False), ({'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1'}, None, True),
    ({'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1'}, True, False),
    ({'TORCH_FORCE_WEIGHTS_ONLY_LOAD': '1'}, False, False)])
def test_weights_only_environment_switches_as_torch(tmp_path, monkeypatch, env, explicit, loads):
    path = tmp_path / 'array.pt'
    torch.save(np.arange(3), path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    kwargs = {} if explicit is None else {'weights_only': explicit}
    for lib in (torch, dg):
        if loads:
            with pytest.warns(UserWarning, match='TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'):
                assert list(lib.load(path, **kwargs)) == [0, 1, 2]
        else:      # TORCH_FORCE_WEIGHTS_ONLY_LOAD wins even over weights_only=False
            with pytest.raises(pickle.UnpicklingError):
                lib.load(path, **kwargs)


def test_complex_tensors_round_trip_with_torch():
    saved = {'w': torch.tensor([1 + 2j, 3 - 4j]), 'v': torch.randn(2, 3, dtype=torch.cdouble)}
    loaded = to_dg(torch_save(saved))
    for k, t in saved.items():
        assert loaded[k].dtype.name == str(t.dtype).split('.')[-1]
        np.testing.assert_array_equal(loaded[k].numpy(), t.numpy())
    buf = io.BytesIO()
    dg.save({'z': dg.tensor([1j, 2 - 1j], dtype=dg.complex128)}, buf)
    back = torch.load(io.BytesIO(buf.getvalue()))
    assert back['z'].dtype == torch.complex128 and back['z'].tolist() == [1j, 2 - 1j]
