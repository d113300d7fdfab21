"""Parameters to one flat vector and back."""
from ...tensor import Tensor, wrap

__all__ = ['parameters_to_vector', 'vector_to_parameters']


def parameters_to_vector(parameters):
    """One 1-D tensor of all parameters' values, differentiable with respect to them."""
    from ... import ops
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into the parameters' data (no history)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f'expected torch.Tensor, but got: {type(vec).__name__}')
    offset = 0
    for p in parameters:
        n = p.numel()
        # As in PyTorch, each parameter's data becomes a view of the vector.
        p.data = wrap(vec._data[offset:offset + n].reshape(p.shape))
        offset += n
