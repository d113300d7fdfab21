"""``dynagrad.device`` and everything that takes a device, against torch on this CPU-only
machine: construction, printing, equality and hashing, errors (types and messages), the
default device, factories' ``device=``, ``Tensor.to``/``cpu``/``cuda``, ``Module.to``, the
device registry as a dispatch point, and the thread-count functions."""
import pickle
import threading

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import _device, backend
from torch_outcomes import dynagrad_spelling, outcome

NOT_COMPILED = 'not compiled with CUDA enabled'


def same_error(build):
    """``build(lib)`` raises in both libraries: the same type, and torch's message (named
    for dynagrad) inside dynagrad's."""
    (a_type, a_msg), (b_type, b_msg) = outcome(lambda: build(dg)), outcome(lambda: build(torch))
    assert b_type != 'ok', f'torch did not raise: {b_msg!r}'
    assert a_type is b_type, (a_type, a_msg, b_type, b_msg)
    assert dynagrad_spelling(b_msg) in a_msg, (a_msg, b_msg)
    return a_msg


@pytest.fixture(autouse=True)
def no_default_device_left():
    yield
    dg.set_default_device(None)
    torch.set_default_device(None)


# -- construction and printing --------------------------------------------------------------

VALID = [('cpu',), ('cuda',), ('cuda:1',), ('cuda', 0), ('cuda', 3), ('cpu:0',), ('cpu', 2),
         ('mps',), ('meta',), ('xpu:3',), ('privateuseone',), ('cuda', None), (b'cpu',)]


@pytest.mark.parametrize('args', VALID, ids=str)
def test_device_prints_and_reads_as_torch(args):
    d, t = dg.device(*args), torch.device(*args)
    assert (d.type, d.index) == (t.type, t.index)
    assert str(d) == str(t)
    assert repr(d) == repr(t)
    assert hash(d) == hash(t)
    assert dg.device(d) is d and dg.device(d) == d


def test_keywords_and_other_devices():
    assert repr(dg.device(type='cuda', index=0)) == repr(torch.device(type='cuda', index=0))
    assert dg.device('cuda', index=1) == dg.device('cuda:1')
    assert dg.device(dg.device('cuda:1')) == dg.device('cuda', 1)
    assert dg.device('cuda', np.int64(2)).index == 2


@pytest.mark.parametrize('args', [
    ('foo',), ('CPU',), ('cuda:x',), ('cuda:-1',), (' cpu',), ('cuda:01',), ('cuda:1:2',),
    ('cpu:',), ('cuda:1 ',), ('',), ('float64',), ('cuda', -1), ('cuda:1', 1), (-1,), (0,),
    (1,)], ids=str)
def test_bad_device_raises_torch_runtime_error(args):
    same_error(lambda L: L.device(*args))


@pytest.mark.parametrize('build', [
    lambda L: L.device(1.0), lambda L: L.device(None), lambda L: L.device(True),
    lambda L: L.device('cpu', 'x'), lambda L: L.device('cuda', True),
    lambda L: L.device(L.device('cpu'), 1), lambda L: L.device(), lambda L: L.device(index=1),
    lambda L: L.device('cuda', 1, 2)])
def test_bad_argument_types_raise_type_error(build):
    a, b = outcome(lambda: build(dg)), outcome(lambda: build(torch))
    assert a[0] is b[0] is TypeError, (a, b)


def test_equality_and_hashing_follow_torch():
    specs = ['cpu', 'cpu:0', 'cuda', 'cuda:0', 'cuda:1', 'meta', 'mps']
    for x in specs:
        for y in specs:
            assert (dg.device(x) == dg.device(y)) == (torch.device(x) == torch.device(y))
            assert (dg.device(x) != dg.device(y)) == (torch.device(x) != torch.device(y))
    assert (dg.device('cpu') == 'cpu') is (torch.device('cpu') == 'cpu') is False
    assert {dg.device('cuda', 1): 'a'}[dg.device('cuda:1')] == 'a'
    with pytest.raises(TypeError):
        dg.device('cpu') < dg.device('cpu')


