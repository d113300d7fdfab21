"""The benchmark workloads, each written for dynagrad, PyTorch and hand-written NumPy.

One process runs one workload for one library and prints one JSON object::

    python -m benchmarks.workloads --lib dynagrad --workload mlp --repeats 20 [--smoke]

    {"lib": "dynagrad", "workload": "mlp", "version": "0.1.0",
     "rows": [{"name": "train step", "unit": "ms/step", "value": 7.1}, ...]}

dynagrad has PyTorch's user API, so one function written against a module ``T`` runs
both (``T`` is ``dynagrad`` or ``torch``); the NumPy version beside it does the same
arithmetic with a hand-written backward pass: the floor for a NumPy-based library.
Every time is a median over ``repeats`` runs after warm-up; everything is float32.
"""
import argparse
import gc
import importlib
import json
import statistics
import time
import weakref

import numpy as np

SIZES = {
    'full': dict(chain_ops=200, mlp_batch=128, matmul_n=1024, memory_steps=200,
                 chains=(1_000, 10_000, 100_000)),
    'smoke': dict(chain_ops=200, mlp_batch=16, matmul_n=128, memory_steps=20,
                  chains=(1_000, 10_000)),
}
MLP_SIZES = (784, 512, 512, 10)
LR = 0.01
F32 = np.float32


# -- measuring -------------------------------------------------------------------------------
def median_time(fn, repeats, warmup=2, inner=1, setup=None):
    """Median seconds per call of ``fn`` (``fn(setup())`` when a setup is given: untimed)."""
    def once():
        if setup is None:
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            return (time.perf_counter() - t0) / inner
        arg = setup()
        t0 = time.perf_counter()
        fn(arg)
        return time.perf_counter() - t0

    for _ in range(warmup):
        once()
    return statistics.median(once() for _ in range(repeats))


