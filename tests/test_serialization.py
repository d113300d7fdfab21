"""Checkpoints: round trips, PyTorch interoperability through safetensors, atomic writes,
and clear errors for truncated, corrupted and hostile files."""
import collections
import io
import json
import os
import pickle
import stat
import struct
import sys

import numpy as np
import pytest
import torch
import safetensors.torch as st

import dynagrad as dg
import dynagrad.serialization as ser
from dynagrad.serialization import CheckpointError
from dynagrad.nn import Parameter

DTYPES = [dg.float16, dg.float32, dg.float64, dg.int8, dg.int16, dg.int32, dg.int64, dg.uint8,
          dg.bool]


def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, dg.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b) and all(type(x) is type(y) for x, y in zip(a, b))
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


def sample_tensor(dtype, shape=(2, 3)):
    data = np.arange(int(np.prod(shape))).reshape(shape) - 2
    return dg.tensor(data, dtype=dtype)


# -- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES, ids=str)
@pytest.mark.parametrize('shape', [(), (0,), (5,), (2, 3), (0, 4), (2, 1, 3)])
def test_tensor_round_trip(tmp_path, dtype, shape):
    t = sample_tensor(dtype, shape)
    ser.save(t, tmp_path / 'c.safetensors')
    same(t, ser.load(tmp_path / 'c.safetensors'))


def test_non_contiguous_and_requires_grad(tmp_path):
    a = dg.arange(12.0).reshape(3, 4).t()
    b = dg.randn(3, requires_grad=True)
    c = (b * 2)                          # a non-leaf: saved as data + flag
    ser.save({'a': a, 'b': b, 'c': c}, tmp_path / 'c')
    out = ser.load(tmp_path / 'c')
    same(a, out['a'])
    assert out['b'].requires_grad and out['b'].is_leaf
    assert out['c'].requires_grad and out['c'].is_leaf
    np.testing.assert_array_equal(out['c'].detach().numpy(), c.detach().numpy())
    out['b'].sum().backward()
    assert out['b'].grad.tolist() == [1.0, 1.0, 1.0]


def test_parameters_and_shared_tensors(tmp_path):
    w = Parameter(dg.randn(3, 2))
    frozen = Parameter(dg.randn(2), requires_grad=False)
    obj = {'w': w, 'again': w, 'inner': [w, frozen]}
    ser.save(obj, tmp_path / 'c')
    out = ser.load(tmp_path / 'c')
    assert type(out['w']) is Parameter and out['w'].requires_grad
    assert type(out['inner'][1]) is Parameter and not out['inner'][1].requires_grad
    assert out['again'] is out['w'] is out['inner'][0]
    same(w, out['w'])


def test_nested_structure_round_trip(tmp_path):
    obj = {
        'model': collections.OrderedDict([('fc.weight', dg.randn(2, 3)),
                                          ('fc.bias', dg.zeros(2)),
                                          ('bn.num_batches_tracked', dg.tensor(7))]),
        'optimizer': {
            'state': {0: {'momentum_buffer': dg.ones(2, 3), 'step': dg.tensor(3.0)},
                      1: {'momentum_buffer': None}},
            'param_groups': [{'lr': 0.1, 'betas': (0.9, 0.999), 'eps': 1e-8,
                              'weight_decay': 0, 'amsgrad': False, 'foreach': None,
                              'params': [0, 1], 'name': 'main'}],
        },
        'epoch': 12, 'best': float('inf'), 'worst': float('-inf'), 'nan': float('nan'),
        'big': 2 ** 70, 'neg': -3, 'unicode': 'héllo ✓', 'empty': {}, 'empty_list': [],
        'empty_tuple': (), 'size': dg.Size([2, 3]), (1, 'a'): 'tuple key', 2.5: 'float key',
        None: 'none key', True: 'bool key',
        'numpy': np.arange(4, dtype=np.int16), 'np_scalar': np.float32(2.5),
        'nested': [[(1, [2, {'deep': dg.ones(1)}])]],
    }
    ser.save(obj, tmp_path / 'ckpt')
    same(obj, ser.load(tmp_path / 'ckpt'))


def test_dotted_names_do_not_collide(tmp_path):
    obj = {'a.b': dg.ones(1), 'a': {'b': dg.zeros(1)}, '__metadata__': dg.ones(2)}
    ser.save(obj, tmp_path / 'c')
    same(obj, ser.load(tmp_path / 'c'))


