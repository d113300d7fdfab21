"""Learning-rate schedulers, following torch.optim.lr_scheduler.

A scheduler rewrites ``group['lr']`` of its optimizer's parameter groups each time its
``step()`` is called (once per epoch or per batch, after ``optimizer.step()``). Most
schedules are chainable: each step updates the current lr multiplicatively, so several
schedulers can act on one optimizer; ``step(epoch)`` (deprecated, as in PyTorch) uses the
closed form where there is one. ``state_dict()`` holds every attribute but the optimizer.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    'ChainedScheduler',
    'ConstantLR',
    'CosineAnnealingLR',
    'CosineAnnealingWarmRestarts',
    'CyclicLR',
    'ExponentialLR',
    'LRScheduler',
    'LambdaLR',
    'LinearLR',
    'MultiStepLR',
    'MultiplicativeLR',
    'OneCycleLR',
    'PolynomialLR',
    'ReduceLROnPlateau',
    'SequentialLR',
    'StepLR',
]

EPOCH_DEPRECATION_WARNING = (
    'The epoch parameter in `scheduler.step()` was not necessary and is being deprecated '
    'where possible. Please use `scheduler.step()` to step the scheduler. During the '
    'deprecation, if epoch is different from None, the closed form is used instead of the '
    'new chainable form, where available. Please open an issue if you are unable to '
    'replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.')

_ORDER_WARNING = (
    'Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and '
    'later, you should call them in the opposite order: `optimizer.step()` before '
    '`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first '
    'value of the learning rate schedule. See more details at '
    'https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate')

_GET_LR_WARNING = ('To get the last learning rate computed by the scheduler, please use '
                   '`get_last_lr()`.')


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')


def _per_group(name, optimizer, value):
    """One value per parameter group: a list of the right length, or one value repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f'{name} must have the same length as optimizer.param_groups. '
                             f'{name} has {len(value)} values, param_groups has {n}.')
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value.clone() if isinstance(value, Tensor) else value] * n


def _group_values(optimizer, key):
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Write a value into a group; a tensor-valued lr is filled in place, as in PyTorch."""
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


def _lr_lambdas(optimizer, lr_lambda, check_callable):
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(f'Expected {n} lr_lambdas, but got {len(lr_lambda)}')
        fns = list(lr_lambda)
    else:
        fns = [lr_lambda] * n
    if check_callable:
        for fn in fns:
            if not callable(fn):
                raise TypeError(f'lr_lambda should be a function, but got {type(fn).__name__}')
    return fns


def _set_momentum(group, value, use_beta1):
    if use_beta1:
        group['betas'] = (value, *group['betas'][1:])
    else:
        group['momentum'] = value


class _Flag:
    """Sets a boolean attribute of a scheduler for the duration of a with-block."""

    def __init__(self, sched, name):
        self.sched, self.name = sched, name

    def __enter__(self):
        setattr(self.sched, self.name, True)

    def __exit__(self, *exc):
        setattr(self.sched, self.name, False)
        return False


class LRScheduler:
    """Base class: sets ``initial_lr`` in the groups and takes the initial step (epoch 0)."""
    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group['lr']
                group.setdefault('initial_lr', lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if 'initial_lr' not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        'resuming scheduler with last_epoch >= 0.\nThis typically happens '
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        'last_epoch >= 0 for a fresh training run (not recommended)')
        self.base_lrs = _group_values(optimizer, 'initial_lr')
        self.last_epoch = last_epoch
        # Track optimizer.step() calls from now on, for the call-order warning.
        if not optimizer.__dict__.get('_dg_lr_sched_tracking', False):
            optimizer._dg_lr_sched_tracking = True
            optimizer._opt_called = False
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        with _Flag(self, '_is_initial'):
            self.step()

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != 'optimizer'}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last step set, one per parameter group."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _warn_if_called_directly(self):
        if not self._get_lr_called_within_step:
            warnings.warn(_GET_LR_WARNING, UserWarning, stacklevel=3)

    def step(self, epoch=None):
        if self._step_count == 1 and not getattr(self.optimizer, '_opt_called', False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with _Flag(self, '_get_lr_called_within_step'):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, '_get_closed_form_lr', None)
                values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, 'lr', lr)
        self._last_lr = _group_values(self.optimizer, 'lr')

    def _current(self):
        return _group_values(self.optimizer, 'lr')

    def _scaled(self, factor):
        return [g['lr'] * factor for g in self.optimizer.param_groups]


_LRScheduler = LRScheduler


class _LambdaStateMixin:
    """State dicts of lambda schedulers keep callable objects' attributes, not functions."""

    def state_dict(self):
        sd = {k: v for k, v in self.__dict__.items() if k not in ('optimizer', 'lr_lambdas')}
        sd['lr_lambdas'] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                            for fn in self.lr_lambdas]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fns = state_dict.pop('lr_lambdas')
        self.__dict__.update(state_dict)
        for own, saved in zip(self.lr_lambdas, fns):
            if saved is not None:
                own.__dict__.update(saved)


