"""``torch.distributed._functional_collectives``: collectives that return new tensors.

dynagrad's collectives complete before they return (see ``work.py``), so a result never
needs waiting on: ``wait_tensor`` returns its argument."""
from .device_mesh import NO_MESH

__all__ = ['wait_tensor', 'all_to_all_single_autograd']


def wait_tensor(tensor):
    return tensor


def all_to_all_single_autograd(*args, **kwargs):
    raise NotImplementedError('all_to_all_single_autograd: ' + NO_MESH)
