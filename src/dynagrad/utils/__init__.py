"""``dynagrad.utils``: helpers around training, as ``torch.utils``."""
from ..lazy import lazy_exports

__all__ = ['data', 'checkpoint', 'safetensors', 'dlpack', 'hooks']

# submodules load on first use (``dynagrad.utils.data`` pulls in the data-loader workers
# and multiprocessing), so ``import dynagrad`` stays short
__getattr__, __dir__ = lazy_exports(
    __name__, {name: name for name in __all__ + ['_pytree', '_foreach_utils', 'cpp_extension']})
