"""The 'cuda' device's plumbing, with CuPy played by NumPy (tests/fake_cuda.py): tensors,
moves, printing, errors, modules, optimizers, checkpoints, autocast, and dynagrad.cuda's
API, against torch (CPU) where torch's behaviour can be read without a GPU and against
PyTorch's documented texts where it cannot. The same backend code serves CuPy itself;
tests/cuda/test_gpu.py runs on a GPU."""
import io
import sys

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import _device
from dynagrad.cuda import _backend

import fake_cuda
from device_training import train

NUMPY_REFUSED = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
                 'the tensor to host memory first.')
MIXED = 'Expected all tensors to be on the same device, but found at least two devices, '


@pytest.fixture
def cuda():
    with fake_cuda.registered() as fake:
        yield fake


def on_device(t):
    return type(t._data) is fake_cuda.DeviceArray


# -- the stand-in itself: it catches a host array where CuPy would ---------------------------

def test_stand_in_refuses_host_arrays_as_cupy_does():
    fake = fake_cuda.FakeCupy()
    d = fake.ones(3)
    assert type(d) is fake_cuda.DeviceArray
    host = np.ones(3)
    for run in (lambda: fake.exp(host), lambda: d + host, lambda: host * d,
                lambda: fake.stack([d, host]),
                lambda: d.__setitem__(slice(None), host), lambda: fake.add.at(d, [0], host[:1])):
        with pytest.raises(fake_cuda.HostArrayOnDevice):
            run()
    assert type(fake.asarray(host)) is fake_cuda.DeviceArray      # the copy onto the device
    assert type(d.sum()) is fake_cuda.DeviceArray and d.sum().ndim == 0   # CuPy's 0-d result
    assert type(d.get()) is np.ndarray


# -- tensors on the device --------------------------------------------------------------------

@pytest.mark.parametrize('make', [
    lambda: dg.zeros(2, 3, device='cuda'), lambda: dg.ones(2, device='cuda:0'),
    lambda: dg.full((2,), 3.0, device=dg.device('cuda')), lambda: dg.arange(4, device='cuda'),
    lambda: dg.eye(3, device='cuda'), lambda: dg.tensor([1.0, 2.0], device='cuda'),
    lambda: dg.empty(3, device='cuda'), lambda: dg.linspace(0, 1, 5, device='cuda'),
    lambda: dg.rand(3, device='cuda'), lambda: dg.randn(2, 2, device='cuda'),
    lambda: dg.randint(0, 5, (3,), device='cuda'), lambda: dg.randperm(4, device='cuda'),
    lambda: dg.zeros_like(dg.ones(2, device='cuda')), lambda: dg.ones(2).cuda(),
    lambda: dg.ones(2).to('cuda'), lambda: dg.ones(2, device='cuda').new_zeros(3)])
def test_factories_and_moves_land_on_the_device(cuda, make):
    t = make()
    assert on_device(t)
    assert t.device == dg.device('cuda', 0) and str(t.device) == 'cuda:0'
    assert t.is_cuda and not t.is_cpu and t.get_device() == 0


def test_default_device_cuda(cuda):
    with dg.device('cuda'):
        assert on_device(dg.ones(2)) and on_device(dg.randn(2))
    dg.set_default_device('cuda')
    try:
        assert on_device(dg.zeros(1)) and dg.get_default_device() == dg.device('cuda', 0)
    finally:
        dg.set_default_device(None)


def test_cpu_and_back_keep_values_and_differentiate(cuda):
    x = dg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == 'ToCopyBackward0'
    z = (y * y).sum()
    assert on_device(z)
    z.backward()
    assert type(x.grad._data) is np.ndarray          # the gradient came home
    assert x.grad.tolist() == [2.0, -4.0, 6.0]
    back = y.cpu()
    assert type(back._data) is np.ndarray and back.tolist() == [1.0, -2.0, 3.0]
    assert y.cpu().cuda().cpu().tolist() == [1.0, -2.0, 3.0]
    assert y.to('cuda') is y and y.cuda() is y      # already there: no copy, as in torch


