"""process_group + store_comm: jobs whose ranks meet through a store (PyTorch's gloo way:
env://, tcp://, a FileStore), every collective's results compared with torch's gloo running
the same job."""
import json
import os
import socket
import subprocess
import sys

import pytest

import dynagrad.distributed as dist

WORKER = os.path.join(os.path.dirname(__file__), 'workers', 'store_collectives.py')
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', 'src'))


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def run_job(module, init, n, tmp_path):
    port = _free_port()
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), MASTER_ADDR='127.0.0.1',
                   MASTER_PORT=str(port), STORE_FILE=str(tmp_path / f'{module}.store'),
                   PYTHONPATH=SRC)
        for var in ('OMPI_COMM_WORLD_RANK', 'PMI_RANK', 'PMIX_RANK'):
            env.pop(var, None)
        procs.append(subprocess.Popen([sys.executable, WORKER, module, init], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * n, [e[-2000:] for _, e in outs]
    return [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]


@pytest.mark.parametrize('init,n', [('env', 2), ('tcp', 3), ('file', 2)])
def test_collectives_through_a_store_as_torch_gloo(init, n, tmp_path):
    assert run_job('dynagrad', init, n, tmp_path) == run_job('torch', init, n, tmp_path)


def test_bad_init_is_refused_before_anything_starts():
    assert dist.is_gloo_available()
    with pytest.raises(ValueError, match='world_size must be positive'):
        dist.init_process_group('gloo', store=dist.HashStore())
    with pytest.raises(ValueError, match='unknown backend'):
        dist.init_process_group('bogus', store=dist.HashStore(), rank=0, world_size=1)
    with pytest.raises(ValueError, match='tcp://host:port'):
        dist.init_process_group('gloo', init_method='tcp://nohost', rank=0, world_size=1)
    assert not dist.is_initialized()


def test_one_rank_job_in_process():
    import dynagrad
    dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(ValueError, match='twice'):
            dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)
        t = dynagrad.tensor([1.0, 2.0])
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 2.0] and dist.get_backend() == 'gloo'
    finally:
        dist.destroy_process_group()
