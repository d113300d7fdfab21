"""DataLoader worker processes: speed-up on CPU-bound samples, and how fast batches move.

Run from the repository root (``benchmarks`` is a package there, not part of dynagrad):

    python -m benchmarks.dataloader              # the full measurement
    python -m benchmarks.dataloader --quick      # a few seconds, smaller sizes

1. Speed-up: a map-style dataset whose ``__getitem__`` does CPU work in NumPy (a small
   image "augmented": elementwise maths, no BLAS, one thread) is read in full with
   ``num_workers=0`` and with 2 workers (the platform's start method, worker start-up
   included in the time). Prints each run's seconds, the best of each, and the ratio.
2. Transport: a dataset whose samples are large ready-made arrays (``batch_size=None``),
   read with 2 workers, once through shared memory (dynagrad's default: the worker writes
   the batch into a memory file, the main process maps it) and once pickled by value
   through the same socket (shared memory switched off). Prints MB/s of batches delivered
   to the main process, each batch's pages read there once.
"""
import argparse
import os
import statistics
import time

import numpy as np

import dynagrad.utils.data as dud
from dynagrad.multiprocessing import reductions


class Augmented(dud.Dataset):
    """Sample i: a 64x64 image pushed through a few elementwise transforms."""

    def __init__(self, n, rounds):
        self.n, self.rounds = n, rounds

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = rng.random((64, 64), dtype=np.float32)
        for _ in range(self.rounds):
            img = np.tanh(img * 1.7 - 0.3) + np.sin(img * 3.1) * 0.25
            img = (img - img.mean()) / (img.std() + 1e-5)
        return img, i % 10


class Blocks(dud.Dataset):
    """Sample i: an array of ``nbytes`` bytes, made once (the transport is measured)."""

    def __init__(self, n, nbytes):
        self.n = n
        self.block = np.arange(nbytes // 4, dtype=np.float32)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.block


def epoch_seconds(loader):
    start = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - start


def speedup(n, rounds, batch_size, repeats):
    ds = Augmented(n, rounds)
    times = {0: [], 2: []}
    for _ in range(repeats):
        for workers in (0, 2):
            loader = dud.DataLoader(ds, batch_size=batch_size, num_workers=workers)
            times[workers].append(epoch_seconds(loader))
    best0, best2 = min(times[0]), min(times[2])
    print(f'CPU-bound samples: {n} samples of {ds[0][0].nbytes // 1024} KiB, batch '
          f'{batch_size}, about {1e3 * best0 / n:.2f} ms of work per sample')
    for workers in (0, 2):
        runs = ', '.join(f'{t:.2f}' for t in times[workers])
        print(f'  num_workers={workers}: {runs} s  (best {min(times[workers]):.2f} s)')
    print(f'  speed-up with 2 workers: {best0 / best2:.2f}x (best against best; median '
          f'{statistics.median(times[0]) / statistics.median(times[2]):.2f}x)')
    return best0 / best2


def transport(n, nbytes, repeats):
    ds = Blocks(n, nbytes)

    def rate():
        loader = dud.DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
        for _ in loader:            # start the workers and warm up
            pass
        best = float('inf')
        for _ in range(repeats):
            start = time.perf_counter()
            for batch in loader:
                batch._data[::1024].sum()           # read every page once
            best = min(best, time.perf_counter() - start)
        return n * nbytes / best / 1e6

    shared = rate()
    saved = reductions.SHARE_THRESHOLD
    reductions.SHARE_THRESHOLD = float('inf')       # every array pickled by value
    try:
        pickled = rate()
    finally:
        reductions.SHARE_THRESHOLD = saved
    print(f'Transport: {n} batches of {nbytes / 1e6:.0f} MB, 2 workers (best of {repeats})')
    print(f'  shared memory: {shared:8.0f} MB/s')
    print(f'  pickled:       {pickled:8.0f} MB/s')
    print(f'  ratio:         {shared / pickled:8.1f}x')


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.dataloader')
    parser.add_argument('--quick', action='store_true', help='small sizes, a few seconds')
    args = parser.parse_args(argv)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    print(f'CPUs available: {cpus}; load average: '
          f'{", ".join(f"{x:.2f}" for x in os.getloadavg())}')
    if args.quick:
        speedup(n=64, rounds=40, batch_size=16, repeats=1)
        transport(n=8, nbytes=8 << 20, repeats=1)
    else:
        speedup(n=1024, rounds=60, batch_size=32, repeats=3)
        transport(n=16, nbytes=64 << 20, repeats=2)


if __name__ == '__main__':
    main()
