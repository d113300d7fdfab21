"""One rank of a job whose ranks meet through a store (gloo on torch): run by
tests/distributed/test_store_backend.py as `python store_collectives.py <torch|dynagrad>
<init>` with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set. Prints the results as JSON, so
that the same job on torch's gloo and on dynagrad can be compared."""
import datetime
import importlib
import json
import os
import sys

torch = importlib.import_module(sys.argv[1])
dist = importlib.import_module(sys.argv[1] + '.distributed')
init = sys.argv[2]
rank, n = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])
timeout = datetime.timedelta(seconds=60)
if init == 'env':
    dist.init_process_group('gloo', timeout=timeout)
elif init == 'tcp':
    dist.init_process_group('gloo', init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=n, timeout=timeout)
else:   # a FileStore the program makes itself, as accelerate's debug launcher does
    dist.init_process_group('gloo', store=dist.FileStore(os.environ['STORE_FILE'], n),
                            rank=rank, world_size=n, timeout=timeout)
out = {'backend': str(dist.get_backend()), 'rank': dist.get_rank(),
       'size': dist.get_world_size(), 'init': dist.is_initialized()}


def mine(shape=(2, 3), dtype=None):
    return (torch.arange(6, dtype=torch.float64).reshape(shape) + 10 * rank + 1).to(
        dtype or torch.float64)


for op in ['SUM', 'MAX', 'MIN', 'PRODUCT', 'AVG']:
    t = mine()
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    out[f'all_reduce_{op}'] = t.tolist()
t = mine(dtype=torch.int64)
work = dist.all_reduce(t, async_op=True)
work.wait()
out['all_reduce_async_int'] = t.tolist()
t = mine()
dist.broadcast(t, src=n - 1)
out['broadcast'] = t.tolist()
t = mine()
dist.reduce(t, dst=0)
out['reduce'] = t.tolist() if rank == 0 else None   # elsewhere unspecified
lst = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
dist.all_gather(lst, mine())
out['all_gather'] = [x.tolist() for x in lst]
big = torch.zeros(2 * n, 3, dtype=torch.float64)
dist.all_gather_into_tensor(big, mine())
out['all_gather_into_tensor'] = big.tolist()
t = torch.zeros(2, 3, dtype=torch.float64)
dist.reduce_scatter_tensor(t, torch.cat([mine() * (i + 1) for i in range(n)]))
out['reduce_scatter_tensor'] = t.tolist()
t = torch.zeros(3, dtype=torch.float64)
dist.scatter(t, [torch.full((3,), float(i)) .to(torch.float64) for i in range(n)]
             if rank == 0 else None, src=0)
out['scatter'] = t.tolist()
gl = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)] if rank == 1 else None
dist.gather(mine(), gl, dst=1)
out['gather'] = None if gl is None else [x.tolist() for x in gl]
objs = [None] * n
dist.all_gather_object(objs, {'rank': rank, 'text': 'r' * rank})
out['all_gather_object'] = objs
lst = [f'from {rank}', rank] if rank == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
out['broadcast_object_list'] = lst
# point to point around the ring, blocking and not
t = torch.zeros(2, 3, dtype=torch.float64)
if rank % 2 == 0:
    dist.send(mine(), (rank + 1) % n)
    dist.recv(t, (rank - 1) % n)
else:
    dist.recv(t, (rank - 1) % n)
    dist.send(mine(), (rank + 1) % n)
out['send_recv'] = t.tolist()
t = torch.zeros(2, 3, dtype=torch.float64)
reqs = [dist.isend(mine() * 2, (rank + 1) % n), dist.irecv(t, (rank - 1) % n)]
for r in reqs:
    r.wait()
out['isend_irecv'] = t.tolist()
dist.barrier()
dist.destroy_process_group()
out['after_destroy'] = dist.is_initialized()
print(json.dumps(out))
