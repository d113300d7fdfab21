"""Collectives on 2 ranks against their definitions (the checks live in the worker)."""
from _mpi import run_workers

CHECKS = ['all_reduce', 'all_reduce dtypes and views', 'broadcast',
          'all_gather (even, uneven, async, into_tensor)',
          'all_gather_object, broadcast_object_list', 'reduce', 'reduce_scatter',
          'scatter, gather', 'send/recv, isend/irecv', 'async polling', 'mismatch errors']


def test_every_collective_on_two_ranks():
    rc, out, err, _ = run_workers('collectives.py', n=2)
    assert rc == 0, out + err
    for name in CHECKS:
        assert f'PASS {name}\n' in out, (name, out, err)
    assert 'ALL DONE' in out


def test_every_collective_on_three_ranks():
    rc, out, err, _ = run_workers('collectives.py', n=3)
    assert rc == 0, out + err
    assert 'ALL DONE' in out
