"""Stochastic weight averaging and exponential moving averages of a model's weights, as
``torch.optim.swa_utils``: ``AveragedModel`` keeps a running average of another model's
parameters (and optionally buffers), ``SWALR`` anneals the learning rate to a constant SWA
value, and ``update_bn`` recomputes batch-norm statistics for the averaged weights."""
import copy
import itertools
import math

from .. import nn
from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor as _make_tensor
from ..tensor import Tensor
from .lr_scheduler import LRScheduler

__all__ = ['AveragedModel', 'update_bn', 'SWALR', 'get_ema_multi_avg_fn',
           'get_swa_multi_avg_fn', 'get_ema_avg_fn', 'get_swa_avg_fn']


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ``ema += (1 - decay) * (current - ema)``."""
    @no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        for ema, current in zip(ema_param_list, current_param_list):
            if ema.is_floating_point():
                ema.lerp_(current, 1 - decay)
            else:      # integer buffers (e.g. num_batches_tracked): torch's formula, cast
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors, after ``num_averaged`` earlier values."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if isinstance(num_averaged, Tensor):
            num_averaged = num_averaged.item()
        for averaged, current in zip(averaged_param_list, current_param_list):
            if averaged.is_floating_point():
                averaged.add_((current - averaged) / (num_averaged + 1))
            else:      # integer buffers: the mean, cast back (truncated) as torch's
                averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``avg_fn(ema, current, num_averaged) -> decay * ema + (1 - decay) * current``."""
    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg_fn(avg, current, n) -> avg + (current - avg) / (n + 1)``: the running mean."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(nn.Module):
    """A deep copy of ``model`` whose parameters ``update_parameters(model)`` averages.

    The first update copies ``model``'s values; later ones apply ``avg_fn`` per tensor or
    ``multi_avg_fn`` over the lists (the running mean when neither is given). With
    ``use_buffers`` the buffers are averaged too; otherwise they are copied from ``model``
    at every update. ``n_averaged`` (an int64 buffer) counts the updates.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError('Only one of avg_fn and multi_avg_fn should be provided')
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer('n_averaged', _make_tensor(0))     # int64, as torch's
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    @no_grad()
    def update_parameters(self, model):
        averaged = [t.detach() for t in self._tensors(self.module)]
        current = [t.detach() for t in self._tensors(model)]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, c in zip(averaged, current):
                a.copy_(c)
        elif self.avg_fn is not None:
            for a, c in zip(averaged, current):
                a.copy_(self.avg_fn(a, c, self.n_averaged))
        else:
            multi = self.multi_avg_fn or get_swa_multi_avg_fn()
            multi(averaged, current, self.n_averaged)
        if not self.use_buffers:
            # buffers are not averaged: keep them those of the model being followed
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach())
        self.n_averaged += 1


def _batch_norm_types():
    names = ('BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'SyncBatchNorm', 'LazyBatchNorm1d',
             'LazyBatchNorm2d', 'LazyBatchNorm3d')
    return tuple(getattr(nn, n) for n in names if hasattr(nn, n))


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass
    over ``loader`` (batches are tensors, or lists/tuples whose first item is the input),
    as a cumulative average (momentum ``None``); other modules are left as they are."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _batch_norm_types()):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate from its current value to ``swa_lr`` over
    ``anneal_epochs`` steps (cosine or linear), then hold it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos',
                 last_epoch=-1):
        swa_lrs = _format_param('swa_lr', optimizer, swa_lr)
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f'{anneal_strategy}')
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f'anneal_epochs must be equal or greater than 0, got {anneal_epochs}')
        for swa_lr_value, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = swa_lr_value
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @property
    def anneal_func(self):
        return self._cosine_anneal if self._anneal_strategy == 'cos' else self._linear_anneal

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr annealing started from, recovered from the current one."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        self._warn_if_called_directly()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        lrs = []
        for group in self.optimizer.param_groups:
            start = self._get_initial_lr(group['lr'], group['swa_lr'], prev_alpha)
            lrs.append(group['swa_lr'] * alpha + start * (1 - alpha))
        return lrs


def _format_param(name, optimizer, param):
    """One value per parameter group: ``param`` itself, or its items when a list/tuple."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f'{name} must have the same length as optimizer.param_groups. '
                             f'{name} has {len(param)} values, param_groups has '
                             f'{len(optimizer.param_groups)}.')
        return list(param)
    return [param] * len(optimizer.param_groups)
