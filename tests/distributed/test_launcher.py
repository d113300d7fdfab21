"""The launcher's command line, its message when MPI is missing, and the lazy import."""
import os
import subprocess
import sys

from dynagrad.distributed import run


def test_dry_run_builds_the_mpirun_command(monkeypatch):
    monkeypatch.setattr(run, '_is_open_mpi', lambda mpirun: True)
    args = run.parse(['-n', '4', '--hostfile', 'hosts.txt', 'train.py', '--lr', '0.1'])
    cmd = run.build_command(args, '/opt/mpi/bin/mpirun')
    assert cmd[:3] == ['/opt/mpi/bin/mpirun', '-np', '4']
    assert cmd[cmd.index('--hostfile') + 1] == 'hosts.txt'
    assert '--oversubscribe' not in cmd  # a hostfile says where the slots are
    assert cmd[-4:] == [sys.executable, 'train.py', '--lr', '0.1']
    assert ('--allow-run-as-root' in cmd) == (os.getuid() == 0)
    cmd = run.build_command(run.parse(['-n', '2', '-m', 'pkg.mod', 'x']), 'mpirun')
    assert cmd[-4:] == [sys.executable, '-m', 'pkg.mod', 'x'] and '--oversubscribe' in cmd


def test_missing_mpirun_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(run, 'find_mpirun', lambda: None)
    try:
        run.main(['-n', '2', 'script.py'])
    except SystemExit as e:
        assert "pip install 'dynagrad[distributed]'" in str(e.code)
    else:
        raise AssertionError('no error')


CODE = '''
import sys
import dynagrad, dynagrad.distributed, dynagrad.nn.parallel
import dynagrad.utils.data.distributed
import importlib.util
# is_available answers whether mpi4py is installed without importing it (which starts MPI)
assert dynagrad.distributed.is_available() is (importlib.util.find_spec('mpi4py') is not None)
assert 'mpi4py' not in sys.modules, 'importing dynagrad.distributed imported mpi4py'
try:
    dynagrad.distributed.get_rank()
except ValueError as e:
    assert 'init_process_group' in str(e)
print('OK')
'''


def test_nothing_imports_mpi4py_until_used():
    proc = subprocess.run([sys.executable, '-c', CODE], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == 'OK'


HIDDEN = '''
import sys
sys.modules['mpi4py'] = None  # as if it were not installed
import dynagrad.distributed as dist
try:
    dist.init_process_group()
except ImportError as e:
    assert "pip install 'dynagrad[distributed]'" in str(e), e
    print('OK')
assert dist.is_available() is False
'''


def test_missing_mpi4py_names_the_extra():
    proc = subprocess.run([sys.executable, '-c', HIDDEN], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == 'OK'
