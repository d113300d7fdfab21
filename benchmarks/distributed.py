"""Weak-scaling figures for docs/distributed.md: the benchmark MLP (784-512-512-10, ReLU,
cross-entropy, SGD, float32) with a fixed per-rank batch, on however many ranks it runs.

Run from the repository root (``benchmarks`` is a package there, not part of dynagrad):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m dynagrad.distributed.run -n 1 \\
        -m benchmarks.distributed
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m dynagrad.distributed.run -n 2 \\
        -m benchmarks.distributed

Prints, as medians over the steps (milliseconds): the plain step (no DDP: compute only,
every rank at once), the DDP step with one 25 MB bucket (no overlap possible) and with 1 MB
buckets (overlap), the time backward spent waiting for all-reduces, and a bare blocking
all-reduce of the gradient's size.
"""
import argparse
import statistics
import time

import numpy as np

import dynagrad as dg
import dynagrad.distributed as dist
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.nn.parallel import DistributedDataParallel as DDP

SIZES = (784, 512, 512, 10)


def mlp():
    layers = []
    for i, (a, b) in enumerate(zip(SIZES, SIZES[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def measure(model, x, y, steps, warmup, ddp=None):
    opt = dg.optim.SGD(model.parameters(), lr=0.01)
    times, waits = [], []
    for i in range(warmup + steps):
        dist.barrier()
        before = ddp.comm_seconds['wait'] if ddp is not None else 0.0
        start = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        elapsed = time.perf_counter() - start
        if i >= warmup:
            times.append(elapsed)
            waits.append((ddp.comm_seconds['wait'] if ddp is not None else 0.0) - before)
    return 1e3 * statistics.median(times), 1e3 * statistics.median(waits)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.distributed')
    parser.add_argument('--batch', type=int, default=128, help='batch per rank (default 128)')
    parser.add_argument('--steps', type=int, default=50)
    parser.add_argument('--warmup', type=int, default=5)
    args = parser.parse_args(argv)
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    dg.manual_seed(rank)
    x, y = dg.randn(args.batch, SIZES[0]), dg.randint(0, SIZES[-1], (args.batch,))
    rows = []
    plain, _ = measure(mlp(), x, y, args.steps, args.warmup)
    rows.append(('plain step (no DDP)', plain, 0.0))
    for cap in (25, 1):
        model = DDP(mlp(), bucket_cap_mb=cap)
        step, wait = measure(model, x, y, args.steps, args.warmup, ddp=model)
        rows.append((f'DDP step, {len(model._buckets)} bucket(s) of <= {cap} MB', step, wait))
    n_params = sum(p.numel() for p in mlp().parameters())
    grads = dg.zeros(n_params)
    times = []
    for i in range(args.warmup + args.steps):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(grads)
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    bare = 1e3 * statistics.median(times)
    all_rows = [None] * world
    dist.all_gather_object(all_rows, rows)
    if rank == 0:
        print(f'{world} rank(s), batch {args.batch} per rank, {n_params} parameters '
              f'({4 * n_params / 1e6:.2f} MB of float32 gradients); medians of {args.steps} '
              'steps, the slowest rank')
        print(f'{"":40s} {"step ms":>8s} {"wait ms":>8s}')
        for k, (name, _, _) in enumerate(rows):
            step = max(r[k][1] for r in all_rows)
            wait = max(r[k][2] for r in all_rows)
            print(f'{name:40s} {step:8.2f} {wait:8.2f}')
        print(f'{"bare all_reduce of the gradient size":40s} {bare:8.2f}')
        print(f'samples per second (DDP, 1 MB buckets): '
              f'{1e3 * args.batch * world / max(r[2][1] for r in all_rows):.0f}')
    dist.destroy_process_group()
    return np.array([r[1] for r in rows])


if __name__ == '__main__':
    main()
