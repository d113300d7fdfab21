"""Run on 2 ranks, with the NumPy stand-in for CuPy registered as 'cuda' on each: the
collectives and DistributedDataParallel on 'cuda' tensors go through host buffers, give the
CPU's results, and leave every tensor's data a device array (the same array object)."""
import os
import sys

import numpy as np

# tests/fake_cuda.py sits two directories up; the worker runs as a plain script
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import fake_cuda  # noqa: E402

import dynagrad as dg  # noqa: E402
import dynagrad.distributed as dist  # noqa: E402
import dynagrad.nn as nn  # noqa: E402
import dynagrad.nn.functional as F  # noqa: E402
from dynagrad.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

dg.set_default_dtype(dg.float64)
dist.init_process_group('mpi')
rank, n = dist.get_rank(), dist.get_world_size()
TOL = 1e-6


def on_device(t):
    return type(t._data) is fake_cuda.DeviceArray


def passed(name, diff=0.0):
    dist.barrier()
    if rank == 0:
        print(f'PASS {name} max|diff|={diff:.3g}', flush=True)


def same(device_t, cpu_t, what):
    assert on_device(device_t), (what, type(device_t._data))
    got = device_t.cpu().numpy()
    want = cpu_t.numpy()
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert np.array_equal(got, want), (what, got, want)


def pair(values, dtype=dg.float64):
    """The same values as a CPU tensor and a 'cuda' tensor."""
    cpu = dg.tensor(values, dtype=dtype)
    return cpu, cpu.to('cuda')


