"""DistributedDataParallel on 2 ranks equals one process on the whole batch; a failing rank
ends the job."""
from _mpi import run_workers


def test_ddp_matches_one_process_on_the_whole_batch():
    rc, out, err, _ = run_workers('ddp_equivalence.py', n=2, timeout=180)
    assert rc == 0, out + err
    for name in ('sgd, one bucket', 'adam, one bucket', 'no_sync accumulation',
                 'find_unused_parameters', 'unfinished reduction error', 'state_dict'):
        assert f'PASS {name} ' in out, (name, out, err)
    assert out.count('buckets max|diff|') == 2, out
    assert 'ALL DONE' in out


def test_one_failing_rank_ends_the_job_with_its_traceback():
    rc, out, err, seconds = run_workers('fails_at_step_3.py', n=2, timeout=60)
    assert rc != 0, out + err
    assert seconds < 30, seconds
    assert 'rank 1 step 3' in out
    assert 'Traceback (most recent call last)' in err, err
    assert 'RuntimeError: rank 1 fails at step 3 on purpose' in err, err
    assert '[dynagrad.distributed rank 1] uncaught exception' in err, err
    assert 'the failure went unnoticed' not in out
