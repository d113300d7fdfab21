"""The seed tour runs and shows the seeds' numbers and a fitted regression."""
import re
import subprocess
import sys

import pytest


@pytest.fixture(scope='module')
def tour_output():
    proc = subprocess.run([sys.executable, '-m', 'dynagrad.examples.tour'],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ''
    return proc.stdout


def test_tour_prints_seed000(tour_output):
    assert ('Variable containing:\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n'
            in tour_output)
    assert ('Variable containing:\n 0.5000  1.0000\n 1.5000  2.0000\n'
            '[dynagrad.FloatTensor of size 2x2]\n') in tour_output
    assert '[[1. 2.]\n [3. 4.]]' in tour_output


def test_tour_prints_seed001(tour_output):
    assert 'Variable containing:\n 4\n[dynagrad.FloatTensor of size 1]\n' in tour_output
    assert 'RuntimeError: element 0 of variables tuple is volatile' in tour_output


def test_tour_prints_seed002(tour_output):
    assert '2.0 1.0 1.0\n2.0 None 1.0\n' in tour_output
    for line in ('tensor([2., 0., 0., 0.])', 'tensor([0., 2., 0., 0.])',
                 'tensor([2., 2., 2., 2.])', 'tensor([2.0000, 0.2000, 0.0200, 0.0020])'):
        assert line + '\n' in tour_output
    assert '\n 2  2  2  2\n[dynagrad.FloatTensor of size 1x4]\n' in tour_output


def test_tour_prints_seed003_and_seed004(tour_output):
    assert 'grad can be implicitly created only for scalar outputs' in tour_output
    assert 'Parameter containing:\ntensor([1., 1.], requires_grad=True)' in tour_output
    assert '\n 2\n 2\n 2\n[dynagrad.FloatTensor of size 3]\n' in tour_output
    assert 'cannot register a hook on a volatile variable' in tour_output
    assert 'reinforce() was removed.' in tour_output


def test_tour_shows_code_before_output(tour_output):
    code = tour_output.index('>>> v_out = dynagrad.mean(variable * variable)')
    result = tour_output.index(' 0.5000  1.0000')
    assert code < result


def test_tour_regression_learns_3_and_2(tour_output):
    weight = float(re.search(r'learned weight: (-?[\d.]+)', tour_output).group(1))
    bias = float(re.search(r'learned bias: +(-?[\d.]+)', tour_output).group(1))
    assert abs(weight - 3) < 0.05 and abs(bias - 2) < 0.05
    losses = [float(v) for v in re.findall(r'epoch +\d+ +loss ([\d.]+)', tour_output)]
    assert len(losses) >= 5 and losses[-1] < losses[0] / 100


def test_tour_is_deterministic(tour_output):
    again = subprocess.run([sys.executable, '-m', 'dynagrad.examples.tour'],
                           capture_output=True, text=True, timeout=120).stdout
    assert again == tour_output


def test_tour_resets_legacy_printing():
    import dynagrad
    from dynagrad.examples import tour
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        tour.main()
    assert dynagrad.get_printoptions()['legacy'] is False
    assert repr(dynagrad.ones(1)) == 'tensor([1.])'
