"""``Module``: the base class of layers; parameters and submodules register by attribute."""
import functools
import warnings
from collections import OrderedDict, namedtuple
from typing import TypeVar

from .._device import as_device, check_device, device_of_type
from .._meta import NO_DATA
from ..tensor import Tensor
from ..autograd.graph import RemovableHandle, HookDict
from ..ops.conversion import parse_to
from .parameter import Parameter, Buffer, is_lazy

_IncompatibleKeysFields = namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])


class _IncompatibleKeys(_IncompatibleKeysFields):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


class _LoadPreHook:
    """A load-state-dict pre-hook; ``with_module`` hooks get the owning module first."""
    __slots__ = ('hook', 'with_module')

    def __init__(self, hook, with_module):
        self.hook = hook
        self.with_module = with_module

    def __call__(self, module, *args):
        return self.hook(module, *args) if self.with_module else self.hook(*args)


def _mark_public(hook):
    """Tag a state-dict post-hook registered through the public API (it must return None)."""
    try:
        hook._from_public_api = True
    except AttributeError:  # a bound method: tag the function behind it
        hook.__func__._from_public_api = True


def _copy_planned(plan, assign):
    """Make the copies ``load_state_dict`` planned (``store`` None: the extra state)."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        for m, store, name, t, value in plan:
            if store is None:
                m.set_extra_state(value)
            elif assign:
                if store == '_parameters' and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=t.requires_grad)
                getattr(m, store)[name] = value
            else:
                t.copy_(value)

# the state-dict key, after a module's prefix, of what get_extra_state returns
_EXTRA_STATE_KEY_SUFFIX = '_extra_state'


def _built_on_device(init):
    """A layer's ``__init__`` that takes ``device=``: the layer is built (and initialised,
    with the CPU's generator) on the CPU, then moved to that device when it is another."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        device = kwargs.get('device')
        if device is not None and check_device(device).type == 'meta':
            with as_device(device):     # shapes only: no values drawn, no generator used
                init(self, *args, **kwargs)
            return
        init(self, *args, **kwargs)
        if device is not None and check_device(device).type != 'cpu':
            self.to(device)
    return __init__


