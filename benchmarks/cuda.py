"""The benchmark suite on a CUDA GPU: dynagrad (CuPy) against PyTorch CUDA.

    python -m benchmarks.run --device cuda           # or: python -m benchmarks.cuda
    python -m benchmarks.run --device cuda --smoke   # small sizes, few repeats

Runs the workloads of ``benchmarks.workloads`` unchanged, with each library's default
device set to 'cuda' (so every factory, model and batch they build lands on the GPU), at
the sizes where a GPU matters: the MLP at batch 4096, the CNN at batch 256, the GPT at
width 512 (batch 32, context 256), and the per-op chain (Python dispatch plus one kernel
launch per op). Every timed call ends with a device synchronisation, so a figure is the
time the GPU work took, not the time to queue it. Prints one markdown table naming the
GPU; refuses (exit status 2) where dynagrad sees no CUDA device.

``--stand-in`` runs dynagrad alone on tests/fake_cuda.py's NumPy stand-in for CuPy: a
check of this harness on a machine without a GPU, its figures meaningless.
"""
import argparse
import sys
import time
from pathlib import Path

from .workloads import (GPT_SIZES, MLP_SIZES, chain, cnn_autograd, gpt_autograd,  # noqa: F401
                        mlp_autograd)

SIZES = {
    'full': dict(chain_ops=200, mlp_batch=4096, cnn_batch=256, repeats=20,
                 gpt=dict(GPT_SIZES['full'], width=512, heads=8, context=256, batch=32)),
    'smoke': dict(chain_ops=20, mlp_batch=64, cnn_batch=8, repeats=2,
                  gpt=dict(GPT_SIZES['smoke'])),
}
# The targets on the GPU: (workload, row, dynagrad/PyTorch bound)
TARGETS = {('gpt', 'train step'): 1.5, ('mlp', 'train step'): 1.2}


def _timed(fn, sync, repeats, warmup=2):
    """Median seconds of ``fn(); sync()``."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def _chain_step(T, n):
    """The per-op workload's chain of ``n`` ops on 4 elements, forward and backward: on a
    GPU its time is Python dispatch plus one kernel launch per op."""
    leaves = [T.randn(4).requires_grad_(), (T.rand(4) * 0.1 + 0.9).requires_grad_()]

    def step():
        for leaf in leaves:
            leaf.grad = None
        chain(*leaves, n).sum().backward()
    return step


def _rows(T, cfg):
    """(workload, row, unit, value) for library ``T`` on its 'cuda' device."""
    sync = T.cuda.synchronize
    repeats = cfg['repeats']
    T.set_default_device('cuda')
    try:
        n = cfg['chain_ops']
        yield 'per_op', 'fwd+bwd', 'us/op', _timed(_chain_step(T, n), sync, repeats) * 1e6 / n
        yield ('mlp', 'train step', 'ms',
               _timed(mlp_autograd(T, cfg['mlp_batch'], compiles=False), sync, repeats) * 1e3)
        yield 'cnn', 'train step', 'ms', _timed(cnn_autograd(T, cfg['cnn_batch']), sync,
                                                repeats) * 1e3
        train, evaluate, _ = gpt_autograd(T, cfg['gpt'], use_sdpa=False)
        yield 'gpt', 'train step', 'ms', _timed(train, sync, repeats) * 1e3
        yield 'gpt', 'eval pass', 'ms', _timed(evaluate, sync, repeats) * 1e3
    finally:
        T.set_default_device(None)


def _table(results, gpu):
    lines = [f'### dynagrad on CUDA (GPU: {gpu})', '',
             '| workload | measure | unit | dynagrad | PyTorch | dynagrad/PyTorch | target | met |',
             '|---|---|---|--:|--:|--:|---|---|']
    for (workload, name, unit), values in results.items():
        d, t = values.get('dynagrad'), values.get('torch')
        ratio = f'{d / t:.2f}x' if d is not None and t else '—'
        bound = TARGETS.get((workload, name))
        target = f'<= {bound}x PyTorch' if bound else ''
        met = ('yes' if d / t <= bound else 'no') if bound and d is not None and t else ''
        cells = [f'{v:,.3g}' if v is not None else '—' for v in (d, t)]
        lines.append(f'| {workload} | {name} | {unit} | {cells[0]} | {cells[1]} | {ratio} | '
                     f'{target} | {met} |')
    return '\n'.join(lines)


def _use_stand_in():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests'))
    import fake_cuda
    from dynagrad import _device
    from dynagrad.cuda._backend import cuda_backend
    fake = fake_cuda.FakeCupy()
    _device.register_backend(cuda_backend(fake, fake.special))


def run(smoke=False, stand_in=False):
    """The results table as a string; raises RuntimeError when there is no CUDA device."""
    import dynagrad
    if stand_in:
        _use_stand_in()
    if not dynagrad.cuda.is_available():
        raise RuntimeError('dynagrad sees no CUDA device (CuPy missing or no GPU): nothing '
                           'to benchmark; install the cuda extra on a GPU machine')
    cfg = SIZES['smoke' if smoke else 'full']
    libs = [dynagrad]
    if not stand_in:
        import torch
        if torch.cuda.is_available():
            libs.append(torch)
    results = {}
    for T in libs:
        for workload, name, unit, value in _rows(T, cfg):
            results.setdefault((workload, name, unit), {})[T.__name__] = value
    return _table(results, dynagrad.cuda.get_device_name())


def main(argv=None):
    ap = argparse.ArgumentParser(description='dynagrad vs PyTorch on a CUDA GPU')
    ap.add_argument('--device', choices=['cuda'], default='cuda')
    ap.add_argument('--smoke', action='store_true', help='small sizes and few repeats')
    ap.add_argument('--stand-in', action='store_true',
                    help="dynagrad alone on the tests' NumPy stand-in for CuPy (no GPU)")
    args, _ = ap.parse_known_args(argv)
    try:
        print(run(args.smoke, args.stand_in))
    except RuntimeError as e:
        print(f'benchmarks --device cuda: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
