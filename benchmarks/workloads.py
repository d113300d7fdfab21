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
                 chains=(1_000, 10_000, 100_000), cnn_batch=32, mlp_loop=1000, gpt_loop=200),
    'smoke': dict(chain_ops=200, mlp_batch=16, matmul_n=128, memory_steps=20,
                  chains=(1_000, 10_000), cnn_batch=8, mlp_loop=20, gpt_loop=4),
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


def current_rss_mb():
    """The process's resident set size now (VmRSS), in MB."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024


def peak_rss_above_now_mb(fn, calls):
    """How far above the resident set size before them ``calls`` calls of ``fn`` drive the
    peak: the memory a training step needs for activations, gradients and optimizer state,
    without the libraries themselves (PyTorch's alone are 300 MB). None where the kernel
    cannot reset the peak (writing 5 to /proc/self/clear_refs, Linux 4.0+)."""
    gc.collect()
    try:
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')
    except OSError:
        return None
    before = current_rss_mb()
    for _ in range(calls):
        fn()
    return peak_rss_mb() - before


def row(name, unit, value):
    return {'name': name, 'unit': unit, 'value': value}


def print_against_last(label, rows, names, digits):
    """A markdown table: one row per ``(title, values)`` of ``rows`` (a value per name of
    ``names``, PyTorch's last), then each value over the last one."""
    print(f'| {label} | ' + ' | '.join(names) + ' | '
          + ' | '.join(f'{n}/PyTorch' for n in names[:-1]) + ' |')
    print('|---|' + '--:|' * (2 * len(names) - 1))
    for title, vals in rows:
        print(f'| {title} | ' + ' | '.join(f'{v:.{digits}f}' for v in vals) + ' | '
              + ' | '.join(f'{v / vals[-1]:.2f}x' for v in vals[:-1]) + ' |')


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

    rows = [row('fwd+bwd', 'us/op', median_time(fwd_bwd, repeats, inner=10) * us),
            row('fwd, grad on', 'us/op', median_time(fwd, repeats, inner=10) * us),
            row('fwd, no_grad', 'us/op', median_time(no_grad, repeats, inner=10) * us)]
    # torch.compile (inductor: a C++ toolchain, about half a minute of compiling) in the
    # full run only; dynagrad's in both
    if T.__name__ == 'dynagrad' or cfg is SIZES['full']:
        compiled = T.compile(lambda x, w: chain(x, w, n).sum())

        def compiled_fwd_bwd():
            x.grad = w.grad = None
            compiled(x, w).backward()
        start = time.perf_counter()
        for _ in range(3):        # two captures, then the program's first replay
            compiled_fwd_bwd()
        capture = (time.perf_counter() - start) * 1e3
        rows.append(row('compiled: fwd+bwd', 'us/op',
                        median_time(compiled_fwd_bwd, repeats, inner=10) * us))
        rows.append(row('compiled: capture, first 3 calls', 'ms', capture))
    return rows


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
    floor = median_time(fwd_bwd, repeats, inner=10) * us
    return [row('fwd+bwd', 'us/op', floor),
            row('fwd, grad on', 'us/op', median_time(lambda: forward([]), repeats, inner=10) * us),
            row('fwd, no_grad', 'us/op', median_time(no_grad, repeats, inner=10) * us),
            row('compiled: fwd+bwd', 'us/op', floor)]   # the floor compiled code aims at


# -- 2. MLP training step, also used by the memory workload -----------------------------------
def mlp_autograd(T, batch, compiles=None):
    """A step function: zero_grad, forward, cross-entropy, backward, SGD update; with
    ``compiles``, its ``compiled`` attribute is the same step through ``T.compile``."""
    if compiles is None:
        compiles = T.__name__ == 'dynagrad'
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

    def loss_of(X, y):
        h = X
        for i, layer in enumerate(layers):
            h = layer(h)
            if i < len(layers) - 1:
                h = h.relu()
        return cross_entropy(h, y)

    def compiled_step(compiled=T.compile(loss_of) if compiles else None):
        opt.zero_grad()
        loss = compiled(X, y)
        loss.backward()
        opt.step()
        return loss.item()
    step.compiled = compiled_step if compiles else None
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


def step_rows(step, repeats, name):
    """Peak memory of the first steps (taken first, before timing fills any allocator
    cache), then the median time of a step."""
    peak = peak_rss_above_now_mb(step, 3)
    return ([row('peak memory of 3 steps, above the built model', 'MB', peak)]
            if peak is not None else []) + [
        row(name, 'ms/step', median_time(step, repeats) * 1e3)]


def mlp_rows(step, cfg, repeats, make=None):
    """``make()``: a fresh (step with its compiled twin) for the capture and loop rows."""
    rows = step_rows(step, repeats, 'train step')
    compiled = getattr(step, 'compiled', False)
    if compiled is False:       # NumPy: the floor compiled code aims at
        rows.append(row('compiled: train step', 'ms/step', rows[-1]['value']))
    elif compiled is not None:
        rows.append(row('compiled: train step', 'ms/step', median_time(compiled, repeats) * 1e3))
        rows += capture_and_loop_rows(make, cfg['mlp_loop'])
    return rows


def capture_and_loop_rows(make, steps):
    """How long a compiled step's first three calls take (two captures and the program's
    first replay; torch.compile's compiling), and ``steps`` training steps from a fresh
    start, eager against compiled with its capture included: what a training loop sees.
    ``make()``: a fresh step function with its ``compiled`` twin."""
    rows = []
    fresh = make()
    start = time.perf_counter()
    for _ in range(3):
        fresh.compiled()
    rows.append(row('compiled: capture, first 3 calls', 'ms', (time.perf_counter() - start) * 1e3))
    # each loop twice, alternating, from fresh models: the faster of the two (a loop of
    # thousands of steps varies by 10-15% from run to run here, more than the difference)
    best = {}
    for _ in range(2):
        for name in (f'loop of {steps} steps, eager',
                     f'compiled: loop of {steps} steps, capture included'):
            fresh = make()
            step = fresh.compiled if name.startswith('compiled') else fresh
            gc.collect()
            start = time.perf_counter()
            for _ in range(steps):
                step()
            took = time.perf_counter() - start
            best[name] = min(best.get(name, took), took)
    return rows + [row(name, 's', took) for name, took in best.items()]


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


# -- 6. CNN training step: two 3x3 convolutions, ReLU, 2x2 max-pooling, linear, CE -----------
def _max_pool2(F, h):
    """2x2 max-pooling: ``F.max_pool2d`` where the library has it, else a reshape-and-amax."""
    if hasattr(F, 'max_pool2d'):
        return F.max_pool2d(h, 2)
    n, c, hh, ww = h.shape
    return h.reshape(n, c, hh // 2, 2, ww // 2, 2).amax((3, 5))


def cnn_params(rng):
    """Conv 1->16 3x3, conv 16->32 3x3, linear 32*5*5 -> 10 (PyTorch's default init bounds)."""
    shapes = [((16, 1, 3, 3), 9), ((16,), 9), ((32, 16, 3, 3), 144), ((32,), 144),
              ((10, 800), 800), ((10,), 800)]
    return [rng.uniform(-1 / np.sqrt(fan), 1 / np.sqrt(fan), shape).astype(F32)
            for shape, fan in shapes]


def cnn_autograd(T, batch):
    rng = np.random.default_rng(0)
    params = [T.tensor(p).requires_grad_() for p in cnn_params(rng)]
    w1, b1, w2, b2, w3, b3 = params
    opt = T.optim.SGD(params, lr=LR)
    F = T.nn.functional
    X = T.tensor(rng.standard_normal((batch, 1, 28, 28), dtype=F32))
    y = T.tensor(rng.integers(0, 10, batch))

    def step():
        opt.zero_grad()
        h = _max_pool2(F, F.relu(F.conv2d(X, w1, b1)))       # (N, 16, 13, 13)
        h = _max_pool2(F, F.relu(F.conv2d(h, w2, b2)))       # (N, 32, 5, 5)
        loss = F.cross_entropy(F.linear(h.flatten(1), w3, b3), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def cnn_numpy(batch):
    """The same step by hand: im2col + one batched GEMM per convolution, col2im backward."""
    from numpy.lib.stride_tricks import sliding_window_view
    rng = np.random.default_rng(0)
    params = cnn_params(rng)
    X = rng.standard_normal((batch, 1, 28, 28), dtype=F32)
    y = rng.integers(0, 10, batch)
    rows = np.arange(batch)

    def im2col(x):                       # (N, C, H, W) -> (N, C*9, OH*OW)
        v = sliding_window_view(x, (3, 3), axis=(2, 3))   # (N, C, OH, OW, 3, 3)
        n, c, oh, ow = v.shape[:4]
        return v.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * 9, oh * ow), oh, ow

    def conv(x, W, b):
        cols, oh, ow = im2col(x)
        out = np.matmul(W.reshape(W.shape[0], -1), cols) + b[:, None]
        return out.reshape(x.shape[0], W.shape[0], oh, ow), cols

    def conv_back(g, cols, W, x_shape):
        n, o = g.shape[:2]
        g2 = g.reshape(n, o, -1)
        gW = np.matmul(g2, cols.transpose(0, 2, 1)).sum(0).reshape(W.shape)
        gb = g2.sum((0, 2))
        gx = None
        if x_shape is not None:
            gc = np.matmul(W.reshape(o, -1).T, g2).reshape(n, W.shape[1], 3, 3, *g.shape[2:])
            gx = np.zeros(x_shape, F32)
            oh, ow = g.shape[2:]
            for i in range(3):
                for j in range(3):
                    gx[:, :, i:i + oh, j:j + ow] += gc[:, :, i, j]
        return gx, gW, gb

    def pool(h):                         # 2x2 max-pool (floor), with the argmax mask
        n, c, hh, ww = h.shape
        hc = h[:, :, :hh // 2 * 2, :ww // 2 * 2].reshape(n, c, hh // 2, 2, ww // 2, 2)
        out = hc.max((3, 5))
        mask = hc == out[:, :, :, None, :, None]
        return out, mask

    def unpool(g, mask, shape):
        gh = np.zeros(shape, F32)
        n, c, hh, ww = mask.shape[0], mask.shape[1], mask.shape[2] * 2, mask.shape[4] * 2
        gh[:, :, :hh, :ww] = (mask * g[:, :, :, None, :, None]).reshape(n, c, hh, ww)
        return gh

    def step():
        w1, b1, w2, b2, w3, b3 = params
        a1, c1 = conv(X, w1, b1)
        r1 = np.maximum(a1, 0)
        p1, m1 = pool(r1)
        a2, c2 = conv(p1, w2, b2)
        r2 = np.maximum(a2, 0)
        p2, m2 = pool(r2)
        flat = p2.reshape(batch, -1)
        z = flat @ w3.T + b3
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = -(z[rows, y] - np.log(s[:, 0])).mean()
        g = e / s
        g[rows, y] -= 1
        g /= batch
        gw3, gb3 = g.T @ flat, g.sum(0)
        gp2 = (g @ w3).reshape(p2.shape)
        ga2 = unpool(gp2, m2, r2.shape) * (a2 > 0)
        gp1, gw2, gb2 = conv_back(ga2, c2, w2, p1.shape)
        ga1 = unpool(gp1, m1, r1.shape) * (a1 > 0)
        _, gw1, gb1 = conv_back(ga1, c1, w1, None)   # the input needs no gradient
        for p, gp in zip(params, (gw1, gb1, gw2, gb2, gw3, gb3)):
            p -= LR * gp
        return float(loss)
    return step


def cnn_rows(step, repeats):
    return step_rows(step, repeats, 'train step')


# -- 7. language-model step: embedding, 2-layer LSTM, linear decoder, cross-entropy, clipping --
LM_SIZES = {  # issue 6's word-level language model (PyTorch's word_language_model example)
    'full': dict(vocab=10_000, emb=200, hidden=200, layers=2, seq=35, batch=20),
    'smoke': dict(vocab=1_000, emb=32, hidden=32, layers=2, seq=8, batch=4),
}
LM_CLIP, LM_LR = 0.25, 1.0


def lm_sizes(cfg):
    return LM_SIZES['smoke' if cfg is SIZES['smoke'] else 'full']


def lm_data(s):
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, s['vocab'], (s['seq'], s['batch']))
    targets = rng.integers(0, s['vocab'], (s['seq'], s['batch']))
    return rng, tokens, targets


def lm_autograd(T, s):
    """One step: embed (35, 20) tokens, 2-layer LSTM, decode to the vocabulary, CE, clip, SGD.

    The hidden state carries over from step to step, detached (truncated BPTT).
    """
    T.manual_seed(0)
    V, E, H = s['vocab'], s['emb'], s['hidden']
    nn, F = T.nn, T.nn.functional
    LSTM = getattr(nn, 'LSTM', None) or importlib.import_module(
        'dynagrad.nn.modules.rnn').LSTM
    emb = nn.Parameter(T.rand(V, E) * 0.2 - 0.1)
    lstm = LSTM(E, H, s['layers'])
    dec = nn.Linear(H, V)
    params = [emb] + list(lstm.parameters()) + list(dec.parameters())
    opt = T.optim.SGD(params, lr=LM_LR)
    clip = getattr(getattr(nn, 'utils', None), 'clip_grad_norm_', None)
    if clip is None:  # until nn.utils exports it: the global norm inline
        def clip(ps, max_norm):
            with T.no_grad():
                norm = sum(float((p.grad * p.grad).sum()) for p in ps) ** 0.5
                coef = max_norm / (norm + 1e-6)
                if coef < 1:
                    for p in ps:
                        p.grad.mul_(coef)
    embedding = getattr(F, 'embedding', None) or (lambda idx, w: w[idx])
    _, tokens, targets = lm_data(s)
    tokens, targets = T.tensor(tokens), T.tensor(targets).reshape(-1)
    hidden = [None]

    def step():
        opt.zero_grad()
        out, (h, c) = lstm(embedding(tokens, emb), hidden[0])
        hidden[0] = (h.detach(), c.detach())
        loss = F.cross_entropy(dec(out.reshape(-1, H)), targets)
        loss.backward()
        clip(params, LM_CLIP)
        opt.step()
        return loss.item()
    return step


def _np_lstm_forward(x, h, c, Wih, Whh, b):
    """One LSTM layer over (T, B, I), gates i, f, g, o from one matmul per step."""
    n, B, _ = x.shape
    H = Whh.shape[1]
    A = (x.reshape(n * B, -1) @ Wih.T + b).reshape(n, B, 4 * H)  # all input projections
    hs = np.empty((n + 1, B, H), F32)
    cs = np.empty((n + 1, B, H), F32)
    hs[0], cs[0] = h, c
    for t in range(n):
        a = A[t]
        a += hs[t] @ Whh.T
        a[:, :2 * H] = 1 / (1 + np.exp(-a[:, :2 * H]))
        a[:, 2 * H:3 * H] = np.tanh(a[:, 2 * H:3 * H])
        a[:, 3 * H:] = 1 / (1 + np.exp(-a[:, 3 * H:]))
        cs[t + 1] = a[:, H:2 * H] * cs[t] + a[:, :H] * a[:, 2 * H:3 * H]
        hs[t + 1] = a[:, 3 * H:] * np.tanh(cs[t + 1])
    return hs, cs, A


def _np_lstm_backward(dout, x, hs, cs, A, Wih, Whh):
    n, B, _ = x.shape
    H = Whh.shape[1]
    dG = np.empty_like(A)
    dh = np.zeros((B, H), F32)
    dc = np.zeros((B, H), F32)
    for t in reversed(range(n)):
        a = A[t]
        i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        dh += dout[t]
        tc = np.tanh(cs[t + 1])
        dc += dh * o * (1 - tc * tc)
        d = dG[t]
        d[:, :H] = dc * g * i * (1 - i)
        d[:, H:2 * H] = dc * cs[t] * f * (1 - f)
        d[:, 2 * H:3 * H] = dc * i * (1 - g * g)
        d[:, 3 * H:] = dh * tc * o * (1 - o)
        dc *= f
        dh = d @ Whh
    dG2 = dG.reshape(n * B, 4 * H)
    dx = (dG2 @ Wih).reshape(x.shape)
    return dx, dG2.T @ x.reshape(n * B, -1), dG2.T @ hs[:-1].reshape(n * B, H), dG2.sum(0)


def lm_numpy(s):
    """The same step with a hand-written backward (BPTT by hand): the floor."""
    V, E, H, L = s['vocab'], s['emb'], s['hidden'], s['layers']
    rng, tokens, targets = lm_data(s)
    bound = 1 / np.sqrt(H)
    emb = rng.uniform(-0.1, 0.1, (V, E)).astype(F32)
    layers = []
    for k in range(L):
        i = E if k == 0 else H
        Wih, Whh = (rng.uniform(-bound, bound, shape).astype(F32)
                    for shape in ((4 * H, i), (4 * H, H)))
        layers.append([Wih, Whh, rng.uniform(-bound, bound, 4 * H).astype(F32),
                       rng.uniform(-bound, bound, 4 * H).astype(F32)])
    Wd = rng.uniform(-bound, bound, (V, H)).astype(F32)
    bd = rng.uniform(-bound, bound, V).astype(F32)
    y = targets.reshape(-1)
    N = y.size
    rows = np.arange(N)
    state = [(np.zeros((s['batch'], H), F32),) * 2 for _ in range(L)]

    def step():
        x = emb[tokens]
        caches = []
        for k, (Wih, Whh, bih, bhh) in enumerate(layers):
            hs, cs, A = _np_lstm_forward(x, *state[k], Wih, Whh, bih + bhh)
            caches.append((x, hs, cs, A))
            state[k] = (hs[-1].copy(), cs[-1].copy())
            x = hs[1:]
        out = x.reshape(N, H)
        z = out @ Wd.T + bd
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        ssum = e.sum(axis=1, keepdims=True)
        loss = -(z[rows, y] - np.log(ssum[:, 0])).mean()
        g = e / ssum
        g[rows, y] -= 1
        g /= N
        grads = [g.T @ out, g.sum(0)]   # decoder weight, bias
        dx = (g @ Wd).reshape(x.shape)
        for k in reversed(range(L)):
            Wih, Whh = layers[k][:2]
            dx, gWih, gWhh, gb = _np_lstm_backward(dx, *caches[k], Wih, Whh)
            grads[:0] = [gWih, gWhh, gb, gb]
        gemb = np.zeros_like(emb)
        np.add.at(gemb, tokens.reshape(-1), dx.reshape(N, E))
        grads.insert(0, gemb)
        params = [emb] + [p for layer in layers for p in layer] + [Wd, bd]
        norm = np.sqrt(sum(float((gr * gr).sum()) for gr in grads))
        coef = min(LM_CLIP / (norm + 1e-6), 1.0)
        for p, gr in zip(params, grads):
            p -= (LM_LR * coef) * gr
        return float(loss)
    return step


def lm_rows(step, repeats):
    return step_rows(step, repeats, 'train step')


# -- 8. attention: scaled_dot_product_attention on q, k, v of 8 x 128 x 64, forward+backward --
ATTN_SHAPE = (8, 128, 64)


def attention_data():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(ATTN_SHAPE).astype(F32) for _ in range(4)]


def attention_autograd(T):
    *qkv, g = attention_data()
    q, k, v = (T.tensor(a, requires_grad=True) for a in qkv)
    g = T.tensor(g)
    sdpa = T.nn.functional.scaled_dot_product_attention

    def step():
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v).backward(g)
    return step


def attention_numpy():
    q, k, v, g = attention_data()
    scale = F32(1.0 / np.sqrt(ATTN_SHAPE[-1]))

    def step():
        s = q @ k.swapaxes(-1, -2)
        s *= scale
        s -= s.max(-1, keepdims=True)
        p = np.exp(s, out=s)
        p /= p.sum(-1, keepdims=True)
        out = p @ v
        gv = p.swapaxes(-1, -2) @ g
        dp = g @ v.swapaxes(-1, -2)
        dp -= (dp * p).sum(-1, keepdims=True)
        dp *= p
        gq = dp @ k
        gq *= scale
        gk = dp.swapaxes(-1, -2) @ q
        gk *= scale
        return out, gq, gk, gv
    return step


def attention_rows(step, repeats):
    return step_rows(step, repeats, 'fwd+bwd')


# -- 9. gpt: a small character-level GPT, as real training scripts write it ------------------
# Token and position embeddings, pre-norm blocks (causal self-attention, GELU MLP), final
# layer norm, cross-entropy over 65 symbols; AdamW with weight decay and clip_grad_norm_.
# The same code for dynagrad and PyTorch; there is no hand-written NumPy version (its backward
# by hand would be a project of its own), so the NumPy column stays empty.
GPT_SIZES = {'full': dict(vocab=65, width=128, heads=4, layers=4, context=64, batch=12,
                          new_tokens=200),
             'smoke': dict(vocab=65, width=32, heads=4, layers=1, context=16, batch=4,
                           new_tokens=8)}


def gpt_model(T, s, use_sdpa):
    import math
    nn, F = T.nn, T.nn.functional
    width, heads, context = s['width'], s['heads'], s['context']

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.attn_drop, self.resid_drop = nn.Dropout(0.1), nn.Dropout(0.1)
            self.register_buffer('mask', T.tril(T.ones(context, context))
                                 .view(1, 1, context, context))

        def forward(self, x):
            B, L, C = x.size()
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, L, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            if use_sdpa:
                y = F.scaled_dot_product_attention(
                    q, k, v, dropout_p=0.1 if self.training else 0.0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.mask[:, :, :L, :L] == 0, float('-inf'))
                y = self.attn_drop(F.softmax(att, dim=-1)) @ v
            y = y.transpose(1, 2).contiguous().view(B, L, C)
            return self.resid_drop(self.proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = CausalSelfAttention()
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width), nn.Dropout(0.1))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(s['vocab'], width)
            self.pos = nn.Embedding(context, width)
            self.drop = nn.Dropout(0.1)
            self.blocks = nn.Sequential(*[Block() for _ in range(s['layers'])])
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, s['vocab'], bias=False)

        def forward(self, idx, targets=None):
            L = idx.size(1)
            pos = T.arange(0, L, dtype=T.long)
            x = self.blocks(self.drop(self.tok(idx) + self.pos(pos)))
            logits = self.head(self.ln_f(x))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    T.manual_seed(0)
    return GPT()


