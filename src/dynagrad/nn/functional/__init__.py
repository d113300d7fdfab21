"""dynagrad.nn.functional: the stateless forms of the layers in dynagrad.nn.

One module per family; each lists its functions in ``__all__``.
"""
from importlib import import_module

from .linear import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403

# Some modules share a name with a function (linear, dropout): reach them by import.
_FAMILIES = [import_module(f'{__name__}.{name}') for name in (
    'linear', 'conv', 'pooling', 'activation', 'dropout', 'normalization', 'sparse',
    'vision', 'attention', 'distance', 'loss')]
__all__ = [name for module in _FAMILIES for name in module.__all__]