def test_big_endian_numpy_array(tmp_path):
    a = np.arange(5, dtype='>f4')
    ser.save({'a': a, 't': dg.from_numpy(np.arange(3, dtype=np.float64))}, tmp_path / 'c')
    out = ser.load(tmp_path / 'c')
    assert out['a'].dtype == np.float32 and out['a'].dtype.isnative
    np.testing.assert_array_equal(out['a'], a)


def test_loaded_tensors_are_writable_and_independent(tmp_path):
    t = dg.arange(4.0)
    ser.save({'t': t}, tmp_path / 'c')
    out = ser.load(tmp_path / 'c')['t']
    out.add_(1)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    obj = {'x': dg.randn(3), 'n': 1}
    ser.save(obj, buf)
    buf.seek(0)
    same(obj, ser.load(buf))
    with open(tmp_path / 'f', 'wb') as fh:
        ser.save(obj, fh)
    with open(tmp_path / 'f', 'rb') as fh:
        same(obj, ser.load(fh))
    with open(tmp_path / 'f', 'r', encoding='latin-1') as fh:
        with pytest.raises(TypeError, match='binary mode'):
            ser.load(fh)
    with pytest.raises(TypeError, match='path or a binary file object'):
        ser.save(obj, 3)


def test_str_and_pathlike_paths(tmp_path):
    ser.save([dg.ones(2)], str(tmp_path / 's'))
    same([dg.ones(2)], ser.load(os.fsencode(str(tmp_path / 's'))))


def test_model_and_optimizer_state_dicts(tmp_path):
    dg.manual_seed(0)
    model = dg.nn.Linear(3, 2)
    opt = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(dg.randn(4, 3)).sum().backward()
    opt.step()
    ser.save({'model': model.state_dict(), 'opt': opt.state_dict()}, tmp_path / 'ckpt')
    out = ser.load(tmp_path / 'ckpt')
    same(model.state_dict(), out['model'])
    same(opt.state_dict(), out['opt'])
    fresh = dg.nn.Linear(3, 2)
    fresh.load_state_dict(out['model'])
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())


# -- what cannot be saved --------------------------------------------------------------

class Custom:
    pass


Pair = collections.namedtuple('Pair', 'a b')


@pytest.mark.parametrize('obj,what', [
    (Custom(), 'Custom'),
    ({'f': len}, 'builtin_function_or_method'),
    ({'s': {1, 2}}, 'set'),
    ([Pair(1, 2)], 'Pair'),
    ({frozenset(): 1}, 'dict key of type frozenset'),
    (np.array(['a']), 'dtype <U1'),
    (np.arange(3, dtype=np.uint16), 'dtype uint16'),
    ({'c': 1 + 2j}, 'complex'),
])
def test_unsupported_objects_raise_before_writing(tmp_path, obj, what):
    path = tmp_path / 'c'
    ser.save({'old': dg.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=what):
        ser.save(obj, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['c']


def test_cycles_raise(tmp_path):
    a = []
    a.append(a)
    with pytest.raises(ValueError, match='contains itself'):
        ser.save(a, tmp_path / 'c')
    assert not (tmp_path / 'c').exists()


# -- interoperability with PyTorch -------------------------------------------------------

def test_dynagrad_state_dict_loads_in_torch(tmp_path):
    sd = collections.OrderedDict()
    for i, dtype in enumerate(DTYPES):
        sd[f'layer{i}.weight'] = sample_tensor(dtype, (2, 3))
    sd['scalar'] = dg.tensor(2.5)
    ser.save(sd, tmp_path / 'model.safetensors')
    loaded = st.load_file(str(tmp_path / 'model.safetensors'))
    assert set(loaded) == set(sd)
    for k, t in sd.items():
        assert str(loaded[k].dtype).split('.')[1] == str(t.dtype).split('.')[1]
        assert tuple(loaded[k].shape) == tuple(t.shape)
        np.testing.assert_array_equal(loaded[k].numpy(), t.numpy())
    net = torch.nn.Linear(3, 2)
    mine = {'weight': dg.randn(2, 3), 'bias': dg.randn(2)}
    ser.save(mine, tmp_path / 'linear.safetensors')
    net.load_state_dict(st.load_file(str(tmp_path / 'linear.safetensors')))
    np.testing.assert_array_equal(net.weight.detach().numpy(), mine['weight'].numpy())


def test_torch_state_dict_loads_in_dynagrad(tmp_path):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                              torch.nn.Flatten(), torch.nn.Linear(4, 2))
    sd = net.state_dict()
    st.save_file(sd, str(tmp_path / 'torch.safetensors'))
    out = ser.load(tmp_path / 'torch.safetensors')
    assert set(out) == set(sd)
    for k, v in sd.items():
        assert type(out[k]) is dg.Tensor and not out[k].requires_grad
        assert str(out[k].dtype).split('.')[1] == str(v.dtype).split('.')[1]
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())
    assert out['1.num_batches_tracked'].dtype == dg.int64
    # ...and into a dynagrad model with the same layout.
    lin = dg.nn.Linear(4, 2)
    lin.load_state_dict({'weight': out['3.weight'], 'bias': out['3.bias']})
    np.testing.assert_array_equal(lin.weight.detach().numpy(), sd['3.weight'].numpy())