def gpt_autograd(T, s, use_sdpa, compiled=False):
    """(train step, eval pass, sampling); ``compiled``: the model called through
    ``T.compile`` (the optimizer step and gradient clipping stay eager, as in PyTorch's
    usual compiled training loop)."""
    model = gpt_model(T, s, use_sdpa)
    run = T.compile(model) if compiled else model
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = T.optim.AdamW([{'params': decay, 'weight_decay': 0.1},
                         {'params': no_decay, 'weight_decay': 0.0}], lr=3e-4)
    rng = np.random.default_rng(0)
    data = rng.integers(0, s['vocab'], (s['batch'], s['context'] + 1))
    x, y = T.tensor(data[:, :-1]), T.tensor(data[:, 1:])

    def train_step():
        model.train()
        _, loss = run(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    def eval_pass():
        model.eval()
        with T.no_grad():
            model(x, y)

    def sample():
        model.eval()
        idx = T.zeros((1, 1), dtype=T.long)
        with T.no_grad():
            for _ in range(s['new_tokens']):
                logits, _ = model(idx[:, -s['context']:])
                probs = T.nn.functional.softmax(logits[:, -1, :], dim=-1)
                idx = T.cat((idx, T.multinomial(probs, num_samples=1)), dim=1)
    return train_step, eval_pass, sample


def _one_thread(T):
    """A context running BLAS (and PyTorch's own pool) on one thread."""
    import contextlib
    from threadpoolctl import threadpool_limits

    @contextlib.contextmanager
    def limit():
        before = T.get_num_threads() if T.__name__ == 'torch' else None
        with threadpool_limits(1):
            if before is not None:
                T.set_num_threads(1)
            try:
                yield
            finally:
                if before is not None:
                    T.set_num_threads(before)
    return limit()


def gpt_rows(T, s, repeats):
    rows = []
    for threads in ('all cores', '1 thread'):
        import contextlib
        ctx = _one_thread(T) if threads == '1 thread' else contextlib.nullcontext()
        with ctx:
            train, evaluate, sample = gpt_autograd(T, s, use_sdpa=False)
            if threads == 'all cores':
                # on the freshly built model, before timing fills any allocator cache
                peak = peak_rss_above_now_mb(train, 3)
                if peak is not None:
                    rows.append(row('peak memory of 3 steps, above the built model',
                                    'MB', peak))
            train_sdpa, _, _ = gpt_autograd(T, s, use_sdpa=True)
            rows += [row(f'train step, {threads}', 'ms/step', median_time(train, repeats) * 1e3),
                     row(f'train step sdpa, {threads}', 'ms/step',
                         median_time(train_sdpa, repeats) * 1e3),
                     row(f'eval pass, {threads}', 'ms', median_time(evaluate, repeats) * 1e3),
                     row(f'sample {s["new_tokens"]} tokens, {threads}', 'ms',
                         median_time(sample, max(1, repeats // 4), warmup=1) * 1e3)]
    if T.__name__ == 'dynagrad' and T.backend.native_kernels_active():
        rows += gpt_numpy_kernel_rows(T, s, repeats)
    if T.__name__ == 'dynagrad' or s is GPT_SIZES['full']:
        # compiled (torch.compile in the full run only: inductor needs minutes here)
        compiled, _, _ = gpt_autograd(T, s, use_sdpa=False, compiled=True)
        rows.append(row('compiled: train step, all cores', 'ms/step',
                        median_time(compiled, repeats) * 1e3))
        if T.__name__ == 'dynagrad':
            def make():
                step = gpt_autograd(T, s, use_sdpa=False)[0]
                step.compiled = gpt_autograd(T, s, use_sdpa=False, compiled=True)[0]
                return step
            rows += capture_and_loop_rows(make, cfg_loop(s))
    return rows


def gpt_numpy_kernel_rows(T, s, repeats):
    """The eager step and evaluation again with the native kernels off: the same run's
    before-and-after of dynagrad.native."""
    import contextlib
    previous = T.backends.cpu.set_kernels('numpy')
    rows = []
    try:
        for threads in ('all cores', '1 thread'):
            with _one_thread(T) if threads == '1 thread' else contextlib.nullcontext():
                train, evaluate, _ = gpt_autograd(T, s, use_sdpa=False)
                rows += [row(f'train step, {threads}, NumPy kernels', 'ms/step',
                             median_time(train, repeats) * 1e3),
                         row(f'eval pass, {threads}, NumPy kernels', 'ms',
                             median_time(evaluate, repeats) * 1e3)]
    finally:
        T.backends.cpu.set_kernels(previous)
    return rows


def cfg_loop(s):
    return SIZES['smoke' if s is GPT_SIZES['smoke'] else 'full']['gpt_loop']


# -- 10. kernels: the ops that have native kernels (dynagrad.native), one thread -------------
# dynagrad's column runs the native kernels; the NumPy column is dynagrad again with its
# NumPy kernels (DYNAGRAD_KERNELS=numpy: the reference path); PyTorch's is its own kernel.
# At the GPT workload's sizes: its MLP activation, its layer norms, its attention softmax,
# its loss (cross-entropy over 65 symbols, and the log-softmax of the unfused case).
KERNEL_SHAPES = {'full': dict(gelu=(12, 64, 512), layer_norm=(768, 128),
                              softmax=(12, 4, 64, 64), log_softmax=(768, 65)),
                 'smoke': dict(gelu=(4, 16, 32), layer_norm=(64, 32),
                               softmax=(4, 2, 16, 16), log_softmax=(64, 65))}


def kernel_cases(T, shapes):
    F = T.nn.functional
    rng = np.random.default_rng(0)

    def arrays(shape, n=1):
        return [T.tensor(rng.standard_normal(shape[-1] if i else shape).astype(F32))
                for i in range(n)]
    return [
        ('gelu', shapes['gelu'], arrays(shapes['gelu']), F.gelu),
        ('gelu tanh', shapes['gelu'], arrays(shapes['gelu']),
         lambda x: F.gelu(x, approximate='tanh')),
        ('layer norm', shapes['layer_norm'], arrays(shapes['layer_norm'], 3),
         lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)),
        ('rms norm', shapes['layer_norm'], arrays(shapes['layer_norm'], 2),
         lambda x, w: F.rms_norm(x, (x.shape[-1],), w)),
        ('softmax', shapes['softmax'], arrays(shapes['softmax']),
         lambda x: F.softmax(x, dim=-1)),
        ('log-softmax', shapes['log_softmax'], arrays(shapes['log_softmax']),
         lambda x: F.log_softmax(x, dim=-1)),
        ('cross-entropy', shapes['log_softmax'], arrays(shapes['log_softmax']),
         lambda x, t=T.tensor(rng.integers(0, shapes['log_softmax'][1],
                                           shapes['log_softmax'][0])): F.cross_entropy(x, t)),
        # the MLP's dropout (its mask drawn from the generator: PyTorch's stream)
        ('dropout', shapes['gelu'], arrays(shapes['gelu']), lambda x: F.dropout(x, 0.1)),
        # the token embedding: one index per position into 65 rows of the model's width
        ('embedding', (shapes['log_softmax'][1], shapes['layer_norm'][1]),
         arrays((shapes['log_softmax'][1], shapes['layer_norm'][1])),
         lambda w, i=T.tensor(rng.integers(0, shapes['log_softmax'][1],
                                           shapes['log_softmax'][0])): F.embedding(i, w)),
    ]


def kernel_rows(T, shapes, repeats):
    rows = []
    with _one_thread(T):
        for name, shape, inputs, fn in kernel_cases(T, shapes):
            size = 'x'.join(map(str, shape))
            leaves = [t.requires_grad_() for t in inputs]
            g = T.ones(fn(*inputs).shape)

            def forward():
                with T.no_grad():
                    fn(*inputs)

            def fwd_bwd():
                fn(*leaves).backward(g)
            rows += [row(f'{name} fwd ({size}), 1 thread', 'ms',
                         median_time(forward, repeats) * 1e3),
                     row(f'{name} fwd+bwd ({size}), 1 thread', 'ms',
                         median_time(fwd_bwd, repeats) * 1e3)]
    if T.__name__ == 'dynagrad':
        rows += kernel_compile_rows()
    return rows


_FIRST_USE = """
import time, sys
t0 = time.perf_counter()
import dynagrad as T
from dynagrad import backend
from benchmarks.workloads import kernel_cases, KERNEL_SHAPES
cases = kernel_cases(T, KERNEL_SHAPES['smoke'])
t1 = time.perf_counter()
active = backend.native_kernels_active()    # imports numba
t2 = time.perf_counter()
for name, shape, inputs, fn in cases:
    fn(*[t.requires_grad_() for t in inputs]).sum().backward()
print(active, t2 - t1, time.perf_counter() - t2)
"""


def kernel_compile_rows():
    """What the native tier costs a fresh process: importing numba (on the first op with a
    kernel), then the first use of every kernel above (float32, forward and backward: each
    compiled, or loaded from numba's on-disk cache) with an empty cache, and again with the
    cache the first run wrote."""
    import os
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, 'NUMBA_CACHE_DIR': cache}
        out = []
        for _ in ('cold', 'warm'):
            proc = subprocess.run([sys.executable, '-c', _FIRST_USE], capture_output=True,
                                  text=True, check=True, env=env)
            out.append(proc.stdout.split())
    if out[0][0] != 'True':
        return []
    return [row('first use: import numba', 's', float(out[1][1])),
            row('first use of all kernels after it, cold cache', 's', float(out[0][2])),
            row('first use of all kernels after it, warm cache', 's', float(out[1][2]))]


# -- 10. import: how long a program waits before its first line runs ----------------------
def import_rows(lib, repeats):
    """Median wall time of ``import lib`` in a fresh interpreter (NumPy's row is NumPy's
    own import, the floor under dynagrad's), as a program meets it after installation: with
    the bytecode cache in place (pip compiles on install; a warm-up import writes the cache
    of an editable install, even where PYTHONDONTWRITEBYTECODE=1 would have every import
    compile the sources again)."""
    import os
    import subprocess
    import sys
    code = f'import time; t = time.perf_counter(); import {lib}; print(time.perf_counter() - t)'
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}

    def timed():
        return float(subprocess.run([sys.executable, '-c', code], capture_output=True,
                                    text=True, check=True, env=env).stdout)
    timed()             # writes the bytecode cache where it is missing
    return [row('import, fresh process', 's', statistics.median(timed() for _ in range(repeats)))]


# -- per-sample gradients of the MLP: vmap(grad) against a loop of backward passes -----------
def per_sample_rows(T, batch, repeats):
    """Every sample's gradient of every MLP parameter: through the function transforms
    (``vmap(grad(loss))`` over ``functional_call``) and through a Python loop of one
    backward pass per sample. NumPy has no transforms: no row."""
    T.manual_seed(0)
    model = T.nn.Sequential(*[m for i, o in zip(MLP_SIZES, MLP_SIZES[1:])
                              for m in (T.nn.Linear(i, o), T.nn.ReLU())][:-1])
    X = T.randn(batch, MLP_SIZES[0])
    y = T.randint(0, MLP_SIZES[-1], (batch,))
    params = {k: v.detach() for k, v in model.named_parameters()}
    func = T.func

    def loss(p, x, t):
        out = func.functional_call(model, p, (x.unsqueeze(0),))
        return T.nn.functional.cross_entropy(out, t.unsqueeze(0))
    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))

    def transforms():
        return per_sample(params, X, y)

    def loop():
        grads = []
        for i in range(batch):
            model.zero_grad()
            T.nn.functional.cross_entropy(model(X[i:i + 1]), y[i:i + 1]).backward()
            grads.append([p.grad.clone() for p in model.parameters()])
        return grads
    return [row('vmap(grad) per-sample grads', 'ms', median_time(transforms, repeats) * 1e3),
            row('loop of backward passes', 'ms', median_time(loop, repeats) * 1e3)]


