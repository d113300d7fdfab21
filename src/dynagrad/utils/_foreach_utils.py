"""``dynagrad.utils._foreach_utils``: grouping tensors for multi-tensor updates, as
``torch.utils._foreach_utils`` (optimizer libraries import it). dynagrad's CPU arrays have
no fused or foreach kernels, so the support checks answer as PyTorch's do on the CPU."""
from ..autograd.grad_mode import no_grad

__all__ = ['_group_tensors_by_device_and_dtype', '_has_foreach_support',
           '_device_has_foreach_support', '_get_foreach_kernels_supported_devices',
           '_get_fused_kernels_supported_devices']


def _get_foreach_kernels_supported_devices():
    return ['cuda', 'xpu', 'mtia', 'privateuseone']


def _get_fused_kernels_supported_devices():
    return ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone']


def _device_has_foreach_support(device):
    return device.type in _get_foreach_kernels_supported_devices() + ['cpu']


def _has_foreach_support(tensors, device):
    return _device_has_foreach_support(device) and \
        all(t is None or type(t).__name__ in ('Tensor', 'Parameter') for t in tensors)


@no_grad()
def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """{(device, dtype): ([list of the tensors at those positions, one per input list],
    positions)}, grouped by the first list's tensors."""
    first = tensorlistlist[0]
    groups = {}
    for i, t in enumerate(first):
        if t is None:
            raise RuntimeError(f'Tensors of the first list of nested Tensor lists are supposed '
                               f'to be defined but the {i}-th Tensor is not.')
        lists, positions = groups.setdefault((t.device, t.dtype),
                                             ([[] for _ in tensorlistlist], []))
        for out, inputs in zip(lists, tensorlistlist):
            out.append(inputs[i])
        positions.append(i)
    if not with_indices:
        groups = {k: (lists, []) for k, (lists, _) in groups.items()}
    return groups
