"""PyTorch's module path for the functions it defines in ``torch/functional.py`` (imported as
``torch.functional``); they live with their op families in ``dynagrad.ops``."""
from .ops import (atleast_1d, atleast_2d, atleast_3d, chain_matmul, einsum,  # noqa: F401
                  meshgrid, norm, split, tensordot, unique, block_diag, broadcast_tensors,
                  cartesian_prod, unique_consecutive, unravel_index, stft, istft)
from .global_options import broadcast_shapes  # noqa: F401
from .nn.functional import cdist  # noqa: F401
from .ops.linalg_solvers import legacy_lu as lu  # noqa: F401

__all__ = ['atleast_1d', 'atleast_2d', 'atleast_3d', 'block_diag', 'broadcast_shapes',
           'broadcast_tensors', 'cartesian_prod', 'cdist', 'chain_matmul', 'einsum', 'istft',
           'lu', 'meshgrid', 'norm', 'split', 'stft', 'tensordot', 'unique',
           'unique_consecutive', 'unravel_index']
