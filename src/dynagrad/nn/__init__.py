"""dynagrad.nn: modules and parameters."""
from .parameter import (Parameter, Buffer, UninitializedParameter,  # noqa: F401
                        UninitializedBuffer)
from .module import Module  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import (Linear, ReLU, Tanh, Sigmoid, Identity, MSELoss,  # noqa: F401
                      Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
                      Flatten, Unflatten)
from .modules.container import Container  # noqa: F401
from .modules.batchnorm import SyncBatchNorm  # noqa: F401
from .modules.instancenorm import InstanceNorm3d  # noqa: F401
from .modules.normalization import CrossMapLRN2d  # noqa: F401
from .modules.conv import ConvTranspose3d  # noqa: F401
from .modules.dropout import FeatureAlphaDropout  # noqa: F401
from .modules.loss import (NLLLoss2d, TripletMarginWithDistanceLoss,  # noqa: F401
                           LinearCrossEntropyLoss, LinearCrossEntropyOptions)
from . import init, parallel  # noqa: F401
# nn.utils by its full name: the star import above bound nn.modules.utils (a submodule of
# modules, as in torch) under `utils`, which `from . import utils` would take as it is
from importlib import import_module as _import_module  # noqa: E402
utils = _import_module(__name__ + '.utils')
from .parallel import DataParallel  # noqa: F401
from . import functional  # noqa: F401


def factory_kwargs(kwargs):
    """``{'device': ..., 'dtype': ...}`` taken from ``kwargs`` (None gives {}), merged with a
    nested ``kwargs['factory_kwargs']``; any other key raises ``TypeError``."""
    if kwargs is None:
        return {}
    simple_keys = {'device', 'dtype', 'memory_format'}
    expected_keys = simple_keys | {'factory_kwargs'}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f'unexpected kwargs {kwargs.keys() - expected_keys}')
    r = dict(kwargs.get('factory_kwargs', {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f'{k} specified twice, in **kwargs and in factory_kwargs')
            r[k] = kwargs[k]
    return r
