"""The native kernels' effect on whole models, measured side by side in one process.

    python -m benchmarks.native                 # GPT (benchmarks.workloads' model), 1 thread
    python -m benchmarks.native --rounds 7 --threads 2

dynagrad with its native kernels (``dynagrad.native``), dynagrad with its NumPy kernels and
PyTorch run the same GPT train step and evaluation pass in turns: each round times every
variant once (a median of a few calls), and the table reports each variant's best round.
Interleaving keeps a busy or drifting machine from favouring whichever ran first; the
separate-process figures of ``python -m benchmarks.run --only gpt --only kernels`` are the
suite's. Prints one markdown table.
"""
import argparse
import sys

from . import workloads as W


def variants(threads):
    import dynagrad
    import torch
    torch.set_num_threads(threads)
    from dynagrad import native
    modes = ['native', 'numpy'] if native.available() is None else ['numpy']
    out = []
    for mode in modes:
        dynagrad.backend.set_kernels(mode)
        train, evaluate, _ = W.gpt_autograd(dynagrad, W.GPT_SIZES['full'], use_sdpa=False)
        out.append((f'dynagrad, {mode} kernels', mode, train, evaluate))
    train, evaluate, _ = W.gpt_autograd(torch, W.GPT_SIZES['full'], use_sdpa=False)
    out.append(('PyTorch', None, train, evaluate))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--calls', type=int, default=3, help='calls per variant and round')
    ap.add_argument('--threads', type=int, default=1)
    args = ap.parse_args(argv)
    import dynagrad
    from threadpoolctl import threadpool_limits
    dynagrad.backend.keep_freed_memory()
    best = {}
    with threadpool_limits(args.threads):
        runs = variants(args.threads)
        for r in range(args.rounds):
            for name, mode, train, evaluate in runs:
                if mode is not None:
                    dynagrad.backend.set_kernels(mode)
                for what, fn in (('train step', train), ('eval pass', evaluate)):
                    t = W.median_time(fn, args.calls, warmup=1) * 1e3
                    key = (name, what)
                    best[key] = min(best.get(key, t), t)
            print(f'round {r + 1}/{args.rounds}', file=sys.stderr)
    torch_row = {what: best[('PyTorch', what)] for what in ('train step', 'eval pass')}
    print(f'GPT (width 128, 4 blocks, context 64, batch 12), {args.threads} thread(s), '
          f'best of {args.rounds} interleaved rounds (median of {args.calls} calls each), ms\n')
    print('| variant | train step | /PyTorch | eval pass | /PyTorch |')
    print('|---|--:|--:|--:|--:|')
    for name, *_ in runs:
        cells = []
        for what in ('train step', 'eval pass'):
            v = best[(name, what)]
            cells += [f'{v:.1f}', f'{v / torch_row[what]:.2f}x']
        print(f'| {name} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