class Module:
    """Base class of all layers: subclasses set attributes in ``__init__``, define ``forward``."""
    training = True
    _version = 1
    dump_patches = False
    call_super_init = False
    T_destination = TypeVar('T_destination', bound=dict)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get('__init__')
        code = getattr(init, '__code__', None)
        if code is not None and 'device' in code.co_varnames[
                :code.co_argcount + code.co_kwonlyargcount]:
            cls.__init__ = _built_on_device(init)

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f'{type(self).__name__}.__init__() takes no arguments (got '
                            f'{len(args)} positional and {sorted(kwargs)} keyword)')
        setattr_ = object.__setattr__
        setattr_(self, 'training', True)
        setattr_(self, '_parameters', OrderedDict())
        setattr_(self, '_buffers', OrderedDict())
        setattr_(self, '_non_persistent_buffers_set', set())
        setattr_(self, '_modules', OrderedDict())
        for name in self._HOOK_TABLES:
            setattr_(self, name, HookDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        backward_hooks = self._backward_hooks or self._backward_pre_hooks
        if backward_hooks:
            from ._backward_hooks import BackwardHook
            bw = BackwardHook(self, list(self._backward_hooks.values()),
                              list(self._backward_pre_hooks.values()))
            args = bw.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_hooks:
            output = bw.setup_output_hook(output)
        return output

    # -- registration by attribute -----------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get('_parameters')
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError('cannot assign parameters before Module.__init__() call')
            self._remove(name, keep=params)
            params[name] = value
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError('cannot assign module before Module.__init__() call')
            self._remove(name, keep=self._modules)
            self._modules[name] = value
        elif isinstance(value, Buffer):
            if params is None:
                raise AttributeError('cannot assign buffer before Module.__init__() call')
            self.register_buffer(name, value, value.persistent)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                '(dynagrad.nn.Parameter or None expected)')
            params[name] = None
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (dynagrad.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                '(dynagrad.Tensor or None expected)')
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove(self, name, keep=None):
        """Forget ``name`` everywhere but ``keep`` (a re-assignment keeps its place there)."""
        self.__dict__.pop(name, None)
        for d in (self._parameters, self._buffers, self._modules):
            if d is not keep:
                d.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        # read on every self.weight / self.attn of every forward: one lookup per store
        d = self.__dict__
        params = d.get('_parameters')
        if params is not None and name in params:
            return params[name]
        buffers = d.get('_buffers')
        if buffers is not None and name in buffers:
            return buffers[name]
        modules = d.get('_modules')
        if modules is not None and name in modules:
            return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def register_parameter(self, name, param):
        if '_parameters' not in self.__dict__:
            raise AttributeError('cannot assign parameter before Module.__init__() call')
        if not isinstance(name, str):
            raise TypeError(f'parameter name should be a string. Got {type(name).__name__}')
        if '.' in name or name == '':
            raise KeyError(f'parameter name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (dynagrad.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             'parameters must be created explicitly.')
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if '_buffers' not in self.__dict__:
            raise AttributeError('cannot assign buffer before Module.__init__() call')
        if not isinstance(name, str):
            raise TypeError(f'buffer name should be a string. Got {type(name).__name__}')
        if '.' in name or name == '':
            raise KeyError(f'buffer name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (dynagrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f'{type(module).__name__} is not a Module subclass')
        if not isinstance(name, str):
            raise TypeError(f'module name should be a string. Got {type(name).__name__}')
        if '.' in name or name == '':
            raise KeyError(f'module name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == '':
            return self
        module = self
        for item in target.split('.'):
            if not hasattr(module, item):
                raise AttributeError(f'{type(module).__name__} has no attribute `{item}`')
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f'`{item}` is not an nn.Module')
        return module

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at the dotted path ``target`` (its parents must exist); with
        ``strict`` the last name must already be an attribute."""
        if target == '':
            raise ValueError('Cannot set the submodule without a target name!')
        *path, last = target.split('.')
        if not isinstance(module, Module):
            raise ValueError(f'`module` is not an nn.Module, found {type(module)}')
        parent = self
        for item in path:
            if not hasattr(parent, item):
                raise AttributeError(f'{parent._get_name()} has no attribute `{item}`')
            parent = getattr(parent, item)
            if not isinstance(parent, Module):
                raise AttributeError(f'`{item}` is not an nn.Module')
        if strict and not hasattr(parent, last):
            raise AttributeError(f'{parent._get_name()} has no attribute `{last}`')
        if hasattr(parent, last) and not isinstance(getattr(parent, last), Module):
            raise AttributeError(f'`{last}` is not an nn.Module')
        setattr(parent, last, module)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition('.')
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f'{type(module).__name__} has no parameter `{name}`')
        return module._parameters[name]

    def get_buffer(self, target):
        module_path, _, name = target.rpartition('.')
        module = self.get_submodule(module_path)
        if name not in module._buffers:
            raise AttributeError(f'{type(module).__name__} has no buffer `{name}`')
        return module._buffers[name]

    # -- traversal -------------------------------------------------------------------
    def named_modules(self, memo=None, prefix='', remove_duplicate=True):
        memo = set() if memo is None else memo
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ('.' if prefix else '') + name,
                                           remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix='', recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, m in modules:
            for name, v in get_members(m):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mod_prefix + ('.' if mod_prefix else '') + name, v

    def named_parameters(self, prefix='', recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix='', recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- state -----------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError('training mode is expected to be boolean')
        for m in self.modules():
            object.__setattr__(m, 'training', mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, convert):
        """Replace every parameter's and buffer's data by ``convert(data)`` in place."""
        from ..autograd.grad_mode import no_grad
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is not None:
                        p.data = convert(p)
                        if p._grad is not None:
                            p._grad = convert(p._grad)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = convert(b)
        return self

    def compile(self, *args, **kwargs):
        """Compile this module's forward in place (``torch.nn.Module.compile``): calls then
        go through ``dynagrad.compile``'s captured programs; options as ``dynagrad.compile``
        takes them."""
        from ..compiler.api import CompiledFunction
        options = dict(zip(('fullgraph', 'dynamic', 'backend', 'mode', 'options'), args))
        options.update(kwargs)
        if options.pop('disable', False):
            return
        forward = type(self).forward.__get__(self)
        self.__dict__['forward'] = CompiledFunction(forward, module=self, **options)

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: parameters and
        buffers move in place (floating ones change dtype); returns self.

        An unavailable device raises before anything moves. A module without tensors has
        nothing to move, so only the arguments are checked (as in PyTorch)."""
        device, dtype, non_blocking, _ = parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f'nn.Module.to only accepts floating point or complex dtypes, but '
                            f'got desired dtype={dtype}')
        if device is not None and self._has_tensors():
            check_device(device)

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device, dtype, non_blocking)
            return t.to(device, non_blocking=non_blocking)
        try:
            return self._apply_to_tensors(convert)
        except NotImplementedError as e:
            if str(e) != NO_DATA:
                raise
            raise NotImplementedError(
                f'{NO_DATA} Please use dynagrad.nn.Module.to_empty() instead of '
                'dynagrad.nn.Module.to() when moving module from meta to a different '
                'device.') from None

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialized tensors of the same shapes and
        dtypes on ``device`` (``recurse=False``: this module's own only); returns self."""
        from ..ops.creation import empty_like
        if device is not None:
            check_device(device)
        modules = self.modules() if recurse else (self,)
        from ..autograd.grad_mode import no_grad
        with no_grad():
            for m in modules:
                for p in m._parameters.values():
                    if p is not None:
                        p.data = empty_like(p, device=device)
                        if p._grad is not None:
                            p._grad = empty_like(p._grad, device=device)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = empty_like(b, device=device)
        return self

    def _has_tensors(self):
        return any(t is not None for m in self.modules()
                   for t in (*m._parameters.values(), *m._buffers.values()))

    def float(self):
        from .. import _dtype
        return self.to(_dtype.float32)

    def double(self):
        from .. import _dtype
        return self.to(_dtype.float64)

    def half(self):
        from .. import _dtype
        return self.to(_dtype.float16)

    def bfloat16(self):
        from .. import _dtype
        return self.to(_dtype.bfloat16)

    def type(self, dst_type):
        return self._apply_to_tensors(lambda t: t.type(dst_type))

    def cpu(self):
        return self.to('cpu')

    def _to_device_of_type(self, kind, device):
        """``cuda(device)`` and friends: PyTorch converts tensor by tensor, so a module
        without any neither checks the device nor raises."""
        if not self._has_tensors():
            return self
        return self.to(device_of_type(kind, device))

    def cuda(self, device=None):
        """Parameters and buffers onto a CUDA device; raises PyTorch's error without one."""
        return self._to_device_of_type('cuda', device)

    def xpu(self, device=None):
        return self._to_device_of_type('xpu', device)

    def mtia(self, device=None):
        return self._to_device_of_type('mtia', device)

    def ipu(self, device=None):
        return self._to_device_of_type('ipu', device)

    # -- state dicts -------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def _has_extra_state(self, accessor):
        """Whether this module's class overrides ``get_extra_state``/``set_extra_state``."""
        return getattr(type(self), accessor, None) is not getattr(Module, accessor)

    def get_extra_state(self):
        """What a subclass saves under ``<prefix>_extra_state`` (override it, with
        ``set_extra_state``); the base class is never called for it."""
        raise RuntimeError('Reached a code path in Module.get_extra_state() that should never '
                           'be called: override get_extra_state in the subclass that saves '
                           'extra state.')

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned (override it in the subclass)."""
        raise RuntimeError('Reached a code path in Module.set_extra_state() that should never '
                           'be called: override set_extra_state in the subclass that loads '
                           'extra state.')

    def state_dict(self, *args, destination=None, prefix='', keep_vars=False):
        """An ordered dict of parameters and persistent buffers, keyed by dotted names."""
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {'version': self._version}
        metadata = getattr(destination, '_metadata', None)
        if metadata is not None:   # each module's version, as PyTorch records it
            metadata[prefix[:-1]] = local_metadata
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        if self._has_extra_state('get_extra_state'):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + '.',
                             keep_vars=keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, '_from_public_api', False):
                if result is not None:
                    raise RuntimeError('state_dict post-hook must return None')
            elif result is not None:   # a private hook may hand back a new dict
                destination = result
        return destination

    def _plan_load(self, state_dict, prefix, metadata, assign, report, plan, eager):
        """Check what ``state_dict`` holds for this module and its children, running the
        load pre-hooks on the way; record the copies to make in ``plan``. ``eager``: copy
        module by module and run each one's post-hooks after its children, as PyTorch
        orders them."""
        missing, unexpected, errors = report
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata['assign_to_params_buffers'] = assign
        lazy_hook = getattr(self, '_lazy_load_hook', None)
        if lazy_hook is not None:  # a lazy module first takes its shapes from the values
            lazy_hook(state_dict, prefix)
        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, True, missing, unexpected, errors)
        local = OrderedDict((name, ('_parameters', t)) for name, t in self._parameters.items()
                            if t is not None)
        local.update((name, ('_buffers', t)) for name, t in self._buffers.items()
                     if t is not None and name not in self._non_persistent_buffers_set)
        own_plan = []
        for name, (store, t) in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if is_lazy(t) and is_lazy(value):
                continue        # uninitialized into uninitialized: a match, nothing to copy
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected '
                              f'dynagrad.Tensor or Tensor-like object from checkpoint but '
                              f'received {type(value)}')
            elif tuple(value.shape) != tuple(t.shape):
                errors.append(f'size mismatch for {key}: copying a param with shape '
                              f'{value.shape} from checkpoint, the shape in current model is '
                              f'{t.shape}.')
            else:
                if not assign and t.is_meta and not value.is_meta:
                    warnings.warn(f'for {key}: copying from a non-meta parameter in the '
                                  'checkpoint to a meta parameter in the current model, which '
                                  'is a no-op. (Did you mean to pass `assign=True` to assign '
                                  'items in the state dictionary to their corresponding key in '
                                  'the module instead of copying them in place?)', UserWarning,
                                  stacklevel=3)
                own_plan.append((self, store, name, t, value))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state('set_extra_state'):
            if extra_key in state_dict:
                own_plan.append((self, None, None, None, state_dict[extra_key]))
            else:
                missing.append(extra_key)
        elif extra_key in state_dict:
            unexpected.append(extra_key)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                first = key[len(prefix):].split('.', 1)[0]
                if first not in self._modules and first not in local:
                    unexpected.append(key)
        if eager:
            _copy_planned(own_plan, assign)
        else:
            plan.extend(own_plan)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + '.'
                child_dict = OrderedDict((k, v) for k, v in state_dict.items()
                                         if k.startswith(child_prefix))
                child._plan_load(child_dict, child_prefix, metadata, assign, report, plan,
                                 eager)
        if eager:
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in list(self._load_state_dict_post_hooks.values()):
                if hook(self, incompatible) is not None:
                    raise AssertionError(
                        'Hooks registered with ``register_load_state_dict_post_hook`` are not '
                        'expected to return new values, if incompatible_keys need to be '
                        'modified, it should be done inplace.')

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values in place; return ``(missing_keys, unexpected_keys)``.

        Load pre-hooks run module by module (parents before children) and may rewrite the
        (copied) dict. Without load post-hooks every shape and type is checked before
        anything is copied, so a failed load leaves the module as it was; with them, each
        module is loaded, then its post-hooks run (children before parents, as in PyTorch)
        and may edit the reported keys in place before the strict check.
        """
        if not hasattr(state_dict, 'keys'):
            raise TypeError(f'Expected state_dict to be dict-like, got {type(state_dict)}.')
        metadata = getattr(state_dict, '_metadata', None)
        state_dict = OrderedDict(state_dict)   # the hooks may rewrite this copy
        if metadata is not None:
            state_dict._metadata = metadata
        missing, unexpected, errors = [], [], []
        plan = []
        # Post-hooks see the module loaded: with any, load as PyTorch does, module by
        # module; without, check everything first so that a failed load changes nothing.
        eager = any(m._load_state_dict_post_hooks for m in self.modules())
        self._plan_load(state_dict, '', metadata, assign, (missing, unexpected, errors), plan,
                        eager)
        if errors or (strict and (missing or unexpected)):
            self._raise_load_errors(strict, missing, unexpected, errors)
        _copy_planned(plan, assign)
        return _IncompatibleKeys(missing, unexpected)

    def _raise_load_errors(self, strict, missing, unexpected, errors):
        errors = list(errors)
        if strict:
            if unexpected:
                errors.insert(0, 'Unexpected key(s) in state_dict: '
                              + ', '.join(f'"{k}"' for k in unexpected) + '. ')
            if missing:
                errors.insert(0, 'Missing key(s) in state_dict: '
                              + ', '.join(f'"{k}"' for k in missing) + '. ')
        raise RuntimeError(f'Error(s) in loading state_dict for {type(self).__name__}:\n\t'
                           + '\n\t'.join(errors))

    # -- state-dict hooks ----------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars) -> None`` before ``state_dict`` saves anything
        of this module."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` once this module and
        its children are saved; it may edit ``state_dict`` in place."""
        _mark_public(hook)
        return self._add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """The private form: the hook may return a new state dict."""
        if getattr(hook, '_from_public_api', False):
            raise RuntimeError('Cannot register the same function as the state dict post hook '
                               'that was previously registered via '
                               'register_state_dict_post_hook')
        return self._add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None`` before this module's values are loaded; it
        may rewrite ``state_dict`` (a copy of what was passed)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """The private form: without ``with_module`` the hook gets no module argument."""
        return self._add_hook(self._load_state_dict_pre_hooks,
                              _LoadPreHook(hook, with_module))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` after ``load_state_dict`` copied
        the values; it may edit ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in
        place (what remains decides the strict check)."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    # -- hooks -------------------------------------------------------------------------
    def _add_hook(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks_items = list(hooks.items())
            hooks.clear()
            hooks[handle.id] = hook
            hooks.update((k, v) for k, v in hooks_items if k != handle.id)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False):
        """``hook(module, args) -> None or new args`` before each forward."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook, *, prepend=False):
        """``hook(module, args, output) -> None or new output`` after each forward."""
        return self._add_hook(self._forward_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None or new grad_input``.

        Called once the gradients of the module's tensor inputs are computed; grad_input
        and grad_output are tuples with one entry per tensor input/output (None where a
        tensor needs no gradient).
        """
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None or new grad_output``, called when the
        gradients of the module's outputs are known, before its inputs' gradients are
        computed (what it returns flows on instead)."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        raise RuntimeError('register_backward_hook is deprecated in PyTorch and gives the '
                           'gradients of the last op, not of the module: use '
                           'register_full_backward_hook instead')

    # -- printing --------------------------------------------------------------------
    def extra_repr(self):
        return ''

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split('\n')
        children = []
        for name, m in self._modules.items():
            mod = repr(m).replace('\n', '\n  ')
            children.append(f'({name}): {mod}')
        main = self._get_name() + '('
        all_lines = lines + children
        if all_lines:
            if len(lines) == 1 and not children:
                main += lines[0]
            else:
                main += '\n  ' + '\n  '.join(all_lines) + '\n'
        return main + ')'

    # Pickled, the hook tables are plain OrderedDicts, as PyTorch's: a whole module saved
    # with dynagrad.save then loads under weights_only=True once its classes are allowed.
    _HOOK_TABLES = ('_forward_hooks', '_forward_pre_hooks', '_backward_hooks',
                    '_backward_pre_hooks', '_state_dict_pre_hooks', '_state_dict_hooks',
                    '_load_state_dict_pre_hooks', '_load_state_dict_post_hooks')

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in self._HOOK_TABLES:
            if isinstance(state.get(name), HookDict):
                state[name] = OrderedDict(state[name])
        return state

    def __setstate__(self, state):
        for name in self._HOOK_TABLES:
            if name not in state:   # pickled before this table existed
                state[name] = HookDict()
            elif not isinstance(state[name], HookDict):
                state[name] = HookDict(state[name])
        self.__dict__.update(state)