def test_torch_bfloat16_gives_clear_error(tmp_path):
    st.save_file({'w': torch.ones(2, dtype=torch.bfloat16)}, str(tmp_path / 'bf'))
    with pytest.raises(CheckpointError, match="'w' has dtype BF16, which dynagrad does not "
                                              "have"):
        ser.load(tmp_path / 'bf')


def test_torch_save_zip_file_is_refused_without_unpickling(tmp_path, monkeypatch):
    torch.save({'w': torch.ones(2)}, str(tmp_path / 'model.pt'))

    def boom(*a, **k):
        raise AssertionError('unpickled')
    monkeypatch.setattr(pickle, 'loads', boom)
    monkeypatch.setattr(pickle, 'load', boom)
    monkeypatch.setattr(pickle, 'Unpickler', boom)
    with pytest.raises(CheckpointError, match='zip archive, as torch.save writes'):
        ser.load(tmp_path / 'model.pt')


def test_load_never_unpickles(tmp_path, monkeypatch):
    obj = {'a': dg.ones(2), 'b': [1, (2, 'x')]}
    ser.save(obj, tmp_path / 'c')

    def boom(*a, **k):
        raise AssertionError('unpickled')
    monkeypatch.setattr(pickle, 'loads', boom)
    monkeypatch.setattr(pickle, 'load', boom)
    monkeypatch.setattr(pickle, 'Unpickler', boom)
    same(obj, ser.load(tmp_path / 'c', weights_only=False))


def test_load_arguments():
    buf = io.BytesIO()
    ser.save({'a': dg.ones(1)}, buf)
    for loc in (None, 'cpu', dg.device('cpu') if hasattr(dg, 'device') else 'cpu',
                {'cuda:0': 'cpu'}, lambda storage, loc: storage):
        buf.seek(0)
        assert ser.load(buf, map_location=loc)['a'].tolist() == [1.0]
    with pytest.raises(RuntimeError, match='CPU only'):
        ser.load(buf, map_location='cuda')
    with pytest.raises(TypeError, match='never unpickles'):
        ser.load(buf, pickle_module=pickle)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        ser.load('/nonexistent/dir/ckpt.safetensors')


def test_missing_safetensors_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, 'safetensors', None)
    monkeypatch.setitem(sys.modules, 'safetensors.numpy', None)
    with pytest.raises(ImportError, match=r'pip install dynagrad\[checkpoints\]'):
        ser.save({'a': dg.ones(1)}, tmp_path / 'c')
    assert os.listdir(tmp_path) == []


def test_package_exports_save_and_load():
    assert dg.save is dg.serialization.save
    assert dg.load is dg.serialization.load


# -- atomic writes ---------------------------------------------------------------------

def big_obj(value):
    return {'w': dg.full((600, 600), float(value), dtype=dg.float64)}  # 2.9 MB: 3 chunks


