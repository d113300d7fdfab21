"""Containers: modules holding modules."""
import operator
from collections import OrderedDict

from ..module import Module


class Sequential(Module):
    """Runs its children in order: ``Sequential(a, b)(x) == b(a(x))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f'index {idx} is out of range')
        return list(self._modules.values())[idx % n]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[idx]]):
            del self._modules[key]
        values = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(values):
            self.add_module(str(i), m)

    def __setitem__(self, idx, module):
        key = list(self._modules)[idx]
        self.add_module(key, module)


class ModuleList(Module):
    """A list of modules, registered so their parameters are the container's."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _get_abs_string_index(self, idx):
        # torch's name: subclasses in libraries (pyro's PyroModuleList) call it
        idx = operator.index(idx)
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f'index {idx} is out of range')
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module):
        self.add_module(self._get_abs_string_index(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            keys = list(self._modules)[idx]
        else:
            keys = [self._get_abs_string_index(idx)]
        for k in keys:
            del self._modules[k]
        values = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(values):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if not hasattr(modules, '__iter__'):
            raise TypeError('ModuleList.extend should be called with an iterable, but got '
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(values):
            self.add_module(str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError('ModuleList has no forward: iterate over its modules')

    def __repr__(self):
        """Runs of identical children print once, as ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m).replace('\n', '\n  ') for m in self]
        if not reprs:
            return 'ModuleList()'
        lines = []
        start = 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                if i - start == 1:
                    lines.append(f'({start}): {reprs[start]}')
                else:
                    lines.append(f'({start}-{i - 1}): {i - start} x {reprs[start]}')
                start = i
        return 'ModuleList(\n  ' + '\n  '.join(lines) + '\n)'


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self._modules[key]
        del self._modules[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        items = modules.items() if hasattr(modules, 'items') else modules
        for key, module in items:
            self[key] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError('ModuleDict has no forward: index it by key')


class ParameterList(Module):
    """A list of parameters, registered as ``'0'``, ``'1'``, ..."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        n = self._size
        if not -n <= idx < n:
            raise IndexError(f'index {idx} is out of range')
        return getattr(self, str(idx % n))

    def __setitem__(self, idx, param):
        setattr(self, str(idx % self._size), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def append(self, value):
        new_idx = self._size
        self._size += 1
        self.register_parameter(str(new_idx), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            size = 'x'.join(str(s) for s in p.shape)
            lines.append(f'  ({i}): Parameter containing: [{p.dtype} of size {size}]')
        return '\n'.join(lines)


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their keys."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def pop(self, key):
        value = self._parameters[key]
        del self._parameters[key]
        return value

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, 'items') else parameters
        for key, value in items:
            self[key] = value

    def extra_repr(self):
        lines = []
        for k, p in self._parameters.items():
            size = 'x'.join(str(s) for s in p.shape)
            lines.append(f'  ({k}): Parameter containing: [{p.type()} of size {size}]')
        return '\n'.join(lines)


def _as_parameter(value):
    from ..parameter import Parameter
    from ...tensor import Tensor
    if isinstance(value, Parameter) or not isinstance(value, Tensor):
        return value
    return Parameter(value)


class Container(Module):
    """Deprecated: modules given as keyword arguments become children; subclass Module."""

    def __init__(self, **kwargs):
        super().__init__()
        import warnings
        warnings.warn('`nn.Container` is deprecated. All of its functionality is now '
                      'implemented in `nn.Module`. Subclass that instead.', FutureWarning,
                      stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


__all__ = ['Container', 'Sequential', 'ModuleList', 'ModuleDict', 'ParameterList',
           'ParameterDict']
