"""Run on 2+ ranks: every collective against its definition. Prints 'PASS <name>' per check;
any failure raises, and the excepthook aborts the job with a non-zero status."""
import numpy as np

import dynagrad as dg
import dynagrad.distributed as dist
from dynagrad.distributed import ReduceOp

dist.init_process_group('mpi')
rank, n = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == 'mpi'


def value(r, shape=(2, 3), dtype=np.float64):
    """Rank r's contribution: distinct per rank, known to every rank."""
    return (np.arange(np.prod(shape)).reshape(shape) + 10 * r + 1).astype(dtype)


def passed(name):
    dist.barrier()
    if rank == 0:
        print('PASS', name, flush=True)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=0)


everyone = [value(r) for r in range(n)]

# all_reduce: each op, in place, blocking and async.
expected = {ReduceOp.SUM: sum(everyone), ReduceOp.AVG: sum(everyone) / n,
            ReduceOp.MAX: np.max(everyone, axis=0), ReduceOp.MIN: np.min(everyone, axis=0),
            ReduceOp.PRODUCT: np.prod(everyone, axis=0)}
for op, want in expected.items():
    t = dg.tensor(value(rank))
    version = t._version
    assert dist.all_reduce(t, op=op) is None
    close(t.numpy(), want)
    assert t._version > version
    t = dg.tensor(value(rank))
    work = dist.all_reduce(t, op=op, async_op=True)
    work.wait()
    assert work.is_completed()
    close(t.numpy(), want)
passed('all_reduce')

# Integer and float32 tensors, and a non-contiguous view written through.
t = dg.tensor(value(rank, dtype=np.int64))
dist.all_reduce(t)
assert t.dtype == dg.int64 and (t.numpy() == sum(value(r, dtype=np.int64) for r in range(n))).all()
t = dg.tensor(value(rank, dtype=np.float32))
dist.all_reduce(t, op=ReduceOp.MAX)
assert t.dtype == dg.float32
base = dg.tensor(value(rank, (4, 6)))
view = base[:, ::2]
dist.all_reduce(view)
close(base.numpy()[:, ::2], sum(value(r, (4, 6)) for r in range(n))[:, ::2])
close(base.numpy()[:, 1::2], value(rank, (4, 6))[:, 1::2])
passed('all_reduce dtypes and views')

# broadcast from each source.
for src in range(n):
    t = dg.tensor(value(rank))
    dist.broadcast(t, src=src)
    close(t.numpy(), value(src))
    t = dg.tensor(value(rank))
    w = dist.broadcast(t, src=src, async_op=True)
    w.wait()
    close(t.numpy(), value(src))
passed('broadcast')

# all_gather with even, then uneven sizes (rank r contributes r + 1 rows).
out = [dg.zeros(2, 3, dtype=dg.float64) for _ in range(n)]
dist.all_gather(out, dg.tensor(value(rank)))
for r in range(n):
    close(out[r].numpy(), value(r))
out = [dg.zeros(r + 1, 3, dtype=dg.float64) for r in range(n)]
w = dist.all_gather(out, dg.tensor(value(rank, (rank + 1, 3))), async_op=True)
w.wait()
for r in range(n):
    close(out[r].numpy(), value(r, (r + 1, 3)))
big = dg.zeros(n * 2, 3, dtype=dg.float64)
dist.all_gather_into_tensor(big, dg.tensor(value(rank)))
close(big.numpy(), np.concatenate(everyone))
passed('all_gather (even, uneven, async, into_tensor)')

objects = [None] * n
dist.all_gather_object(objects, {'rank': rank, 'name': f'r{rank}'})
assert objects == [{'rank': r, 'name': f'r{r}'} for r in range(n)]
lst = [rank, 'x'] if rank == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, 'x']
passed('all_gather_object, broadcast_object_list')

# reduce: only dst changes.
for dst in range(n):
    t = dg.tensor(value(rank))
    w = dist.reduce(t, dst=dst, op=ReduceOp.SUM, async_op=(dst % 2 == 1))
    if w is not None:
        w.wait()
    close(t.numpy(), sum(everyone) if rank == dst else value(rank))
passed('reduce')

# reduce_scatter: rank i gets sum over ranks r of input_list[i] on r.
def piece(r, i):
    return value(r, (i + 1, 2)) * (i + 1)


for async_op in (False, True):
    out = dg.zeros(rank + 1, 2, dtype=dg.float64)
    w = dist.reduce_scatter(out, [dg.tensor(piece(rank, i)) for i in range(n)],
                            op=ReduceOp.SUM, async_op=async_op)
    if w is not None:
        w.wait()
    close(out.numpy(), sum(piece(r, rank) for r in range(n)))
