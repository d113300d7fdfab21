"""``dynagrad.utils``: helpers around training, as ``torch.utils``."""
import importlib

__all__ = ['data', 'checkpoint', 'safetensors', 'dlpack']


def __getattr__(name):
    # submodules load on first use (``dynagrad.utils.data`` pulls in the data-loader
    # workers and multiprocessing), so ``import dynagrad`` stays short
    if name in __all__:
        return importlib.import_module(f'{__name__}.{name}')
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(__all__))
