"""The benchmark suite runs end to end in smoke mode. It checks the table, never the times."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = ('per_op', 'mlp', 'matmul', 'memory', 'scaling', 'gpt')


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
