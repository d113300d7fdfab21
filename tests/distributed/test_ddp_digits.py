"""The DDP digits example on 2 ranks learns, and its replicas end bit-identical."""
import re

import pytest

from _mpi import run_workers

pytest.importorskip('sklearn')


def test_ddp_digits_on_two_ranks():
    rc, out, err, _ = run_workers('run_ddp_digits.py', n=2, timeout=300,
                                  args=('--epochs', '3', '--quiet'))
    assert rc == 0, out + err
    line = [x for x in out.splitlines() if x.startswith('trained 3 epochs on 2 ranks')]
    assert line, out + err
    assert 'replicas identical: True' in line[0]
    assert float(re.search(r'test accuracy ([0-9.]+)', line[0]).group(1)) > 0.9, line[0]