def test_device_is_immutable_and_pickles():
    d = dg.device('cuda:1')
    with pytest.raises(AttributeError):
        d.type = 'cpu'
    with pytest.raises(AttributeError):
        d.foo = 1
    assert pickle.loads(pickle.dumps(d)) == d
    assert type(d).__module__ == 'dynagrad' and type(d).__name__ == 'device'
    with pytest.raises(TypeError):
        format(d, '>6')


# -- the default device ------------------------------------------------------------------

def test_default_device_is_the_cpu():
    assert repr(dg.get_default_device()) == repr(torch.get_default_device())


def test_with_device_sets_the_factories_default_and_nests():
    with dg.device('cpu') as d:
        assert d == dg.device('cpu')
        assert dg.zeros(1).device == dg.device('cpu')
        with dg.device('cuda'):                 # entering names it; factories raise
            assert 'not compiled' in outcome(dg.get_default_device)[1]
            for factory in (lambda: dg.zeros(1), lambda: dg.tensor([1.0]),
                            lambda: dg.arange(3), lambda: dg.randn(2), lambda: dg.eye(2)):
                with pytest.raises(AssertionError, match=NOT_COMPILED):
                    factory()
        assert dg.ones(1).device.type == 'cpu'
    assert dg.get_default_device() == dg.device('cpu')


def test_default_device_is_per_thread():
    seen = []
    dg.set_default_device('cuda')
    with dg.device('cuda'):
        thread = threading.Thread(target=lambda: seen.append(dg.zeros(1).device))
        thread.start()
        thread.join()
    assert seen == [dg.device('cpu')]


def test_set_default_device_cuda_raises_at_use_as_torch():
    for L in (dg, torch):
        assert L.set_default_device('cuda') is None         # accepted, as in torch
    same_error(lambda L: L.get_default_device())
    same_error(lambda L: L.zeros(1))
    same_error(lambda L: L.tensor([1.0]))
    same_error(lambda L: L.randn(2))
    same_error(lambda L: L.as_tensor(L.ones(1, device='cpu')))
    t, tt = dg.ones(2, device='cpu'), torch.ones(2, device='cpu')
    # *_like, new_*, to(dtype), Tensor(), from_numpy keep to the CPU, as in torch
    for build in (lambda L, x: L.zeros_like(x), lambda L, x: x.new_zeros(2),
                  lambda L, x: x.new_tensor([1.0]), lambda L, x: x.to(L.float64),
                  lambda L, x: L.Tensor(2), lambda L, x: L.from_numpy(np.zeros(1))):
        assert str(build(dg, t).device) == str(build(torch, tt).device) == 'cpu'
    for L in (dg, torch):
        L.set_default_device(None)
    assert dg.zeros(1).device == dg.device('cpu')


def test_set_default_device_checks_the_name_at_once():
    same_error(lambda L: L.set_default_device('foo'))
    same_error(lambda L: L.set_default_device(1))
    for L in (dg, torch):
        L.set_default_device('cpu:1')
    assert repr(dg.get_default_device()) == repr(torch.get_default_device())
    assert str(dg.zeros(1).device) == str(torch.zeros(1).device) == 'cpu'


def test_unavailable_default_types_raise_their_own_errors():
    dg.set_default_device('mps')
    with pytest.raises(RuntimeError, match='not linked with support for mps devices'):
        dg.get_default_device()
    dg.set_default_device('meta')
    assert dg.zeros(1).device == dg.device('meta')      # meta is there (tests/test_meta.py)


# -- factories' device= ------------------------------------------------------------------

