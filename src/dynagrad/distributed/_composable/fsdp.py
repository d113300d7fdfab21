"""``torch.distributed._composable.fsdp``: the old home of ``fully_shard``."""
from ..fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, fully_shard  # noqa: F401

__all__ = ['fully_shard', 'FSDPModule', 'CPUOffloadPolicy', 'MixedPrecisionPolicy']
