"""Run an unmodified PyTorch program on dynagrad:

    python -m dynagrad.run script.py [args...]
    python -m dynagrad.run -m package.module [args...]

Inside the program, ``import torch`` and every ``torch.<sub>`` import (``torch.nn``,
``torch.nn.functional``, ``torch.utils.data``, ``torch.optim.lr_scheduler``...) give the
dynagrad module of the same path, so existing code runs as it is. The script runs as
``python script.py`` would run it: as ``__main__``, with ``sys.argv`` set to the script and
its arguments and the script's folder first on ``sys.path``. Processes the program starts
(DataLoader workers, ``multiprocessing`` with spawn, ``subprocess`` of Python) get dynagrad
for ``torch`` too: a one-file ``torch`` package that hands over to dynagrad is put first on
their path (``PYTHONPATH``).

A ``torch.<sub>`` module that dynagrad does not have yet fails the import with an error that
says so. ``install()`` does the same inside a running interpreter.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import tempfile

__all__ = ['install', 'uninstall', 'main']

_PREFIX = 'torch'

# The torch package that processes started by the program import: it installs the alias
# and puts dynagrad in its own place.
_SHIM = '''"""torch, served by dynagrad (python -m dynagrad.run)."""
import sys
import dynagrad
sys.modules['torch'] = dynagrad
from dynagrad.run import install
install()
'''


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A finder that serves ``torch.x.y`` as ``dynagrad.x.y`` (the same module object)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + '.'):
            return None
        real = 'dynagrad' + fullname[len(_PREFIX):]
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                f"No module named '{fullname}': the program runs on dynagrad "
                f"(python -m dynagrad.run), which has no '{real}' yet", name=fullname)
        return importlib.util.spec_from_loader(
            fullname, self, origin=real,
            is_package=found.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module(spec.origin)
        if spec.name == _PREFIX:
            _name_as_torch(module)
        # the import system sets __spec__ to this torch spec after create_module; keep
        # dynagrad's, whose parent matches __package__ (Python warns on relative imports
        # where they differ, an error under warnings-as-errors)
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        # the dynagrad module ran when it was imported under its own name
        own = module.__spec__.loader_state
        if own is not None:
            module.__spec__ = own


def _name_as_torch(module):
    """``torch.__name__`` is ``'torch'`` for the program, as programs read it (pyro's
    ``patch_dependency`` asserts that its ``'torch.x.y'`` targets start with it). Only the
    name changes: ``__package__`` and ``__spec__`` stay dynagrad's, so dynagrad's own
    imports resolve as before; submodules keep their names."""
    module.__name__ = _PREFIX


def _is_dynagrad(module):
    return module is sys.modules.get('dynagrad') or module.__name__.startswith('dynagrad')


def install():
    """Serve ``import torch`` from dynagrad in this interpreter (idempotent)."""
    if not any(isinstance(f, TorchAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAlias())
    loaded = sys.modules.get(_PREFIX)
    if loaded is not None and not _is_dynagrad(loaded):
        raise RuntimeError('torch is already imported in this process; dynagrad.run.install() '
                           'must run before the first `import torch`')
    if loaded is not None:      # the hand-over package of a child process put it there
        _name_as_torch(loaded)


def uninstall():
    """Undo ``install()``: ``torch`` modules served by dynagrad are forgotten."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TorchAlias)]
    for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + '.')]:
        if _is_dynagrad(sys.modules[name]):
            del sys.modules[name]
    root = sys.modules.get('dynagrad')
    if root is not None:
        root.__name__ = 'dynagrad'


def _shim_dir():
    """A folder holding the hand-over ``torch`` package, for child processes' paths."""
    folder = tempfile.mkdtemp(prefix='dynagrad-run-')
    os.mkdir(os.path.join(folder, _PREFIX))
    with open(os.path.join(folder, _PREFIX, '__init__.py'), 'w') as f:
        f.write(_SHIM)
    return folder


def _usage():
    return 'usage: python -m dynagrad.run script.py [args...] | -m module [args...]'


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ('-h', '--help'):
        print(__doc__.strip() + '\n\n' + _usage())
        return 0 if argv else 2
    as_module = argv[0] == '-m'
    if as_module:
        argv = argv[1:]
        if not argv:
            print(_usage(), file=sys.stderr)
            return 2
    target, args = argv[0], argv[1:]
    if not as_module and not os.path.isfile(target):
        print(f"python -m dynagrad.run: can't open file {target!r}: no such file",
              file=sys.stderr)
        return 2

    shim = _shim_dir()
    os.environ['PYTHONPATH'] = os.pathsep.join(
        [shim] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])
    sys.path.insert(0, shim)   # spawn children take the parent's sys.path, not PYTHONPATH
    install()
    import shutil
    try:
        if as_module:
            sys.argv = [target] + args
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target, run_name='__main__', alter_sys=True)
        else:
            sys.argv = [target] + args
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name='__main__')
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