FACTORIES = {
    'tensor': lambda L, d: L.tensor([1.0, 2.0], device=d),
    'as_tensor': lambda L, d: L.as_tensor([1.0, 2.0], device=d),
    'as_tensor_tensor': lambda L, d: L.as_tensor(L.ones(2), device=d),
    'zeros': lambda L, d: L.zeros(2, 3, device=d),
    'ones': lambda L, d: L.ones((2,), device=d),
    'empty': lambda L, d: L.empty(2, device=d).zero_(),
    'full': lambda L, d: L.full((2,), 3.0, device=d),
    'arange': lambda L, d: L.arange(0, 5, 2, device=d),
    'linspace': lambda L, d: L.linspace(0, 1, 5, device=d),
    'eye': lambda L, d: L.eye(2, 3, device=d),
    'zeros_like': lambda L, d: L.zeros_like(L.ones(2), device=d),
    'ones_like': lambda L, d: L.ones_like(L.ones(2), device=d),
    'empty_like': lambda L, d: L.empty_like(L.ones(2), device=d).zero_(),
    'full_like': lambda L, d: L.full_like(L.ones(2), 7, device=d),
    'rand': lambda L, d: L.rand(2, device=d).shape,
    'randn': lambda L, d: L.randn(2, device=d).shape,
    'randint': lambda L, d: L.randint(0, 5, (2,), device=d).shape,
    'randperm': lambda L, d: L.randperm(4, device=d).shape,
    'new_zeros': lambda L, d: L.ones(1).new_zeros(2, device=d),
    'new_ones': lambda L, d: L.ones(1).new_ones((2,), device=d),
    'new_empty': lambda L, d: L.ones(1).new_empty(2, device=d).zero_(),
    'new_full': lambda L, d: L.ones(1).new_full((2,), 4.0, device=d),
    'new_tensor': lambda L, d: L.ones(1).new_tensor([5.0], device=d),
    'to': lambda L, d: L.ones(2).to(d),
    'to_keyword': lambda L, d: L.ones(2).to(device=d, dtype=L.float64),
}


@pytest.mark.parametrize('spec', ['cpu', 'cpu:0', 'device', None])
@pytest.mark.parametrize('name', FACTORIES)
def test_factory_on_the_cpu(name, spec):
    build = FACTORIES[name]

    def run(L):
        return build(L, L.device('cpu') if spec == 'device' else spec)
    a, b = run(dg), run(torch)
    if isinstance(b, torch.Size):
        assert tuple(a) == tuple(b)
        return
    assert a.device == dg.device('cpu') and str(a.device) == str(b.device)
    assert str(a.dtype).split('.')[1] == str(b.dtype).split('.')[1]
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize('spec', ['cuda', 'cuda:1', 'foo', 0])
@pytest.mark.parametrize('name', FACTORIES)
def test_factory_on_a_missing_device_raises_as_torch(name, spec):
    same_error(lambda L: FACTORIES[name](L, L.device(spec) if spec == 'cuda:1' else spec))


@pytest.mark.parametrize('name', ['zeros', 'tensor', 'arange', 'new_zeros', 'to'])
def test_other_missing_devices_say_which(name):
    for kind, error in (('mps', RuntimeError), ('xpu', AssertionError),
                        ('xla', RuntimeError)):
        with pytest.raises(error, match=kind if kind != 'xpu' else 'XPU'):
            FACTORIES[name](dg, kind)


def test_legacy_constructor_device():
    same_error(lambda L: L.Tensor(2, device='cuda'))
    assert dg.Tensor(2, device='cpu').shape == (2,)


# -- Tensor.to, cpu, cuda and the device attributes ---------------------------------------

def test_device_attributes_match_torch():
    t, tt = dg.zeros(2), torch.zeros(2)
    for name in ('is_cpu', 'is_cuda', 'is_mps', 'is_xpu', 'is_meta', 'is_ipu', 'is_mtia'):
        assert getattr(t, name) is getattr(tt, name), name
    assert t.get_device() == tt.get_device() == -1
    assert isinstance(t.device, dg.device) and t.device == dg.device('cpu')


@pytest.mark.parametrize('build', [
    lambda L, t: t.to('cpu') is t,
    lambda L, t: t.to(L.device('cpu')) is t,
    lambda L, t: t.to('cpu:1') is t,
    lambda L, t: t.to('cpu', non_blocking=True) is t,
    lambda L, t: t.to(None) is t,
    lambda L, t: t.to() is t,
    lambda L, t: t.to(device=None) is t,
    lambda L, t: t.to(t) is t,
    lambda L, t: t.to('cpu', copy=True) is t,
    lambda L, t: t.to(t, copy=True) is t,
    lambda L, t: t.to(L.float32, non_blocking=True, copy=True) is t,
    lambda L, t: t.to(memory_format=L.contiguous_format) is t if hasattr(L, 'contiguous_format')
    else True,
    lambda L, t: t.cpu() is t,
    lambda L, t: str(t.to('cpu', L.float64).dtype).split('.')[1],
    lambda L, t: str(t.to('cpu', L.float64, True, True).dtype).split('.')[1],
    lambda L, t: str(t.to('cpu', None).dtype).split('.')[1],
    lambda L, t: str(t.to(None, L.float64).dtype).split('.')[1],
    lambda L, t: str(t.to(L.device('cpu'), L.int32).dtype).split('.')[1],
    lambda L, t: str(t.to(device='cpu', dtype=L.float16, non_blocking=True).dtype).split('.')[1],
    lambda L, t: str(t.to(L.zeros(1, dtype=L.int64)).dtype).split('.')[1],
    lambda L, t: str(t.to(tensor=L.zeros(1, dtype=L.int64)).dtype).split('.')[1],
    lambda L, t: str(t.to(float).dtype).split('.')[1],
    lambda L, t: str(t.to(int).dtype).split('.')[1],
])
def test_to_forms_match_torch(build):
    a, b = build(dg, dg.ones(2)), build(torch, torch.ones(2))
    assert a == b


