"""The legacy, hook-based ``spectral_norm``: parameter ``<name>_orig``, buffers ``<name>_u``
and ``<name>_v``, and a forward pre-hook setting ``<name> = orig / sigma`` (one power
iteration per training forward; none in eval)."""
from .. import functional as F
from ..parameter import Parameter
from ... import ops
from ...autograd.grad_mode import no_grad
from ._norms import reshape_weight_to_matrix, spectral_dim

__all__ = ['SpectralNorm', 'spectral_norm', 'remove_spectral_norm']


class SpectralNorm:
    _version = 1
    __slots__ = ('name', 'dim', 'n_power_iterations', 'eps')

    def __init__(self, name='weight', n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f'Expected n_power_iterations to be positive, but got '
                             f'n_power_iterations={n_power_iterations}')
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return reshape_weight_to_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + '_orig')
        u = getattr(module, self.name + '_u')
        v = getattr(module, self.name + '_v')
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                mat = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ops.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ops.mv(mat, v), dim=0, eps=self.eps))
            # the buffers change in place at the next forward: keep copies for backward
            u = u.clone()
            v = v.clone()
        sigma = ops.dot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + '_u')
        delattr(module, self.name + '_v')
        delattr(module, self.name + '_orig')
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f'Cannot register two spectral_norm hooks on the same '
                                   f'parameter {name}')
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(ops.randn(h, dtype=weight.dtype), dim=0, eps=fn.eps)
            v = F.normalize(ops.randn(w, dtype=weight.dtype), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + '_orig', weight)
        setattr(module, name, weight.data)
        module.register_buffer(name + '_u', u)
        module.register_buffer(name + '_v', v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before each forward; returns
    ``module``."""
    SpectralNorm.apply(module, name, n_power_iterations, spectral_dim(module, dim), eps)
    return module


def remove_spectral_norm(module, name='weight'):
    """Undo ``spectral_norm``: ``<name>`` becomes a parameter holding the current value."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
