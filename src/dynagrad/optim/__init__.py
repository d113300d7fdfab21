"""dynagrad.optim: optimizers and learning-rate schedulers, following torch.optim."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ['LBFGS', 'SGD', 'Adadelta', 'Adagrad', 'Adam', 'AdamW', 'Adamax', 'NAdam',
           'Optimizer', 'RAdam', 'RMSprop', 'lr_scheduler']