def peak_rss_mb():
    """The process's peak resident set size (VmHWM), in MB."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def row(name, unit, value):
    return {'name': name, 'unit': unit, 'value': value}


# -- 1. per-op overhead: a chain of cheap ops on a 4-element tensor ----------------------------
def chain(x, w, n):
    """``n`` cheap ops: (x*1.0001, x+0.5, tanh, x*w) repeated."""
    for _ in range(n // 4):
        x = x * 1.0001
        x = x + 0.5
        x = x.tanh()
        x = x * w
    return x


def per_op_autograd(T, cfg, repeats):
    n = cfg['chain_ops']
    x = T.randn(4, requires_grad=True)
    w = (T.rand(4) * 0.1 + 0.9).requires_grad_()

    def fwd_bwd():
        x.grad = w.grad = None
        chain(x, w, n).sum().backward()

    def no_grad():
        with T.no_grad():
            chain(x, w, n)

    us = 1e6 / n
    def fwd():
        chain(x, w, n)

    return [row('fwd+bwd', 'us/op', median_time(fwd_bwd, repeats, inner=10) * us),
            row('fwd, grad on', 'us/op', median_time(fwd, repeats, inner=10) * us),
            row('fwd, no_grad', 'us/op', median_time(no_grad, repeats, inner=10) * us)]


def per_op_numpy(cfg, repeats):
    n = cfg['chain_ops']
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4, dtype=F32)
    w = (rng.random(4, dtype=F32) * 0.1 + 0.9).astype(F32)

    def forward(tape):
        h = x
        for _ in range(n // 4):
            h = h * 1.0001
            h = h + 0.5
            h = np.tanh(h)
            tape.append(h)  # tanh's output, which both tanh's and mul's backward need
            h = h * w
        return h

    def fwd_bwd():
        tape = []
        forward(tape).sum()
        g = np.ones(4, F32)
        gw = np.zeros(4, F32)
        for y in reversed(tape):
            gw += g * y          # d(y*w)/dw
            g = g * w            # d(y*w)/dy
            g = g * (1 - y * y)  # tanh
            g = g * 1.0001       # the add passes g through; the scale multiplies it
        return g, gw

    def no_grad():
        h = x
        for _ in range(n // 4):
            h = np.tanh(h * 1.0001 + 0.5) * w

    us = 1e6 / n
    return [row('fwd+bwd', 'us/op', median_time(fwd_bwd, repeats, inner=10) * us),
            row('fwd, grad on', 'us/op', median_time(lambda: forward([]), repeats, inner=10) * us),
            row('fwd, no_grad', 'us/op', median_time(no_grad, repeats, inner=10) * us)]


# -- 2. MLP training step, also used by the memory workload -----------------------------------
def mlp_autograd(T, batch):
    """A step function: zero_grad, forward, cross-entropy, backward, SGD update."""
    T.manual_seed(0)
    layers = [T.nn.Linear(i, o) for i, o in zip(MLP_SIZES, MLP_SIZES[1:])]
    opt = T.optim.SGD([p for layer in layers for p in layer.parameters()], lr=LR)
    X = T.randn(batch, MLP_SIZES[0])
    y = T.randint(0, MLP_SIZES[-1], (batch,))
    cross_entropy = T.nn.functional.cross_entropy  # what a PyTorch user writes

    def step(keep=None):
        opt.zero_grad()
        h = X
        for i, layer in enumerate(layers):
            h = layer(h)
            if i < len(layers) - 1:
                h = h.relu()
            if keep is not None:  # weak references to what the finished step must free
                keep.append(weakref.ref(h))
                if T.__name__ != 'torch':  # torch's graph nodes cannot be weakly referenced
                    keep.append(weakref.ref(h.grad_fn))
        loss = cross_entropy(h, y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def mlp_numpy(batch):
    """The same step with a hand-written backward: the floor."""
    rng = np.random.default_rng(0)
    params = []
    for i, o in zip(MLP_SIZES, MLP_SIZES[1:]):
        bound = 1 / np.sqrt(i)
        params.append([rng.uniform(-bound, bound, (o, i)).astype(F32),
                       rng.uniform(-bound, bound, o).astype(F32)])
    X = rng.standard_normal((batch, MLP_SIZES[0]), dtype=F32)
    y = rng.integers(0, MLP_SIZES[-1], batch)
    rows = np.arange(batch)

    def step(keep=None):
        acts = [X]  # the input of each layer
        h = X
        for i, (W, b) in enumerate(params):
            h = h @ W.T + b
            if i < len(params) - 1:
                h = np.maximum(h, 0)
                acts.append(h)
            if keep is not None:
                keep.append(weakref.ref(h))
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = -(z[rows, y] - np.log(s[:, 0])).mean()
        g = e / s  # d loss / d logits = (softmax - onehot) / batch
        g[rows, y] -= 1
        g /= batch
        for i in reversed(range(len(params))):
            W, b = params[i]
            a = acts[i]
            gW, gb = g.T @ a, g.sum(axis=0)
            if i:
                g = (g @ W) * (a > 0)  # through the previous layer's ReLU
            W -= LR * gW
            b -= LR * gb
        return float(loss)
    return step


def mlp_rows(step, cfg, repeats):
    return [row('train step', 'ms/step', median_time(step, repeats) * 1e3)]


# -- 3. large matmul chain: ((A@B).tanh() @ C).sum(), forward and backward -----------------------
def matmul_autograd(T, cfg, repeats):
    n = cfg['matmul_n']
    T.manual_seed(0)
    A, B, C = (T.randn(n, n, requires_grad=True) for _ in range(3))

    def fwd_bwd():
        A.grad = B.grad = C.grad = None
        ((A @ B).tanh() @ C).sum().backward()
    return [row(f'fwd+bwd, {n}x{n}', 'ms', median_time(fwd_bwd, repeats, warmup=1) * 1e3)]


def matmul_numpy(cfg, repeats):
    n = cfg['matmul_n']
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal((n, n), dtype=F32) for _ in range(3))

    def fwd_bwd():
        t = np.tanh(A @ B)
        (t @ C).sum()
        g = np.ones((n, n), F32)     # d sum
        gC = t.T @ g
        gh = (g @ C.T) * (1 - t * t)  # through tanh
        return A.T @ gh, gh @ B.T, gC
    return [row(f'fwd+bwd, {n}x{n}', 'ms', median_time(fwd_bwd, repeats, warmup=1) * 1e3)]


# -- 4. memory: peak RSS over many MLP steps, and the graph freed after backward ---------------
def memory_rows(step, cfg):
    steps = cfg['memory_steps']
    for _ in range(10):
        step()
    first = peak_rss_mb()
    for _ in range(steps - 10):
        step()
    last = peak_rss_mb()

    gc.collect()
    gc.disable()  # what follows must be freed by reference counting alone
    try:
        keep = []
        step(keep)
        freed = all(ref() is None for ref in keep)
    finally:
        gc.enable()
    return [row('peak RSS, first 10 steps', 'MB', first),
            row(f'peak RSS, after {steps} steps', 'MB', last),
            row('RSS growth (last/first)', 'x', last / first),
            row('graph freed without gc', 'bool', freed)]


# -- 5. scaling: backward through long chains --------------------------------------------------
def long_chain(y, n):
    for _ in range(n // 2):
        y = y * 1.0001
        y = y + 0.0001
    return y


def scaling_rows(build, backward, cfg, repeats):
    """Backward time per op for each chain length, and the longest/shortest ratio."""
    rows = []
    per_op = {}
    for n in cfg['chains']:
        reps = repeats if n < 100_000 else max(1, min(repeats, 3))
        t = median_time(backward, reps, warmup=1, setup=lambda: build(n))
        per_op[n] = t / n * 1e6
        rows.append(row(f'bwd, {n:,}-op chain', 'us/op', per_op[n]))
    lo, hi = min(per_op), max(per_op)
    rows.append(row(f'per-op ratio {hi // 1000}k/{lo // 1000}k', 'x', per_op[hi] / per_op[lo]))
    return rows


def scaling_autograd(T, cfg, repeats):
    x = T.randn(4, requires_grad=True)

    def build(n):
        x.grad = None
        return long_chain(x, n).sum()
    return scaling_rows(build, lambda loss: loss.backward(), cfg, repeats)


def scaling_numpy(cfg, repeats):
    x = np.random.default_rng(0).standard_normal(4, dtype=F32)

    def build(n):
        long_chain(x, n).sum()  # the forward, as in the others (nothing needs saving)
        return n

    def backward(n):
        g = np.ones(4, F32)
        for _ in range(n // 2):
            g = g * 1.0001  # the add passes g through unchanged
        return g
    return scaling_rows(build, backward, cfg, repeats)


# -- running one ----------------------------------------------------------------------------
WORKLOADS = ('per_op', 'mlp', 'matmul', 'memory', 'scaling')
LIBS = ('dynagrad', 'torch', 'numpy')


def run(lib, workload, cfg, repeats):
    if lib == 'numpy':
        return {'per_op': lambda: per_op_numpy(cfg, repeats),
                'mlp': lambda: mlp_rows(mlp_numpy(cfg['mlp_batch']), cfg, repeats),
                'matmul': lambda: matmul_numpy(cfg, repeats),
                'memory': lambda: memory_rows(mlp_numpy(cfg['mlp_batch']), cfg),
                'scaling': lambda: scaling_numpy(cfg, repeats)}[workload]()
    T = importlib.import_module(lib)
    return {'per_op': lambda: per_op_autograd(T, cfg, repeats),
            'mlp': lambda: mlp_rows(mlp_autograd(T, cfg['mlp_batch']), cfg, repeats),
            'matmul': lambda: matmul_autograd(T, cfg, repeats),
            'memory': lambda: memory_rows(mlp_autograd(T, cfg['mlp_batch']), cfg),
            'scaling': lambda: scaling_autograd(T, cfg, repeats)}[workload]()


def blas_threads():
    """NumPy's BLAS thread count, as threadpoolctl reads it."""
    from threadpoolctl import threadpool_info
    blas = [p for p in threadpool_info() if p['user_api'] == 'blas']
    numpys = [p for p in blas if 'numpy' in p['filepath']]
    return (numpys or blas)[0]['num_threads'] if blas else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--lib', choices=LIBS, required=True)
    ap.add_argument('--workload', choices=WORKLOADS, required=True)
    ap.add_argument('--repeats', type=int, default=10)
    ap.add_argument('--smoke', action='store_true', help='small sizes')
    args = ap.parse_args(argv)
    cfg = SIZES['smoke' if args.smoke else 'full']
    out = {'lib': args.lib, 'workload': args.workload}
    if args.lib == 'torch':
        import torch
        torch.set_num_threads(blas_threads())
        out['threads'] = torch.get_num_threads()
    else:
        out['threads'] = blas_threads()
    module = importlib.import_module(args.lib)
    out['version'] = getattr(module, '__version__', '?')
    out['rows'] = run(args.lib, args.workload, cfg, args.repeats)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
