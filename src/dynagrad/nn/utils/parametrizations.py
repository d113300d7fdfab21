"""Parametrizations built on ``parametrize``: ``weight_norm`` and ``spectral_norm``.

``orthogonal`` is not provided: its maps need ``matrix_exp`` and ``householder_product``,
which dynagrad's linalg does not have."""
from ..module import Module
from .. import functional as F
from ... import ops
from ...tensor import Tensor
from ...autograd.grad_mode import no_grad
from . import parametrize
from ._norms import norm_except_dim, weight_norm_value, reshape_weight_to_matrix, spectral_dim

__all__ = ['spectral_norm', 'weight_norm']


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name='weight', dim=0):
    """Reparametrize ``module.<name>`` as magnitude ``original0`` (g) times direction
    ``original1`` (v): ``w = g * v / ||v||``, the norm over every dimension but ``dim``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module._register_load_state_dict_pre_hook(_WeightNormCompatHook(name))
    return module


class _WeightNormCompatHook:
    """Loads a state dict saved under the legacy ``weight_norm``'s keys: ``<name>_g`` and
    ``<name>_v`` become ``parametrizations.<name>.original0`` and ``original1``."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        g_key, v_key = f'{prefix}{self.name}_g', f'{prefix}{self.name}_v'
        if g_key in state_dict and v_key in state_dict:
            new_prefix = f'{prefix}parametrizations.{self.name}.'
            state_dict[new_prefix + 'original0'] = state_dict.pop(g_key)
            state_dict[new_prefix + 'original1'] = state_dict.pop(v_key)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [-{ndim}, '
                             f'{ndim - 1}] but got {dim})')
        if n_power_iterations <= 0:
            raise ValueError(f'Expected n_power_iterations to be positive, but got '
                             f'n_power_iterations={n_power_iterations}')
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = reshape_weight_to_matrix(weight.detach(), self.dim)
            h, w = weight_mat.shape
            u = ops.randn(h, dtype=weight.dtype)
            v = ops.randn(w, dtype=weight.dtype)
            self.register_buffer('_u', F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer('_v', F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place, as the buffers PyTorch keeps.
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ops.mv(weight_mat.t(), self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ops.vdot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (one
    step per training forward; buffers ``_u``/``_v`` hold the singular vectors)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = spectral_dim(module, dim)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
