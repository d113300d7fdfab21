"""Where a training step's time goes, per phase and per op family, in dynagrad and PyTorch.

    python -m benchmarks.profile --workload gpt [--threads 1] [--steps 10]
    python -m benchmarks.profile --workload lm
    python -m benchmarks.profile --workload attention

Both libraries run the same step (the functions of ``benchmarks.workloads``) in one process.
Phases (forward, backward, gradient clipping, optimizer step) are wall times of each part
run on its own. Op families come from PyTorch's profiler (``torch.profiler``, self CPU time
of each aten op) and, for dynagrad, from timing every op's forward and backward with the
time of the ops it calls inside subtracted (self time, as the profiler counts it). Family
names are shared, so the two columns line up; time spent outside any op (module calls, the
engine, creating tensors and nodes) is dynagrad's 'framework' row. The wrappers cost about
a microsecond per op, so dynagrad's total here is a little higher than in the suite.
"""
import argparse
import collections
import statistics
import time

import numpy as np

from . import workloads as W

# Substring of an op's name (lower case, aten's or dynagrad's node/class name) -> family.
# The first match wins, so more specific entries come first.
FAMILIES = [
    ('layer_norm', 'layer norm'), ('layernorm', 'layer norm'), ('normalize', 'layer norm'),
    ('gelu', 'GELU'),
    ('log_softmax', 'softmax, cross-entropy'), ('logsoftmax', 'softmax, cross-entropy'),
    ('softmax', 'softmax, cross-entropy'), ('nll', 'softmax, cross-entropy'),
    ('cross_entropy', 'softmax, cross-entropy'), ('crossentropy', 'softmax, cross-entropy'),
    ('scaled_dot_product', 'attention (sdpa)'), ('sdpa', 'attention (sdpa)'),
    ('flash_attention', 'attention (sdpa)'), ('attention', 'attention (sdpa)'),
    ('dropout', 'dropout'), ('bernoulli', 'dropout'), ('uniform', 'dropout'),
    ('embedding', 'embedding'),
    ('lstm', 'recurrent cells'), ('rnn', 'recurrent cells'), ('gru', 'recurrent cells'),
    ('conv', 'convolution'), ('pool', 'pooling'),
    ('addmm', 'matmul, linear'), ('linear', 'linear'), ('bmm', 'matmul, linear'),
    ('matmul', 'matmul, linear'), ('mm', 'matmul, linear'),
    ('masked_fill', 'masking'), ('maskedfill', 'masking'), ('where', 'masking'),
    ('tril', 'masking'), ('eq', 'masking'),
    ('_foreach', 'optimizer arithmetic'), ('lerp', 'optimizer arithmetic'),
    ('addcdiv', 'optimizer arithmetic'), ('addcmul', 'optimizer arithmetic'),
    ('norm', 'norms (clipping)'),
    ('sum', 'reductions'), ('mean', 'reductions'), ('max', 'reductions'),
    ('copy', 'copies, contiguous'), ('clone', 'copies, contiguous'),
    ('contiguous', 'copies, contiguous'), ('cat', 'copies, contiguous'),
    ('view', 'views'), ('reshape', 'views'), ('transpose', 'views'), ('permute', 'views'),
    ('split', 'views'), ('slice', 'views'), ('select', 'views'), ('unsafe', 'views'),
    ('expand', 'views'), ('as_strided', 'views'), ('squeeze', 'views'), ('index', 'indexing'),
    ('add', 'pointwise arithmetic'), ('mul', 'pointwise arithmetic'),
    ('sub', 'pointwise arithmetic'), ('div', 'pointwise arithmetic'),
    ('sqrt', 'pointwise arithmetic'), ('tanh', 'pointwise arithmetic'),
    ('sigmoid', 'pointwise arithmetic'), ('exp', 'pointwise arithmetic'),
    ('zero', 'zeroing, filling'), ('fill', 'zeroing, filling'), ('empty', 'zeroing, filling'),
    ('accumulate', 'gradient accumulation'),
]


def family(name):
    low = name.lower()
    for key, fam in FAMILIES:
        if key in low:
            return fam
    return 'other: ' + name


