"""Collectives and DistributedDataParallel on 'cuda' tensors (the NumPy stand-in for CuPy,
registered on each of 2 ranks) go through host buffers and equal the CPU's results."""
from _mpi import run_workers


def test_collectives_and_ddp_on_cuda_tensors_equal_the_cpu_through_host_buffers():
    rc, out, err, _ = run_workers('cuda_host_buffers.py', n=2, timeout=180)
    assert rc == 0, out + err
    for name in ('all_reduce', 'broadcast', 'all_gather',
                 'reduce, reduce_scatter, scatter, gather, send/recv',
                 'ddp sgd bucket_cap_mb=25 cuda == cpu', 'ddp sgd bucket_cap_mb=0.001 cuda == cpu',
                 'ddp adam bucket_cap_mb=25 cuda == cpu',
                 'ddp adam bucket_cap_mb=0.001 cuda == cpu',
                 'ddp find_unused_parameters on cuda: created gradients on the device'):
        assert f'PASS {name} ' in out, (name, out, err)
    assert 'ALL DONE' in out, out + err
