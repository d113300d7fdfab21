"""dynagrad.nn: modules and parameters."""
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import (Linear, ReLU, Tanh, Sigmoid, Identity, MSELoss,  # noqa: F401
                      Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
                      Flatten, Unflatten)
from . import init, utils, parallel  # noqa: F401
from . import functional  # noqa: F401
