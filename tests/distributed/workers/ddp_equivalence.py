"""Run on 2 ranks: DDP on halves of a global batch ends with the same parameters as one
process on the whole batch (float64, 1e-6), for SGD with momentum and Adam over 10 steps,
no_sync accumulation, several buckets, and unused parameters."""
import numpy as np

import dynagrad as dg
import dynagrad.distributed as dist
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.nn.parallel import DistributedDataParallel as DDP

dg.set_default_dtype(dg.float64)
dist.init_process_group('mpi')
rank, n = dist.get_rank(), dist.get_world_size()
STEPS, BATCH = 10, 16 * n
TOL = 1e-6


class Net(nn.Module):
    def __init__(self, unused_branch=False):
        super().__init__()
        self.fc1 = nn.Linear(5, 32)
        self.fc2 = nn.Linear(32, 16)
        self.head = nn.Linear(16, 3)
        self.extra = nn.Linear(16, 3) if unused_branch else None
        self.register_buffer('running', dg.zeros(3))

    def forward(self, x, use_extra=False):
        h = F.tanh(self.fc2(F.tanh(self.fc1(x))))
        out = self.head(h)
        if use_extra:
            out = out + self.extra(h)
        return out


def batch(step):
    rng = np.random.default_rng(1000 + step)
    return dg.tensor(rng.normal(size=(BATCH, 5))), dg.tensor(rng.normal(size=(BATCH, 3)))


def shard(t):
    per = t.shape[0] // n
    return t[rank * per:(rank + 1) * per]


def make(opt_name, params):
    if opt_name == 'sgd':
        return dg.optim.SGD(params, lr=0.05, momentum=0.9)
    return dg.optim.Adam(params, lr=1e-2)


def max_diff(a, b):
    return max(float((p - q).abs().max()) for p, q in zip(a.parameters(), b.parameters()))


def passed(name, diff):
    dist.barrier()
    if rank == 0:
        print(f'PASS {name} max|diff|={diff:.3g}', flush=True)


def reference_and_replica(unused_branch=False):
    dg.manual_seed(123)
    reference = Net(unused_branch)          # what rank 0 builds: the one-process model
    dg.manual_seed(123 + rank)              # every rank starts elsewhere: DDP must broadcast
    replica = Net(unused_branch)
    replica.running.fill_(float(rank))
    return reference, replica


def check_equivalence(opt_name, bucket_cap_mb):
    reference, replica = reference_and_replica()
    ddp = DDP(replica, bucket_cap_mb=bucket_cap_mb)
    assert max_diff(reference, replica) == 0, 'parameters not broadcast from rank 0'
    assert float(replica.running.abs().max()) == 0, 'buffers not broadcast from rank 0'
    opt_ref, opt = make(opt_name, reference.parameters()), make(opt_name, ddp.parameters())
    for step in range(STEPS):
        x, y = batch(step)
        opt_ref.zero_grad()
        F.mse_loss(reference(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        F.mse_loss(ddp(shard(x)), shard(y)).backward()
        opt.step()
    diff = max_diff(reference, replica)
    assert diff < TOL, (opt_name, diff)
    return ddp, diff


for opt_name in ('sgd', 'adam'):
    ddp, diff = check_equivalence(opt_name, bucket_cap_mb=25)
    assert len(ddp._buckets) == 1
    passed(f'{opt_name}, one bucket', diff)
    ddp, diff = check_equivalence(opt_name, bucket_cap_mb=2e-3)  # ~2 kB: several buckets
    assert len(ddp._buckets) >= 3, len(ddp._buckets)
    passed(f'{opt_name}, {len(ddp._buckets)} buckets', diff)

# Buckets hold the parameters in reverse registration order.
order = [p for b in ddp._buckets for p in b.params]
assert [id(p) for p in order] == [id(p) for p in reversed(list(ddp.module.parameters()))]

# no_sync: two micro-batches per rank, the first accumulated locally.
reference, replica = reference_and_replica()
ddp = DDP(replica, bucket_cap_mb=2e-3)
opt_ref = make('sgd', reference.parameters())
opt = make('sgd', ddp.parameters())
for step in range(STEPS):
    x, y = batch(step)
    opt_ref.zero_grad()
    F.mse_loss(reference(x), y).backward()
    opt_ref.step()
    opt.zero_grad()
    xs, ys = shard(x), shard(y)
    half = xs.shape[0] // 2
    with ddp.no_sync():
        (F.mse_loss(ddp(xs[:half]), ys[:half]) / 2).backward()
    grads_local = [p.grad.clone() for p in ddp.parameters()]
    (F.mse_loss(ddp(xs[half:]), ys[half:]) / 2).backward()
    opt.step()
# The no_sync backward left local (unaveraged) gradients: the ranks' differ.
mine = np.concatenate([g.numpy().ravel() for g in grads_local])
theirs = [None] * n
dist.all_gather_object(theirs, mine)
assert not np.allclose(theirs[0], theirs[1]), 'no_sync communicated'
diff = max_diff(reference, replica)
assert diff < TOL, diff
passed('no_sync accumulation', diff)

# find_unused_parameters: the extra head is used on rank 0 only at even steps.
reference, replica = reference_and_replica(unused_branch=True)
ddp = DDP(replica, find_unused_parameters=True, bucket_cap_mb=2e-3)
opt_ref = dg.optim.SGD(reference.parameters(), lr=0.05)
opt = dg.optim.SGD(ddp.parameters(), lr=0.05)
for step in range(STEPS):
    x, y = batch(step)
    use = step % 2 == 0
    opt_ref.zero_grad()
    # One process: the extra head sees rank 0's half only.
    per = BATCH // n
    out = reference(x)
    extra = reference.extra(F.tanh(reference.fc2(F.tanh(reference.fc1(x[:per])))))
    if use:
        out = dg.cat([out[:per] + extra, out[per:]])
    F.mse_loss(out, y).backward()
    opt_ref.step()
    opt.zero_grad()
    F.mse_loss(ddp(shard(x), use_extra=use and rank == 0), shard(y)).backward()
    opt.step()
    if not use:
        assert replica.extra.weight.grad is None, 'a parameter unused everywhere got a grad'
diff = max_diff(reference, replica)
assert diff < TOL, diff
passed('find_unused_parameters', diff)

# Without find_unused_parameters, a parameter left without gradient is an error next step.
_, replica = reference_and_replica(unused_branch=True)
ddp = DDP(replica)
x, y = batch(0)
F.mse_loss(ddp(shard(x)), shard(y)).backward()
try:
    ddp(shard(x))
except RuntimeError as e:
    assert 'Expected to have finished reduction' in str(e) and 'extra.weight' in str(e), e
else:
    raise AssertionError('unused parameters went unnoticed')
passed('unfinished reduction error', 0.0)

# state_dict: the wrapped module's keys; PyTorch-style 'module.' keys load too.
sd = ddp.state_dict()
assert list(sd) == list(replica.state_dict()), list(sd)
assert all(not k.startswith('module.') for k in sd)
prefixed = {'module.' + k: v * 0 for k, v in sd.items()}
ddp.load_state_dict(prefixed)
assert float(replica.fc1.weight.abs().max()) == 0
assert [k for k, _ in ddp.named_parameters()][0] == 'module.fc1.weight'
passed('state_dict', 0.0)

dist.destroy_process_group()
if rank == 0:
    print('ALL DONE', flush=True)
