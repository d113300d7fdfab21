"""dynagrad.optim: optimizers and learning-rate schedulers, following torch.optim.

``SparseAdam`` updates with the sparse gradients of ``nn.Embedding(sparse=True)`` (lazily,
as PyTorch's) and refuses dense ones; ``SGD`` takes sparse gradients too, and the others
refuse them with PyTorch's messages.
"""
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ['ASGD', 'LBFGS', 'SGD', 'SparseAdam', 'Adadelta', 'Adafactor', 'Adagrad', 'Adam', 'AdamW',
           'Adamax', 'Muon', 'NAdam', 'Optimizer', 'RAdam', 'RMSprop', 'Rprop', 'lr_scheduler',
           'swa_utils', 'swap_in_optimizer_params_and_state']

from ..lazy import lazy_exports  # noqa: E402

# the schedulers and weight averaging load on first use (dynagrad.optim.lr_scheduler)
__getattr__, __dir__ = lazy_exports(__name__, {'lr_scheduler': 'lr_scheduler',
                                              'swa_utils': 'swa_utils'})
