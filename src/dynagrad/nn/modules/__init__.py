from .linear import Linear  # noqa: F401
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .container import (Sequential, ModuleList, ModuleDict, ParameterList,  # noqa: F401
                        ParameterDict)
from .flatten import Flatten, Unflatten  # noqa: F401
