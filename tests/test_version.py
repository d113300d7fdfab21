"""``dynagrad.__version__`` and ``dynagrad.version`` against ``torch.__version__`` and
``torch.version``: the version checks libraries written for PyTorch 2.13 make pass."""
import importlib.metadata
import operator
import pathlib
import tomllib

import pytest
import torch
from torch.torch_version import TorchVersion as TorchTorchVersion

import dynagrad
from dynagrad.torch_version import TorchVersion

OTHERS = ['2.13.0', '2.13', '2.13.0+cpu', '2.13.0+dynagrad.0.1.0', '2.13.0+dynagrad.0.2',
          '2.13.0+dynagrad', '2.13.0+zzz', '2.13.0+dynagrad.0.1.0.1', '2.13.1',
          '2.14.0.dev20250101',
          '2.13.0rc1', '2.13.0.post1', '2.13.0.dev0', '1.1', '1.13.1', '2.0', '10.0', '2!1.0',
          'parrot', '', 'v2.13.0', '2.13.0-1', '2.13.0.RC2', (2, 13), (2, 13, 0), (2, 14), (1, 9),
          [2, 13, 1], (2, 13, 'post1')]
OPS = ['__lt__', '__le__', '__gt__', '__ge__', '__eq__', '__ne__']


@pytest.mark.parametrize('mine', ['2.13.0+dynagrad.0.1.0', '2.13.0', '2.13.0rc2',
                                  '2.14.0.dev20250101+cpu', '1.13.1.post2'])
@pytest.mark.parametrize('other', OTHERS, ids=repr)
def test_comparisons_match_torch_version_class(mine, other):
    for op in OPS:
        assert getattr(TorchVersion(mine), op)(other) == \
            getattr(TorchTorchVersion(mine), op)(other), (mine, op, other)


@pytest.mark.parametrize('other', [3, None, 2.5])
def test_ordering_against_a_non_version_raises_type_error_as_torch(other):
    for op in [operator.lt, operator.ge]:
        with pytest.raises(TypeError) as theirs:
            op(torch.__version__, other)
        with pytest.raises(TypeError) as mine:
            op(dynagrad.__version__, other)
        assert str(mine.value) == str(theirs.value)
    assert (dynagrad.__version__ == other) is (torch.__version__ == other) is False


def test_version_value_and_the_checks_libraries_make():
    packaging_version = pytest.importorskip('packaging.version')
    v = dynagrad.__version__
    assert isinstance(v, str) and type(v).__name__ == 'TorchVersion'
    assert v == '2.13.0+dynagrad.0.1.0'
    parsed = packaging_version.parse(v)   # a valid PEP 440 version
    assert parsed.base_version == packaging_version.parse(torch.__version__).base_version
    assert parsed >= packaging_version.parse('2.0') and parsed < packaging_version.parse('2.14')
    assert v.split('+')[0] == torch.__version__.split('+')[0] == '2.13.0'
    assert v >= '1.1' and v >= '2.13' and v < '2.14' and v > (2, 12)
    # skorch: LooseVersion-free form of its check
    assert tuple(int(p) for p in v.split('+')[0].split('.')[:2]) >= (1, 1)
    assert hash(v) == hash(str(v)) and {v: 1}['2.13.0+dynagrad.0.1.0'] == 1


def test_own_version_stays_available():
    pyproject = tomllib.loads((pathlib.Path(__file__).resolve().parent.parent /
                               'pyproject.toml').read_text())
    own = pyproject['project']['version']
    assert dynagrad.version.dynagrad_version == own
    assert dynagrad.__version__.endswith('+dynagrad.' + own)
    assert importlib.metadata.version('dynagrad') == own


def test_version_module_answers_as_torch_cpu_build():
    import torch.version as theirs
    for name in ['cuda', 'hip', 'rocm', 'xpu', 'debug']:
        assert getattr(dynagrad.version, name) == getattr(theirs, name), name
    assert isinstance(dynagrad.version.git_version, str)
    assert dynagrad.version.__version__ is dynagrad.__version__
    assert TorchVersion is type(dynagrad.__version__)
