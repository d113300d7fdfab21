"""Names a package exports but imports only when a program first touches them.

``import dynagrad`` should cost what a training script needs, not the whole API: data
loading, checkpoints, distributed training, parametrizations and schedulers load on first
use. A package lists such names in a table and installs the module ``__getattr__`` and
``__dir__`` this returns (PEP 562), so ``pkg.name``, ``from pkg import name`` and
``dir(pkg)`` behave as if the name had been imported eagerly.
"""
import importlib

__all__ = ['lazy_exports']


def lazy_exports(package, table):
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``), where ``table`` maps
    each lazy name to the submodule that defines it, relative to ``package``; a name that
    maps to itself is that submodule. (So a function named like its module, as
    ``nn.utils.weight_norm``, must be imported eagerly: importing a submodule binds its name
    in the package.)"""
    def __getattr__(name):
        where = table.get(name)
        if where is None:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        module = importlib.import_module(f'{package}.{where}')
        value = module if where == name else getattr(module, name)
        # bind it for the next lookup (importing the submodule has bound the submodule itself)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__():
        return sorted(set(vars(importlib.import_module(package))) | set(table))

    return __getattr__, __dir__
