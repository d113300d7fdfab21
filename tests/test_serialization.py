"""Checkpoints: round trips, whole objects, the weights-only allowlist, hostile and corrupted
files, atomic writes, map_location and mmap, and the checkpoints of earlier dynagrad
versions. (Interoperability with PyTorch itself: test_serialization_torch_format.py.)"""
import base64
import collections
import io
import json
import os
import pickle
import stat
import struct
import subprocess
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.serialization as ser
from dynagrad.nn import Parameter
from dynagrad.serialization import CheckpointError, zipformat

DTYPES = [dg.float16, dg.float32, dg.float64, dg.int8, dg.int16, dg.int32, dg.int64, dg.uint8,
          dg.bool] + ([dg.bfloat16] if hasattr(dg, 'bfloat16') else [])
NUMPY_GLOBALS = [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
                 np._core.multiarray.scalar] + [type(np.dtype(t)) for t in
                                                ('f4', 'f8', 'i2', 'i8')]


def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, dg.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
        assert a.requires_grad == b.requires_grad
        if a.dtype == getattr(dg, 'bfloat16', None):     # NumPy has no bfloat16
            a, b = a.float(), b.float()
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


def round_trip(obj, **load_kw):
    buf = io.BytesIO()
    ser.save(obj, buf)
    buf.seek(0)
    return ser.load(buf, **load_kw)


def sample_tensor(dtype, shape=(2, 3)):
    data = np.arange(int(np.prod(shape))).reshape(shape) - 2
    return dg.tensor(data, dtype=dtype)


# -- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES, ids=str)
@pytest.mark.parametrize('shape', [(), (0,), (5,), (2, 3), (0, 4), (2, 1, 3)])
def test_tensor_round_trip(tmp_path, dtype, shape):
    t = sample_tensor(dtype, shape)
    ser.save(t, tmp_path / 'c.pt')
    same(t, ser.load(tmp_path / 'c.pt'))


def test_views_come_back_as_views_of_one_storage():
    base = dg.arange(12.0).reshape(3, 4)
    obj = {'base': base, 't': base.t(), 'row': base[1], 'block': base[1:, 1:3],
           'expanded': dg.ones(2).expand(3, 2)}
    out = round_trip(obj)
    for k in obj:
        same(obj[k], out[k])
    for k in ('t', 'row', 'block'):
        assert np.shares_memory(out[k].numpy(), out['base'].numpy())
    out['row'].mul_(10)
    assert out['base'][1].tolist() == [40.0, 50.0, 60.0, 70.0]
    assert out['t'][:, 1].tolist() == [40.0, 50.0, 60.0, 70.0]
    assert obj['base'][1].tolist() == [4.0, 5.0, 6.0, 7.0]     # the saved tensor is untouched
    assert out['t']._version == out['base']._version == 1       # one storage, one counter


def test_non_contiguous_and_requires_grad():
    a = dg.arange(12.0).reshape(3, 4).t()
    b = dg.randn(3, requires_grad=True)
    c = b * 2                          # a non-leaf: saved as data + flag
    out = round_trip({'a': a, 'b': b, 'c': c})
    same(a, out['a'])
    assert out['a'].stride() == (1, 4)
    assert out['b'].requires_grad and out['b'].is_leaf
    assert out['c'].requires_grad and out['c'].is_leaf
    np.testing.assert_array_equal(out['c'].detach().numpy(), c.detach().numpy())
    out['b'].sum().backward()
    assert out['b'].grad.tolist() == [1.0, 1.0, 1.0]


def test_parameters_and_shared_tensors():
    w = Parameter(dg.randn(3, 2))
    frozen = Parameter(dg.randn(2), requires_grad=False)
    out = round_trip({'w': w, 'again': w, 'inner': [w, frozen]})
    assert type(out['w']) is Parameter and out['w'].requires_grad
    assert type(out['inner'][1]) is Parameter and not out['inner'][1].requires_grad
    assert out['again'] is out['w'] is out['inner'][0]
    same(w, out['w'])


def test_nested_structure_round_trip():
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
        None: 'none key', True: 'bool key', 'set': {1, 2}, 'bytes': b'\x00\x01',
        'complex': 1 - 2j, 'dtype': dg.int16, 'device': dg.device('cpu'),
        'nested': [[(1, [2, {'deep': dg.ones(1)}])]],
    }
    obj['model']._metadata = collections.OrderedDict([('', {'version': 1})])
    out = round_trip(obj)
    same(obj, out)
    assert out['model']._metadata == obj['model']._metadata
    assert out['dtype'] is dg.int16


def test_numpy_values_need_allowlisting_as_in_pytorch():
    obj = {'numpy': np.arange(4, dtype=np.int16), 'np_scalar': np.float32(2.5),
           'matrix': np.ones((2, 3), dtype=np.float64)}
    with pytest.raises(pickle.UnpicklingError, match=r'numpy._core.multiarray._reconstruct was '
                                                     r'not an allowed global'):
        round_trip(obj)
    with ser.safe_globals(NUMPY_GLOBALS):
        same(obj, round_trip(obj))
    same(obj, round_trip(obj, weights_only=False))


def test_loaded_tensors_are_writable_and_independent():
    t = dg.arange(4.0)
    out = round_trip({'t': t})['t']
    out.add_(1)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_file_objects_and_paths(tmp_path):
    obj = {'x': dg.randn(3), 'n': 1}
    same(obj, round_trip(obj))
    with open(tmp_path / 'f', 'wb') as fh:
        ser.save(obj, fh)
    with open(tmp_path / 'f', 'rb') as fh:
        same(obj, ser.load(fh))
    ser.save(obj, str(tmp_path / 's'))
    same(obj, ser.load(os.fsencode(str(tmp_path / 's'))))
    with open(tmp_path / 'f', 'r', encoding='latin-1') as fh:
        with pytest.raises(TypeError, match='binary mode'):
            ser.load(fh)
    with pytest.raises(TypeError, match='path or a binary file object'):
        ser.save(obj, 3)
    with pytest.raises(TypeError, match='path or a binary file object'):
        ser.load(3)
    with pytest.raises(FileNotFoundError):
        ser.load(tmp_path / 'missing' / 'c.pt')


