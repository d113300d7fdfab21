"""The legacy, hook-based ``spectral_norm``: parameter ``<name>_orig``, buffers ``<name>_u``
and ``<name>_v``, and a forward pre-hook setting ``<name> = orig / sigma`` (one power
iteration per training forward; none in eval). State dicts record the format's version in
their metadata; one of version 0 (``<name>`` saved, no ``<name>_v``) loads converted."""
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

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        """The ``v`` with ``u = W v / ||W v||`` (least squares), scaled so that
        ``u . W v`` is ``target_sigma``: how a version-0 state dict gets its ``v``."""
        wt = weight_mat.t()
        v = ops.mv(ops.mm(ops.pinverse(ops.mm(wt, weight_mat)), wt), u)
        return v * (target_sigma / ops.dot(u, ops.mv(weight_mat, v)))

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
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (``<name>``, ``<name>_orig``, ``<name>_u``) to the
    current keys: ``<name>`` is dropped and ``<name>_v`` derived from what was saved."""
    __slots__ = ('fn',)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get('spectral_norm', {}).get(fn.name + '.version')
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and all(
                weight_key + suffix in state_dict for suffix in ('_orig', '_u', '_v')):
            return      # the current format, saved without metadata
        absent = [weight_key + suffix for suffix in ('_orig', '', '_u')
                  if weight_key + suffix not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + '_orig']
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + '_u']
            state_dict[weight_key + '_v'] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``<name>.version`` under the module's ``spectral_norm`` metadata."""
    __slots__ = ('fn',)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault('spectral_norm', {})
        key = self.fn.name + '.version'
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


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
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in list(module._state_dict_hooks.items()):
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[key]
    for key, hook in list(module._load_state_dict_pre_hooks.items()):
        if isinstance(getattr(hook, 'hook', None), SpectralNormLoadStateDictPreHook) \
                and hook.hook.fn.name == name:
            del module._load_state_dict_pre_hooks[key]
    return module