class LambdaLR(_LambdaStateMixin, LRScheduler):
    """lr = initial_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lr_lambdas(optimizer, lr_lambda, False)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaStateMixin, LRScheduler):
    """lr = lr * lr_lambda(epoch) at each step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lr_lambdas(optimizer, lr_lambda, True)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self._is_initial:
            return self._current()
        return [g['lr'] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the lr by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by gamma at each milestone (repeated milestones count twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self.last_epoch not in self.milestones:
            return self._current()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self):
        ms = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(ms, self.last_epoch) for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the lr by factor until total_iters, then restore it."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError('Constant multiplicative factor expected to be between 0 and 1.')
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self):
        on = self.last_epoch >= self.total_iters
        return [base * (self.factor + on * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError('Starting multiplicative factor expected to be greater than 0 and '
                             'less or equal to 1.')
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError('Ending multiplicative factor expected to be between 0 and 1.')
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * delta)
        return self._scaled(ratio)

    def _get_closed_form_lr(self):
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * frac)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self._is_initial:
            return self._current()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr polynomially to zero over total_iters epochs."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        n, e = self.total_iters, self.last_epoch
        return self._scaled(((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power)

    def _get_closed_form_lr(self):
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - frac) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to eta_min over T_max epochs (SGDR without
    restarts); past T_max the cosine continues, rising back up."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and e > 0:
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g['lr'] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
        return [ratio * (g['lr'] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


def _check_schedulers(owner, schedulers, optimizer):
    for i, s in enumerate(schedulers):
        if not hasattr(s, 'optimizer'):
            raise TypeError(f'{owner} at index {i} should have `optimizer` as its attribute.')
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f'{owner} does not support `ReduceLROnPlateau` scheduler as it '
                             'requires additional kwargs to be specified when calling `step`, '
                             f'but got one at index {i} in the given schedulers sequence.')
        if optimizer != s.optimizer:
            raise ValueError(f'{owner} expects all schedulers to belong to the same optimizer, '
                             f'but got scheduler {type(s).__name__} at index {i} has '
                             f'{s.optimizer}, which is different from '
                             f'{type(optimizer).__name__}.')


class _ContainerStateMixin:
    def state_dict(self):
        sd = {k: v for k, v in self.__dict__.items() if k not in ('optimizer', '_schedulers')}
        sd['_schedulers'] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop('_schedulers')
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class SequentialLR(_ContainerStateMixin, LRScheduler):
    """Run schedulers one after another, switching at the milestones."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f'{name} expects at least one scheduler, but got no scheduler.')
        _check_schedulers(name, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError('Sequential Schedulers expects number of schedulers provided to be '
                             'one more than the number of milestone points, but got number of '
                             f'schedulers {len(schedulers)} and the number of milestones to be '
                             f'equal to {len(milestones)}')
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the initial steps the schedulers took when they were built
        for group in optimizer.param_groups:
            _set_group_value(group, 'lr', group['initial_lr'])
        self._undo_epochs(self)
        idx = bisect_right(milestones, 0)
        schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def _undo_epochs(self, sched):
        if hasattr(sched, '_schedulers'):
            for s in sched._schedulers:
                self._undo_epochs(s)
        elif hasattr(sched, 'last_epoch'):
            sched.last_epoch -= 1

    recursive_undo = _undo_epochs

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)     # a fresh start for the next scheduler
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(_ContainerStateMixin, LRScheduler):
    """Step several schedulers together, each applying its factor in turn."""

    def __init__(self, schedulers, optimizer=None):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f'{name} expects at least one scheduler to be chained, but got no '
                             'scheduler.')
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, 'lr')

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, 'lr')


class ReduceLROnPlateau(LRScheduler):
    """Reduce the lr by factor when a metric has stopped improving for patience epochs."""

    def __init__(self, optimizer, mode='min', factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError('Factor should be < 1.0.')
        _check_optimizer(optimizer)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f'expected {len(optimizer.param_groups)} min_lrs, got '
                                 f'{len(min_lr)}')
            default_min_lr, min_lrs = None, list(min_lr)
        else:
            default_min_lr, min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        if mode not in {'min', 'max'}:
            raise ValueError('mode ' + str(mode) + ' is unknown!')
        if threshold_mode not in {'rel', 'abs'}:
            raise ValueError('threshold mode ' + str(threshold_mode) + ' is unknown!')
        self.factor = factor
        self.optimizer = optimizer
        self.default_min_lr = default_min_lr
        self.min_lrs = min_lrs
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, 'lr')
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0     # ignore bad epochs in cooldown
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, 'lr')

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f'The number of param groups in the `optimizer` ({len(groups)}) differs '
                    f'from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), '
                    'usually due to a new param group being added to the optimizer. Please '
                    'modify the `min_lrs` field to match the length of the `optimizer` param '
                    'groups.')
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group['lr'])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, 'lr', new_lr)

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == 'min':
            if self.threshold_mode == 'rel':
                return a < best * (1.0 - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == 'rel':
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {'min', 'max'}:
            raise ValueError('mode ' + str(mode) + ' is unknown!')
        if threshold_mode not in {'rel', 'abs'}:
            raise ValueError('threshold mode ' + str(threshold_mode) + ' is unknown!')
        self.mode_worse = math.inf if mode == 'min' else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def _momentum_setup(sched, optimizer, base_momentum, max_momentum, last_epoch):
    """Cycle momentum (SGD, RMSprop...) or beta1 (Adam family) against the lr."""
    if 'momentum' not in optimizer.defaults and 'betas' not in optimizer.defaults:
        raise ValueError('optimizer must support momentum or beta1 with `cycle_momentum` '
                         'option enabled')
    sched.use_beta1 = 'betas' in optimizer.defaults
    maxs = _per_group('max_momentum', optimizer, max_momentum)
    bases = _per_group('base_momentum', optimizer, base_momentum)
    if last_epoch == -1:
        for m, b, group in zip(maxs, bases, optimizer.param_groups):
            _set_momentum(group, m, sched.use_beta1)
            group['max_momentum'] = m
            group['base_momentum'] = b
    return bases, maxs


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the lr moves between base_lr and max_lr, with the
    triangular, triangular2 or exp_range policies, or a custom scale_fn."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode='triangular', gamma=1.0, scale_fn=None, scale_mode='cycle',
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        if mode not in ('triangular', 'triangular2', 'exp_range') and scale_fn is None:
            raise ValueError('mode is invalid and scale_fn is None')
        if cycle_momentum and ('momentum' not in optimizer.defaults
                               and 'betas' not in optimizer.defaults):
            raise ValueError('optimizer must support momentum or beta1 with `cycle_momentum` '
                             'option enabled')
        base_lrs = _per_group('base_lr', optimizer, base_lr)
        max_lrs = _per_group('max_lr', optimizer, max_lr)
        self.optimizer = optimizer
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, 'lr', lr)
        self.max_lrs = max_lrs
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _momentum_setup(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == 'triangular' or self.mode == 'triangular2':
            self.scale_mode = 'cycle'
        elif self.mode == 'exp_range':
            self.scale_mode = 'iterations'

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == 'triangular':
            return 1.0
        if self.mode == 'triangular2':
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x      # exp_range

    def get_lr(self):
        self._warn_if_called_directly()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == 'cycle' else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums):
                _set_momentum(group, m - (m - b) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        sd = super().state_dict()
        fn = sd.pop('_scale_fn_custom')
        sd['_scale_fn_custom'] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            sd['_scale_fn_custom'] = fn.__dict__.copy()
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fn = state_dict.pop('_scale_fn_custom')
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing that restarts after T_0 epochs, then T_0*T_mult, ..."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f'Expected positive integer T_0, but got {T_0}')
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f'Expected integer T_mult >= 1, but got {T_mult}')
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f'Expected float or int eta_min, but got {eta_min} of type '
                             f'{type(eta_min)}')
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_directly()
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        """Step by one, or jump to ``epoch`` (may be fractional, for per-batch updates)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f'Expected non-negative epoch, but got {epoch}')
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _Flag(self, '_get_lr_called_within_step'):
            for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _set_group_value(group, 'lr', lr)
        self._last_lr = _group_values(self.optimizer, 'lr')


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): warm up to max_lr, then anneal far below the
    initial lr; momentum (or Adam's beta1) cycles the opposite way."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy='cos', cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f'Expected positive integer total_steps, but got {total_steps}')
            n = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f'Expected positive integer epochs, but got {epochs}')
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError('Expected positive integer steps_per_epoch, but got '
                                 f'{steps_per_epoch}')
            n = epochs * steps_per_epoch
        else:
            raise ValueError('You must define either total_steps OR (epochs AND '
                             'steps_per_epoch)')
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f'Expected float between 0 and 1 pct_start, but got {pct_start}')
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f'{anneal_strategy}')
        if cycle_momentum and ('momentum' not in optimizer.defaults
                               and 'betas' not in optimizer.defaults):
            raise ValueError('optimizer must support momentum or beta1 with `cycle_momentum` '
                             'option enabled')
        max_lrs = _per_group('max_lr', optimizer, max_lr)
        self.optimizer = optimizer
        self.total_steps = n

        def phase(end, lr0, lr1, m0, m1):
            return {'end_step': end, 'start_lr': lr0, 'end_lr': lr1,
                    'start_momentum': m0, 'end_momentum': m1}

        up_end = float(pct_start * n) - 1
        if three_phase:
            self._schedule_phases = [
                phase(up_end, 'initial_lr', 'max_lr', 'max_momentum', 'base_momentum'),
                phase(float(2 * pct_start * n) - 2, 'max_lr', 'initial_lr', 'base_momentum',
                      'max_momentum'),
                phase(n - 1, 'initial_lr', 'min_lr', 'max_momentum', 'max_momentum')]
        else:
            self._schedule_phases = [
                phase(up_end, 'initial_lr', 'max_lr', 'max_momentum', 'base_momentum'),
                phase(n - 1, 'max_lr', 'min_lr', 'base_momentum', 'max_momentum')]
        self._anneal_func_type = anneal_strategy
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group['initial_lr'] = top / div_factor
                group['max_lr'] = top
                group['min_lr'] = group['initial_lr'] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _momentum_setup(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == 'cos':
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        self._warn_if_called_directly()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f'Tried to step {step} times. The specified number of total steps '
                             f'is {self.total_steps}')
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph['end_step']
                if step <= end or i == last:
                    pct = (step - start) / (end - start)
                    lr = self._anneal_func(group[ph['start_lr']], group[ph['end_lr']], pct)
                    if self.cycle_momentum:
                        mom = self._anneal_func(group[ph['start_momentum']],
                                                group[ph['end_momentum']], pct)
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, mom, self.use_beta1)
        return lrs