def test_unseekable_stream_is_refused_as_in_pytorch():
    class Stream(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

        def seek(self, *a):
            raise io.UnsupportedOperation('seek')

    with pytest.raises(io.UnsupportedOperation, match='only dynagrad.load from a file that is '
                                                      'seekable'):
        ser.load(Stream())


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


def test_whole_model_round_trip_with_weights_only_false(tmp_path):
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Linear(3, 4), dg.nn.ReLU(), dg.nn.BatchNorm1d(4),
                             dg.nn.Linear(4, 2))
    ser.save(model, tmp_path / 'model.pt')
    with pytest.raises(pickle.UnpicklingError, match='Sequential was not an allowed global'):
        ser.load(tmp_path / 'model.pt')
    again = ser.load(tmp_path / 'model.pt', weights_only=False)
    assert type(again) is dg.nn.Sequential and again is not model
    same(model.state_dict(), again.state_dict())
    x = dg.randn(5, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), again(x).detach().numpy())
    opt = dg.optim.SGD(again.parameters(), lr=0.1)
    again(x).sum().backward()
    opt.step()                          # the loaded model trains on its own parameters
    assert not np.array_equal(model[3].weight.detach().numpy(),
                              again[3].weight.detach().numpy())


class Config:
    def __init__(self, depth, name):
        self.depth, self.name = depth, name


def test_custom_objects_with_weights_only_false_or_allowlisted():
    obj = {'config': Config(3, 'x'), 'w': dg.ones(2)}
    out = round_trip(obj, weights_only=False)
    assert vars(out['config']) == {'depth': 3, 'name': 'x'}
    with pytest.raises(pickle.UnpicklingError, match='test_serialization.Config was not an '
                                                     'allowed global'):
        round_trip(obj)
    with ser.safe_globals([Config]):
        out = round_trip(obj)
    assert type(out['config']) is Config and vars(out['config']) == {'depth': 3, 'name': 'x'}
    buf = io.BytesIO()
    ser.save(obj, buf)
    saved = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    data = saved.read('archive/data.pkl')
    assert b'ctest_serialization\nConfig\n' in data
    renamed = archive(data.replace(b'ctest_serialization\nConfig\n', b'celsewhere\nConfig\n'),
                      {'data/0': saved.read('archive/data/0')})
    with pytest.raises(pickle.UnpicklingError, match='elsewhere.Config was not an allowed'):
        ser.load(io.BytesIO(renamed))
    with ser.safe_globals([(Config, 'elsewhere.Config')]):     # the name the file uses
        out = ser.load(io.BytesIO(renamed))
    assert type(out['config']) is Config and out['config'].name == 'x'


