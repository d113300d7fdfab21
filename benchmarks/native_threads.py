"""The native kernels on one thread and on two, split by ``dynagrad.native.threads`` with
the size thresholds lowered to nothing: the figures the thresholds (``MIN_PER_THREAD`` in
each family module) were chosen from.

    python -m benchmarks.native_threads [--rounds 16]

Each round times a kernel on one thread and on two, between two runs of a control (GELU
over 1.5M floats on one and two threads). On a shared machine a second core comes and
goes within seconds; rounds whose control gained (two threads under 0.7x one thread's
time) are reported in the "core free" column, the others in "core busy". Prints a markdown
table: ms on one thread / ms on two = their ratio (rounds).
"""
import argparse
import time

import numpy as np


def _cases():
    import dynagrad
    from dynagrad import native
    from dynagrad.native import conv
    rng = np.random.default_rng(0)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    gelu, gelu_b = native.load('gelu'), native.load('gelu_backward')
    ln, ln_b = native.load('layer_norm'), native.load('layer_norm_backward')
    probs, probs_b = native.load('attention_probs'), native.load('attention_probs_backward')
    pool, pool_b = native.load('max_pool'), native.load('max_pool_backward')
    geometry = dict(K=(3, 3), stride=(1, 1), pads=((0, 0), (0, 0)), dilation=(1, 1))

    def gelu_fwd(shape):
        x = r(*shape)
        return lambda: gelu(x, False)

    def gelu_bwd(shape):
        x, g = r(*shape), r(*shape)
        return lambda: gelu_b(g, x, False)

    def norm_fwd(shape):
        x, w = r(*shape), r(shape[-1])
        return lambda: ln(x, shape[-1], w, w, 1e-5)

    def norm_bwd(shape):        # the input's gradient only: the split case
        x, g, w = r(*shape), r(*shape), r(shape[-1])
        _, mean, rstd = ln(x, shape[-1], w, w, 1e-5)
        return lambda: ln_b(g, x, mean, rstd, w, shape[-1], (True, False, False),
                            (shape[-1],))

    def attn_fwd(shape):        # causal; the copy (in both columns) refreshes the scores
        s = r(*shape)
        buf = s.copy()
        return lambda: (np.copyto(buf, s), probs(buf, 0.125, None, True))

    def attn_bwd(shape):
        p, _ = probs(r(*shape), 0.125, None, True)
        dp = r(*shape)
        buf = dp.copy()
        return lambda: (np.copyto(buf, dp), probs_b(buf, p, None, 0.125))

    def im2col(shape):
        x = r(*shape)
        return lambda: conv.im2col(x, out=(shape[2] - 2, shape[3] - 2), **geometry)

    def col2im(shape):
        N, C, H, W = shape
        cols = r(N, C, 3, 3, H - 2, W - 2)
        return lambda: conv.col2im(cols, (H, W), **geometry)

    def pool_fwd(shape):
        x = r(*shape)
        return lambda: pool(x, (2, 2), (2, 2), (0, 0), (1, 1), (shape[2] // 2, shape[3] // 2))

    def pool_bwd(shape):
        x = r(*shape)
        y, idx = pool(x, (2, 2), (2, 2), (0, 0), (1, 1), (shape[2] // 2, shape[3] // 2))
        g = r(*y.shape)
        return lambda: pool_b(g, idx, x.shape, 2)

    cases = [
        ('GELU fwd', gelu_fwd, [(12, 64, 256), (12, 64, 384), (12, 64, 512)]),
        ('GELU bwd', gelu_bwd, [(12, 64, 256), (12, 64, 512)]),
        ('layer norm fwd', norm_fwd, [(768, 128), (6144, 128), (12288, 128)]),
        ('layer norm bwd (input)', norm_bwd, [(768, 128), (6144, 128)]),
        ('attention probs fwd', attn_fwd, [(8, 128, 128), (48, 64, 64), (32, 128, 128)]),
        ('attention probs bwd', attn_bwd, [(32, 128, 128), (64, 128, 128), (128, 128, 128)]),
        ('im2col 3x3', im2col, [(32, 1, 28, 28), (64, 1, 28, 28), (32, 16, 13, 13)]),
        ('col2im 3x3', col2im, [(32, 16, 13, 13), (64, 16, 26, 26)]),
        ('max pool 2x2 fwd', pool_fwd, [(32, 32, 11, 11), (32, 16, 20, 20), (32, 16, 26, 26)]),
        ('max pool 2x2 bwd', pool_bwd, [(32, 16, 26, 26), (32, 32, 26, 26), (64, 32, 26, 26)]),
    ]
    return dynagrad, gelu_fwd((12, 64, 2048)), cases


def _time(fn, budget=0.01):
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    n = max(3, min(200, int(budget / max(once, 1e-6))))
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=16)
    args = ap.parse_args(argv)
    from dynagrad.native import activation, attention, conv, normalization, pooling
    for module in (activation, attention, conv, normalization, pooling):
        for name in ('MIN_PER_THREAD', 'MIN_PER_THREAD_BACKWARD'):
            if hasattr(module, name):
                setattr(module, name, 1)
    dynagrad, control, cases = _cases()
    threads_before = dynagrad.get_num_threads()

    def one_and_two(fn):
        times = {}
        for n in (1, 2):
            dynagrad.set_num_threads(n)
            times[n] = _time(fn)
        return times

    print('| kernel | shape | core free: 1T / 2T = ratio | core busy: 1T / 2T = ratio |')
    print('|---|---|--:|--:|')
    try:
        for name, make, shapes in cases:
            for shape in shapes:
                fn = make(shape)
                states = {'free': {}, 'busy': {}}
                for _ in range(args.rounds):
                    before, kernel, after = one_and_two(control), one_and_two(fn), \
                        one_and_two(control)
                    free = max(before[2] / before[1], after[2] / after[1]) < 0.7
                    state = states['free' if free else 'busy']
                    for n in (1, 2):
                        state[n] = min(state.get(n, np.inf), kernel[n])
                    state['rounds'] = state.get('rounds', 0) + 1
                cells = [f"{s[1]:.3f} / {s[2]:.3f} = {s[2] / s[1]:.2f} ({s['rounds']})"
                         if s else '-' for s in states.values()]
                print(f'| {name} | {shape} | ' + ' | '.join(cells) + ' |', flush=True)
    finally:
        dynagrad.set_num_threads(threads_before)


if __name__ == '__main__':
    main()
