"""dynagrad.compile's native code generation measured side by side in one process.

    python -m benchmarks.compile_native                       # the per-op chain: 200 ops on (4,)
    python -m benchmarks.compile_native --ops 20 --size 1000000 --inner 2
    python -m benchmarks.compile_native --no-torch-compile

The chain of ``benchmarks.workloads`` (x*1.0001, x+0.5, tanh, x*w repeated, then a sum),
forward and backward, float32, one thread: dynagrad compiled with native code (numba
kernels per fused region), compiled with NumPy code (``set_kernels('numpy')``), dynagrad
eager, PyTorch eager and ``torch.compile``. Each round times every variant in turn; the
table gives each one's best and median round, in microseconds per op, then the first three
calls of each compiled variant (two captures and the code generation; numba's compiling,
or loading from its cache, included).
"""
import argparse
import os
import statistics
import time

from .workloads import chain


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--ops', type=int, default=200)
    parser.add_argument('--size', type=int, default=4)
    parser.add_argument('--inner', type=int, default=20, help='calls per timed round')
    parser.add_argument('--rounds', type=int, default=15)
    parser.add_argument('--no-torch-compile', action='store_true')
    args = parser.parse_args(argv)
    import torch
    import dynagrad
    from dynagrad import backend
    torch.set_num_threads(1)
    n = args.ops
    x = dynagrad.randn(args.size, requires_grad=True)
    w = (dynagrad.rand(args.size) * 0.1 + 0.9).requires_grad_()
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)

    def step(fn, a, b):
        def run():
            a.grad = b.grad = None
            fn(a, b).backward()
        return run

    first_calls, variants = {}, {}
    for mode, name in (('native', 'dynagrad compiled, native code'),
                       ('numpy', 'dynagrad compiled, NumPy code')):
        backend.set_kernels(mode)
        run = step(dynagrad.compile(lambda a, b: chain(a, b, n).sum()), x, w)
        start = time.perf_counter()
        for _ in range(3):
            run()
        first_calls[name] = time.perf_counter() - start
        variants[name] = run
    backend.set_kernels('auto')
    variants['dynagrad eager'] = step(lambda a, b: chain(a, b, n).sum(), x, w)
    variants['PyTorch eager'] = step(lambda a, b: chain(a, b, n).sum(), xt, wt)
    if not args.no_torch_compile:
        run = step(torch.compile(lambda a, b: chain(a, b, n).sum()), xt, wt)
        start = time.perf_counter()
        for _ in range(3):
            run()
        first_calls['torch.compile'] = time.perf_counter() - start
        variants['torch.compile'] = run
    times = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, run in variants.items():
            start = time.perf_counter()
            for _ in range(args.inner):
                run()
            times[name].append((time.perf_counter() - start) / args.inner / n * 1e6)
    print(f'chain of {n} ops on ({args.size},) float32, fwd+bwd, one thread; '
          f'load average {os.getloadavg()[0]:.1f}\n')
    print('| variant | best us/op | median us/op | first 3 calls, s |\n|---|--:|--:|--:|')
    for name, values in times.items():
        first = f'{first_calls[name]:.2f}' if name in first_calls else ''
        print(f'| {name} | {min(values):.3f} | {statistics.median(values):.3f} | {first} |')


if __name__ == '__main__':
    main()
