"""Parametrizations: a parameter or buffer computed from ``original`` tensors each access.

``register_parametrization(module, 'weight', P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and turns ``weight`` into a property of a new
class ``Parametrized<Class>`` (made per module, as in PyTorch) returning ``P(original)``;
assigning ``module.weight = X`` stores ``P.right_inverse(X)`` into the original.
"""
from contextlib import contextmanager

from ..modules.container import ModuleList, ModuleDict
from ..parameter import Parameter
from ...tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ['cached', 'ParametrizationList', 'register_parametrization', 'is_parametrized',
           'remove_parametrizations', 'type_before_parametrizations',
           'transfer_parametrizations_and_params']

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once (on first access) and
    reused: useful when a weight is read many times in one forward (recurrent layers)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _set_original(original, value):
    """Write ``value`` into ``original`` in place (shape may change), keeping the object."""
    original.data = value.detach()
    from ...tensor import bump_version
    bump_version(original, 'dynagrad.nn.utils.parametrize')


def _register_parameter_or_buffer(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its ``original`` tensor(s):
    ``original`` or, when the first ``right_inverse`` returns several, ``original0``,
    ``original1``, ..."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError('ParametrizationList requires one or more modules.')
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, 'right_inverse'):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, (list, tuple)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f'(list, tuple...). Got {type(new).__name__}')
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f'When `right_inverse` outputs one tensor, it may not change '
                                 f'the dtype.\noriginal.dtype: {original.dtype}\n'
                                 f'right_inverse(original).dtype: {new.dtype}')
            _set_original(original, new)
            _register_parameter_or_buffer(self, 'original', original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f'tensors (list, tuple...). Got element {i} of the '
                                     f'sequence with type {type(originali).__name__}.')
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                else:
                    originali = originali.detach()
                _register_parameter_or_buffer(self, f'original{i}', originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f'A parametrization must return a tensor. Got '
                                 f'{type(z).__name__}.')
            if z.dtype != original_dtype:
                raise ValueError(f'Registering a parametrization may not change the dtype of '
                                 f'the tensor, unless `unsafe` flag is enabled.\n'
                                 f'unparametrized dtype: {original_dtype}\n'
                                 f'parametrized dtype: {z.dtype}')
            if z.shape != original_shape:
                raise ValueError(f'Registering a parametrization may not change the shape of '
                                 f'the tensor, unless `unsafe` flag is enabled.\n'
                                 f'unparametrized shape: {original_shape}\n'
                                 f'parametrized shape: {z.shape}')

    def right_inverse(self, value):
        """Store into the original(s) the value whose parametrization is ``value``."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, 'right_inverse'):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f'parametrization {type(module).__name__} does not '
                                       'implement right_inverse.')
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f'`right_inverse` should return a tensor. Got '
                                     f'{type(value).__name__}')
                if value.dtype != self.original.dtype:
                    raise ValueError(f'The tensor returned by `right_inverse` has dtype '
                                     f'{value.dtype} while `original` has dtype '
                                     f'{self.original.dtype}')
                _set_original(self.original, value)
            else:
                if not isinstance(value, (list, tuple)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f'length {self.ntensors}. Got {type(value).__name__}')
                for i, tensor in enumerate(value):
                    _set_original(getattr(self, f'original{i}'), tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f'original{i}') for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Give ``module`` its own subclass so properties can be added per module."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError('Serialization of parametrized modules is only supported through '
                           'state_dict(). See: https://pytorch.org/tutorials/beginner/'
                           'saving_loading_models.html#saving-loading-a-general-checkpoint-'
                           'for-inference-and-or-resuming-training')

    def deepcopy(self, memo):
        # pickling is refused, so copy.deepcopy cannot go through __reduce_ex__
        import copy
        replica = memo.get(id(self))
        if replica is None:
            replica = self.__new__(self.__class__)
            memo[id(self)] = replica
            replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    param_cls = type(f'Parametrized{cls.__name__}', (cls,),
                     {'__getstate__': getstate, '__deepcopy__': deepcopy})
    module.__class__ = param_cls


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` the output of ``parametrization`` on its original value
    (appending to the list when already parametrized); returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f'A parametrization must return a tensor. Got '
                                 f'{type(x).__name__}.')
            if x.dtype != y.dtype:
                raise ValueError(f'Registering a parametrization may not change the dtype of '
                                 f'the tensor, unless the `unsafe` flag is enabled.\n'
                                 f'module.{tensor_name}.dtype: {y.dtype}\n'
                                 f'parametrization(module.{tensor_name}).dtype: {x.dtype}')
            if x.shape != y.shape:
                raise ValueError(f'Registering a parametrization may not change the shape of '
                                 f'the tensor, unless the `unsafe` flag is enabled.\n'
                                 f'module.{tensor_name}.shape: {y.shape}\n'
                                 f'parametrization(module.{tensor_name}).shape: {x.shape}')
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__.get('_modules', {}).get('parametrizations')
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter/buffer
    again, holding the current parametrized value (``leave_parametrized=True``) or the
    original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f'Module {module} does not have a parametrization on {tensor_name}')
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set_original(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError('Cannot leave unparametrized (`leave_parametrized=False`) a '
                             'tensor that is parametrized in terms of a sequence of tensors.')
        with no_grad():
            t = getattr(module, tensor_name)
        if parametrizations.original0.requires_grad or isinstance(parametrizations.original0,
                                                                   Parameter):
            original = Parameter(t.detach(), t.requires_grad or
                                 parametrizations.original0.requires_grad)
        else:
            original = t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, 'parametrizations')
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class, or the class it had before any parametrization."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copy the parametrizations (and their originals' values) of ``from_module`` onto
    ``to_module``, for ``tensor_name`` or all of them; returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        source = from_module.parametrizations[name]
        target = to_module.parametrizations[name]
        with no_grad():
            if source.is_tensor:
                _set_original(target.original, source.original)
            else:
                for i in range(source.ntensors):
                    _set_original(getattr(target, f'original{i}'),
                                  getattr(source, f'original{i}'))
    return to_module