def test_crash_mid_write_keeps_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / 'ckpt.safetensors'
    ser.save(big_obj(1), path)
    before = path.read_bytes()
    calls = []
    real = ser._write_chunk

    def failing(fh, chunk):
        calls.append(len(chunk))
        if len(calls) == 2:
            raise OSError(28, 'No space left on device')
        real(fh, chunk)
    monkeypatch.setattr(ser, '_write_chunk', failing)
    with pytest.raises(OSError, match='No space left'):
        ser.save(big_obj(2), path)
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['ckpt.safetensors']
    monkeypatch.setattr(ser, '_write_chunk', real)
    assert ser.load(path)['w'][0, 0].item() == 1.0


@pytest.mark.parametrize('where', ['fsync', 'replace', 'interrupt'])
def test_failure_at_each_step_keeps_previous_checkpoint(tmp_path, monkeypatch, where):
    path = tmp_path / 'ckpt'
    ser.save(big_obj(1), path)
    before = path.read_bytes()
    if where == 'fsync':
        def fail(*a):
            raise OSError(5, 'I/O error')
        monkeypatch.setattr(os, 'fsync', fail)
        exc = OSError
    elif where == 'replace':
        def fail(*a):
            raise PermissionError(13, 'Permission denied')
        monkeypatch.setattr(os, 'replace', fail)
        exc = PermissionError
    else:
        def fail(fh, chunk):
            raise KeyboardInterrupt
        monkeypatch.setattr(ser, '_write_chunk', fail)
        exc = KeyboardInterrupt
    with pytest.raises(exc):
        ser.save(big_obj(2), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['ckpt']


def test_save_fsyncs_file_and_directory_then_replaces(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(('fsync', stat.S_ISDIR(os.fstat(fd).st_mode)))
        real_fsync(fd)

    def replace(a, b):
        events.append(('replace', os.path.dirname(a) == os.path.dirname(b)))
        real_replace(a, b)
    monkeypatch.setattr(os, 'fsync', fsync)
    monkeypatch.setattr(os, 'replace', replace)
    ser.save({'a': dg.ones(3)}, tmp_path / 'c')
    expected = [('fsync', False), ('replace', True)]
    if hasattr(os, 'O_DIRECTORY'):
        expected.append(('fsync', True))
    assert events == expected
    assert os.listdir(tmp_path) == ['c']


def test_overwrite_keeps_permissions(tmp_path):
    path = tmp_path / 'c'
    ser.save({'a': dg.ones(1)}, path)
    os.chmod(path, 0o640)
    ser.save({'a': dg.zeros(1)}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert ser.load(path)['a'].tolist() == [0.0]


def test_save_onto_directory_fails_cleanly(tmp_path):
    (tmp_path / 'd').mkdir()
    with pytest.raises(IsADirectoryError):
        ser.save({'a': dg.ones(1)}, tmp_path / 'd')
    assert os.listdir(tmp_path) == ['d']


# -- truncated, corrupted and hostile files ----------------------------------------------

def raw_file(header, data=b'', length=None, pad=True):
    """A safetensors-like file from a header (dict or raw bytes) and data bytes."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        h += b' ' * (-len(h) % 8)
    n = len(h) if length is None else length
    return struct.pack('<Q', n) + h + data


@pytest.fixture
def good(tmp_path):
    path = tmp_path / 'good.safetensors'
    obj = {'w': dg.arange(6.0).reshape(2, 3), 'b': dg.tensor([1, 2], dtype=dg.int32),
           'meta': {'epoch': 3, 'name': 'run'}, 'flag': dg.tensor([True, False])}
    ser.save(obj, path)
    return path, obj, path.read_bytes()


def header_len(raw):
    return 8 + struct.unpack('<Q', raw[:8])[0]


def check_error(path, match):
    with pytest.raises(CheckpointError, match=match) as info:
        ser.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, RuntimeError)
    return info.value


def test_error_names_file_for_file_objects(good):
    path, _, raw = good
    with pytest.raises(CheckpointError, match='<file object>'):
        ser.load(io.BytesIO(raw[:20]))
    path.write_bytes(raw[:20])
    with open(path, 'rb') as fh:
        with pytest.raises(CheckpointError, match='good.safetensors'):
            ser.load(fh)


@pytest.mark.parametrize('cut', ['empty', 'length', 'header', 'header_end', 'data', 'last_byte'])
def test_truncated(good, cut):
    path, _, raw = good
    n = header_len(raw)
    keep = {'empty': 0, 'length': 5, 'header': 30, 'header_end': n - 1, 'data': n + 10,
            'last_byte': len(raw) - 1}[cut]
    path.write_bytes(raw[:keep])
    match = {'empty': 'empty', 'length': 'truncated file', 'header': 'runs past the end',
             'header_end': 'runs past the end', 'data': 'outside the data section',
             'last_byte': 'outside the data section'}[cut]
    check_error(path, match)


def test_every_single_byte_flip_is_caught(good):
    """Flip each byte of the file in turn: the load fails with CheckpointError, or (for a
    byte no reader depends on, like the 'format' tag) returns exactly what was saved."""
    path, obj, raw = good
    n = header_len(raw)
    positions = list(range(len(raw)))
    outcomes = collections.Counter()
    for pos in positions:
        for mask in ((0x01, 0x80) if pos % 4 == 0 else (0x01,)):
            corrupt = bytearray(raw)
            corrupt[pos] ^= mask
            path.write_bytes(bytes(corrupt))
            try:
                out = ser.load(path)
            except CheckpointError as e:
                assert str(path) in str(e)
                outcomes['error'] += 1
                continue
            same(obj, out)
            outcomes['harmless'] += 1
            tag = raw.index(b'"format":"pt"')
            assert tag <= pos < tag + len(b'"format":"pt"'), pos
    assert outcomes['error'] > 0.98 * sum(outcomes.values())
    assert n < len(raw)


def test_flipped_data_byte_names_the_tensor(good):
    path, _, raw = good
    corrupt = bytearray(raw)
    corrupt[-3] ^= 0x10          # inside the last tensor stored
    path.write_bytes(bytes(corrupt))
    err = check_error(path, r'the data of tensor .* is corrupted \(CRC-32')
    assert err.reason.startswith('the data of tensor')


def test_corrupted_header_checksum(good):
    path, _, raw = good
    text = raw[8:header_len(raw)].decode()
    for old, new in [('\\"epoch\\",3', '\\"epoch\\",4'), ('"shape":[2,3]', '"shape":[3,2]')]:
        assert old in text
        path.write_bytes(raw[:8] + text.replace(old, new, 1).encode() + raw[header_len(raw):])
        check_error(path, 'header checksum does not match')


def test_plain_safetensors_shape_inconsistent_with_data(tmp_path):
    path = tmp_path / 'bad'
    path.write_bytes(raw_file({'w': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 8]}},
                              b'\0' * 8))
    check_error(path, r"'w': dtype F32 and shape \[3\] need 12 bytes but its data offsets "
                      r"\[0, 8\] span 8")


@pytest.mark.parametrize('kind,content,match', [
    ('absurd_length', raw_file({}, length=2 ** 63), 'over the 104857600-byte limit'),
    ('length_past_end', raw_file({}, length=4096), 'runs past the end of the file'),
    ('bad_json', raw_file(b'{"w": {"dtype": '), 'not valid JSON'),
    ('bad_utf8', raw_file(b'{"\xff": 1}'), 'not valid JSON'),
    ('not_object', raw_file([1, 2]), 'JSON list, not an object'),
    ('deep_nesting', raw_file(b'[' * 100000 + b']' * 100000), 'not valid JSON'),
    ('bad_metadata', raw_file({'__metadata__': {'a': 1}}), '__metadata__ is not an object'),
    ('entry_keys', raw_file({'w': {'dtype': 'F32', 'shape': [1]}}), 'exactly dtype, shape'),
    ('unknown_dtype', raw_file({'w': {'dtype': 'Q8', 'shape': [1], 'data_offsets': [0, 1]}},
                               b'\0'), "unknown dtype 'Q8'"),
    ('negative_shape', raw_file({'w': {'dtype': 'U8', 'shape': [-1], 'data_offsets': [0, 1]}},
                                b'\0'), 'not a list of non-negative integers'),
    ('float_shape', raw_file({'w': {'dtype': 'U8', 'shape': [1.0], 'data_offsets': [0, 1]}},
                             b'\0'), 'not a list of non-negative integers'),
    ('offsets_reversed', raw_file({'w': {'dtype': 'U8', 'shape': [0],
                                         'data_offsets': [1, 0]}}, b'\0'), '0 <= begin <= end'),
    ('offsets_outside', raw_file({'w': {'dtype': 'U8', 'shape': [2 ** 40],
                                        'data_offsets': [0, 2 ** 40]}}, b'\0' * 8),
     'outside the data section'),
    ('huge_shape', raw_file({'w': {'dtype': 'F64', 'shape': [2 ** 62, 2 ** 62],
                                   'data_offsets': [0, 8]}}, b'\0' * 8), 'need'),
    ('overlap', raw_file({'a': {'dtype': 'U8', 'shape': [4], 'data_offsets': [0, 4]},
                          'b': {'dtype': 'U8', 'shape': [4], 'data_offsets': [2, 6]}},
                         b'\0' * 6), 'overlap'),
    ('hole', raw_file({'a': {'dtype': 'U8', 'shape': [2], 'data_offsets': [0, 2]},
                       'b': {'dtype': 'U8', 'shape': [2], 'data_offsets': [4, 6]}},
                      b'\0' * 6), 'belong to no tensor'),
    ('trailing', raw_file({'a': {'dtype': 'U8', 'shape': [2], 'data_offsets': [0, 2]}},
                          b'\0' * 6), 'trailing bytes'),
    ('bool_bytes', raw_file({'a': {'dtype': 'BOOL', 'shape': [2], 'data_offsets': [0, 2]}},
                            b'\x01\x07'), 'bytes other than 0 and 1'),
    ('future_version', raw_file({'__metadata__': {'dynagrad.format': '9'}}),
     'format .9. is not one this version reads'),
    ('partial_metadata', raw_file({'__metadata__': {'dynagrad.format': '1',
                                                    'dynagrad.object': '1'}}),
     'missing: dynagrad.crc32, dynagrad.sha256'),
])
def test_hostile_and_malformed_files(tmp_path, kind, content, match):
    path = tmp_path / f'{kind}.safetensors'
    path.write_bytes(content)
    check_error(path, match)


def forged(tmp_path, obj_tree, arrays=None):
    """A dynagrad file whose checksums are right but whose object metadata is hostile."""
    import safetensors.numpy as stn
    arrays = arrays or {}
    obj_json = json.dumps(obj_tree)
    crcs = {k: __import__('zlib').crc32(a.tobytes()) if a.size else 0 for k, a in arrays.items()}
    crc_json = json.dumps(crcs, sort_keys=True)
    specs = [[k, ser._FROM_NUMPY[a.dtype], list(a.shape)] for k, a in arrays.items()]
    meta = {'dynagrad.format': '1', 'dynagrad.object': obj_json, 'dynagrad.crc32': crc_json,
            'dynagrad.sha256': ser._checksum(obj_json, crc_json, specs)}
    path = tmp_path / 'forged'
    path.write_bytes(stn.save(arrays, metadata=meta))
    return path


@pytest.mark.parametrize('tree,match', [
    ({'tensor': 'missing'}, "tensor 'missing' the file does not hold"),
    ({'tensor': ['unhashable']}, 'the file does not hold'),
    ({'ndarray': {'x': 1}}, 'the file does not hold'),
    ({'pickle': 'cos\nsystem\n'}, 'unknown node'),
    ({'dict': [[['list-key'], 1]]}, 'unhashable dict key'),
    ({'dict': [[1]]}, 'is not a \\[key, value\\] pair'),
    ({'float': 'oops'}, 'unknown node'),
    ({}, 'unexpected'),
    ({'tensor': 'x', 'requires_grad': True}, 'only Tensors of floating point'),
    ({'tensor': 'y', 'extra': 1}, 'unexpected'),
])
def test_hostile_object_metadata(tmp_path, tree, match):
    path = forged(tmp_path, tree, {'x': np.arange(3, dtype=np.int64),
                                   'y': np.ones(2, np.float32)})
    check_error(path, 'malformed object metadata: .*' + match)


def test_hostile_deep_object_metadata(tmp_path):
    deep = '[' * 50000 + ']' * 50000
    path = forged(tmp_path, None)
    raw = path.read_bytes()
    header = json.loads(raw[8:header_len(raw)])
    header['__metadata__']['dynagrad.object'] = deep
    crc_json = header['__metadata__']['dynagrad.crc32']
    header['__metadata__']['dynagrad.sha256'] = ser._checksum(deep, crc_json, [])
    path.write_bytes(raw_file(header))
    check_error(path, 'nested too deeply|not valid JSON')
