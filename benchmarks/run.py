"""Run the benchmark suite and print one markdown table.

    python -m benchmarks.run                 # full sizes: ~20 s on 2 idle cores
    python -m benchmarks.run --smoke         # small sizes, few repeats: well under a minute
    python -m benchmarks.run --only mlp --only matmul

Every workload runs for dynagrad, PyTorch (CPU, as many threads as NumPy's BLAS uses)
and hand-written NumPy, each library in its own subprocess (``benchmarks.workloads``).
Progress goes to stderr, the table to stdout. Exit status 1 if any run failed.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from .workloads import LIBS, WORKLOADS, blas_threads

ROOT = Path(__file__).resolve().parent.parent
REPEATS = {
    'full': dict(per_op=50, mlp=50, matmul=15, memory=1, scaling=5, cnn=50, attention=50,
                 lm=10, gpt=12, kernels=30, per_sample=5, **{'import': 7}),
    'smoke': dict(per_op=3, mlp=3, matmul=3, memory=1, scaling=2, cnn=3, attention=3, lm=2,
                  gpt=2, kernels=3, per_sample=1, **{'import': 2}),
}
# Issue 3's targets: (workload, row name prefix, [(what, bound, label), ...]).
# 'torch'/'numpy': dynagrad's ratio to that library; 'value': dynagrad's own figure;
# (library, row name prefix): dynagrad's ratio to that library's figure in another row.
TARGETS = [
    # Issue 19's (dynagrad.compile)
    ('per_op', 'compiled: fwd+bwd', [('numpy', 1.5, '<= 1.5x NumPy')]),
    ('mlp', 'compiled: train step', [('numpy', 1.0, '<= 1.0x NumPy')]),
    ('gpt', 'compiled: train step', [(('torch', 'train step, all cores'), 0.7,
                                      '<= 0.7x PyTorch eager')]),
    ('mlp', 'compiled: loop', [(('dynagrad', 'loop of'), 1.0, "<= eager's loop")]),
    ('gpt', 'compiled: loop', [(('dynagrad', 'loop of'), 1.0, "<= eager's loop")]),
    ('per_op', 'fwd+bwd', [('torch', 1.0, '<= 1.0x PyTorch'),
                           ('numpy', 2.0, 'stretch: <= 2x NumPy')]),
    ('per_op', 'fwd, no_grad', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('mlp', 'train step', [('numpy', 1.10, '<= 1.10x NumPy')]),
    ('matmul', 'fwd+bwd', [('numpy', 1.05, '<= 1.05x NumPy')]),
    ('memory', 'RSS growth', [('value', 1.10, 'flat: <= 1.10')]),
    ('memory', 'graph freed', [('value', True, 'True')]),
    ('scaling', 'per-op ratio', [('value', 1.5, '<= 1.5')]),
    ('lm', 'train step', [('torch', 1.5, '<= 1.5x PyTorch')]),
    ('cnn', 'train step', [('torch', 1.5, '<= 1.5x PyTorch')]),
    ('attention', 'fwd+bwd', [('torch', 1.5, '<= 1.5x PyTorch')]),
    # Issue 15's targets for the GPT workload
    ('gpt', 'train step', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('gpt', 'eval pass', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('gpt', 'sample', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('mlp', 'peak memory', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('cnn', 'peak memory', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('lm', 'peak memory', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('attention', 'peak memory', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('gpt', 'peak memory', [('torch', 1.0, '<= 1.0x PyTorch')]),
    ('import', 'import', [('value', 0.3, '<= 0.3 s')]),
    # Issue 30's: each native kernel within 1.2x of PyTorch's own, one thread (every row of
    # the kernels workload but the first-use ones); the first use of them all from a warm
    # cache within a second
    ('kernels', 'first use of all kernels after it, warm', [('value', 1.0, '<= 1 s')]),
    ('kernels', 'first use', []),
    ('kernels', '', [('torch', 1.2, '<= 1.2x PyTorch')]),
    # Issue 17's: per-sample gradients through the transforms
    ('per_sample', 'vmap(grad)', [('torch', 1.5, '<= 1.5x torch.func')]),
]


def run_one(lib, workload, repeats, smoke):
    cmd = [sys.executable, '-m', 'benchmarks.workloads', '--lib', lib, '--workload', workload,
           '--repeats', str(repeats)] + (['--smoke'] if smoke else [])
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
        error = (proc.stderr or f'exit status {proc.returncode}') if proc.returncode else None
    except subprocess.TimeoutExpired:
        error = 'timed out'
    took = time.perf_counter() - t0
    if error:
        print(f'  {workload:8} {lib:9} FAILED ({took:.1f} s):\n{error}', file=sys.stderr)
        return None
    print(f'  {workload:8} {lib:9} {took:5.1f} s', file=sys.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the machine ---------------------------------------------------------------------------
def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return 'not installed'


def loadavg():
    try:
        with open('/proc/loadavg') as f:
            return f.read().split()[0]
    except OSError:
        return '?'


def cpu_seconds():
    """(CPU seconds the whole machine was busy, CPU seconds this process and its children used)."""
    import resource
    ours = sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ('ru_utime', 'ru_stime'))
    try:
        with open('/proc/stat') as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None, ours
    busy = sum(ticks[:8]) - ticks[3] - ticks[4]  # all but idle and iowait
    return busy / os.sysconf('SC_CLK_TCK'), ours


def others_load(start, end, wall):
    """Average number of cores other processes kept busy while the suite ran."""
    if start[0] is None:
        return '?'
    return f'{max(0.0, (end[0] - start[0]) - (end[1] - start[1])) / wall:.2f}'


def header(mode, results, load, others):
    from threadpoolctl import threadpool_info
    blas = [p for p in threadpool_info() if p['user_api'] == 'blas']
    if blas:
        b = blas[0]
        blas_text = (f"{b['internal_api']} {b['version']}, kernel {b.get('architecture', '?')}, "
                     f"{b['num_threads']} threads ({b.get('threading_layer', '?')})")
    else:
        blas_text = 'none found by threadpoolctl'
    torch_threads = next((r['threads'] for r in results if r and r['lib'] == 'torch'), '?')
    env = ', '.join(f'{k}={os.environ.get(k, "unset")}'
                    for k in ('OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE', 'OMP_NUM_THREADS'))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'
    return '\n'.join([
        f'### dynagrad benchmarks ({mode} mode)',
        '',
        f'- Libraries: dynagrad {version("dynagrad")}, PyTorch {version("torch")} CPU '
        f'({torch_threads} threads), NumPy {version("numpy")}, threadpoolctl '
        f'{version("threadpoolctl")}; Python {platform.python_version()}',
        f'- NumPy BLAS: {blas_text}; {env}',
        f'- CPU: {cpu_model()}, {os.cpu_count()} logical cores ({cores} usable); '
        f'load average before the run {load}; other processes kept {others} cores busy '
        'on average during it',
        '- Each figure: median over repeats after warm-up, float32, one subprocess per '
        'library and workload.',
    ])


# -- the table -------------------------------------------------------------------------------
def fmt(v):
    if v is None:
        return 'error'
    if isinstance(v, bool):
        return str(v)
    if abs(v) >= 100:
        return f'{v:,.0f}'
    if abs(v) >= 10:
        return f'{v:.1f}'
    if abs(v) >= 1:
        return f'{v:.2f}'
    return f'{v:.3g}'


def targets_for(workload, name):
    for w, prefix, targets in TARGETS:
        if w == workload and name.startswith(prefix):
            return targets
    return []


def check(target, values, by_lib):
    what, bound, _ = target
    dg = values.get('dynagrad')
    if isinstance(what, tuple):
        lib, prefix = what
        other = next((r['value'] for r in by_lib.get(lib, {}).get('rows', [])
                      if r['name'].startswith(prefix)), None)
        return 'yes' if dg is not None and other and dg / other <= bound else 'no'
    if what == 'value':
        ok = dg is bound if isinstance(bound, bool) else dg is not None and dg <= bound
    else:
        other = values.get(what)
        ok = dg is not None and bool(other) and dg / other <= bound
    return 'yes' if ok else 'no'


def ratio(a, b, unit):
    if unit in ('x', 'bool') or a is None or not b:
        return '—'
    return f'{a / b:.2f}x'


def table(results):
    lines = ['| workload | measure | unit | dynagrad | PyTorch | NumPy | dynagrad/PyTorch '
             '| dynagrad/NumPy | target | met |',
             '|---|---|---|--:|--:|--:|--:|--:|---|---|']
    for workload in WORKLOADS:
        by_lib = {r['lib']: r for r in results if r and r['workload'] == workload}
        if not by_lib:
            continue
        names = []  # rows in the order the workload reports them, whichever library ran
        for lib in LIBS:
            for r in by_lib.get(lib, {}).get('rows', []):
                if (r['name'], r['unit']) not in names:
                    names.append((r['name'], r['unit']))
        for name, unit in names:
            values = {lib: next((r['value'] for r in by_lib[lib]['rows'] if r['name'] == name),
                                None) if lib in by_lib else None for lib in LIBS}
            targets = targets_for(workload, name)
            # a library that ran and reported no rows has no version of this workload, and
            # one that reported others has none of this row (PyTorch's compiled rows)
            shown = ['—' if lib in by_lib and not by_lib[lib].get('failed') and (
                not by_lib[lib].get('rows') or values[lib] is None) else fmt(values[lib])
                for lib in LIBS]
            lines.append('| ' + ' | '.join([
                workload, name, unit, *shown,
                ratio(values['dynagrad'], values['torch'], unit),
                ratio(values['dynagrad'], values['numpy'], unit),
                '; '.join(t[2] for t in targets),
                '; '.join(check(t, values, by_lib) for t in targets)]) + ' |')
    return '\n'.join(lines)


def main(argv=None):
    if '--device' in (sys.argv[1:] if argv is None else argv):    # the GPU suite
        return __import__('benchmarks.cuda', fromlist=['main']).main(argv)
    ap = argparse.ArgumentParser(description='dynagrad vs PyTorch vs NumPy benchmarks')
    ap.add_argument('--smoke', action='store_true', help='small sizes and few repeats')
    ap.add_argument('--only', action='append', choices=WORKLOADS, metavar='NAME',
                    help=f'run only this workload (repeatable): {", ".join(WORKLOADS)}')
    ap.add_argument('--repeats', type=int, help='override every workload\'s repeat count')
    args = ap.parse_args(argv)
    mode = 'smoke' if args.smoke else 'full'
    load = loadavg()  # before the run, which loads the machine itself
    print(f'benchmarks ({mode}); NumPy BLAS threads: {blas_threads()}', file=sys.stderr)
    results = []
    start, cpu_start = time.perf_counter(), cpu_seconds()
    for workload in args.only or WORKLOADS:
        for lib in LIBS:
            repeats = args.repeats or REPEATS[mode][workload]
            results.append(run_one(lib, workload, repeats, args.smoke)
                           or {'lib': lib, 'workload': workload, 'rows': [], 'failed': True})
    wall = time.perf_counter() - start
    others = others_load(cpu_start, cpu_seconds(), wall)
    print(f'total {wall:.0f} s', file=sys.stderr)
    print(header(mode, results, load, others))
    print()
    print(table(results))
    return 1 if any(r.get('failed') for r in results) else 0


if __name__ == '__main__':
    sys.exit(main())