def test_what_cannot_be_pickled_raises_before_writing(tmp_path):
    path = tmp_path / 'c'
    ser.save({'old': dg.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ser.save({'f': lambda x: x}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['c']


def test_save_and_load_arguments():
    buf = io.BytesIO()
    with pytest.raises(TypeError, match='pickle_module'):
        ser.save({'a': 1}, buf, pickle_module=json)
    assert buf.getvalue() == b''
    ser.save({'a': dg.ones(1)}, buf, _disable_byteorder_record=True)
    assert 'archive/byteorder' not in zipfile.ZipFile(buf).namelist()
    buf.seek(0)
    with pytest.raises(RuntimeError, match='Can not safely load weights when explicit '
                                           'pickle_module is specified'):
        ser.load(buf, pickle_module=pickle, weights_only=True)
    buf.seek(0)
    assert ser.load(buf, pickle_module=pickle)['a'].tolist() == [1.0]   # then not weights-only
    buf.seek(0)
    with pytest.warns(UserWarning, match='pickle_load_args only works if `weights_only=False`'):
        ser.load(buf, encoding='latin1')


def test_package_exports():
    assert dg.save is dg.serialization.save
    assert dg.load is dg.serialization.load
    for name in ('add_safe_globals', 'get_safe_globals', 'clear_safe_globals', 'safe_globals',
                 'get_unsafe_globals_in_checkpoint', 'CheckpointError'):
        assert hasattr(ser, name)


# -- the allowlist -----------------------------------------------------------------------

@pytest.fixture
def clean_allowlist():
    saved = ser.get_safe_globals()
    ser.clear_safe_globals()
    yield
    ser.clear_safe_globals()
    ser.add_safe_globals(saved)


def test_safe_globals_api(clean_allowlist):
    assert ser.get_safe_globals() == []
    ser.add_safe_globals([Config])
    with ser.safe_globals([Config, (np.ndarray, 'numpy.ndarray')]):
        assert set(ser.get_safe_globals()) == {Config, (np.ndarray, 'numpy.ndarray')}
    assert ser.get_safe_globals() == [Config]     # the block leaves what was there before
    ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(ValueError, match='Expected tuple of length 2'):
        ser.add_safe_globals([(Config,)])
    with pytest.raises(TypeError, match='second item in tuple to be str'):
        ser.add_safe_globals([(Config, 3)])
    obj = {'c': Config(1, 'a')}
    ser.add_safe_globals([Config])
    assert round_trip(obj)['c'].depth == 1


def test_unsafe_globals_in_checkpoint(clean_allowlist, tmp_path):
    obj = {'c': Config(1, 'a'), 'a': np.arange(2), 'w': dg.ones(1)}
    ser.save(obj, tmp_path / 'c.pt')
    expected = ['numpy._core.multiarray._reconstruct', 'numpy.dtype', 'numpy.ndarray',
                'test_serialization.Config']
    assert ser.get_unsafe_globals_in_checkpoint(tmp_path / 'c.pt') == expected
    with ser.safe_globals([Config]):
        assert ser.get_unsafe_globals_in_checkpoint(tmp_path / 'c.pt') == expected[:3]
    ser.save(obj, tmp_path / 'legacy.pt', _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match='Expected input to be a checkpoint'):
        ser.get_unsafe_globals_in_checkpoint(tmp_path / 'legacy.pt')


# -- hostile pickles under weights_only=True ---------------------------------------------

COLLIDE = __import__('sys').hash_info.modulus     # ints this far apart hash alike


def enc(value):
    """The opcodes that push ``value`` (protocol 2)."""
    return pickle.dumps(value, protocol=2)[2:-1]


def tensor_pickle(numel=2, size=(2,), stride=(1,), offset=0, requires_grad=False,
                  storage=b'FloatStorage', key='0', location='cpu'):
    """data.pkl of one tensor, written opcode by opcode as torch.save writes it."""
    return (b'\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((' + enc('storage') + b'ctorch\n' +
            storage + b'\n' + enc(key) + enc(location) + enc(numel) + b'tQ' + enc(offset) +
            enc(size) + enc(stride) + enc(requires_grad) + b'ccollections\nOrderedDict\n)Rt'
            b'R.')


def archive(data_pkl, records=None, folder='archive', version=b'3\n', compress=None):
    """A zip checkpoint written with Python's zipfile (not dynagrad's writer)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED) as z:
        z.writestr(f'{folder}/data.pkl', data_pkl)
        z.writestr(f'{folder}/byteorder', b'little')
        for key, data in (records or {}).items():
            z.writestr(f'{folder}/{key}', data, compress_type=compress)
        if version is not None:
            z.writestr(f'{folder}/version', version)
    return out.getvalue()


def load_bytes(tmp_path, raw, **kw):
    path = tmp_path / 'hostile.pt'
    path.write_bytes(raw)
    return ser.load(path, **kw)


def test_the_template_is_what_torch_writes(tmp_path):
    raw = archive(tensor_pickle(), {'data/0': np.array([1.5, -2], np.float32).tobytes()})
    (tmp_path / 'ok.pt').write_bytes(raw)
    assert torch.load(tmp_path / 'ok.pt').tolist() == [1.5, -2.0]
    assert ser.load(tmp_path / 'ok.pt').tolist() == [1.5, -2.0]


class Evil:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def evil_pickles(sentinel):
    cmd = f'touch {sentinel}'
    code = f'__import__("os").system({cmd!r})'
    return {
        'os.system': pickle.dumps(Evil(os.system, cmd), protocol=2),
        'eval': pickle.dumps(Evil(eval, code), protocol=2),
        'exec': pickle.dumps(Evil(exec, code), protocol=4),
        'subprocess': pickle.dumps(Evil(subprocess.Popen, ['touch', str(sentinel)]), 2),
        'getattr': b'\x80\x02c__builtin__\ngetattr\nc__builtin__\nobject\n' +
        enc('__subclasses__') + b'\x86R)R.',
        'inside a state dict': b'\x80\x02}(' + enc('w') + pickle.dumps(
            Evil(os.system, cmd), protocol=2)[2:-1] + b'u.',
        'text protocol': f'cos\nsystem\n(S{cmd!r}\ntR.'.encode(),
        'INST': f'(S{cmd!r}\nios\nsystem\n.'.encode(),
        'OBJ': b'\x80\x02(cos\nsystem\n' + enc(cmd) + b'o.',
        'EXT1': b'\x80\x02\x82\x01' + enc(cmd) + b'\x85R.',
        'persistent id of a module': b'\x80\x02(' + enc('module') + enc('x') + b'tQ.',
    }


@pytest.mark.parametrize('kind', list(evil_pickles('x')))
def test_pickles_that_would_run_code_are_refused(tmp_path, kind):
    sentinel = tmp_path / 'pwned'
    raw = archive(evil_pickles(sentinel)[kind])
    with pytest.raises(pickle.UnpicklingError, match='Weights only load failed') as info:
        load_bytes(tmp_path, raw)
    assert 'hostile.pt' in str(info.value)
    assert not sentinel.exists()


def test_blocked_and_disallowed_globals_say_how_to_allow_them(tmp_path):
    raw = archive(pickle.dumps(Evil(os.system, 'true'), protocol=2))
    with pytest.raises(pickle.UnpicklingError,
                       match='Trying to load unsupported GLOBAL posix.system whose module '
                             'posix is blocked'):
        load_bytes(tmp_path, raw)
    raw = archive(pickle.dumps(Evil(eval, '1'), protocol=2))
    with pytest.raises(pickle.UnpicklingError) as info:
        load_bytes(tmp_path, raw)
    message = str(info.value)
    assert 'GLOBAL eval was not an allowed global by default' in message
    assert 'dynagrad.serialization.add_safe_globals([eval])' in message
    assert '`weights_only` set to `False`' in message


@pytest.mark.parametrize('pkl,match', [
    # allowed callables, called with arguments that would allocate or misbehave
    (b'\x80\x02c__builtin__\nbytearray\n' + enc(10 ** 12) + b'\x85R.', 'bytearray'),
    (b'\x80\x02ctorch\nTensor\n' + enc((10 ** 6, 10 ** 6)) + b'R.', 'only allows naming'),
    (b'\x80\x02ctorch\nFloatTensor\n' + enc((10 ** 6, 10 ** 6)) + b'R.', 'only allows naming'),
    (b'\x80\x02ctorch\nTensor\n' + enc((10 ** 6,)) + b'\x81.', 'Can only create new object'),
    (b'\x80\x02c_codecs\nencode\n' + enc(('x', 'rot13')) + b'R.', 'text encoding'),
    (b'\x80\x02c__builtin__\nset\n' + enc(([[1]],)) + b'R.', 'set\\(\\) failed|unhashable'),
    # what the stack machine must refuse
    (tensor_pickle()[:-1] + enc({'a': 1}) + b'b.', 'Can only build'),
    (b'\x80\x02' + enc('x') + enc(1) + enc(2) + b's.', 'Can only SETITEM'),
    (b'\x80\x02' + enc('x') + enc(1) + b'a.', 'Can only append'),
    (b'\x80\x02' + enc(('storage', 1, 2)) + b'Q.', 'storage id|persistent'),
])
def test_allowed_names_cannot_be_abused(tmp_path, pkl, match):
    records = {'data/0': b'\0' * 8}
    with pytest.raises((pickle.UnpicklingError, CheckpointError), match=match) as info:
        load_bytes(tmp_path, archive(pkl, records))
    assert 'hostile.pt' in str(info.value)


@pytest.mark.parametrize('pkl,match', [
    (b'\x80\x02', 'ends before its STOP'),
    (b'\x80\x02X\xff\xff\xff\x7fabc.', 'ends in the middle of an opcode'),
    (b'\x80\x02\x8d' + struct.pack('<Q', 2 ** 60) + b'.', 'ends in the middle'),
    (b'\x80\x02\x8b\xff\xff\xff\xff.', 'negative length'),
    (b'\x80\x02h\x05.', 'memo entry 5'),
    (b'\x80\x02t.', 'expects a MARK'),
    (b'\x80\x02.', 'stack'),
    (b'\x80\x02X\x02\x00\x00\x00\xff\xfe.', 'not valid UTF-8'),
    (b'\x80\x02}]K\x01s.', 'unhashable list'),
    (b'\x80\x02)' + b'\x85' * 5000 + b'.', 'nest more than 1000 deep'),
    (b'\x80\x02}' + b')' + b'\x85' * 200000 + b'K\x01s.', 'nest more than 1000 deep'),
    (b'\x80\x02ctorch\ncomplex32\n.', 'dtype torch.complex32.*dynagrad does not have'),
    # many distinct keys with one hash would make building the dict quadratic
    (b'\x80\x02}(' + b''.join(enc(1 + i * COLLIDE) + b'N' for i in range(200)) + b'u.',
     'hash-flooding'),
    (b'\x80\x02\x8f(' + b''.join(enc(1 + i * COLLIDE) for i in range(200)) + b'\x90.',
     'hash-flooding'),
    (b'\x80\x02c__builtin__\nset\n' + enc(([1 + i * COLLIDE for i in range(200)],)) + b'R.',
     'hash-flooding'),
    (b'\x80\x02ccollections\nCounter\n' + enc(([(1 + i * COLLIDE,) for i in range(200)],)) +
     b'R.', 'hash-flooding'),
])
def test_malformed_pickles(tmp_path, pkl, match):
    with pytest.raises(CheckpointError, match=match) as info:
        load_bytes(tmp_path, archive(pkl))
    assert 'hostile.pt' in str(info.value)


def test_a_huge_hostile_pickle_ends_quickly(tmp_path):
    start = time.perf_counter()
    for pkl in (b'\x80\x02' + b'(' * 1_000_000 + b'.',
                b'\x80\x02' + b'N' * 1_000_000 + b'0' * 1_000_001 + b'.'):
        with pytest.raises(CheckpointError):
            load_bytes(tmp_path, archive(pkl))
    assert time.perf_counter() - start < 20


@pytest.mark.parametrize('change,match', [
    (dict(numel=3), 'holds 8 bytes but its storage needs 12'),
    (dict(numel=2 ** 40), 'holds 8 bytes but its storage needs'),
    (dict(key='7'), "storage '7' has no record archive/data/7"),
    (dict(size=(3,)), 'reaches past the end of its storage of 2 elements'),
    (dict(size=(2,), offset=1), 'reaches past the end'),
    (dict(size=(2 ** 62, 2 ** 62), stride=(0, 0)), 'cannot be built'),
    (dict(stride=(-1,)), 'must be non-negative'),
    (dict(size=(2, 2), stride=(1,)), 'as many'),
    (dict(size=[2.0]), 'not a tuple of ints'),
    (dict(offset=-1), 'storage offset'),
    (dict(requires_grad=1), 'not a bool'),
    (dict(storage=b'LongStorage', requires_grad=True, numel=1, size=(1,)), 'requires_grad'),
    (dict(storage=b'QInt8Storage', numel=8), 'torch.qint8'),
    (dict(location='tpu'), "don't know how to restore data location"),
])
def test_hostile_tensor_descriptions(tmp_path, change, match):
    raw = archive(tensor_pickle(**change), {'data/0': b'\0' * 8})
    tracemalloc.start()
    try:
        with pytest.raises((CheckpointError, RuntimeError), match=match) as info:
            load_bytes(tmp_path, raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20                # nothing the file does not hold was allocated
    if isinstance(info.value, CheckpointError):
        assert 'hostile.pt' in str(info.value)


def test_bool_storage_with_other_bytes(tmp_path):
    raw = archive(tensor_pickle(storage=b'BoolStorage'), {'data/0': b'\x01\x07'})
    with pytest.raises(CheckpointError, match='bytes other than 0 and 1'):
        load_bytes(tmp_path, raw)


# -- truncated and corrupted archives ------------------------------------------------------

@pytest.fixture
def good(tmp_path):
    path = tmp_path / 'good.pt'
    obj = {'w': dg.arange(6.0).reshape(2, 3), 'b': dg.tensor([1, 2], dtype=dg.int32),
           'meta': {'epoch': 3, 'name': 'run'}, 'flag': dg.tensor([True, False])}
    ser.save(obj, path)
    return path, obj, path.read_bytes()


def check_error(path, match, exc=CheckpointError):
    with pytest.raises(exc, match=match) as info:
        ser.load(path)
    assert str(path) in str(info.value)
    return info.value


@pytest.mark.parametrize('keep', [0, 3, 30, 500, -200, -22, -1])
def test_truncated(good, keep):
    path, _, raw = good
    path.write_bytes(raw[:keep])
    check_error(path, 'empty|truncated|not a readable zip|neither')


def test_every_single_byte_flip_is_caught_or_harmless(good):
    """Flip each byte of the file in turn: the load fails with CheckpointError (or, in a
    refusal of what the pickle then asks for, UnpicklingError), or returns exactly what
    was saved (the byte was one no reader uses, such as padding or a timestamp)."""
    path, obj, raw = good
    outcomes = collections.Counter()
    for pos in range(len(raw)):
        corrupt = bytearray(raw)
        corrupt[pos] ^= 0x10 if pos % 3 else 0x81
        path.write_bytes(bytes(corrupt))
        try:
            out = ser.load(path)
        except (CheckpointError, pickle.UnpicklingError) as e:
            assert str(path) in str(e)
            outcomes['error'] += 1
            continue
        same(obj, out)
        outcomes['harmless'] += 1
    assert outcomes['error'] > 300


def test_flipped_storage_byte_is_a_crc_error(good):
    path, _, raw = good
    info = zipfile.ZipFile(path).getinfo('good/data/0')
    with zipfile.ZipFile(path) as z:
        start = raw.index(z.read('good/data/0'), info.header_offset)
    corrupt = bytearray(raw)
    corrupt[start + 5] ^= 0x04
    path.write_bytes(bytes(corrupt))
    check_error(path, r"record 'good/data/0' is corrupted \(its CRC-32 does not match\)")


def rewrite_central(raw, edit):
    """Apply ``edit(ZipInfo)`` to each central-directory entry by re-packing the archive's
    central directory with Python's zipfile structures (the local headers stay)."""
    infos = zipfile.ZipFile(io.BytesIO(raw)).infolist()
    cd_start = raw.index(b'PK\x01\x02')
    body = bytearray(raw[:cd_start])
    central = bytearray()
    for info in infos:
        edit(info)
        name = info.filename.encode()
        central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014B50, 20, 20, info.flag_bits,
                               info.compress_type, 0, 0, info.CRC, info.compress_size,
                               info.file_size, len(name), 0, 0, 0, 0, 0, info.header_offset)
        central += name
    end = struct.pack('<IHHHHIIH', 0x06054B50, 0, 0, len(infos), len(infos), len(central),
                      len(body), 0)
    return bytes(body + central + end)


@pytest.mark.parametrize('edit,match', [
    (lambda i: setattr(i, 'compress_type', 8) if i.filename.endswith('data/0') else None,
     'compressed'),
    (lambda i: setattr(i, 'flag_bits', i.flag_bits | 1), 'encrypted'),
    (lambda i: setattr(i, 'filename', 'other/' + i.filename.split('/', 1)[1])
     if i.filename.endswith('version') else None, 'not inside the archive folder'),
    (lambda i: setattr(i, 'filename', 'good/data.pkl') if i.filename.endswith('version')
     else None, 'twice|local header names'),
    (lambda i: setattr(i, 'file_size', i.file_size + 1) if i.filename.endswith('data/0')
     else None, 'sizes differ'),
    (lambda i: (setattr(i, 'file_size', 10 ** 9), setattr(i, 'compress_size', 10 ** 9))
     if i.filename.endswith('data/0') else None, 'declares 1000000000 bytes'),
    (lambda i: setattr(i, 'header_offset', 0) if i.filename.endswith('data/1') else None,
     'local header names|overlap'),
    (lambda i: setattr(i, 'header_offset', 10 ** 7) if i.filename.endswith('data/1') else None,
     'outside the file'),
])
def test_hostile_zip_directories(good, edit, match):
    path, _, raw = good
    path.write_bytes(rewrite_central(raw, edit))
    check_error(path, match)


def test_overlapping_records_are_refused(good):
    """Two directory entries for the same bytes (a zip-bomb trick): refused."""
    path, _, raw = good
    infos = zipfile.ZipFile(io.BytesIO(raw)).infolist()
    offsets = {i.filename: i.header_offset for i in infos}

    def edit(info):
        if info.filename == 'good/data/1':
            info.header_offset = offsets['good/data/0']
            info.filename = 'good/data/0x'
    path.write_bytes(rewrite_central(raw, edit))
    check_error(path, 'local header names|overlap')


@pytest.mark.parametrize('make,match', [
    (lambda: archive(tensor_pickle(), version=b'99\n'), 'version 99, but the maximum'),
    (lambda: archive(tensor_pickle(), version=b'x\n'), 'not a number'),
    (lambda: archive(b'', {}, version=None).replace(b'data.pkl', b'datapkl0'), 'no archive/'
                                                                               'data.pkl'),
    (lambda: archive(tensor_pickle(), {'data/0': b'\0' * 8}, compress=zipfile.ZIP_DEFLATED),
     'compressed'),
    (lambda: zipfile_with_records({}), 'holds no records|not a readable'),
    (lambda: b'GARBAGE' * 10, 'neither PyTorch'),
    (lambda: b'', 'empty'),
])
def test_broken_archives(tmp_path, make, match):
    with pytest.raises(CheckpointError, match=match):
        load_bytes(tmp_path, make())


def zipfile_with_records(records):
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as z:
        for k, v in records.items():
            z.writestr(k, v)
    return out.getvalue()


def test_error_names_file_for_file_objects(good):
    path, _, raw = good
    with pytest.raises(CheckpointError, match='<file object>'):
        ser.load(io.BytesIO(raw[:100]))
    path.write_bytes(raw[:100])
    with open(path, 'rb') as fh:
        with pytest.raises(CheckpointError, match='good.pt'):
            ser.load(fh)


def test_legacy_format_with_hostile_sizes(tmp_path):
    buf = io.BytesIO()
    ser.save({'w': dg.ones(2)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    huge = raw.replace(enc(2) + b'N', enc(2 ** 40) + b'N', 1)
    assert huge != raw
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match='declare more bytes than the file holds'):
            load_bytes(tmp_path, huge)
        assert tracemalloc.get_traced_memory()[1] < 2 ** 20
    finally:
        tracemalloc.stop()
    with pytest.raises(CheckpointError, match='truncated|ends before'):
        load_bytes(tmp_path, raw[:-3])
    with pytest.raises(CheckpointError, match='magic number'):
        load_bytes(tmp_path, b'\x80\x02K\x05.' + raw[15:])


# -- atomic writes ---------------------------------------------------------------------

def big_obj(value):
    return {'w': dg.full((600, 600), float(value), dtype=dg.float64)}  # 2.9 MB: 3 chunks


def test_crash_mid_write_keeps_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / 'ckpt.pt'
    ser.save(big_obj(1), path)
    before = path.read_bytes()
    calls = []
    real = zipformat.write_chunk

    def failing(fh, chunk):
        calls.append(len(chunk))
        if len(calls) == 6:
            raise OSError(28, 'No space left on device')
        real(fh, chunk)
    monkeypatch.setattr(zipformat, 'write_chunk', failing)
    with pytest.raises(OSError, match='No space left'):
        ser.save(big_obj(2), path)
    assert len(calls) == 6
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['ckpt.pt']
    monkeypatch.setattr(zipformat, 'write_chunk', real)
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
        monkeypatch.setattr(zipformat, 'write_chunk', fail)
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
    with pytest.raises(RuntimeError, match='Parent directory .*missing does not exist'):
        ser.save({'a': dg.ones(1)}, tmp_path / 'missing' / 'c.pt')
    assert os.listdir(tmp_path) == ['d']


# -- map_location and mmap ----------------------------------------------------------------

def test_map_location_forms():
    buf = io.BytesIO()
    ser.save({'a': dg.ones(1)}, buf)
    seen = []

    def record(storage, location):
        seen.append((location, storage.nbytes()))
        return storage
    for loc in (None, 'cpu', b'cpu', dg.device('cpu'), {'cpu': 'cpu'}, {'cuda:0': 'cpu'},
                record, lambda storage, loc: None, lambda storage, loc: storage.cpu()):
        buf.seek(0)
        assert ser.load(buf, map_location=loc)['a'].tolist() == [1.0]
    assert seen == [('cpu', 4)]
    for loc, match in (('cuda', r'CUDA device but dynagrad.cuda.is_available\(\) is False'),
                       (dg.device('cuda', 1), 'CUDA device'), ({'cpu': 'cuda:0'}, 'CUDA'),
                       ('mps', 'MPS device'),
                       (lambda s, loc: s.cuda(), 'CUDA device')):
        buf.seek(0)
        with pytest.raises(RuntimeError, match=match):
            ser.load(buf, map_location=loc)
    buf.seek(0)
    with pytest.raises(TypeError, match='must return the storage'):
        ser.load(buf, map_location=lambda storage, loc: 3)


class FakeArray(np.ndarray):
    """The arrays of a second device registered for the test."""


def test_map_location_onto_a_device_dynagrad_has_a_backend_for():
    from dynagrad import _device
    _device.register_backend(_device.DeviceBackend(
        'privateuseone', np, (FakeArray,), lambda a: np.array(a).view(FakeArray)))
    try:
        for loc in ('privateuseone', {'cpu': 'privateuseone:0'},
                    lambda storage, loc: storage.to('privateuseone')):
            out = round_trip({'w': dg.arange(3.0), 'p': Parameter(dg.ones(2))}, map_location=loc)
            assert out['w'].device == dg.device('privateuseone', 0), loc
            assert isinstance(out['w']._data, FakeArray) and out['w'].tolist() == [0, 1, 2]
            assert type(out['p']) is Parameter and out['p'].requires_grad
            assert isinstance(out['p'].detach()._data, FakeArray)
        # tensors on that device are saved as PyTorch saves a GPU's: bytes plus location
        on_device = dg.arange(4.0, device='privateuseone')
        buf = io.BytesIO()
        ser.save({'w': on_device, 'v': on_device[1:]}, buf)
        buf.seek(0)
        out = ser.load(buf)
        assert out['w'].device == on_device.device and out['v'].tolist() == [1.0, 2.0, 3.0]
        buf.seek(0)
        assert type(ser.load(buf, map_location='cpu')['w'].numpy()) is np.ndarray
    finally:
        _device.unregister_backend('privateuseone')
    buf.seek(0)
    assert torch.load(buf, map_location='cpu')['w'].tolist() == [0.0, 1.0, 2.0, 3.0]
    buf.seek(0)
    with pytest.raises(RuntimeError, match='PRIVATEUSEONE device'):
        ser.load(buf)


def test_mmap_maps_the_file_copy_on_write(tmp_path):
    path = tmp_path / 'm.pt'
    obj = {'w': dg.arange(1000.0), 'v': None}
    obj['v'] = obj['w'][10:20]
    ser.save(obj, path)
    out = ser.load(path, mmap=True)
    same(obj['w'], out['w'])
    base = out['w']._data
    while not isinstance(base, __import__('mmap').mmap):     # the array views the mapping
        base = base.obj if isinstance(base, memoryview) else base.base
    assert np.shares_memory(out['v'].numpy(), out['w'].numpy())
    out['w'].add_(1)                     # private pages: the file keeps its bytes
    assert ser.load(path)['w'][0].item() == 0.0
    assert out['v'][0].item() == 11.0
    with open(path, 'rb') as fh:
        with pytest.raises(ValueError, match='f must be a file path in order to use the mmap'):
            ser.load(fh, mmap=True)
    ser.save(obj, path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match='mmap can only be used with files saved with '
                                           '`dynagrad.save'):
        ser.load(path, mmap=True)


# -- checkpoints of earlier dynagrad versions (safetensors layout) ---------------------

# What dynagrad.save wrote before it wrote PyTorch's format, for
#   w = Parameter([[1.5, -2.0], [0.25, 4.0]])
#   {'model': OrderedDict(fc.weight=w, fc.bias=[0.5, -0.5], bn.num_batches_tracked=7),
#    'again': w, 'epoch': 3, 'best': inf, 'name': 'run', 'steps': (1, 2),
#    'size': Size([2, 3]), 'flags': [True, False], 'ints': int16 [1, -2],
#    'np': np.arange(3, dtype=int32), 'rg': tensor([1., 2.], requires_grad=True)}
OLD_CHECKPOINT = (
    '6AUAAAAAAAB7Il9fbWV0YWRhdGFfXyI6eyJkeW5hZ3JhZC5mb3JtYXQiOiIxIiwiZHluYWdyYWQuY3JjMzIiOiJ7XCJm'
    'bGFnc1wiOjE0ODkxMTgxNDIsXCJpbnRzXCI6MTA1MzEzNzg2MyxcIm1vZGVsLmJuLm51bV9iYXRjaGVzX3RyYWNrZWRc'
    'IjoxODc3NDY0Njg4LFwibW9kZWwuZmMuYmlhc1wiOjQ5NTgwMzkzOSxcIm1vZGVsLmZjLndlaWdodFwiOjQyMTUzODMw'
    'MjQsXCJucFwiOjQ5NDI3NjIxOCxcInJnXCI6Nzc1OTIzMDYyfSIsImR5bmFncmFkLm9iamVjdCI6IntcImRpY3RcIjpb'
    'W1wibW9kZWxcIix7XCJvZGljdFwiOltbXCJmYy53ZWlnaHRcIix7XCJ0ZW5zb3JcIjpcIm1vZGVsLmZjLndlaWdodFwi'
    'LFwicmVxdWlyZXNfZ3JhZFwiOnRydWUsXCJwYXJhbWV0ZXJcIjp0cnVlfV0sW1wiZmMuYmlhc1wiLHtcInRlbnNvclwi'
    'OlwibW9kZWwuZmMuYmlhc1wiLFwicmVxdWlyZXNfZ3JhZFwiOmZhbHNlfV0sW1wiYm4ubnVtX2JhdGNoZXNfdHJhY2tl'
    'ZFwiLHtcInRlbnNvclwiOlwibW9kZWwuYm4ubnVtX2JhdGNoZXNfdHJhY2tlZFwiLFwicmVxdWlyZXNfZ3JhZFwiOmZh'
    'bHNlfV1dfV0sW1wiYWdhaW5cIix7XCJ0ZW5zb3JcIjpcIm1vZGVsLmZjLndlaWdodFwiLFwicmVxdWlyZXNfZ3JhZFwi'
    'OnRydWUsXCJwYXJhbWV0ZXJcIjp0cnVlfV0sW1wiZXBvY2hcIiwzXSxbXCJiZXN0XCIse1wiZmxvYXRcIjpcImluZlwi'
    'fV0sW1wibmFtZVwiLFwicnVuXCJdLFtcInN0ZXBzXCIse1widHVwbGVcIjpbMSwyXX1dLFtcInNpemVcIix7XCJzaXpl'
    'XCI6WzIsM119XSxbXCJmbGFnc1wiLHtcInRlbnNvclwiOlwiZmxhZ3NcIixcInJlcXVpcmVzX2dyYWRcIjpmYWxzZX1d'
    'LFtcImludHNcIix7XCJ0ZW5zb3JcIjpcImludHNcIixcInJlcXVpcmVzX2dyYWRcIjpmYWxzZX1dLFtcIm5wXCIse1wi'
    'bmRhcnJheVwiOlwibnBcIn1dLFtcInJnXCIse1widGVuc29yXCI6XCJyZ1wiLFwicmVxdWlyZXNfZ3JhZFwiOnRydWV9'
    'XV19IiwiZHluYWdyYWQuc2hhMjU2IjoiNzFlMmU1MTVkMDQ5MzM0MjY1MGZiYzZlYzZmNzZmNjg3NWM2NmE3ZmEwMzQx'
    'YjYxZmQ2ZjZhNzcwOGY1YTU1ZSIsImZvcm1hdCI6InB0In0sIm1vZGVsLmJuLm51bV9iYXRjaGVzX3RyYWNrZWQiOnsi'
    'ZHR5cGUiOiJJNjQiLCJzaGFwZSI6W10sImRhdGFfb2Zmc2V0cyI6WzAsOF19LCJtb2RlbC5mYy5iaWFzIjp7ImR0eXBl'
    'IjoiRjMyIiwic2hhcGUiOlsyXSwiZGF0YV9vZmZzZXRzIjpbOCwxNl19LCJtb2RlbC5mYy53ZWlnaHQiOnsiZHR5cGUi'
    'OiJGMzIiLCJzaGFwZSI6WzIsMl0sImRhdGFfb2Zmc2V0cyI6WzE2LDMyXX0sInJnIjp7ImR0eXBlIjoiRjMyIiwic2hh'
    'cGUiOlsyXSwiZGF0YV9vZmZzZXRzIjpbMzIsNDBdfSwibnAiOnsiZHR5cGUiOiJJMzIiLCJzaGFwZSI6WzNdLCJkYXRh'
    'X29mZnNldHMiOls0MCw1Ml19LCJpbnRzIjp7ImR0eXBlIjoiSTE2Iiwic2hhcGUiOlsyXSwiZGF0YV9vZmZzZXRzIjpb'
    'NTIsNTZdfSwiZmxhZ3MiOnsiZHR5cGUiOiJCT09MIiwic2hhcGUiOlsyXSwiZGF0YV9vZmZzZXRzIjpbNTYsNThdfX0g'
    'ICAHAAAAAAAAAAAAAD8AAAC/AADAPwAAAMAAAIA+AACAQAAAgD8AAABAAAAAAAEAAAACAAAAAQD+/wEA')


def test_checkpoint_of_the_previous_dynagrad_still_loads(tmp_path):
    path = tmp_path / 'old.safetensors'
    path.write_bytes(base64.b64decode(OLD_CHECKPOINT))
    out = ser.load(path)
    w = out['model']['fc.weight']
    assert type(w) is Parameter and w.requires_grad and out['again'] is w
    assert w.tolist() == [[1.5, -2.0], [0.25, 4.0]]
    assert type(out['model']) is collections.OrderedDict
    assert list(out['model']) == ['fc.weight', 'fc.bias', 'bn.num_batches_tracked']
    assert out['model']['bn.num_batches_tracked'].dtype == dg.int64
    assert out['epoch'] == 3 and out['best'] == float('inf') and out['name'] == 'run'
    assert out['steps'] == (1, 2) and type(out['size']) is dg.Size
    assert out['flags'].tolist() == [True, False] and out['ints'].dtype == dg.int16
    assert out['np'].dtype == np.int32 and out['np'].tolist() == [0, 1, 2]
    assert out['rg'].requires_grad and not isinstance(out['rg'], Parameter)
    # ...and saving it again writes PyTorch's format, which torch reads.
    ser.save(out['model'], tmp_path / 'new.pt')
    assert torch.load(tmp_path / 'new.pt')['fc.weight'].tolist() == w.tolist()


def raw_safetensors(header, data=b'', length=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    return struct.pack('<Q', len(h) if length is None else length) + h + data


@pytest.mark.parametrize('content,match', [
    (raw_safetensors({}, length=2 ** 63), 'over the 104857600-byte limit'),
    (raw_safetensors({}, length=4096), 'runs past the end of the file'),
    (raw_safetensors(b'{"w": {"dtype": '), 'not valid JSON'),
    (raw_safetensors(b'{' * 100000 + b'}' * 100000), 'not valid JSON'),
    (raw_safetensors({'w': {'dtype': 'C64', 'shape': [1], 'data_offsets': [0, 8]}},
                     b'\0' * 8), 'dtype C64, which dynagrad does not have'),
    (raw_safetensors({'w': {'dtype': 'Q8', 'shape': [1], 'data_offsets': [0, 1]}}, b'\0'),
     "unknown dtype 'Q8'"),
    (raw_safetensors({'w': {'dtype': 'U8', 'shape': [2 ** 40], 'data_offsets': [0, 2 ** 40]}},
                     b'\0' * 8), 'outside the data section'),
    (raw_safetensors({'a': {'dtype': 'U8', 'shape': [4], 'data_offsets': [0, 4]},
                      'b': {'dtype': 'U8', 'shape': [4], 'data_offsets': [2, 6]}},
                     b'\0' * 6), 'overlap'),
    (raw_safetensors({'__metadata__': {'dynagrad.format': '9'}}), 'format .9. is not one'),
    (raw_safetensors({'__metadata__': {'dynagrad.format': '1', 'dynagrad.object': '1'}}),
     'missing: dynagrad.crc32, dynagrad.sha256'),
])
def test_hostile_safetensors_files(tmp_path, content, match):
    path = tmp_path / 'bad.safetensors'
    path.write_bytes(content)
    check_error(path, match)


def test_corrupted_old_checkpoint(tmp_path):
    raw = bytearray(base64.b64decode(OLD_CHECKPOINT))
    path = tmp_path / 'old.safetensors'
    raw[-3] ^= 0x10
    path.write_bytes(bytes(raw))
    check_error(path, r'the data of tensor .* is corrupted \(CRC-32')
    raw[-3] ^= 0x10
    text = bytes(raw).replace(b'\\"epoch\\",3', b'\\"epoch\\",4')
    path.write_bytes(text)
    check_error(path, 'header checksum does not match')


def test_plain_safetensors_file_from_torch_loads_as_a_dict(tmp_path):
    import safetensors.torch as st
    sd = torch.nn.Linear(3, 2).state_dict()
    st.save_file(sd, str(tmp_path / 'torch.safetensors'))
    out = ser.load(tmp_path / 'torch.safetensors')
    assert list(out) == sorted(sd, key=lambda k: list(sd).index(k)) or set(out) == set(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())
