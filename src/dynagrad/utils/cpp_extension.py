"""``dynagrad.utils.cpp_extension``: importable, as libraries import it at module level
for an optional compiled kernel; building one cannot work, since a PyTorch C++ extension
links against libtorch's ABI and dynagrad has none. The builders raise when called, so a
library that falls back to Python on failure keeps working."""
import os

__all__ = ['load', 'load_inline', 'CppExtension', 'CUDAExtension', 'BuildExtension',
           'include_paths', 'library_paths', 'get_default_build_root', 'is_ninja_available',
           'verify_ninja_availability']

CUDA_HOME = None
ROCM_HOME = None


def _no_abi(what):
    raise RuntimeError(
        f'dynagrad.utils.cpp_extension.{what}: C++/CUDA extensions are built against '
        "PyTorch's C++ ABI (libtorch), which dynagrad does not have: write the op in Python "
        'with dynagrad operations, or as a dynagrad.autograd.Function.')


def load(name, sources, *args, **kwargs):
    _no_abi('load')


def load_inline(name, cpp_sources, *args, **kwargs):
    _no_abi('load_inline')


def CppExtension(name, sources, *args, **kwargs):
    _no_abi('CppExtension')


def CUDAExtension(name, sources, *args, **kwargs):
    _no_abi('CUDAExtension')


class BuildExtension:
    def __init__(self, *args, **kwargs):
        _no_abi('BuildExtension')

    @classmethod
    def with_options(cls, **options):
        return cls


def include_paths(device_type='cpu'):
    return []


def library_paths(device_type='cpu'):
    return []


def get_default_build_root():
    return os.path.realpath(os.path.join(os.path.expanduser(
        os.getenv('XDG_CACHE_HOME', '~/.cache')), 'torch_extensions'))


def is_ninja_available():
    return False


def verify_ninja_availability():
    raise RuntimeError('Ninja is required to load C++ extensions')
