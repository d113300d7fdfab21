"""dynagrad.nn: modules and parameters."""
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from .modules import (Linear, ReLU, Tanh, Sigmoid, Identity, MSELoss,  # noqa: F401
                      Sequential)
from . import functional  # noqa: F401
