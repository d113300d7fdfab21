"""``torch.distributed.fsdp``: its policy classes are real (libraries build them from
configuration); sharding a model is not done (dynagrad trains data-parallel with
DistributedDataParallel, every rank holding the whole model)."""
import dataclasses

from ...nn.module import Module
from ..device_mesh import NO_MESH

__all__ = ['FullyShardedDataParallel', 'FSDPModule', 'CPUOffloadPolicy', 'MixedPrecisionPolicy',
           'OffloadPolicy', 'fully_shard']


@dataclasses.dataclass(frozen=True)
class OffloadPolicy:
    pass


@dataclasses.dataclass(frozen=True)
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


class FSDPModule:
    """The class ``fully_shard`` mixes into a module; no dynagrad module is one."""


class FullyShardedDataParallel(Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(NO_MESH)


def fully_shard(module, *args, **kwargs):
    raise NotImplementedError(NO_MESH)
