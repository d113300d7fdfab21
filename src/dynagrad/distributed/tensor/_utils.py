"""``torch.distributed.tensor._utils``: what libraries import from it."""
from ..device_mesh import NO_MESH

__all__ = ['compute_local_shape_and_global_offset']


def compute_local_shape_and_global_offset(global_shape, mesh, placements, *args, **kwargs):
    raise NotImplementedError(NO_MESH)
