from .linear import Linear  # noqa: F401
from .activation import ReLU, Tanh, Sigmoid, Identity  # noqa: F401
from .loss import MSELoss  # noqa: F401
from .container import (Sequential, ModuleList, ModuleDict, ParameterList,  # noqa: F401
                        ParameterDict)
from .flatten import Flatten, Unflatten  # noqa: F401
