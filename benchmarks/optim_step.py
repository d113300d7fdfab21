"""The optimizer step alone on the benchmark GPT's parameters (one thread, float32):
dynagrad with its native kernels and with its NumPy kernels, PyTorch's single-tensor
(``foreach=False``), foreach and fused updates, in one process and in turns.

    python -m benchmarks.optim_step [--rounds 9] [--steps 20] [--optimizer adamw|sgd]

Each round times every variant (the median of ``--steps`` steps); the table gives the best
round and the median of the rounds, in milliseconds per step.
"""
import argparse
import statistics
import time

import numpy as np

from . import workloads as W


def _params(T, s):
    """The GPT's parameters in the benchmark's two groups, with fixed random gradients."""
    model = W.gpt_model(T, s, use_sdpa=False)
    rng = np.random.default_rng(0)
    for p in model.parameters():
        p.grad = T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
    named = list(model.named_parameters())
    return ([p for _, p in named if p.dim() >= 2], [p for _, p in named if p.dim() < 2])


def _optimizer(T, name, groups, **flags):
    decay, no_decay = groups
    if name == 'adamw':
        return T.optim.AdamW([{'params': decay, 'weight_decay': 0.1},
                              {'params': no_decay, 'weight_decay': 0.0}], lr=3e-4, **flags)
    return T.optim.SGD([{'params': decay, 'weight_decay': 1e-4},
                        {'params': no_decay, 'weight_decay': 0.0}], lr=1e-2, momentum=0.9,
                       **flags)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--rounds', type=int, default=9)
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--optimizer', choices=('adamw', 'sgd'), default='adamw')
    args = parser.parse_args(argv)
    import dynagrad
    import torch
    from dynagrad import backend
    s = W.GPT_SIZES['full']
    variants = {}
    for mode in ('native', 'numpy'):
        opt = _optimizer(dynagrad, args.optimizer, _params(dynagrad, s))
        variants[f'dynagrad, {mode} kernels'] = (opt, mode)
    for label, flags in (('foreach=False', dict(foreach=False)),
                         ('foreach=True', dict(foreach=True)), ('fused=True', dict(fused=True))):
        opt = _optimizer(torch, args.optimizer, _params(torch, s), **flags)
        variants[f'PyTorch, {label}'] = (opt, None)
    count = sum(p.numel() for p in variants['dynagrad, native kernels'][0].param_groups[0]
                ['params'] + variants['dynagrad, native kernels'][0].param_groups[1]['params'])
    tensors = sum(len(g['params']) for g in variants['dynagrad, native kernels'][0].param_groups)
    times = {name: [] for name in variants}
    with W._one_thread(torch), W._one_thread(dynagrad):
        for _ in range(args.rounds):
            for name, (opt, mode) in variants.items():
                if mode is not None:
                    backend.set_kernels(mode)
                opt.step()       # warm (and compiled, on the first round)
                per_step = []
                for _ in range(args.steps):
                    t0 = time.perf_counter()
                    opt.step()
                    per_step.append(time.perf_counter() - t0)
                times[name].append(statistics.median(per_step) * 1e3)
        backend.set_kernels('auto')
    import os
    print(f'### {args.optimizer} step, {tensors} float32 tensors, {count:,} values, 1 thread '
          f'(load average {os.getloadavg()[0]:.1f})\n')
    print('| variant | best ms | median ms |\n|---|--:|--:|')
    for name, t in times.items():
        print(f'| {name} | {min(t):.3f} | {statistics.median(t):.3f} |')


if __name__ == '__main__':
    main()
