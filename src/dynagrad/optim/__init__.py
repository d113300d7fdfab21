"""dynagrad.optim: optimizers."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