def test_a_device_copy_does_not_alias_the_host_tensor(cuda):
    x = dg.zeros(3)
    y = x.cuda()
    x.add_(1)
    assert y.cpu().tolist() == [0.0, 0.0, 0.0]


def test_printing_names_the_device_as_torch(cuda):
    assert repr(dg.tensor([1.0, 2.0], device='cuda')) == "tensor([1., 2.], device='cuda:0')"
    assert repr(dg.tensor([1, 2], dtype=dg.int32, device='cuda')) == \
        "tensor([1, 2], device='cuda:0', dtype=dynagrad.int32)"
    x = dg.ones(2, device='cuda', requires_grad=True)
    assert repr(x) == "tensor([1., 1.], device='cuda:0', requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 2.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(dg.zeros(0, 2, device='cuda')) == \
        "tensor([], device='cuda:0', size=(0, 2))"
    # torch's own CPU spelling, for the part that does not name the device
    assert repr(dg.ones(2, 2, device='cuda', dtype=dg.float64)).replace(
        "device='cuda:0', ", '').replace('dynagrad', 'torch') == \
        repr(torch.ones(2, 2, dtype=torch.float64))


def test_numpy_refuses_a_device_tensor_as_torch(cuda):
    t = dg.ones(2, device='cuda')
    with pytest.raises(TypeError) as info:
        t.numpy()
    assert str(info.value) == NUMPY_REFUSED
    assert type(t.numpy(force=True)) is np.ndarray     # force: detach().cpu().numpy()
    assert t.cpu().numpy().tolist() == [1.0, 1.0]
    assert t.tolist() == [1.0, 1.0] and t.sum().item() == 2.0    # values are readable


def test_numpy_asarray_of_a_device_tensor_raises_as_torch(cuda):
    with pytest.raises(TypeError) as info:
        np.asarray(dg.ones(2, device='cuda'))
    assert str(info.value) == NUMPY_REFUSED


def test_tensors_from_device_arrays_stay_on_the_device(cuda):
    a = cuda.arange(3.0)
    shared = dg.as_tensor(a)
    assert on_device(shared) and shared._data is a          # no copy, as torch's
    copied = dg.tensor(a, dtype=dg.float32)
    assert on_device(copied) and copied.dtype == dg.float32
    assert copied.cpu().tolist() == [0.0, 1.0, 2.0]
    assert type(dg.tensor(a, device='cpu')._data) is np.ndarray


def test_mixing_devices_raises_torch_error(cuda):
    g, c = dg.ones(3, device='cuda'), dg.ones(3)
    with pytest.raises(RuntimeError) as info:
        g + c
    assert str(info.value) == MIXED + 'cuda:0 and cpu!'
    with pytest.raises(RuntimeError) as info:
        dg.matmul(dg.ones(2, 2), dg.ones(2, 2, device='cuda'))
    assert str(info.value) == MIXED + 'cpu and cuda:0!'
    with pytest.raises(RuntimeError, match=MIXED):
        g.add_(c)
    with pytest.raises(RuntimeError, match=MIXED):
        dg.cat([g, c])
    with pytest.raises(RuntimeError, match=MIXED):
        dg.nn.functional.linear(g, dg.ones(2, 3))


def test_a_zero_dim_cpu_tensor_joins_a_device_op_as_in_torch(cuda):
    s = dg.tensor(2.0, requires_grad=True)
    g = dg.ones(3, device='cuda', requires_grad=True)
    out = g * s
    assert on_device(out) and out.tolist() == [2.0, 2.0, 2.0]
    out.sum().backward()
    assert type(s.grad._data) is np.ndarray and s.grad.item() == 3.0
    assert on_device(g.grad) and g.grad.cpu().tolist() == [2.0, 2.0, 2.0]


