"""Shared pieces of the weight and spectral norm reparametrizations."""

def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (kept, the others size 1);
    ``dim=-1`` (or None) gives the norm of the whole tensor."""
    if dim is None or dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs() if pow else v
    return v.norm(pow, dim=others, keepdim=True)


def weight_norm_value(v, g, dim):
    """``v * (g / ||v||)`` with the norm over every dimension but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


def reshape_weight_to_matrix(weight, dim):
    """The weight as a matrix with dimension ``dim`` as rows."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def spectral_dim(module, dim):
    """PyTorch's default: dimension 1 for transposed convolutions, else 0."""
    if dim is not None:
        return dim
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