# -- the steps, split in phases --------------------------------------------------------------
def gpt_parts(T, sdpa=False):
    s = W.GPT_SIZES['full']
    model = W.gpt_model(T, s, sdpa)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = T.optim.AdamW([{'params': decay, 'weight_decay': 0.1},
                         {'params': no_decay, 'weight_decay': 0.0}], lr=3e-4)
    data = np.random.default_rng(0).integers(0, s['vocab'], (s['batch'], s['context'] + 1))
    x, y = T.tensor(data[:, :-1]), T.tensor(data[:, 1:])
    model.train()
    return dict(forward=lambda: model(x, y)[1],
                clip=lambda: T.nn.utils.clip_grad_norm_(model.parameters(), 1.0),
                step=opt.step, zero=lambda: opt.zero_grad(set_to_none=True))


def lm_parts(T):
    """The LSTM language model step of ``workloads.lm_autograd``, in phases."""
    s = W.lm_sizes(W.SIZES['full'])
    T.manual_seed(0)
    nn, F = T.nn, T.nn.functional
    emb = nn.Parameter(T.rand(s['vocab'], s['emb']) * 0.2 - 0.1)
    lstm = nn.LSTM(s['emb'], s['hidden'], s['layers'])
    dec = nn.Linear(s['hidden'], s['vocab'])
    params = [emb] + list(lstm.parameters()) + list(dec.parameters())
    opt = T.optim.SGD(params, lr=W.LM_LR)
    _, tokens, targets = W.lm_data(s)
    tokens, targets = T.tensor(tokens), T.tensor(targets).reshape(-1)
    hidden = [None]

    def forward():
        out, (h, c) = lstm(F.embedding(tokens, emb), hidden[0])
        hidden[0] = (h.detach(), c.detach())
        return F.cross_entropy(dec(out.reshape(-1, s['hidden'])), targets)
    return dict(forward=forward, clip=lambda: nn.utils.clip_grad_norm_(params, W.LM_CLIP),
                step=opt.step, zero=opt.zero_grad)


def attention_parts(T):
    q, k, v = (T.tensor(a, requires_grad=True) for a in W.attention_data()[:3])

    def forward():
        return T.nn.functional.scaled_dot_product_attention(q, k, v).sum()

    def zero():
        for t in (q, k, v):
            t.grad = None
    return dict(forward=forward, zero=zero)


