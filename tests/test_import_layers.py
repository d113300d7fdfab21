"""The package's layers point one way: what a module imports (at the top or inside a
function) never sits in a layer above it.

    nn, optim, utils, distributed, ...   (everything else)
    ops
    autograd
    tensor (tensor.py, size.py, _tensor_str.py, _torch_function.py)
    backend, _dtype, _device, _layout, _coo (the array behind a sparse tensor), _meta (the
    array behind a meta tensor), _platform, native (the numba kernels backend.native_kernel
    hands out: NumPy arrays in, NumPy arrays out)
"""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / 'src' / 'dynagrad'

# rank of each top-level piece of the package; anything not named is the top layer
LAYERS = {'backend': 0, '_dtype': 0, '_device': 0, '_layout': 0, '_coo': 0, '_meta': 0,
          '_platform': 0, 'native': 0, 'tensor': 1, 'size': 1, '_tensor_str': 1,
          '_torch_function': 1,
          'autograd': 2, 'ops': 3}
TOP = 4


def _layer(parts):
    return LAYERS.get(parts[0], TOP) if parts else TOP


def _module_parts(path):
    rel = path.relative_to(SRC).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return parts


def _imported(path, parts):
    """The dynagrad modules ``path`` imports, as lists of name parts below ``dynagrad``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = parts if path.name == '__init__.py' else parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + (node.module.split('.') if node.module else [])
            elif node.module and node.module.split('.')[0] == 'dynagrad':
                target = node.module.split('.')[1:]
            else:
                continue
            if node.module is None or not target:
                for alias in node.names:    # from . import x / from .. import x
                    yield node.lineno, target + [alias.name]
            else:
                yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] == 'dynagrad':
                    yield node.lineno, alias.name.split('.')[1:]


def _violations():
    found = []
    for path in sorted(SRC.rglob('*.py')):
        parts = _module_parts(path)
        if not parts:          # dynagrad/__init__.py assembles the public namespace
            continue
        mine = _layer(parts)
        for lineno, target in _imported(path, parts):
            if _layer(target) > mine:
                found.append(f'{"/".join(parts)}.py:{lineno} imports {".".join(target)}')
    return found


def test_no_module_imports_a_layer_above_its_own():
    found = _violations()
    assert not found, 'upward imports:\n' + '\n'.join(found)


def test_the_checker_sees_an_upward_import(tmp_path):
    bad = SRC / 'autograd' / 'function.py'
    assert list(_imported(bad, ['autograd', 'function']))   # it reads real imports
    assert _layer(['ops', 'shape']) > _layer(['autograd', 'function'])


def _private_crossings():
    """Imports of a private name (``_x``) from another top-level piece of the package.

    The bottom layer's modules ``_dtype`` and ``_tensor_str`` are pieces themselves, so
    importing them is fine; what they, or any other piece, keep private stays inside.
    """
    found = []
    for path in sorted(SRC.rglob('*.py')):
        parts = _module_parts(path)
        if not parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        package = parts if path.name == '__init__.py' else parts[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            target = base + (node.module.split('.') if node.module else [])
            for alias in node.names:
                full = target + [alias.name]
                if full[0] == parts[0]:
                    continue
                private = [p for p in full[1:] if p.startswith('_') and not p.startswith('__')]
                if private:
                    found.append(f'{"/".join(parts)}.py:{node.lineno} imports {".".join(full)}')
    return found


def test_no_private_name_is_imported_from_another_piece():
    found = _private_crossings()
    assert not found, 'private names imported across packages:\n' + '\n'.join(found)