# -- modules, optimizers, checkpoints ------------------------------------------------------------

def _mlp():
    dg.manual_seed(0)
    return dg.nn.Sequential(dg.nn.Linear(4, 8), dg.nn.LayerNorm(8), dg.nn.GELU(),
                            dg.nn.Dropout(0.0), dg.nn.Linear(8, 3))


def _train(model, device, optimizer_cls, **opt_kw):
    return train(model, device, optimizer_cls, (5, 4), 3, **opt_kw)


@pytest.mark.parametrize('optimizer_cls,kw', [
    (dg.optim.SGD, dict(lr=0.1, momentum=0.9)), (dg.optim.Adam, dict(lr=1e-2)),
    (dg.optim.AdamW, dict(lr=1e-2, weight_decay=0.1)), (dg.optim.RMSprop, dict(lr=1e-2))])
def test_a_model_trains_on_the_device_as_on_the_cpu(cuda, optimizer_cls, kw):
    cpu_losses, _ = _train(_mlp(), 'cpu', optimizer_cls, **kw)
    model = _mlp().to('cuda')
    assert all(on_device(p) for p in model.parameters())
    losses, opt = _train(model, 'cuda', optimizer_cls, **kw)
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-5)
    for state in opt.state.values():            # optimizer state lives with the parameters
        for value in state.values():
            if isinstance(value, dg.Tensor) and value.dim() > 0:
                assert on_device(value)
    assert all(on_device(p.grad) for p in model.parameters())


def test_module_to_cuda_moves_buffers_and_back(cuda):
    m = dg.nn.BatchNorm1d(3).to('cuda')
    assert on_device(m.running_mean) and on_device(m.num_batches_tracked)
    m(dg.randn(4, 3, device='cuda'))
    assert m.num_batches_tracked.item() == 1
    m.cpu()
    assert type(m.running_mean._data) is np.ndarray


def test_save_and_load_with_map_location(cuda):
    state = {'w': dg.arange(6.0).reshape(2, 3).cuda(), 'b': dg.ones(2)}
    buf = io.BytesIO()
    dg.save(state, buf)
    # torch reads the file: it names the device the tensor was saved from
    buf.seek(0)
    with pytest.raises(RuntimeError, match='CUDA'):
        torch.load(buf, weights_only=True)
    buf.seek(0)
    assert torch.load(buf, map_location='cpu', weights_only=True)['w'].tolist() == \
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    buf.seek(0)
    loaded = dg.load(buf)                           # back where it was saved from
    assert on_device(loaded['w']) and not on_device(loaded['b'])
    buf.seek(0)
    onto_cpu = dg.load(buf, map_location='cpu')
    assert type(onto_cpu['w']._data) is np.ndarray
    assert onto_cpu['w'].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    buf.seek(0)
    onto_cuda = dg.load(buf, map_location='cuda')
    assert on_device(onto_cuda['w']) and on_device(onto_cuda['b'])
    assert onto_cuda['b'].cpu().tolist() == [1.0, 1.0]


def test_load_state_dict_into_a_device_model(cuda):
    src = _mlp()
    dst = dg.nn.Sequential(dg.nn.Linear(4, 8), dg.nn.LayerNorm(8), dg.nn.GELU(),
                           dg.nn.Dropout(0.0), dg.nn.Linear(8, 3)).to('cuda')
    dst.load_state_dict(src.state_dict())
    for p, q in zip(src.parameters(), dst.parameters()):
        assert on_device(q) and q.cpu().tolist() == p.tolist()


# -- autocast and GradScaler on the device -------------------------------------------------------

def test_autocast_cuda_computes_matmul_in_float16(cuda):
    a = dg.randn(4, 4, device='cuda')
    with dg.autocast('cuda'):
        out = a @ a
        assert out.dtype == dg.float16 and on_device(out)
        assert (a + a).dtype == dg.float32        # not on the lower-precision list
    assert (a @ a).dtype == dg.float32
    cpu = dg.randn(4, 4)
    with dg.autocast('cuda'):
        assert (cpu @ cpu).dtype == dg.float32    # a cuda region leaves CPU ops alone


