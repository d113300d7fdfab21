"""torch.distributed's classes and the DTensor/FSDP/device-mesh modules libraries import
(transformers 5 imports them whenever torch.distributed.is_available()), against torch."""
import pytest
import torch
import torch.distributed as theirs
from torch.distributed import fsdp as their_fsdp
from torch.distributed.tensor import Partial as TPartial, Replicate as TReplicate, Shard as TShard
from torch.distributed.tensor.placement_types import _StridedShard as TStrided

import dynagrad
import dynagrad.distributed as mine
from dynagrad.distributed import fsdp as my_fsdp
from dynagrad.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from dynagrad.distributed.tensor.placement_types import _StridedShard


def test_hash_store_and_prefix_store_answer_as_torch():
    for d in (mine, theirs):
        s = d.HashStore()
        s.set('a', '1')
        s.set('b', b'xy')
        p = d.PrefixStore('pre', s)
        p.set('k', 'v')
        got = (s.get('a'), s.get('b'), s.add('c', 2), s.add('c', 3), s.get('c'), s.num_keys(),
               s.check(['a', 'b']), s.check(['zz']), p.get('k'), s.get('pre/k'),
               s.delete_key('a'), s.delete_key('a'), s.num_keys(),
               isinstance(s, d.Store), isinstance(p, d.Store))
        if d is theirs:
            assert got == mine_got
        mine_got = got


def test_backend_and_process_group():
    for name in ['GLOO', 'nccl', 'Mpi', 'bogus']:
        assert mine.Backend(name) == theirs.Backend(name)
    for attr in ['GLOO', 'NCCL', 'MPI', 'UNDEFINED', 'backend_list']:
        assert getattr(mine.Backend, attr) == getattr(theirs.Backend, attr)
    assert isinstance(mine.group.WORLD, mine.ProcessGroup)
    assert not isinstance(object(), mine.ProcessGroup)
    assert mine.is_torchelastic_launched() is theirs.is_torchelastic_launched() is False


def test_placements_print_and_compare_as_torch():
    pairs = [(Shard(0), TShard(0)), (Shard(1), TShard(1)), (Replicate(), TReplicate()),
             (Partial(), TPartial()), (Partial('max'), TPartial('max')),
             (_StridedShard(0, split_factor=2), TStrided(0, split_factor=2))]
    for m, t in pairs:
        assert (repr(m), str(m)) == (repr(t), str(t))
        assert (m.is_shard(), m.is_replicate(), m.is_partial()) == \
            (t.is_shard(), t.is_replicate(), t.is_partial())
    assert Shard(1) == Shard(1) and Shard(1) != Shard(0) and Shard(0) != Replicate()
    assert Partial().reduce_op == TPartial().reduce_op
    assert not isinstance(_StridedShard(0), Shard) and not isinstance(TStrided(0), TShard)
    for size in range(0, 12):
        for chunks in (1, 3, 4):
            assert [Shard.local_shard_size_and_offset(size, chunks, r) for r in range(chunks)] \
                == [tuple(TShard.local_shard_size_and_offset(size, chunks, r))
                    for r in range(chunks)]


def test_fsdp_policies_as_torch_and_what_cannot_run_says_so():
    assert repr(my_fsdp.CPUOffloadPolicy()) == repr(their_fsdp.CPUOffloadPolicy())
    assert repr(my_fsdp.MixedPrecisionPolicy()) == repr(their_fsdp.MixedPrecisionPolicy())
    assert my_fsdp.MixedPrecisionPolicy(param_dtype=dynagrad.bfloat16).param_dtype is \
        dynagrad.bfloat16
    assert not isinstance(dynagrad.nn.Linear(2, 2), my_fsdp.FSDPModule)
    assert not isinstance(dynagrad.ones(2), DTensor) and issubclass(DTensor, dynagrad.Tensor)
    for call in (lambda: distribute_tensor(dynagrad.ones(2), None, [Shard(0)]),
                 lambda: my_fsdp.fully_shard(dynagrad.nn.Linear(2, 2)),
                 lambda: my_fsdp.FullyShardedDataParallel(dynagrad.nn.Linear(2, 2)),
                 lambda: DTensor(), lambda: mine.all_to_all_single(dynagrad.ones(2),
                                                                   dynagrad.ones(2))):
        with pytest.raises(NotImplementedError):
            call()
    from dynagrad.distributed._functional_collectives import wait_tensor
    t = dynagrad.ones(2)
    assert wait_tensor(t) is t


def test_the_imports_transformers_makes_when_distributed_is_available():
    import importlib
    for module, names in [
            ('distributed', ['all_gather_into_tensor', 'all_to_all_single',
                             'get_process_group_ranks', 'ProcessGroup', 'TCPStore', 'Store',
                             'FileStore', 'HashStore', 'Backend', 'ReduceOp']),
            ('distributed._functional_collectives', ['all_to_all_single_autograd', 'wait_tensor']),
            ('distributed.tensor', ['DTensor', 'Partial', 'Replicate', 'Shard',
                                    'distribute_tensor']),
            ('distributed.tensor.placement_types', ['Shard', '_StridedShard']),
            ('distributed.tensor._utils', ['compute_local_shape_and_global_offset']),
            ('distributed.device_mesh', ['DeviceMesh']),
            ('distributed._composable.fsdp', ['fully_shard']),
            ('distributed.fsdp', ['CPUOffloadPolicy', 'MixedPrecisionPolicy',
                                  'FullyShardedDataParallel', 'FSDPModule'])]:
        ours = importlib.import_module('dynagrad.' + module)
        reference = importlib.import_module('torch.' + module)
        for name in names:
            assert hasattr(reference, name), (module, name)
            assert hasattr(ours, name), (module, name)



def test_join_on_one_process_and_module_paths_libraries_import():
    from dynagrad.distributed.algorithms.join import Join, Joinable
    from torch.distributed.algorithms.join import Join as TJoin
    for join in (Join, TJoin):
        with pytest.raises(ValueError, match='at least one joinable'):
            join([])
    with Join([Joinable()]) as j:
        assert isinstance(j, Join)
    from dynagrad.nn.modules import Module
    from torch.nn.modules import Module as TModule
    assert Module is dynagrad.nn.Module and TModule is torch.nn.Module
