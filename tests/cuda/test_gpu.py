"""The 'cuda' device on a real GPU, through CuPy. Skipped (with the reason) where CuPy or a
GPU is missing, which is every machine the suite usually runs on: this file has not yet
run on a GPU (see README, "Not yet").

- the conformance table with dynagrad's tensors on 'cuda', against torch on CUDA when this
  torch has it, else against torch on the CPU (values and gradients);
- a small training loop on the device, against the same loop on the CPU;
- autocast('cuda', float16) and GradScaler on the device;
- dynagrad.cuda's API over CuPy (names, memory counters, events).
"""
import numpy as np
import pytest
import torch

import dynagrad as dg

cupy = pytest.importorskip('cupy', reason='CuPy is not installed: no CUDA device to test')
try:
    _GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception as e:     # noqa: BLE001 (CUDARuntimeError: no driver or no device)
    pytest.skip(f'CuPy sees no GPU ({e})', allow_module_level=True)
if _GPUS < 1 or not dg.cuda.is_available():
    pytest.skip('CuPy sees no GPU', allow_module_level=True)

from device_training import train                  # noqa: E402
from ops import test_conformance as conformance   # noqa: E402

TORCH_DEVICE = 'cuda' if torch.cuda.is_available() else None


@pytest.fixture(scope='module')
def on_gpu():
    # torch's cuDNN convolutions default to TF32 (10-bit mantissas): the table's float32
    # tolerance needs full float32, as CuPy's cuBLAS computes it by default
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        with conformance.on_device('cuda', TORCH_DEVICE):
            yield
    finally:
        torch.backends.cudnn.allow_tf32 = tf32


@pytest.mark.filterwarnings('ignore::UserWarning')
@pytest.mark.filterwarnings('ignore::FutureWarning')
@pytest.mark.parametrize('op,sample,i', conformance.device_rows())
def test_conformance_row_on_the_gpu(on_gpu, op, sample, i):
    conformance.check_row(op, sample, i)


def test_tensors_live_on_the_gpu():
    t = dg.arange(6.0, device='cuda').reshape(2, 3)
    assert isinstance(t._data, cupy.ndarray) and t.device == dg.device('cuda', 0)
    assert repr(t) == ("tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        t.numpy()
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        t + dg.ones(2, 3)
    assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def _loop(device):
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Conv2d(1, 4, 3, padding=1), dg.nn.BatchNorm2d(4),
                             dg.nn.ReLU(), dg.nn.Flatten(), dg.nn.Linear(4 * 8 * 8, 10))
    return train(model.to(device), device, dg.optim.AdamW, (16, 1, 8, 8), 10, steps=5,
                 lr=1e-3)[0]


def test_a_training_loop_matches_the_cpu():
    np.testing.assert_allclose(_loop('cuda'), _loop('cpu'), rtol=1e-4)


def test_autocast_and_grad_scaler():
    model = dg.nn.Linear(16, 4).cuda()
    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    scaler = dg.amp.GradScaler('cuda')
    x = dg.randn(8, 16, device='cuda')
    with dg.autocast('cuda', dtype=dg.float16):
        out = model(x)
        assert out.dtype == dg.float16
        loss = out.float().pow(2).mean()
    scaler.scale(loss).backward()
    assert model.weight.grad.dtype == dg.float32
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 65536.0


def test_cuda_api_over_cupy():
    assert dg.cuda.device_count() == _GPUS
    name = cupy.cuda.runtime.getDeviceProperties(0)['name']
    assert dg.cuda.get_device_name(0) == (name.decode() if isinstance(name, bytes) else name)
    dg.cuda.empty_cache()
    base = dg.cuda.memory_allocated()
    t = dg.empty(1 << 20, device='cuda')           # 4 MiB
    assert dg.cuda.memory_allocated() >= base + 4 * (1 << 20)
    assert dg.cuda.max_memory_allocated() >= dg.cuda.memory_allocated()
    del t
    start, end = dg.cuda.Event(enable_timing=True), dg.cuda.Event(enable_timing=True)
    start.record()
    a = dg.randn(1024, 1024, device='cuda')
    (a @ a).sum().item()
    end.record()
    dg.cuda.synchronize()
    assert start.elapsed_time(end) > 0.0
