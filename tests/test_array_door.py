"""The array door is the only door: ops, nn.functional, autograd and optim compute through
``dynagrad.backend.xp`` and never call NumPy's functions directly (dtype objects, dtype
logic and the random generator's bit generator aside), so another array library plugs in
at one place. The conformance table also runs whole with the door pointed at a namespace
that counts its calls (tests/ops/test_conformance.py, test_through_counting_namespace)."""
import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / 'src' / 'dynagrad'
DOORED = ['ops', 'nn/functional', 'autograd', 'optim']

# Not array computation: dtypes and their logic, limits, the generator machinery.
ALLOWED = {'dtype', 'iinfo', 'finfo', 'result_type', 'promote_types', 'can_cast',
           'issubdtype', 'errstate', 'float16', 'float32', 'float64', 'int8', 'int16',
           'int32', 'int64', 'uint8', 'bool_', 'intp', 'longlong', 'generic', 'ndarray',
           'random', 'broadcast_shapes', 'ndindex', 'prod'}


def _numpy_calls(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            chain = []
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id in ('np', 'numpy') and chain:
                name = chain[-1]
                if name not in ALLOWED:
                    yield node.lineno, '.'.join([f.id] + chain[::-1])


def test_no_direct_numpy_compute_call():
    found = []
    for part in DOORED:
        for path in sorted((SRC / part).rglob('*.py')):
            for lineno, call in _numpy_calls(path):
                found.append(f'{path.relative_to(SRC)}:{lineno}: {call}(...) (use xp)')
    assert not found, f'{len(found)} direct NumPy calls:\n' + '\n'.join(found)


def test_the_checker_finds_a_direct_call(tmp_path):
    f = tmp_path / 'm.py'
    f.write_text('import numpy as np\nnp.float32(1)\ny = np.exp(x)\n')
    assert [c for _, c in _numpy_calls(f)] == ['np.exp']