out = dg.zeros(2, dtype=dg.float64)
dist.reduce_scatter_tensor(out, dg.tensor(np.arange(2 * n, dtype=np.float64) + rank),
                           op=ReduceOp.AVG)
close(out.numpy(), (np.arange(2 * n, dtype=np.float64) + (n - 1) / 2)[2 * rank:2 * rank + 2])
passed('reduce_scatter')

# scatter / gather from/to each root.
for root in range(n):
    t = dg.zeros(2, 3, dtype=dg.float64)
    lst = [dg.tensor(value(100 + i)) for i in range(n)] if rank == root else None
    w = dist.scatter(t, lst, src=root, async_op=True)
    w.wait()
    close(t.numpy(), value(100 + rank))
    lst = [dg.zeros(r + 1, 3, dtype=dg.float64) for r in range(n)] if rank == root else None
    dist.gather(dg.tensor(value(rank, (rank + 1, 3))), lst, dst=root)
    if rank == root:
        for r in range(n):
            close(lst[r].numpy(), value(r, (r + 1, 3)))
passed('scatter, gather')

# send / recv in a ring, blocking and non-blocking, with a named and an any source.
right, left = (rank + 1) % n, (rank - 1) % n
t = dg.zeros(2, 3, dtype=dg.float64)
if rank % 2 == 0:
    dist.send(dg.tensor(value(rank)), dst=right)
    src = dist.recv(t, src=left)
else:
    src = dist.recv(t)
    dist.send(dg.tensor(value(rank)), dst=right)
assert src == left
close(t.numpy(), value(left))
t = dg.zeros(2, 3, dtype=dg.float64)
rw = dist.irecv(t, src=left, tag=7)
sw = dist.isend(dg.tensor(value(rank)), dst=right, tag=7)
sw.wait()
rw.wait()
close(t.numpy(), value(left))
t = dg.zeros(2, 3, dtype=dg.float64)
rw = dist.irecv(t, tag=8)
sw = dist.isend(dg.tensor(value(rank)), dst=right, tag=8)
assert rw.result() == left
sw.wait()
close(t.numpy(), value(left))
passed('send/recv, isend/irecv')

# async handles: launched, then polled until complete; barrier async.
t = dg.tensor(value(rank, (1000,)))
w = dist.all_reduce(t, async_op=True)
while not w.is_completed():
    pass
close(t.numpy(), sum(value(r, (1000,)) for r in range(n)))
dist.barrier(async_op=True).wait()
passed('async polling')

# Mismatches raise a clear error on every rank (and the job goes on).
try:
    dist.all_reduce(dg.zeros(3 + rank, dtype=dg.float64))
except dist.DistributedError as e:
    msg = str(e)
    assert 'rank 0 has [3] (float64)' in msg and 'rank 1 has [4] (float64)' in msg, msg
else:
    raise AssertionError('a shape mismatch went through')
try:
    dist.broadcast(dg.zeros(3, dtype=dg.float64 if rank == 0 else dg.float32), src=0)
except dist.DistributedError as e:
    assert 'float32' in str(e) and 'float64' in str(e), str(e)
else:
    raise AssertionError('a dtype mismatch went through')
try:
    out = [dg.zeros(2, 3, dtype=dg.float64) for _ in range(n)]
    dist.all_gather(out, dg.tensor(value(rank, (rank + 1, 3))))
except dist.DistributedError as e:
    assert 'rank 0 contributes [1, 3] (float64) but tensor_list[0] on rank' in str(e), str(e)
else:
    raise AssertionError('a wrong all_gather slot went through')
try:  # only rank 1 passes a wrong slot: every rank must raise, none may hang
    out = [dg.zeros(r + 1, 3, dtype=dg.float64) for r in range(n)]
    if rank == 1:
        out[0] = dg.zeros(7, dtype=dg.float64)
    dist.all_gather(out, dg.tensor(value(rank, (rank + 1, 3))))
except dist.DistributedError as e:
    assert 'tensor_list[0] on rank 1 is [7] (float64)' in str(e), str(e)
else:
    raise AssertionError('a wrong all_gather slot went through')
if n >= 2 and rank < 2:
    t = dg.zeros(5, dtype=dg.float64)
    if rank == 0:
        dist.send(dg.zeros(4, dtype=dg.float64), dst=1)
    else:
        try:
            dist.recv(t, src=0)
        except dist.DistributedError as e:
            assert 'rank 0 sent [4] (float64)' in str(e) and '[5] (float64)' in str(e), str(e)
        else:
            raise AssertionError('a recv mismatch went through')
passed('mismatch errors')

dist.destroy_process_group()
assert not dist.is_initialized()
if rank == 0:
    print('ALL DONE', flush=True)
