"""dynagrad never imports torch: torch is the tests' oracle only."""
import subprocess
import sys

CODE = '''
import io, sys, contextlib
import dynagrad
import dynagrad.nn, dynagrad.optim, dynagrad.autograd, dynagrad.nn.functional
from dynagrad.autograd import Variable
from dynagrad.examples import tour
assert 'torch' not in sys.modules, 'importing dynagrad imported torch'
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    weight, bias = tour.main()
assert abs(weight - 3) < 0.05 and abs(bias - 2) < 0.05, (weight, bias)
leaked = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))
assert not leaked, leaked
print('OK', len(buf.getvalue()))
'''


def test_dynagrad_and_tour_never_import_torch():
    proc = subprocess.run([sys.executable, '-c', CODE], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('OK ')


def test_sources_do_not_mention_import_torch():
    import pathlib

    import dynagrad
    root = pathlib.Path(dynagrad.__file__).parent
    offenders = []
    for path in root.rglob('*.py'):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(('import torch', 'from torch')):
                offenders.append(f'{path.relative_to(root)}: {stripped}')
    assert not offenders, offenders