def test_autocast_cuda_bfloat16_is_refused_with_a_warning(cuda):
    with pytest.warns(UserWarning, match='CUDA Autocast only supports'):
        region = dg.autocast('cuda', dtype=dg.bfloat16)
    assert not region._enabled


def test_grad_scaler_on_the_device(cuda):
    model = dg.nn.Linear(3, 1).to('cuda')
    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    scaler = dg.amp.GradScaler('cuda', init_scale=8.0)
    assert scaler.is_enabled()
    before = model.weight.detach().cpu().numpy().copy()
    x = dg.ones(2, 3, device='cuda')
    with dg.autocast('cuda'):
        loss = model(x).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    # the step used the unscaled gradient: d(sum)/dW = 2 per entry
    np.testing.assert_allclose(model.weight.detach().cpu().numpy(), before - 0.2,
                               rtol=1e-3, atol=1e-3)
    assert scaler.get_scale() == 8.0
    model.weight.grad = dg.full((1, 3), float('inf'), device='cuda')
    scaler.scale(dg.ones((), device='cuda'))
    scaler.step(opt)        # skipped: the gradient is not finite
    scaler.update()
    assert scaler.get_scale() == 4.0


# -- dynagrad.cuda's API over the backend -------------------------------------------------------

def test_queries(cuda):
    assert dg.cuda.is_available() and dg.cuda.device_count() == 1
    assert dg.cuda.is_initialized()
    assert dg.cuda.current_device() == 0
    assert dg.cuda.get_device_name() == 'Fake GPU (NumPy)'
    assert dg.cuda.get_device_name(0) == dg.cuda.get_device_name('cuda:0')
    assert dg.cuda.get_device_capability() == (9, 0)
    props = dg.cuda.get_device_properties(0)
    assert props.total_memory == 1 << 30 and props.name == 'Fake GPU (NumPy)'
    assert dg.cuda.mem_get_info() == (1 << 29, 1 << 30)
    assert dg.accelerator.is_available()
    assert dg.accelerator.current_accelerator() == dg.device('cuda')
    assert not dg.cuda.is_bf16_supported()


def test_set_device(cuda):
    dg.cuda.set_device(0)
    dg.cuda.set_device('cuda:0')
    dg.cuda.set_device(-1)      # a no-op, as in torch
    with pytest.raises(RuntimeError, match='one CUDA device'):
        dg.cuda.set_device(1)
    with pytest.raises(ValueError, match='Expected a cuda device'):
        dg.cuda.set_device('cpu')
    with dg.cuda.device(0):
        assert dg.cuda.current_device() == 0


def test_synchronize_streams_and_events(cuda):
    before = fake_cuda._FakeCudaModule.synchronized
    dg.cuda.synchronize()
    assert fake_cuda._FakeCudaModule.synchronized == before + 1
    start, end = dg.cuda.Event(enable_timing=True), dg.cuda.Event(enable_timing=True)
    stream = dg.cuda.Stream()
    with dg.cuda.stream(stream):
        assert dg.cuda.current_stream() == stream
        start.record()
        dg.ones(100, device='cuda').sum()
        end.record()
    assert dg.cuda.current_stream() == dg.cuda.default_stream()
    end.synchronize()
    assert start.query() and end.elapsed_time(end) == 0.0
    assert start.elapsed_time(end) >= 0.0
    with pytest.raises(RuntimeError, match='enable_timing=True'):
        dg.cuda.Event().elapsed_time(end)


