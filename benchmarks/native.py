"""The native tier's effect on whole workloads, measured side by side in one process.

    python -m benchmarks.native                        # every workload, 1 thread
    python -m benchmarks.native --threads 2 --rounds 7
    python -m benchmarks.native --only gpt --only cnn
    python -m benchmarks.native --torch-compile        # adds torch.compile's per-op chain
    python -m benchmarks.native --first-use            # what the tier costs a fresh process

dynagrad with its native kernels (``dynagrad.native``, numba), dynagrad with its NumPy
kernels and PyTorch eager run the same workloads (``benchmarks.workloads``' models) in turns:
each round times every variant once (a median of a few calls), and the table reports each
variant's best round. Interleaving keeps a busy or drifting machine from favouring whichever
ran first. PyTorch eager is the reference column of every row; the compiled rows run
``dynagrad.compile`` (native code generation against the NumPy generator) and are compared
with PyTorch eager too, as the issue's targets are, and with ``torch.compile`` where asked
(inductor needs a C++ compiler and about half a minute). Prints one markdown table.
"""
import argparse
import sys

from . import workloads as W

WORKLOADS = ('gpt', 'gpt_compiled', 'cnn', 'lm', 'attention', 'chain')


def _gpt(T, part, compiled=False):
    train, evaluate, sample = W.gpt_autograd(T, W.GPT_SIZES['full'], use_sdpa=False,
                                             compiled=compiled)
    return {'train': train, 'eval': evaluate, 'sample': sample}[part]


def _chain(T, compiled):
    """The per-op chain (``workloads.chain``, 200 cheap ops on 4 elements), forward and
    backward: eager, or through ``T.compile``."""
    n = 200
    x = T.randn(4, requires_grad=True)
    w = (T.rand(4) * 0.1 + 0.9).requires_grad_()
    run = T.compile(lambda x, w: W.chain(x, w, n).sum()) if compiled else (
        lambda x, w: W.chain(x, w, n).sum())

    def fwd_bwd():
        for _ in range(10):
            x.grad = w.grad = None
            run(x, w).backward()
    return fwd_bwd


# (row name, workload, unit, scale from seconds, maker(T), calls per round)
CASES = [
    ('GPT train step', 'gpt', 'ms', 1e3, lambda T: _gpt(T, 'train'), 3),
    ('GPT eval pass', 'gpt', 'ms', 1e3, lambda T: _gpt(T, 'eval'), 3),
    ('GPT sample 200 tokens', 'gpt', 'ms', 1e3, lambda T: _gpt(T, 'sample'), 1),
    ('GPT train step, compiled', 'gpt_compiled', 'ms', 1e3,
     lambda T: _gpt(T, 'train', compiled=T.__name__ == 'dynagrad'), 3),
    ('CNN train step (batch 32)', 'cnn', 'ms', 1e3, lambda T: W.cnn_autograd(T, 32), 3),
    ('LSTM LM train step', 'lm', 'ms', 1e3,
     lambda T: W.lm_autograd(T, W.LM_SIZES['full']), 3),
    ('attention 8x128x64 fwd+bwd', 'attention', 'ms', 1e3, W.attention_autograd, 5),
    ('per-op chain fwd+bwd, eager', 'chain', 'us/op', 1e6 / 2000,
     lambda T: _chain(T, False), 3),
    ('per-op chain fwd+bwd, compiled', 'chain', 'us/op', 1e6 / 2000,
     lambda T: _chain(T, T.__name__ == 'dynagrad'), 3),
]


# A fresh process's first GPT train step, evaluation pass and sampled token (the model and
# data built first, untimed): with native kernels on, each kernel the step reaches is
# compiled (cold cache) or loaded (warm) on its first call.
_FIRST_USE = """
import sys, time
t = time.perf_counter()
import dynagrad
t_import = time.perf_counter() - t
sys.path.insert(0, {root!r})
from benchmarks import workloads as W
train, evaluate, sample = W.gpt_autograd(dynagrad, dict(W.GPT_SIZES['full'], new_tokens=1),
                                         use_sdpa=False)
t = time.perf_counter()
train(); evaluate(); sample()
first = time.perf_counter() - t
t = time.perf_counter()
train(); evaluate(); sample()
print(t_import, first, time.perf_counter() - t)
"""


