"""``dynagrad.version``: what ``torch.version`` says about the build, for the checks that
libraries written for PyTorch make.

``__version__`` (also ``dynagrad.__version__``) is PyTorch's version, 2.13.0, because
dynagrad follows PyTorch 2.13's API and libraries gate features on ``torch.__version__``
(``parse(torch.__version__) >= parse('2.0')``, ``torch.__version__ >= '1.1'``). Its PEP 440
local label carries dynagrad's own release, as ``+cpu`` carries PyTorch's build: it sorts
above plain 2.13.0, and ``.split('+')[0]`` gives the API version. dynagrad's own release is
``dynagrad_version`` here and ``importlib.metadata.version('dynagrad')``.

The build is CPU-only with no CUDA, ROCm or XPU toolkit: ``cuda``, ``hip``, ``rocm`` and
``xpu`` are None, as in PyTorch's CPU wheels.
"""
from .torch_version import TorchVersion

__all__ = ['__version__', 'dynagrad_version', 'cuda', 'hip', 'rocm', 'xpu', 'debug',
           'git_version']

dynagrad_version = '0.1.0'
__version__ = TorchVersion(f'2.13.0+dynagrad.{dynagrad_version}')
cuda = None
hip = None
rocm = None
xpu = None
debug = False
# the PyTorch release whose API this follows; no PyTorch commit is built into dynagrad
git_version = 'v2.13.0'