def test_memory_counters_read_the_pool(cuda):
    pool = cuda.get_default_memory_pool()
    pool.used = 1000
    assert dg.cuda.memory_allocated() == 1000
    pool.used = 5000
    assert dg.cuda.max_memory_allocated() == 5000
    pool.used = 2000
    assert dg.cuda.memory_allocated() == 2000 and dg.cuda.max_memory_allocated() == 5000
    dg.cuda.reset_peak_memory_stats()
    assert dg.cuda.max_memory_allocated() == 2000
    assert dg.cuda.memory_reserved() == 2000
    dg.cuda.empty_cache()
    assert pool.freed_all == 1
    assert dg.cuda.memory_stats()['allocated_bytes.all.current'] == 2000


def test_seeding_the_device_generator(cuda):
    dg.cuda.manual_seed(3)
    a = dg.randn(5, device='cuda')
    cpu_before = dg.random.get_rng_state()
    dg.cuda.manual_seed(3)
    b = dg.randn(5, device='cuda')
    assert a.cpu().tolist() == b.cpu().tolist()
    assert dg.random.get_rng_state().tolist() == cpu_before.tolist()   # CPU's untouched
    dg.manual_seed(11)                  # seeds every device, as torch.manual_seed
    c = dg.rand(4, device='cuda')
    dg.cuda.manual_seed_all(11)
    assert dg.rand(4, device='cuda').cpu().tolist() == c.cpu().tolist()
    assert dg.cuda.initial_seed() == 11
    state = dg.cuda.get_rng_state()
    d = dg.randn(3, device='cuda')
    dg.cuda.set_rng_state(state)
    assert dg.randn(3, device='cuda').cpu().tolist() == d.cpu().tolist()


def test_dropout_draws_its_mask_on_the_device(cuda):
    x = dg.ones(1000, device='cuda', requires_grad=True)
    y = dg.nn.functional.dropout(x, 0.5)
    assert on_device(y)
    kept = (y.detach().cpu().numpy() != 0).mean()
    assert 0.4 < kept < 0.6
    y.sum().backward()
    assert on_device(x.grad)


# -- without CuPy or a GPU: today's behaviour ------------------------------------------------

def test_load_without_cupy_leaves_cuda_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, 'cupy', None)      # import cupy raises ImportError
    assert _backend.load() is None


class _NoGpuCupy:
    class cuda:
        class runtime:
            @staticmethod
            def getDeviceCount():
                raise RuntimeError('cudaErrorNoDevice: no CUDA-capable device is detected')


class _ZeroGpuCupy:
    class cuda:
        class runtime:
            @staticmethod
            def getDeviceCount():
                return 0


@pytest.mark.parametrize('cupy', [_NoGpuCupy, _ZeroGpuCupy])
def test_cupy_without_a_gpu_registers_nothing(cupy):
    assert _backend.cuda_backend(cupy) is None


def test_unregistered_cuda_answers_as_cpu_only_torch():
    assert _device.backend_for_or_none('cuda') is None
    assert not dg.cuda.is_available() and dg.cuda.device_count() == 0
    assert dg.cuda.memory_allocated() == 0 and dg.cuda.max_memory_allocated() == 0
    dg.cuda.manual_seed(1)              # accepted, nothing to seed
    dg.cuda.empty_cache()
    for run in (lambda: dg.ones(1, device='cuda'), lambda: dg.ones(1).cuda(),
                dg.cuda.synchronize, dg.cuda.current_device, dg.cuda.get_device_name,
                lambda: dg.cuda.Event(enable_timing=True), dg.cuda.Stream):
        with pytest.raises(AssertionError, match='not compiled with CUDA enabled'):
            run()
    with pytest.warns(UserWarning, match='CUDA is not available'):
        dg.autocast('cuda')


@pytest.mark.parametrize('build', [
    lambda: dg.nn.Linear(3, 2, device='cuda'), lambda: dg.nn.Conv2d(1, 2, 3, device='cuda'),
    lambda: dg.nn.LayerNorm(4, device='cuda'), lambda: dg.nn.BatchNorm1d(4, device='cuda'),
    lambda: dg.nn.Embedding(5, 2, device='cuda'), lambda: dg.nn.LSTM(3, 4, device='cuda'),
    lambda: dg.nn.MultiheadAttention(4, 2, device='cuda'),
    lambda: dg.nn.TransformerEncoderLayer(4, 2, 8, device='cuda')])