def first_use():
    """Seconds a fresh process spends on its first GPT step, evaluation and sampled token,
    and on the same again once warmed: NumPy kernels, then native kernels with an empty
    cache (compiling) and with the cache that run wrote (loading)."""
    import os
    import pathlib
    import subprocess
    import tempfile
    root = str(pathlib.Path(__file__).resolve().parent.parent)
    code = _FIRST_USE.format(root=root)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for label, mode in (('NumPy kernels', 'numpy'), ('native, cold cache', 'native'),
                            ('native, warm cache', 'native')):
            env = {**os.environ, 'NUMBA_CACHE_DIR': cache, 'DYNAGRAD_CACHE_DIR': cache,
                   'DYNAGRAD_KERNELS': mode}
            out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                                 check=True, env=env).stdout.split()
            rows.append((label, *(float(v) for v in out)))
    print('| fresh process | import dynagrad (s) | first GPT step + eval + token (s) | '
          'the same, warmed (s) |')
    print('|---|--:|--:|--:|')
    for label, t_import, first, again in rows:
        print(f'| {label} | {t_import:.2f} | {first:.2f} | {again:.2f} |')


def variants(only, torch_compile):
    """(column, kernel mode or None, {row: timed function}) for each variant."""
    import dynagrad
    import torch
    from dynagrad import native
    modes = ['native', 'numpy'] if native.available() is None else ['numpy']
    cases = [c for c in CASES if c[1] in only]
    out = []
    for mode in modes:
        dynagrad.backend.set_kernels(mode)
        out.append((f'dynagrad, {mode} kernels', mode,
                    {c[0]: c[4](dynagrad) for c in cases}))
    out.append(('PyTorch eager', None, {c[0]: c[4](torch) for c in cases}))
    if torch_compile and 'chain' in only:
        out.append(('torch.compile', None,
                    {'per-op chain fwd+bwd, compiled': _chain(torch, True)}))
    return cases, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--only', action='append', choices=WORKLOADS, metavar='NAME',
                    help=f'one of {", ".join(WORKLOADS)} (repeatable; default: all)')
    ap.add_argument('--torch-compile', action='store_true',
                    help="time torch.compile's per-op chain too (needs a C++ compiler)")
    ap.add_argument('--first-use', action='store_true',
                    help='only what the native tier costs a fresh process (compile, load)')
    args = ap.parse_args(argv)
    if args.first_use:
        return first_use()
    only = set(args.only or WORKLOADS)
    import dynagrad
    import torch
    from threadpoolctl import threadpool_limits
    dynagrad.backend.keep_freed_memory()
    torch.set_num_threads(args.threads)
    best = {}
    with threadpool_limits(args.threads):
        cases, runs = variants(only, args.torch_compile)
        scale = {c[0]: c[3] for c in cases}
        calls = {c[0]: c[5] for c in cases}
        for r in range(args.rounds):
            for column, mode, fns in runs:
                if mode is not None:
                    dynagrad.backend.set_kernels(mode)
                for name, fn in fns.items():
                    t = W.median_time(fn, calls[name], warmup=1) * scale[name]
                    best[column, name] = min(best.get((column, name), t), t)
            print(f'round {r + 1}/{args.rounds}', file=sys.stderr)
    columns = [column for column, _, _ in runs]
    print(f'{args.threads} thread(s), best of {args.rounds} interleaved rounds; '
          f'in parentheses: the time over PyTorch eager\'s\n')
    print('| workload | unit | ' + ' | '.join(columns) + ' |')
    print('|---|---|' + '--:|' * len(columns))
    for name, _, unit, *_ in cases:
        ref = best.get(('PyTorch eager', name))
        cells = []
        for column in columns:
            v = best.get((column, name))
            cells.append('' if v is None else f'{v:.3g} ({v / ref:.2f}x)' if ref else f'{v:.3g}')
        print(f'| {name} | {unit} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