with fake_cuda.registered():
    # -- collectives ---------------------------------------------------------------------
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
        for dtype in (dg.float64, dg.float32, dg.float16):
            cpu, dev = pair(np.arange(6.).reshape(2, 3) * (rank + 1) - rank, dtype)
            array = dev._data
            version = dev._version
            dist.all_reduce(cpu, op=op)
            dist.all_reduce(dev, op=op)
            assert dev._data is array, 'all_reduce replaced the device array'
            assert dev._version == version + 1
            same(dev, cpu, f'all_reduce {op} {dtype}')
    cpu, dev = pair([1, 2, 3 + rank], dg.int64)
    dist.all_reduce(cpu)
    dist.all_reduce(dev)
    same(dev, cpu, 'all_reduce int64')
    # async: the write back happens in wait()
    cpu, dev = pair([1.5, -2.0 * rank])
    dist.all_reduce(cpu)
    work = dist.all_reduce(dev, async_op=True)
    work.wait()
    same(dev, cpu, 'all_reduce async')
    # a non-contiguous device tensor: a view's base is written through
    base = dg.tensor(np.arange(12.).reshape(3, 4) + rank).to('cuda')
    view = base.t()
    cpu_view = base.cpu().t().contiguous()
    dist.all_reduce(cpu_view)
    dist.all_reduce(view)
    same(view.contiguous(), cpu_view, 'all_reduce of a transposed view')
    passed('all_reduce')

    for src in range(n):
        cpu, dev = pair(np.full((2, 2), 10.0 * rank + 1))
        array = dev._data
        dist.broadcast(cpu, src=src)
        dist.broadcast(dev, src=src)
        assert dev._data is array
        same(dev, cpu, f'broadcast src={src}')
    work = dist.broadcast(pair([float(rank)] * 3)[1], src=1, async_op=True)
    work.wait()
    passed('broadcast')

    cpu, dev = pair(np.arange(4.) + 100 * rank)
    cpu_list = [dg.zeros(4) for _ in range(n)]
    dev_list = [dg.zeros(4, device='cuda') for _ in range(n)]
    arrays = [t._data for t in dev_list]
    dist.all_gather(cpu_list, cpu)
    dist.all_gather(dev_list, dev)
    for i in range(n):
        assert dev_list[i]._data is arrays[i]
        same(dev_list[i], cpu_list[i], f'all_gather slot {i}')
    # float16 travels as float32 on the wire and comes back as float16 on the device
    cpu, dev = pair([0.5 + rank, 2.0], dg.float16)
    cpu_list = [dg.zeros(2, dtype=dg.float16) for _ in range(n)]
    dev_list = [dg.zeros(2, dtype=dg.float16, device='cuda') for _ in range(n)]
    dist.all_gather(cpu_list, cpu)
    dist.all_gather(dev_list, dev)
    for i in range(n):
        same(dev_list[i], cpu_list[i], f'all_gather float16 slot {i}')
    # all_gather_into_tensor
    cpu_out, dev_out = dg.zeros(n, 3), dg.zeros(n, 3, device='cuda')
    cpu, dev = pair([rank, rank + 0.5, -1.0])
    dist.all_gather_into_tensor(cpu_out, cpu)
    dist.all_gather_into_tensor(dev_out, dev)
    same(dev_out, cpu_out, 'all_gather_into_tensor')
    passed('all_gather')

    # the rest: reduce, reduce_scatter, scatter, gather, send/recv
    cpu, dev = pair([1.0 + rank, 2.0])
    dist.reduce(cpu, dst=1)
    dist.reduce(dev, dst=1)
    same(dev, cpu, 'reduce')
    cpu_out, dev_out = dg.zeros(2), dg.zeros(2, device='cuda')
    ins = [np.array([1.0, 2.0]) * (rank + 1) + i for i in range(n)]
    dist.reduce_scatter(cpu_out, [dg.tensor(a) for a in ins])
    dist.reduce_scatter(dev_out, [dg.tensor(a).to('cuda') for a in ins])
    same(dev_out, cpu_out, 'reduce_scatter')
    cpu_out, dev_out = dg.zeros(3), dg.zeros(3, device='cuda')
    parts = [np.full(3, 7.0 * i) for i in range(n)] if rank == 0 else None
    dist.scatter(cpu_out, [dg.tensor(a) for a in parts] if parts else None, src=0)
    dist.scatter(dev_out, [dg.tensor(a).to('cuda') for a in parts] if parts else None, src=0)
    same(dev_out, cpu_out, 'scatter')
    cpu, dev = pair([rank * 3.0, 1.0])
    cpu_list = [dg.zeros(2) for _ in range(n)] if rank == 0 else None
    dev_list = [dg.zeros(2, device='cuda') for _ in range(n)] if rank == 0 else None
    dist.gather(cpu, cpu_list, dst=0)
    dist.gather(dev, dev_list, dst=0)
    if rank == 0:
        for i in range(n):
            same(dev_list[i], cpu_list[i], f'gather slot {i}')
    if rank == 0:
        dist.send(dg.tensor([4.0, 5.0]).to('cuda'), dst=1)
    elif rank == 1:
        got = dg.zeros(2, device='cuda')
        array = got._data
        assert dist.recv(got, src=0) == 0
        assert got._data is array
        same(got, dg.tensor([4.0, 5.0]), 'recv')
    passed('reduce, reduce_scatter, scatter, gather, send/recv')

    # -- DDP: the same training on 'cuda' and on the CPU ----------------------------------
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(5, 16)
            self.fc2 = nn.Linear(16, 3)
            self.register_buffer('running', dg.zeros(3))

        def forward(self, x):
            return self.fc2(F.tanh(self.fc1(x)))

    def batch(step):
        rng = np.random.default_rng(500 + step)
        x, y = rng.normal(size=(8 * n, 5)), rng.normal(size=(8 * n, 3))
        per = 8
        return dg.tensor(x[rank * per:(rank + 1) * per]), dg.tensor(y[rank * per:(rank + 1) * per])

    def train(device, opt_name, bucket_cap_mb, steps=5):
        dg.manual_seed(7 + rank)        # replicas start apart: DDP's broadcast must align them
        model = Net()
        model.running.fill_(float(rank))
        model = model.to(device)
        ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
        for t in list(model.parameters()) + list(model.buffers()):
            assert t.device.type == device, (t.device, device)
        assert float(model.running.abs().max()) == 0, 'buffers not broadcast from rank 0'
        opt = (dg.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9) if opt_name == 'sgd'
               else dg.optim.Adam(ddp.parameters(), lr=1e-2))
        losses, grads = [], []
        for step in range(steps):
            x, y = batch(step)
            opt.zero_grad()
            loss = F.mse_loss(ddp(x.to(device)), y.to(device))
            loss.backward()
            for p in model.parameters():
                assert p.grad.device.type == device, (p.grad.device, device)
            grads.append([p.grad.cpu().numpy().copy() for p in model.parameters()])
            opt.step()
            losses.append(float(loss))
        params = [p.detach().cpu().numpy() for p in model.parameters()]
        return model, losses, grads, params

    for opt_name in ('sgd', 'adam'):
        for cap in (25, 1e-3):         # one bucket, then one per parameter or so
            model, dev_losses, dev_grads, dev_params = train('cuda', opt_name, cap)
            for t in list(model.parameters()) + list(model.buffers()):
                assert on_device(t), type(t._data)
            for p in model.parameters():
                assert on_device(p.grad)
            _, cpu_losses, cpu_grads, cpu_params = train('cpu', opt_name, cap)
            diff = max(float(np.abs(a - b).max()) for a, b in zip(dev_params, cpu_params))
            diff = max(diff, max(abs(a - b) for a, b in zip(dev_losses, cpu_losses)))
            assert diff < TOL, (opt_name, cap, diff)
            # averaged: every rank holds the same gradients (their losses differ)
            every = [None] * n
            dist.all_gather_object(every, [g for step in dev_grads for g in step])
            for r in range(1, n):
                for a, b in zip(every[0], every[r]):
                    assert np.array_equal(a, b), 'gradients differ across ranks'
            passed(f'ddp {opt_name} bucket_cap_mb={cap} cuda == cpu', diff)

    # A gradient DDP has to create: the extra branch is used on rank 0 only, so on the
    # other ranks the parameters have no .grad until the averaged one is written.
    class Branchy(Net):
        def __init__(self):
            super().__init__()
            self.extra = nn.Linear(16, 3)

        def forward(self, x, use_extra):
            h = F.tanh(self.fc1(x))
            return self.fc2(h) + self.extra(h) if use_extra else self.fc2(h)

    def unused_branch(device):
        dg.manual_seed(11)
        model = Branchy().to(device)
        ddp = DDP(model, find_unused_parameters=True)
        x, y = batch(0)
        F.mse_loss(ddp(x.to(device), rank == 0), y.to(device)).backward()
        return model

    dev_model, cpu_model = unused_branch('cuda'), unused_branch('cpu')
    for (name, p), q in zip(dev_model.named_parameters(), cpu_model.parameters()):
        assert p.grad is not None, name
        assert on_device(p.grad), (name, type(p.grad._data))
        diff = float(np.abs(p.grad.cpu().numpy() - q.grad.numpy()).max())
        assert diff < TOL, (name, diff)
    passed('ddp find_unused_parameters on cuda: created gradients on the device')

dist.barrier()
if rank == 0:
    print('ALL DONE', flush=True)
