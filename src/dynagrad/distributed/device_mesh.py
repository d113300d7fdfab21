"""``torch.distributed.device_mesh``: importable so that libraries' type checks and imports
work; dynagrad's distributed training has one group (the MPI world) and no device meshes."""

__all__ = ['DeviceMesh', 'init_device_mesh']

NO_MESH = ('dynagrad.distributed has no device meshes (and so no DTensor, FSDP2 or tensor '
           'parallelism): it trains data-parallel over MPI with DistributedDataParallel')


class DeviceMesh:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(NO_MESH)


def init_device_mesh(*args, **kwargs):
    raise NotImplementedError(NO_MESH)
