"""``torch.distributed.tensor`` (DTensor): the placements are real (libraries build them at
import time); a DTensor cannot be made, because dynagrad has no device meshes. No ordinary
tensor is a ``DTensor``, so ``isinstance`` checks take the single-process path."""
from ...tensor import Tensor
from ..._torch_function import disabled_torch_function_impl
from ..device_mesh import NO_MESH, DeviceMesh  # noqa: F401
from .placement_types import Partial, Placement, Replicate, Shard  # noqa: F401

__all__ = ['DTensor', 'DeviceMesh', 'Placement', 'Shard', 'Replicate', 'Partial',
           'distribute_tensor', 'distribute_module', 'init_device_mesh']


class DTensor(Tensor):
    __torch_function__ = disabled_torch_function_impl    # never made: no dispatch to set up
    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(NO_MESH)

    @staticmethod
    def from_local(*args, **kwargs):
        raise NotImplementedError(NO_MESH)


def distribute_tensor(*args, **kwargs):
    raise NotImplementedError(NO_MESH)


def distribute_module(*args, **kwargs):
    raise NotImplementedError(NO_MESH)


def init_device_mesh(*args, **kwargs):
    raise NotImplementedError(NO_MESH)