def test_layers_built_with_device_cuda_live_there(cuda, build):
    m = build()
    tensors = list(m.parameters()) + list(m.buffers())
    assert tensors and all(on_device(t) for t in tensors)


def test_a_layer_built_on_the_device_starts_as_on_the_cpu(cuda):
    dg.manual_seed(5)
    on_cpu = dg.nn.Linear(3, 2)
    dg.manual_seed(5)
    on_gpu = dg.nn.Linear(3, 2, device='cuda')
    assert on_gpu.weight.cpu().tolist() == on_cpu.weight.tolist()
    x = dg.randn(4, 3)
    np.testing.assert_allclose(on_gpu(x.cuda()).detach().cpu().numpy(),
                               on_cpu(x).detach().numpy(), rtol=1e-6)


# -- the GPU benchmark suite's harness ---------------------------------------------------------

def test_gpu_benchmarks_run_on_the_stand_in(cuda):
    from benchmarks import cuda as gpu_benchmarks
    table = gpu_benchmarks.run(smoke=True)
    rows = [line.split('|')[1:4] for line in table.splitlines() if line.startswith('| ')][1:]
    assert [(w.strip(), m.strip()) for w, m, _ in rows] == [
        ('per_op', 'fwd+bwd'), ('mlp', 'train step'), ('cnn', 'train step'),
        ('gpt', 'train step'), ('gpt', 'eval pass')]
    assert 'GPU: Fake GPU (NumPy)' in table


def test_gpu_benchmarks_refuse_without_cuda(capsys):
    from benchmarks import run
    assert run.main(['--device', 'cuda', '--smoke']) == 2
    assert 'sees no CUDA device' in capsys.readouterr().err


def test_checkpoint_replays_device_dropout_with_its_generator(cuda):
    from dynagrad.utils.checkpoint import checkpoint
    x = dg.randn(64, 8, device='cuda', requires_grad=True)
    layer = dg.nn.Sequential(dg.nn.Linear(8, 8), dg.nn.Dropout(0.5)).cuda()
    dg.cuda.manual_seed(1)
    plain = layer(x)
    plain.sum().backward()
    expected = x.grad.cpu().numpy().copy()
    x.grad = None
    dg.cuda.manual_seed(1)
    out = checkpoint(layer, x, use_reentrant=True)
    np.testing.assert_array_equal(out.detach().cpu().numpy(), plain.detach().cpu().numpy())
    out.sum().backward()            # the recomputation draws the same mask
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=1e-6)


def test_a_broken_cupy_leaves_cuda_unavailable_with_a_warning(monkeypatch):
    class Broken:
        def find_spec(self, name, path=None, target=None):
            if name == 'cupy':
                raise RuntimeError('libcudart.so.12: cannot open shared object file')
    monkeypatch.delitem(sys.modules, 'cupy', raising=False)
    monkeypatch.setattr(sys, 'meta_path', [Broken()] + sys.meta_path)
    with pytest.warns(RuntimeWarning, match='CuPy failed to import'):
        assert _backend.load() is None


def test_compiled_calls_on_the_device_run_eagerly_with_the_reason(cuda):
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Linear(4, 8), dg.nn.Tanh(), dg.nn.Linear(8, 2)).to('cuda')
    run = dg.compile(model)
    x = dg.randn(3, 4, device='cuda')
    for _ in range(4):
        out = run(x)
        assert on_device(out)
        np.testing.assert_array_equal(out.detach().cpu().numpy(),
                                      model(x).detach().cpu().numpy())
    events = [what for _, what in run.__dict__['_compiled'].events]
    assert events == ['graph break: tensors on a non-CPU device (a program replays its ops on '
                      'the CPU only, not yet on a device)']
