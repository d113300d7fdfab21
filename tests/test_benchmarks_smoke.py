"""The benchmark suite runs end to end in smoke mode. It checks the table, never the times."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = ('per_op', 'mlp', 'matmul', 'memory', 'scaling', 'gpt', 'kernels', 'import')


def test_benchmark_suite_smoke_mode_prints_the_table():
    proc = subprocess.run([sys.executable, '-m', 'benchmarks.run', '--smoke'], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert 'dynagrad/PyTorch' in out and 'dynagrad/NumPy' in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith('| workload'))
    assert 'dynagrad/PyTorch' in header
    for workload in WORKLOADS:
        rows = [line for line in lines if line.startswith(f'| {workload} |')]
        assert rows, f'no row for {workload}:\n{out}'
        assert not any('| error |' in row for row in rows), rows
    for fact in ('PyTorch', 'NumPy BLAS', 'CPU:', 'Python'):
        assert fact in out


def test_profile_tool_counts_self_time_per_op_and_puts_the_ops_back():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import profile
    finally:
        sys.path.remove(str(ROOT))
    import dynagrad as dg
    from dynagrad.nn.functional.activation import Gelu
    forward = Gelu.forward
    x = dg.randn(64, 64, requires_grad=True)
    parts = dict(zero=lambda: None, forward=lambda: dg.nn.functional.gelu(x @ x).sum())
    fams, wall, per_op = profile.dynagrad_families(dg, parts, steps=2)
    assert Gelu.forward is forward            # the timers are removed afterwards
    assert per_op['Gelu.forward'] > 0 and per_op['Gelu.backward'] > 0
    assert fams['GELU'] > 0 and fams['matmul, linear'] > 0
    assert abs(sum(fams.values()) - wall) < 1e-6 * max(wall, 1)   # framework is the rest
    assert profile.family('aten::native_layer_norm_backward') == 'layer norm'
    assert profile.family('LinearOp.forward') == 'linear'


def test_native_tier_table_runs_every_variant():
    # the native tier's table (benchmarks/native.py): one row per workload asked, one
    # column per variant, each cell a time and its ratio to PyTorch eager's
    proc = subprocess.run([sys.executable, '-m', 'benchmarks.native', '--rounds', '1',
                           '--only', 'attention', '--only', 'chain'], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith('| workload'))
    assert 'numpy kernels' in header and 'PyTorch eager' in header
    rows = [line for line in lines if line.startswith(('| attention', '| per-op chain'))]
    assert len(rows) == 3, proc.stdout
    for line in rows:
        cells = [c.strip() for c in line.strip('|').split('|')[2:]]
        assert all(c.endswith('x)') for c in cells), line
