"""The legacy, hook-based ``weight_norm`` (deprecated in PyTorch for
``parametrizations.weight_norm``): parameters ``<name>_g`` and ``<name>_v``, and a forward
pre-hook recomputing ``<name> = g * v / ||v||`` before each forward."""
import warnings

from ..parameter import Parameter, UninitializedParameter
from ._norms import norm_except_dim, weight_norm_value

__all__ = ['WeightNorm', 'weight_norm', 'remove_weight_norm']


class WeightNorm:
    __slots__ = ('name', 'dim')

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + '_g')
        v = getattr(module, self.name + '_v')
        return weight_norm_value(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn('`dynagrad.nn.utils.weight_norm` is deprecated in favor of '
                      '`dynagrad.nn.utils.parametrizations.weight_norm`.', FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f'Cannot register two weight_norm hooks on the same '
                                   f'parameter {name}')
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             'parameters. Make sure to run the dummy forward before applying '
                             'weight normalization')
        del module._parameters[name]
        module.register_parameter(name + '_g', Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).data))
        module.register_parameter(name + '_v', Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + '_g']
        del module._parameters[self.name + '_v']
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name='weight', dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over all dimensions but
    ``dim``; ``dim=None`` for the whole tensor); returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name='weight'):
    """Undo ``weight_norm``: ``<name>`` becomes a parameter holding the current value."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
