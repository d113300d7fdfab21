"""The benchmark GPT's compiled training step with and without native code generation,
side by side in one process, one thread.

    python -m benchmarks.compile_gpt [--rounds 5] [--calls 3]

``workloads.gpt_autograd(..., compiled=True)`` (width 128, 4 blocks, batch 12 x 64, float32):
compiled with fused regions as numba kernels ("native code"), compiled with the regions
left to NumPy's ops but the native op kernels still on ("regions off": what the fusion
itself gives), compiled and eager with NumPy kernels only (``set_kernels('numpy')``), eager
with native kernels, and PyTorch eager. Each round times every variant in turn (median of
``--calls`` steps); the table gives each one's best round and its ratio to PyTorch eager's,
then the regions the native program has.
"""
import argparse
import os

from . import workloads as W


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--calls', type=int, default=3)
    args = parser.parse_args(argv)
    import torch
    import dynagrad
    from dynagrad import backend
    from dynagrad.compiler import native_codegen
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    backend.keep_freed_memory()
    size = W.GPT_SIZES['full']

    def train_step(T, compiled):
        step = W.gpt_autograd(T, size, use_sdpa=False, compiled=compiled)[0]
        for _ in range(3):      # two captures and the code generation
            step()
        return step

    find_regions = native_codegen.find_regions
    made = []

    def recording(program, arrays):
        regions = find_regions(program, arrays)
        made.extend(regions)
        return regions
    variants = {}       # name: (kernel mode, step)
    with threadpool_limits(1):
        backend.set_kernels('native')
        native_codegen.find_regions = recording
        try:
            variants['compiled, native code'] = ('native', train_step(dynagrad, True))
        finally:
            native_codegen.find_regions = find_regions
        native_codegen.find_regions = lambda program, arrays: []
        try:
            variants['compiled, regions off'] = ('native', train_step(dynagrad, True))
        finally:
            native_codegen.find_regions = find_regions
        variants['eager, native kernels'] = ('native', train_step(dynagrad, False))
        backend.set_kernels('numpy')
        variants['compiled, NumPy kernels'] = ('numpy', train_step(dynagrad, True))
        variants['eager, NumPy kernels'] = ('numpy', train_step(dynagrad, False))
        variants['PyTorch eager'] = (None, train_step(torch, False))
        best = {}
        for _ in range(args.rounds):
            for name, (mode, step) in variants.items():
                if mode is not None:
                    backend.set_kernels(mode)
                t = W.median_time(step, args.calls, warmup=1) * 1e3
                best[name] = min(best.get(name, t), t)
        backend.set_kernels('auto')
    ref = best['PyTorch eager']
    print(f'GPT train step (width 128, 4 blocks, batch 12x64, float32), one thread, best of '
          f'{args.rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}\n')
    print('| variant | ms | over PyTorch eager |\n|---|--:|--:|')
    for name, t in best.items():
        print(f'| {name} | {t:.1f} | {t / ref:.2f}x |')
    print(f'\nregions of the native program: {len(made)}')
    for region in made:
        print(f'  {len(region.steps)} ops over {region.shape} (loop nest {region.extents}), '
              f'inputs {[m[0] for m in region.input_meta]}')


if __name__ == '__main__':
    main()