@pytest.mark.parametrize('build', [
    lambda L, t: t.to('cuda'), lambda L, t: t.to('cuda', L.float64),
    lambda L, t: t.to(dtype=L.float64, device='cuda'), lambda L, t: t.to('cuda:1'),
    lambda L, t: t.to(L.device('cuda', 0), non_blocking=True), lambda L, t: t.cuda(),
    lambda L, t: t.cuda('cuda:0'), lambda L, t: t.cuda(non_blocking=True),
    lambda L, t: t.xpu(), lambda L, t: t.to('mps'), lambda L, t: t.to('ipu'),
    lambda L, t: t.to('xla'), lambda L, t: t.to('foo'), lambda L, t: t.to(0),
    lambda L, t: t.to('float64'), lambda L, t: t.cuda(1), lambda L, t: t.cuda(device='cpu'),
    lambda L, t: t.cuda('foo'), lambda L, t: t.ipu(),
])
def test_to_a_missing_device_raises_as_torch(build):
    t = dg.ones(2, requires_grad=True)
    same_error(lambda L: build(L, t if L is dg else torch.ones(2, requires_grad=True)))
    assert t.dtype == dg.float32 and t.grad is None     # nothing happened to the tensor


def test_to_meta_keeps_shape_and_dtype():
    for L in (dg, torch):
        t = L.ones(2, 3, dtype=L.float64).to('meta')
        assert t.is_meta and t.shape == (2, 3) and t.dtype == L.float64


@pytest.mark.parametrize('build', [
    lambda L, t: t.to('cpu', 'float64'), lambda L, t: t.to(L.float64, device='cpu'),
    lambda L, t: t.to(L.float64, 'cpu'), lambda L, t: t.to('cpu', 'cpu'),
    lambda L, t: t.to(foo=1), lambda L, t: t.to(other=t), lambda L, t: t.to(t, L.float64),
    lambda L, t: t.to('cpu', L.float64, False, False, None)])
def test_to_bad_argument_combinations(build):
    same_error(lambda L: build(L, L.ones(2)))


def test_to_numpy_dtype_is_a_dynagrad_extension():
    # torch refuses NumPy dtypes in to(); dynagrad's dtype lookup takes them, as everywhere
    assert dg.ones(2).to(np.float64).dtype == dg.float64


