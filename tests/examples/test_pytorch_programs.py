"""PyTorch programs written in the style of pytorch/examples, run unmodified on PyTorch and on
dynagrad (python -m dynagrad.run): the same printed losses. The full check against the real
pytorch/examples programs is benchmarks/pytorch_examples (it needs a copy of that repository)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip('torch')
PROGRAMS = Path(__file__).parent / 'programs'


def _numbers(cmd, cwd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    return [float(v) for v in re.findall(r'(?:loss|ppl|correct) ([\d.]+)', out.stdout)]


def _compare(program, args, tmp_path):
    script = str(PROGRAMS / program)
    on_torch = _numbers([sys.executable, script, *args], tmp_path)
    on_dynagrad = _numbers([sys.executable, '-m', 'dynagrad.run', script, *args], tmp_path)
    assert len(on_torch) > 5 and len(on_dynagrad) == len(on_torch)
    for a, b in zip(on_dynagrad, on_torch):
        assert a == pytest.approx(b, rel=2e-5, abs=2e-6)


@pytest.mark.parametrize('workers', [0, 2])
def test_mnist_like_program(tmp_path, workers):
    _compare('mnist_like.py', ['--workers', str(workers), '--save', 'mnist.pt'], tmp_path)
    assert (tmp_path / 'mnist.pt').stat().st_size > 0


@pytest.mark.parametrize('model', ['LSTM', 'Transformer'])
def test_word_language_model_like_program(tmp_path, model):
    _compare('word_lm_like.py', ['--model', model], tmp_path)
