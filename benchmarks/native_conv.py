"""Convolution and max pooling with the native kernels, side by side in one process.

    python -m benchmarks.native_conv                  # 1 thread, 5 rounds
    python -m benchmarks.native_conv --rounds 9 --threads 2

dynagrad with its native kernels (im2col/col2im and max pooling from ``dynagrad.native``),
dynagrad with its NumPy kernels and PyTorch run each case in turns: every round times every
variant once (a median of a few calls), and the table reports each variant's best round.
The cases are the layers of the benchmark CNN (``benchmarks.workloads.cnn_autograd``: conv
1->16 3x3 on 32x1x28x28, conv 16->32 3x3 on 32x16x13x13, 2x2 max pooling of both outputs)
and its whole training step. Prints one markdown table.
"""
import argparse
import os
import sys

import numpy as np

from . import workloads as W


def cases(T, batch=32):
    """name -> a call timing one case in library ``T`` (dynagrad or torch)."""
    F = T.nn.functional
    rng = np.random.default_rng(0)

    def leaf(*shape, grad=True):
        t = T.tensor(rng.standard_normal(shape, dtype=np.float32))
        return t.requires_grad_() if grad else t
    x1 = leaf(batch, 1, 28, 28, grad=False)
    w1, b1 = leaf(16, 1, 3, 3), leaf(16)
    x2, w2, b2 = leaf(batch, 16, 13, 13), leaf(32, 16, 3, 3), leaf(32)
    p1, p2 = leaf(batch, 16, 26, 26), leaf(batch, 32, 11, 11)

    def fwd(f):
        def run():
            with T.no_grad():
                f()
        return run

    def fwd_bwd(f, *leaves):
        g = T.ones(*f().shape)

        def run():
            f().backward(g)
            for t in leaves:
                t.grad = None
        return run
    conv1 = lambda: F.conv2d(x1, w1, b1)      # noqa: E731
    conv2 = lambda: F.conv2d(x2, w2, b2)      # noqa: E731
    pool1 = lambda: F.max_pool2d(p1, 2)       # noqa: E731
    pool2 = lambda: F.max_pool2d(p2, 2)       # noqa: E731
    return {
        'conv2d 1->16 3x3, 32x1x28x28, fwd': fwd(conv1),
        'conv2d 1->16 fwd+bwd (weight, bias)': fwd_bwd(conv1, w1, b1),
        'conv2d 16->32 3x3, 32x16x13x13, fwd': fwd(conv2),
        'conv2d 16->32 fwd+bwd (input, weight, bias)': fwd_bwd(conv2, x2, w2, b2),
        'max_pool2d 2x2, 32x16x26x26, fwd': fwd(pool1),
        'max_pool2d 32x16x26x26 fwd+bwd': fwd_bwd(pool1, p1),
        'max_pool2d 2x2, 32x32x11x11, fwd': fwd(pool2),
        'max_pool2d 32x32x11x11 fwd+bwd': fwd_bwd(pool2, p2),
        'CNN train step (benchmark workload)': W.cnn_autograd(T, batch),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--calls', type=int, default=15, help='calls per variant and round')
    ap.add_argument('--threads', type=int, default=1)
    args = ap.parse_args(argv)
    import dynagrad
    import torch
    from threadpoolctl import threadpool_limits
    from dynagrad import native
    torch.set_num_threads(args.threads)
    dynagrad.backend.keep_freed_memory()
    modes = ['native', 'numpy'] if native.available() is None else ['numpy']
    best = {}
    with threadpool_limits(args.threads):
        runs = []
        for mode in modes:
            dynagrad.backend.set_kernels(mode)
            runs.append((f'dynagrad {mode}', mode, cases(dynagrad)))
        runs.append(('PyTorch', None, cases(torch)))
        for r in range(args.rounds):
            for name, mode, calls in runs:
                if mode is not None:
                    dynagrad.backend.set_kernels(mode)
                for case, fn in calls.items():
                    t = W.median_time(fn, args.calls, warmup=2) * 1e3
                    best[(name, case)] = min(best.get((name, case), t), t)
            print(f'round {r + 1}/{args.rounds}', file=sys.stderr)
    names = [name for name, _, _ in runs]
    print(f'{args.threads} thread(s), float32, best of {args.rounds} interleaved rounds '
          f'(median of {args.calls} calls each), ms; load average '
          f'{", ".join(f"{v:.1f}" for v in os.getloadavg())}\n')
    W.print_against_last('case', [(case, [best[(n, case)] for n in names])
                                  for case in runs[0][2]], names, 3)


if __name__ == '__main__':
    main()