# -- running one ----------------------------------------------------------------------------
WORKLOADS = ('per_op', 'mlp', 'matmul', 'memory', 'scaling', 'cnn', 'lm', 'attention', 'gpt',
             'kernels', 'per_sample', 'import')
LIBS = ('dynagrad', 'torch', 'numpy')


def run(lib, workload, cfg, repeats):
    if workload == 'import':
        return import_rows(lib, repeats)
    if lib == 'numpy':
        return {'per_op': lambda: per_op_numpy(cfg, repeats),
                'mlp': lambda: mlp_rows(mlp_numpy(cfg['mlp_batch']), cfg, repeats),
                'matmul': lambda: matmul_numpy(cfg, repeats),
                'memory': lambda: memory_rows(mlp_numpy(cfg['mlp_batch']), cfg),
                'scaling': lambda: scaling_numpy(cfg, repeats),
                'cnn': lambda: cnn_rows(cnn_numpy(cfg['cnn_batch']), repeats),
                'lm': lambda: lm_rows(lm_numpy(lm_sizes(cfg)), repeats),
                'attention': lambda: attention_rows(attention_numpy(), repeats),
                'gpt': lambda: [], 'per_sample': lambda: [],
                'kernels': lambda: numpy_kernel_rows(cfg, repeats)}[workload]()
    T = importlib.import_module(lib)
    return {'per_op': lambda: per_op_autograd(T, cfg, repeats),
            'mlp': lambda: mlp_rows(mlp_autograd(T, cfg['mlp_batch'], compiles=(
                T.__name__ == 'dynagrad' or cfg is SIZES['full'])), cfg, repeats,
                make=lambda: mlp_autograd(T, cfg['mlp_batch'], compiles=True)),
            'matmul': lambda: matmul_autograd(T, cfg, repeats),
            'memory': lambda: memory_rows(mlp_autograd(T, cfg['mlp_batch']), cfg),
            'scaling': lambda: scaling_autograd(T, cfg, repeats),
            'cnn': lambda: cnn_rows(cnn_autograd(T, cfg['cnn_batch']), repeats),
            'lm': lambda: lm_rows(lm_autograd(T, lm_sizes(cfg)), repeats),
            'attention': lambda: attention_rows(attention_autograd(T), repeats),
            'gpt': lambda: gpt_rows(T, GPT_SIZES['smoke' if cfg is SIZES['smoke'] else 'full'],
                                    repeats),
            'per_sample': lambda: per_sample_rows(T, cfg['mlp_batch'], repeats),
            'kernels': lambda: kernel_rows(T, _kernel_shapes(cfg), repeats)}[workload]()


def _kernel_shapes(cfg):
    return KERNEL_SHAPES['smoke' if cfg is SIZES['smoke'] else 'full']


def numpy_kernel_rows(cfg, repeats):
    """The kernels workload's NumPy column: dynagrad with its NumPy kernels."""
    import dynagrad
    dynagrad.backends.cpu.set_kernels('numpy')
    return [r for r in kernel_rows(dynagrad, _kernel_shapes(cfg), repeats)
            if not r['name'].startswith('first use')]


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
    if args.lib == 'dynagrad':
        # the opt-in a training program makes: keep freed buffers for reuse, as PyTorch's
        # caching allocator does for it (see dynagrad.backend.keep_freed_memory)
        from dynagrad.backend import keep_freed_memory
        keep_freed_memory()
    module = importlib.import_module(args.lib)
    out['version'] = getattr(module, '__version__', '?')
    out['rows'] = run(args.lib, args.workload, cfg, args.repeats)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