def test_to_records_a_copy_node_as_torch():
    def run(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.to('cpu', L.float64) * 3
        y.sum().backward()
        return y.grad_fn.next_functions[0][0].name(), x.grad.dtype is x.dtype, x.grad.tolist()
    assert run(dg) == run(torch)


# -- Module device methods ----------------------------------------------------------------

def test_module_to_device_and_dtype_as_torch():
    for build in (lambda L, m: m.to('cpu') is m, lambda L, m: m.to(L.device('cpu')) is m,
                  lambda L, m: m.cpu() is m, lambda L, m: m.to('cpu', non_blocking=True) is m,
                  lambda L, m: str(m.to('cpu', L.float64).weight.dtype).split('.')[1],
                  lambda L, m: str(m.to(L.zeros(1, dtype=L.float64)).weight.dtype)
                  .split('.')[1],
                  lambda L, m: str(m.to(device='cpu', dtype=L.float16).bias.dtype)
                  .split('.')[1]):
        assert build(dg, dg.nn.Linear(2, 2)) == build(torch, torch.nn.Linear(2, 2))


@pytest.mark.parametrize('build', [
    lambda L, m: m.to('cuda'), lambda L, m: m.cuda(), lambda L, m: m.cuda(0),
    lambda L, m: m.to('cuda', L.float64), lambda L, m: m.cuda(device='cpu'),
    lambda L, m: m.to('mps'), lambda L, m: m.to('foo'), lambda L, m: m.to(0),
    lambda L, m: m.xpu(), lambda L, m: m.to(L.int32), lambda L, m: m.to('cpu', 'cpu')])
def test_module_to_a_missing_device_raises_before_moving(build):
    m = dg.nn.Linear(2, 2)
    before = m.weight
    same_error(lambda L: build(L, m if L is dg else torch.nn.Linear(2, 2)))
    assert m.weight is before and m.weight.dtype == dg.float32


def test_module_without_tensors_moves_nowhere_as_torch():
    for L in (dg, torch):
        m = L.nn.ReLU()
        assert m.cuda() is m and m.to('cuda') is m
    same_error(lambda L: L.nn.ReLU().to('foo'))


def test_module_to_moves_gradients_and_buffers_dtype():
    m = dg.nn.BatchNorm1d(2)
    m.weight.grad = dg.ones(2)
    m.to('cpu', dg.float64)
    assert m.weight.grad.dtype == m.running_mean.dtype == dg.float64
    assert m.num_batches_tracked.dtype == dg.int64


# -- the registry: a device type is a dispatch point --------------------------------------

class FakeArray(np.ndarray):
    """A second device's arrays: NumPy's, marked by their class."""


def array_of(t):
    """The array behind ``t`` (``numpy()`` refuses a device tensor, as PyTorch's does)."""
    return t._data


@pytest.fixture
def fake_device():
    def move(array):
        return np.array(array).view(FakeArray)

    class FakeNamespace:                    # what a device's own library would provide
        calls = []

        def __getattr__(self, name):
            fn = getattr(np, name)

            def call(*args, **kwargs):
                self.calls.append(name)
                return move(fn(*args, **kwargs))
            return call
    ns = FakeNamespace()
    _device.register_backend(_device.DeviceBackend('privateuseone', ns, (FakeArray,), move,
                                                   device_count=lambda: 2))
    try:
        yield ns
    finally:
        _device.unregister_backend('privateuseone')


def test_a_registered_backend_serves_factories_and_moves(fake_device):
    t = dg.zeros(2, 3, device='privateuseone')
    assert isinstance(array_of(t), FakeArray) and fake_device.calls == ['full']
    assert t.device == dg.device('privateuseone', 0) and t.get_device() == 0
    assert not t.is_cpu
    assert isinstance(array_of(dg.eye(2, device='privateuseone')), FakeArray)
    assert isinstance(array_of(dg.arange(3, device='privateuseone')), FakeArray)
    assert isinstance(array_of(dg.tensor([1.0], device='privateuseone')), FakeArray)
    assert isinstance(array_of(dg.zeros_like(t)), FakeArray)      # the input's device
    assert isinstance(array_of(t.new_ones(2)), FakeArray)
    # it is the accelerator now
    assert dg.accelerator.is_available() and dg.accelerator.device_count() == 2
    assert dg.accelerator.current_accelerator() == dg.device('privateuseone')
    assert dg.device(1) == dg.device('privateuseone', 1)
    with dg.device('privateuseone'):
        assert dg.get_default_device() == dg.device('privateuseone', 0)
        assert isinstance(array_of(dg.ones(1)), FakeArray)


def test_tensor_of_a_tensor_keeps_its_device_unless_told(fake_device):
    t = dg.ones(2, device='privateuseone')
    for copy in (dg.tensor(t), dg.as_tensor(t), t.new_tensor([1.0])):
        assert isinstance(array_of(copy), FakeArray)
    assert dg.as_tensor(t) is t
    assert type(array_of(dg.tensor(t, device='cpu'))) is np.ndarray
    with dg.device('cpu'):              # a default device set wins, as in torch
        assert type(array_of(dg.tensor(t))) is np.ndarray


def test_moving_between_devices_is_recorded_and_differentiable(fake_device):
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x.to('privateuseone')
    assert isinstance(array_of(y), FakeArray) and y.device.type == 'privateuseone'
    assert y.grad_fn.name() == 'ToCopyBackward0'
    back = y.to('cpu', dg.float64)
    assert type(array_of(back)) is np.ndarray and back.device == dg.device('cpu')
    (back * 3).sum().backward()
    assert type(array_of(x.grad)) is np.ndarray and x.grad.tolist() == [3.0, 3.0]
    assert x.grad.dtype == dg.float32
    m = dg.nn.Linear(2, 1).to('privateuseone')
    assert isinstance(array_of(m.weight), FakeArray)


def test_an_unregistered_type_raises_again_after(fake_device):
    _device.unregister_backend('privateuseone')
    with pytest.raises(RuntimeError, match='privateuseone'):
        dg.zeros(1, device='privateuseone')
    assert not dg.accelerator.is_available()


def test_the_cpu_backend_cannot_be_replaced():
    with pytest.raises(ValueError, match='built in'):
        _device.register_backend(_device.DeviceBackend('cpu', np, (np.ndarray,), np.asarray))
    with pytest.raises(ValueError, match='unknown device type'):
        _device.register_backend(_device.DeviceBackend('tpu', np, (np.ndarray,), np.asarray))


# -- threads ----------------------------------------------------------------------------

@pytest.fixture
def restore_threads():
    before = dg.get_num_threads()
    yield
    dg.set_num_threads(before)


def test_set_num_threads_changes_the_blas(restore_threads):
    threadpoolctl = pytest.importorskip('threadpoolctl')
    dg.set_num_threads(1)
    assert dg.get_num_threads() == 1
    blas = [i for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas']
    assert blas and all(i['num_threads'] == 1 for i in blas)


def test_set_num_threads_without_threadpoolctl_warns_and_remembers(monkeypatch):
    monkeypatch.setattr(backend, '_blas_controller', lambda: None)
    monkeypatch.setattr(backend._threads, 'intra', None)
    with pytest.warns(UserWarning, match='threadpoolctl'):
        dg.set_num_threads(3)
    assert dg.get_num_threads() == 3


@pytest.mark.parametrize('value', [0, -1, 1.5, True])
def test_thread_count_errors_as_torch(value):
    for fn in ('set_num_threads', 'set_num_interop_threads'):
        a = outcome(lambda: getattr(dg, fn)(value))
        if value is True:           # torch takes a bool as 1; dynagrad refuses it
            assert a[0] is RuntimeError
            continue
        b = outcome(lambda: getattr(torch, fn)(value))
        assert a == b


def test_interop_threads_set_once(monkeypatch):
    monkeypatch.setattr(backend._threads, 'interop', None)
    assert dg.get_num_interop_threads() == torch.get_num_interop_threads()
    dg.set_num_interop_threads(3)
    assert dg.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match='cannot set number of interop threads after'):
        dg.set_num_interop_threads(2)


_MODULES_WITH_DEVICE = [
    ('Linear', (2, 3)), ('Bilinear', (2, 2, 3)), ('Conv1d', (1, 1, 3)), ('Conv2d', (1, 1, 3)),
    ('ConvTranspose2d', (1, 1, 3)), ('BatchNorm1d', (3,)), ('LayerNorm', (3,)),
    ('GroupNorm', (1, 3)), ('Embedding', (5, 2)), ('EmbeddingBag', (5, 2)), ('LSTM', (2, 3)),
    ('GRUCell', (2, 3)), ('PReLU', ()), ('MultiheadAttention', (4, 2)),
    ('TransformerEncoderLayer', (4, 2)),
]


@pytest.mark.parametrize('name,args', _MODULES_WITH_DEVICE, ids=[n for n, _ in _MODULES_WITH_DEVICE])
def test_module_constructors_refuse_an_unavailable_device_as_torch(name, args):
    with pytest.raises(AssertionError, match='not compiled with CUDA enabled'):
        getattr(torch.nn, name)(*args, device='cuda')
    with pytest.raises(AssertionError, match='not compiled with CUDA enabled'):
        getattr(dg.nn, name)(*args, device='cuda')
    m = getattr(dg.nn, name)(*args, device=dg.device('cpu'))
    assert all(p.device == dg.device('cpu') for p in m.parameters())
