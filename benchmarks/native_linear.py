"""F.linear on a few rows (batch-1 inference): the native kernel, NumPy and PyTorch, side by
side in one process.

    python -m benchmarks.native_linear                  # 1 thread, float32, 5 rounds
    python -m benchmarks.native_linear --rounds 9 --dtype float64

For each shape (rows, in -> out), with a bias: ``dynagrad.native.linalg.linear`` (the
kernel F.linear calls up to 64 rows), ``F.linear`` of dynagrad with its native kernels (the
kernel plus the op's bookkeeping, no autograd), NumPy's ``x @ w.T + b`` (what the op runs
without kernels) and ``torch.nn.functional.linear``. Every round times every variant once
(a median of a few batches of calls), in turns; the table reports each variant's best round
in microseconds. The shapes are a small GPT's linears at width 128 (attention's 128 -> 384
and 128 -> 128, the MLP's 128 -> 512 and 512 -> 128, a 65-letter vocabulary's head) on a
context of 1 to 64 tokens.
"""
import argparse
import os
import sys
import time

import numpy as np

from . import workloads as W

SHAPES = [(1, 128, 384), (4, 128, 384), (16, 128, 384), (32, 128, 384), (48, 128, 384),
          (64, 128, 384), (64, 128, 128), (48, 128, 512), (64, 128, 512), (64, 512, 128),
          (64, 128, 65), (16, 512, 512), (1, 4096, 4096)]


def _per_call_us(fn, calls, batches=5):
    """The median over ``batches`` of the mean time of ``calls`` calls, in microseconds."""
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return sorted(times)[batches // 2]


def variants(rows, n_in, n_out, dtype):
    """name -> a call computing the product once."""
    import torch
    import dynagrad
    from dynagrad import native
    rng = np.random.default_rng(rows * 7 + n_in + n_out)
    x = rng.standard_normal((rows, n_in)).astype(dtype)
    w = rng.standard_normal((n_out, n_in)).astype(dtype)
    b = rng.standard_normal(n_out).astype(dtype)
    out = {}
    if native.available() is None:
        from dynagrad.native import linalg
        dx, dw, db = (dynagrad.tensor(a) for a in (x, w, b))
        F = dynagrad.nn.functional

        def op():
            with dynagrad.no_grad():
                F.linear(dx, dw, db)
        out['kernel'] = lambda: linalg.linear(x, w, b)
        out['F.linear (native)'] = op
    out['NumPy'] = lambda: x @ w.T + b
    tx, tw, tb = (torch.from_numpy(a) for a in (x, w, b))
    out['PyTorch'] = lambda: torch.nn.functional.linear(tx, tw, tb)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--dtype', default='float32', choices=['float32', 'float64'])
    args = ap.parse_args(argv)
    import torch
    from threadpoolctl import threadpool_limits
    import dynagrad
    torch.set_num_threads(args.threads)
    dynagrad.backend.set_kernels('native')
    dtype = np.dtype(args.dtype)
    best = {}
    with threadpool_limits(args.threads):
        cases = {shape: variants(*shape, dtype) for shape in SHAPES}
        for fns in cases.values():
            for fn in fns.values():
                fn()        # compiles or loads the kernel
        for r in range(args.rounds):
            for shape, fns in cases.items():
                # about 2 ms a batch: the small shapes many calls, the 4096 x 4096 a few
                calls = max(2, int(9e7 / (shape[0] * shape[1] * shape[2])))
                for name, fn in fns.items():
                    t = _per_call_us(fn, min(calls, 200))
                    best[(shape, name)] = min(best.get((shape, name), t), t)
            print(f'round {r + 1}/{args.rounds}', file=sys.stderr)
    names = list(next(iter(cases.values())))
    print(f'{args.threads} thread(s), {dtype.name}, bias, best of {args.rounds} interleaved '
          f'rounds, microseconds per call; load average '
          f'{", ".join(f"{v:.1f}" for v in os.getloadavg())}\n')
    W.print_against_last('rows, in -> out', [
        (f'{shape[0]}, {shape[1]} -> {shape[2]}', [best[(shape, n)] for n in names])
        for shape in SHAPES], names, 1)


if __name__ == '__main__':
    main()
