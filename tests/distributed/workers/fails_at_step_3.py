"""Run on 2 ranks: rank 1 raises at step 3 of a DDP training loop while rank 0 waits in
the gradient all-reduce. The job must end quickly, non-zero, with rank 1's traceback."""
import sys

import dynagrad as dg
import dynagrad.distributed as dist
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank = dist.get_rank()
model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
opt = dg.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 1000):
    print(f'rank {rank} step {step}', flush=True)
    if rank == 1 and step == 3:
        raise RuntimeError(f'rank {rank} fails at step {step} on purpose')
    opt.zero_grad()
    F.mse_loss(model(dg.randn(8, 4)), dg.randn(8, 1)).backward()
    opt.step()
print('rank 0 finished: the failure went unnoticed', flush=True)
sys.exit(0)