def cnn_parts(T, batch=32):
    """The CNN step of ``workloads.cnn_autograd`` (batch 32), in phases."""
    rng = np.random.default_rng(0)
    params = [T.tensor(p).requires_grad_() for p in W.cnn_params(rng)]
    w1, b1, w2, b2, w3, b3 = params
    opt = T.optim.SGD(params, lr=W.LR)
    F = T.nn.functional
    X = T.tensor(rng.standard_normal((batch, 1, 28, 28), dtype=W.F32))
    y = T.tensor(rng.integers(0, 10, batch))

    def forward():
        h = F.max_pool2d(F.relu(F.conv2d(X, w1, b1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
        return F.cross_entropy(F.linear(h.flatten(1), w3, b3), y)
    return dict(forward=forward, step=opt.step, zero=opt.zero_grad)


PARTS = {'gpt': gpt_parts, 'gpt-sdpa': lambda T: gpt_parts(T, sdpa=True), 'lm': lm_parts,
         'attention': attention_parts, 'cnn': cnn_parts}


def one_step(parts):
    parts['zero']()
    parts['forward']().backward()
    if 'clip' in parts:
        parts['clip']()
    if 'step' in parts:
        parts['step']()


def phase_times(parts, steps):
    """Median milliseconds of each phase over ``steps`` steps (after two of warm-up)."""
    times = collections.defaultdict(list)
    for i in range(steps + 2):
        parts['zero']()
        t0 = time.perf_counter()
        loss = parts['forward']()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if 'clip' in parts:
            parts['clip']()
        t3 = time.perf_counter()
        if 'step' in parts:
            parts['step']()
        t4 = time.perf_counter()
        if i >= 2:
            for name, t in (('forward', t1 - t0), ('backward', t2 - t1),
                            ('clip_grad_norm_', t3 - t2), ('optimizer step', t4 - t3),
                            ('whole step', t4 - t0)):
                times[name].append(t * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


# -- op-family profiles ----------------------------------------------------------------------
def torch_families(torch, parts, steps):
    from torch.profiler import ProfilerActivity, profile
    for _ in range(2):
        one_step(parts)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            one_step(parts)
        wall = time.perf_counter() - t0
    fams = collections.Counter()
    for ev in prof.key_averages():
        if ev.key.startswith(('aten::', 'Optimizer.', 'autograd::')) or '::' not in ev.key:
            if ev.key.startswith('autograd::engine'):
                continue    # an umbrella event: its aten children carry the time
            fams[family(ev.key.replace('aten::', ''))] += ev.self_cpu_time_total / 1e3 / steps
    return fams, wall * 1e3 / steps


class OpTimer:
    """Times every dynagrad op's forward and backward, as self time (children subtracted)."""

    def __init__(self, dg):
        from dynagrad.autograd.function import Op
        self.self_ms = collections.Counter()
        self.stack = []
        self.patched = []
        seen, todo = set(), [Op]
        while todo:
            cls = todo.pop()
            for sub in cls.__subclasses__():
                if sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
        for cls in seen:
            for meth in ('forward', 'backward'):
                if meth in vars(cls):
                    self._wrap(cls, meth, f'{cls.__qualname__}.{meth}')

    def _wrap(self, cls, meth, label):
        original = vars(cls)[meth]
        timer = self

        def timed(*args, **kwargs):
            frame = [0.0]
            timer.stack.append(frame)
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                timer.stack.pop()
                timer.self_ms[label] += (took - frame[0]) * 1e3
                if timer.stack:
                    timer.stack[-1][0] += took
        setattr(cls, meth, timed)
        self.patched.append((cls, meth, original))

    def restore(self):
        for cls, meth, original in self.patched:
            setattr(cls, meth, original)


def dynagrad_families(dg, parts, steps):
    for _ in range(2):
        one_step(parts)
    timer = OpTimer(dg)
    try:
        t0 = time.perf_counter()
        for _ in range(steps):
            one_step(parts)
        wall = (time.perf_counter() - t0) * 1e3 / steps
    finally:
        timer.restore()
    fams = collections.Counter()
    for label, ms in timer.self_ms.items():
        fams[family(label.rsplit('.', 1)[0])] += ms / steps
    fams['framework (outside ops)'] = wall - sum(fams.values())
    return fams, wall, timer.self_ms


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--workload', choices=sorted(PARTS), default='gpt')
    p.add_argument('--threads', type=int, default=0, help='0: all cores')
    p.add_argument('--steps', type=int, default=10)
    p.add_argument('--top', type=int, default=0, help='also list the N slowest dynagrad ops')
    args = p.parse_args(argv)
    import torch

    import dynagrad
    if args.threads:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads)
        torch.set_num_threads(args.threads)
        dynagrad.set_num_threads(args.threads)
    results = {}
    for name, T in (('dynagrad', dynagrad), ('torch', torch)):
        parts = PARTS[args.workload](T)
        phases = phase_times(parts, args.steps)
        fams, wall = (dynagrad_families(T, parts, args.steps)[:2] if name == 'dynagrad'
                      else torch_families(T, parts, args.steps))
        results[name] = phases, fams, wall
    threads = f'{args.threads} thread(s)' if args.threads else 'all cores'
    print(f'### {args.workload}, {threads}: phases (median ms)\n')
    print('| phase | dynagrad | PyTorch | ratio |\n|---|--:|--:|--:|')
    for ph in results['dynagrad'][0]:
        a, b = results['dynagrad'][0][ph], results['torch'][0][ph]
        print(f'| {ph} | {a:.2f} | {b:.2f} | {a / b:.2f}x |' if b > 0.005 else
              f'| {ph} | {a:.2f} | {b:.2f} | |')
    print(f'\n### {args.workload}, {threads}: self time per op family (ms per step)\n')
    print('| family | dynagrad | PyTorch |\n|---|--:|--:|')
    dg, th = results['dynagrad'][1], results['torch'][1]
    for fam in sorted(set(dg) | set(th), key=lambda f: -max(dg.get(f, 0), th.get(f, 0))):
        if max(dg.get(fam, 0), th.get(fam, 0)) >= 0.05:
            print(f'| {fam} | {dg.get(fam, 0):.2f} | {th.get(fam, 0):.2f} |')
    print(f'| **step under the profilers** | {results["dynagrad"][2]:.1f} | '
          f'{results["torch"][2]:.1f} |')
    if args.top:
        parts = PARTS[args.workload](dynagrad)
        _, _, per_op = dynagrad_families(dynagrad, parts, args.steps)
        print(f'\n### slowest dynagrad ops (ms per step)\n')
        for label, ms in per_op.most_common(args.top):
            print(f'- {label}: {ms / args.steps:.2f}')


if __name__ == '__main__':
    main()
