"""Per-call cost of the small ops a GPT sampling loop runs once per token, side by side with
PyTorch in one process (one thread, no_grad), microseconds per call.

    python -m benchmarks.small_ops                 # 9 rounds
    python -m benchmarks.small_ops --rounds 15

Each round times every variant once (the best of a few repeats of ``--calls`` calls); the
variants take turns, so a busy machine does not favour whichever ran first, and the table
reports each variant's best round. Variants: dynagrad with its native kernels (numba),
dynagrad with its NumPy kernels, PyTorch. The ops, with the sampling loop's shapes:
``multinomial(p, 1)`` for p (1, 65) float32, ``arange(0, 64, dtype=long)``,
``cat((idx, s), dim=1)`` for idx (1, 64) and s (1, 1) int64.
"""
import argparse
import time


def _cases(T):
    g = T.Generator().manual_seed(0)
    p = T.softmax(T.randn(1, 65, generator=g), dim=-1)
    p_batch = T.softmax(T.randn(4, 65, generator=g), dim=-1)
    idx = T.randint(0, 65, (1, 64), generator=g)
    s = T.randint(0, 65, (1, 1), generator=g)
    return {
        'multinomial(p (1,65) f32, 1)': lambda: T.multinomial(p, 1, generator=g),
        'multinomial(p (4,65) f32, 1)': lambda: T.multinomial(p_batch, 1, generator=g),
        'multinomial(p (1,65), 4, replacement)':
            lambda: T.multinomial(p, 4, replacement=True, generator=g),
        'arange(0, 64, dtype=long)': lambda: T.arange(0, 64, dtype=T.long),
        'arange(64)': lambda: T.arange(64),
        'cat((idx (1,64), s (1,1)), dim=1)': lambda: T.cat((idx, s), dim=1),
    }


def _time(fn, calls, repeats=3):
    best = float('inf')
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / calls * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=9)
    parser.add_argument('--calls', type=int, default=2000)
    args = parser.parse_args(argv)

    import os
    import torch
    import dynagrad
    from dynagrad import backend
    torch.set_num_threads(1)
    dynagrad.set_num_threads(1)

    variants = {}
    torch_cases = _cases(torch)
    for name, fn in _cases(dynagrad).items():
        variants[name] = {'dynagrad native': fn, 'dynagrad numpy': fn,
                          'torch': torch_cases[name]}
    modes = {'dynagrad native': 'native', 'dynagrad numpy': 'numpy', 'torch': None}
    best = {(op, v): float('inf') for op in variants for v in modes}
    with torch.no_grad(), dynagrad.no_grad():
        for _ in range(2):          # warm up: compile (or load) the kernels
            for op, fns in variants.items():
                for v, mode in modes.items():
                    if mode:
                        backend.set_kernels(mode)
                    fns[v]()
        for _ in range(args.rounds):
            for op, fns in variants.items():
                for v, mode in modes.items():
                    if mode:
                        backend.set_kernels(mode)
                        fns[v]()            # the switch resets a cache: pay it before timing
                    best[op, v] = min(best[op, v], _time(fns[v], args.calls))
    backend.set_kernels('auto')

    print(f'load average {os.getloadavg()[0]:.2f}; one thread; best of {args.rounds} rounds '
          f'of {args.calls} calls; microseconds per call\n')
    print('| op | dynagrad native | dynagrad numpy | torch | native / torch |')
    print('|---|---|---|---|---|')
    for op in variants:
        n, p, t = (best[op, v] for v in modes)
        print(f'| {op} | {n:.1f} | {p:.1f} | {t:.1f} | {n / t:.2f} |')


if __name__ == '__main__':
    main()
