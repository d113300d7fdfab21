"""The optimizer base class: parameter groups, per-parameter state, state dicts and hooks.

Subclasses implement ``step`` as their update rule over ``_params_with_grad()``, which hands
out each parameter that has a gradient (maximize and weight decay applied) and bumps its
version counter once the update is written. Updates write the parameters' arrays in place
(so parameters keep their identity). State tensors are dynagrad tensors, laid out as
PyTorch lays them out, so a state dict is interchangeable with PyTorch's (through
checkpoints) and a fresh optimizer that loads one continues training exactly where the
saved one stopped.
"""
import functools
from typing import Any, Callable, Optional
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from itertools import chain

import numpy as np

from ..autograd.batched import break_capture, state as _devices
from ..autograd.device_dispatch import call
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..autograd.graph import RemovableHandle, HookDict
from .._device import is_any_array
from .._dtype import is_floating
from ..backend import xp
from ..ops.blocked import BLOCK, run_blocked
from .._coo import COO
from ..tensor import Tensor, bump_version, wrap

__all__ = [
    'Optimizer',
    'register_optimizer_step_post_hook',
    'register_optimizer_step_pre_hook',
    'required',
]


class _RequiredParameter:
    """Marks a default that every parameter group must give (e.g. SGD's lr in old torch)."""

    def __repr__(self):
        return '<required parameter>'


required = _RequiredParameter()

_global_pre_hooks = HookDict()
_global_post_hooks = HookDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` before every optimizer step."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer step."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step):
    """Wrap a subclass's ``step`` so step hooks run around it and schedulers see it ran."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        break_capture('an optimizer step (it updates parameters in place, outside the ops a '
                      'program replays)')
        for hook in chain(list(_global_pre_hooks.values()),
                          list(self._optimizer_step_pre_hooks.values())):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f'{step} must return None or a tuple of '
                                       f'(new_args, new_kwargs), but got {result}.')
                args, kwargs = result
        self._opt_called = True    # what LR schedulers check before warning
        if _devices.devices:        # its arrays computed on the parameters' device
            out = call(step, (self,) + args, kwargs, tensors=_first_param(self))
        else:
            out = step(self, *args, **kwargs)
        for hook in chain(list(self._optimizer_step_post_hooks.values()),
                          list(_global_post_hooks.values())):
            hook(self, args, kwargs)
        return out

    wrapper._dg_hooked = True
    return wrapper


def _first_param(optimizer):
    for group in optimizer.param_groups:
        for p in group['params']:
            return (p,)
    return ()


def _use_grad_for_differentiable(step):
    """Run a ``step`` with autograd recording exactly when the optimizer was built with
    ``differentiable=True`` (PyTorch's rule: a differentiable step records even inside
    ``no_grad``, any other step never records)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with set_grad_enabled(bool(self.defaults.get('differentiable', False))):
            return step(self, *args, **kwargs)

    return wrapper


def _check_fused(fused, foreach, differentiable):
    """PyTorch's construction-time checks of ``fused`` (which it runs on CPU too)."""
    if fused and differentiable:
        raise RuntimeError('`fused` does not support `differentiable`')
    if fused and foreach:
        raise RuntimeError('`fused` and `foreach` cannot be `True` together.')


_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"
_DEVICES_NO_XLA = "['cuda', 'xpu', 'hpu', 'privateuseone']"


def _capturable_message(what='params and state_steps', devices=_DEVICES):
    return f'If capturable=True, {what} must be on supported devices: {devices}.'


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + '.' + type(obj).__qualname__


def _state_tensor(array):
    """A dynagrad tensor (no history) around an array the optimizer owns."""
    return wrap(array)


def _step_tensor():
    """PyTorch keeps the step count as a float32 0-dim tensor."""
    return _state_tensor(xp.zeros((), np.float32))


def _advance(state, p, *buffers, **scalars):
    """Count this update of ``p`` in its ``state`` and return the step number.

    On the first update (empty ``state``) first create, in this order (PyTorch's, which
    state dicts keep): the step counter, each of ``scalars`` (name=value) as a float32
    0-dim tensor, and a zeroed buffer shaped like ``p`` for each name in ``buffers``.
    """
    if not state:
        _new_state(state, p, *buffers, **scalars)
    state['step']._data += 1
    return float(state['step']._data)


def _new_state(state, p, *buffers, **scalars):
    """Fill the empty ``state`` of ``p`` as ``_advance`` does, the step count at 0."""
    state['step'] = _step_tensor()
    for name, value in scalars.items():
        state[name] = _state_tensor(xp.full((), value, np.float32))
    for name in buffers:
        state[name] = _state_tensor(xp.zeros_like(p._data))


def _weight_decay(p, g, lr, wd, decoupled):
    """L2 weight decay folded into the gradient, or (decoupled, AdamW's) applied to p."""
    if wd != 0:
        if decoupled:
            p._data *= 1 - lr * wd
        else:
            g = g + wd * p._data
    return g


def _native_ready(data, g, buffers, step=None):
    """Whether one native kernel may update the parameter array ``data`` in place from the
    gradient array ``g`` and the state arrays ``buffers``, counting the update in ``step``
    (a state's count, when given): all NumPy arrays, the gradient and the buffers of the
    parameter's dtype and shape, the count float32 and 0-d as ``_advance`` makes it, and
    those written C-contiguous (seen flat, each stays a view), aligned and writable (else
    the NumPy update raises NumPy's error)."""
    # (per parameter and step, so kept cheap: NumPy's dtypes of one kind are mostly one
    # object, the identity test saves the comparison)
    dtype, shape = data.dtype, data.shape
    if g.__class__ is not np.ndarray or not (g.dtype is dtype or g.dtype == dtype) or \
            g.shape != shape:
        return False
    if step is not None and not (step.__class__ is np.ndarray and step.dtype == np.float32
                                 and step.ndim == 0 and step.flags.writeable):
        return False
    # (carray: C-contiguous, aligned and writable in one flag; an unaligned array, which
    # NumPy makes only on request, takes the NumPy update)
    if not data.flags.carray:
        return False
    for a in buffers:
        if a.__class__ is not np.ndarray or not (a.dtype is dtype or a.dtype == dtype) or \
                a.shape != shape or not a.flags.carray:
            return False
    return True


def _scalar(x):
    """A hyperparameter as a Python float (groups may hold 1-element tensors, as in torch)."""
    return float(x) if isinstance(x, Tensor) else x


def _number_arg(value, op, arg, position=''):
    """A hyperparameter that a differentiable step hands to an op argument PyTorch types as
    a Number (``addcdiv_``'s value, ``add_``'s alpha): a float, or PyTorch's TypeError for
    a tensor that requires grad (its argument parser takes only those without)."""
    if isinstance(value, Tensor):
        if value.requires_grad:
            raise TypeError(f"{op}(): argument '{arg}'{position} must be Number, not Tensor")
        return float(value)
    return value


def _addcdiv_(a, t1, t2, value):
    """``a.addcdiv_(t1, t2, value=value)`` on arrays, rounding as PyTorch's kernel does:
    ``a + (value * t1) / t2`` (not ``value * (t1 / t2)``, which differs in the last bit)."""
    step = value * t1
    step /= t2
    a += step
    return a


def _add_scaled_(a, b, alpha):
    """``a += alpha * b`` on arrays. For large contiguous arrays of one dtype the product
    goes through a block-sized buffer: ``alpha * b`` as one temporary of a 2M-parameter
    table is 8 MB of fresh pages every step, and the blocked form is 1.6x faster."""
    if (a.size < 2 * BLOCK or a.dtype != b.dtype or a.shape != b.shape
            or not (a.flags.c_contiguous and b.flags.c_contiguous)):
        a += alpha * b
        return a
    alpha = a.dtype.type(alpha)

    def add_scaled(out, b_block, product):
        xp.multiply(b_block, alpha, out=product)
        out += product
    run_blocked(add_scaled, (b,), a.dtype, scratch=1, out=a)
    return a


def _lerp_(a, b, w):
    """``a.lerp_(b, w)`` on arrays, with PyTorch's two-sided formula (exact at w=1)."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)
    return a


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups) whose other keys override ``defaults`` for that group.
    """

    # the types of step hooks (torch.optim.Optimizer's aliases)
    OptimizerPreHook = Callable[[Any, tuple, dict], Optional[tuple]]
    OptimizerPostHook = Callable[[Any, tuple, dict], None]
    # wraps a ``step`` so the step hooks run around it (PyTorch adds a profiler record too)
    profile_hook_step = staticmethod(_hooked_step)

    # Whether each per-parameter state tensor (other than 0-dim scalars) has its parameter's
    # shape; load_state_dict checks it. LBFGS keeps flat vectors over all parameters.
    _state_matches_param_shapes = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # an optimizer written outside dynagrad may keep state of any shape (a masked or a
        # quantized moment): PyTorch's load_state_dict checks no shapes, so neither does its
        if '_state_matches_param_shapes' not in cls.__dict__ and \
                not cls.__module__.startswith('dynagrad.'):
            cls._state_matches_param_shapes = False

    # PyTorch accepts capturable=True at construction and refuses it at the first step with
    # CPU parameters (CUDA graphs need an accelerator); its assertion text names what it
    # checks: (single-tensor text, foreach text).
    _capturable_errors = (_capturable_message(), _capturable_message(devices=_DEVICES_NO_XLA))
    # Whether foreach=True with differentiable=True is refused at step (PyTorch's foreach
    # kernels do not record autograd; SGD falls back to its single-tensor loop instead).
    _foreach_refuses_differentiable = True
    # Which of the two refusals PyTorch raises first when both apply
    _capturable_checked_first = False
    # Whether the subclass applies its (decoupled) weight decay itself, in its step
    _weight_decay_in_step = False
    # Whether differentiable=True has an update in dynagrad ops (a step that would silently
    # not record is refused instead)
    _supports_differentiable = False

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError('params argument given to the optimizer should be an iterable of '
                            'Tensors or dicts, but got ' + _typename(params))
        if not isinstance(params, Iterable):
            raise TypeError('params argument given to the optimizer should be an iterable of '
                            'Tensors or dicts, but got ' + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError('optimizer got an empty parameter list')
        if not isinstance(groups[0], dict):
            groups = [{'params': groups}]
        for g in groups:
            self.add_param_group(g)

    def _patch_step_function(self):
        cls = type(self)
        if not getattr(cls.step, '_dg_hooked', False):
            cls.step = _hooked_step(cls.step)

    def __getstate__(self):
        return {'defaults': self.defaults, 'state': self.state,
                'param_groups': self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ('_optimizer_step_pre_hooks', '_optimizer_step_post_hooks',
                     '_optimizer_state_dict_pre_hooks', '_optimizer_state_dict_post_hooks',
                     '_optimizer_load_state_dict_pre_hooks',
                     '_optimizer_load_state_dict_post_hooks'):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()

    def __repr__(self):
        text = type(self).__name__ + ' ('
        for i, group in enumerate(self.param_groups):
            text += f'\nParameter Group {i}\n'
            for key in sorted(group):
                if key != 'params':
                    text += f'    {key}: {group[key]}\n'
        return text + ')'

    # -- parameter groups --------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with 'params' and optional per-group options).

        Everything is checked before the group (the caller's dict, as in PyTorch) is
        filled in with the defaults and appended.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f'param_group must be a dict, but got {type(param_group)}')
        if 'params' not in param_group:
            raise KeyError("param_group must have a 'params' entry")
        params = param_group['params']
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError('optimizer parameters need to be organized in ordered collections, '
                            'but the ordering of tensors in sets will change between runs. '
                            'Please use a list instead.')
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(tensors):
            raise ValueError('all optimizer params should be with/without names. Some param '
                             'names are missing')
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError('optimizer can only optimize Tensors, but one of the params is '
                                + _typename(p))
            if not self.defaults.get('differentiable', None) and not (p.is_leaf
                                                                      or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError('parameter group didn\'t specify a value of required '
                                 f'optimization parameter {name}')
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn('optimizer contains a parameter group with duplicate parameters; '
                          'in future, this will cause an error; see '
                          'github.com/pytorch/pytorch/issues/40967 for more information',
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group['params'])
            if bool(names) != ('param_names' in group):
                txt = 'with names' if names else 'without names'
                raise ValueError('all optimizer param groups should be with/without names. '
                                 f'cannot add param group {txt} to the optimizer')
        if any(id(p) in seen for p in tensors):
            raise ValueError('some parameters appear in more than one parameter group')
        # checked: now fill in the group
        param_group['params'] = tensors
        if names:
            param_group['param_names'] = names
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized parameters (to None by default)."""
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    # -- helpers for subclasses --------------------------------------------------------
    @staticmethod
    def _eval_closure(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _keeps_state(self, group):
        """Whether the parameters of ``group`` have per-parameter state (SGD's have none
        without momentum, and PyTorch then leaves ``self.state`` empty)."""
        return True

    def _check_step_flags(self):
        """Refuse, before anything changes, what PyTorch refuses at step on a CPU."""
        for group in self.param_groups:
            foreach = bool(group.get('foreach'))
            differentiable = group.get('differentiable', False)
            capturable = group.get('capturable', False) and not group.get('fused')
            if not (capturable or differentiable) or all(p.grad is None
                                                         for p in group['params']):
                continue      # (PyTorch checks only parameters that have gradients)
            autograd_foreach = (foreach and differentiable
                                and self._foreach_refuses_differentiable)
            if autograd_foreach and not (capturable and self._capturable_checked_first):
                raise AssertionError("_foreach ops don't support autograd")
            if capturable:
                raise AssertionError(self._capturable_errors[foreach])
            if differentiable and not self._supports_differentiable:
                raise NotImplementedError(
                    f'{type(self).__name__}.step: differentiable=True is not supported by '
                    'this optimizer (its update is not written in dynagrad ops); build it '
                    'with differentiable=False')

    def _params_with_grad(self, native_update=None):
        """``(group, p, g, state)`` for each parameter with a gradient, group by group.

        ``g`` is the gradient's array as the update uses it: negated when the group
        maximizes, plus ``weight_decay * p`` (L2) when it has weight decay, unless the group
        decouples it (AdamW's), which instead scales ``p`` by ``1 - lr * weight_decay`` here.
        ``state`` is ``self.state[p]`` (None where ``_keeps_state`` says so). Once the loop
        body has written its update into ``p``, the parameter's version counter is bumped.

        In a ``differentiable`` group ``g`` is a tensor instead, made with dynagrad ops
        (and decoupled decay is an in-place op on ``p``), so autograd records the update:
        the loop body then writes ``p`` with tensor ops too.

        ``native_update(group, p, g, state, lr, weight_decay, decoupled, maximize)``, where
        given, is first offered each parameter of a group that is not differentiable, with
        the gradient's array as it is: it either does the whole update (maximize and weight
        decay included) in one native kernel and answers True, and the parameter is not
        handed out (its version is bumped here), or changes nothing and answers False.
        """
        self._check_step_flags()
        for group in self.param_groups:
            maximize = group.get('maximize', False)
            differentiable = group.get('differentiable', False)
            wd = 0 if self._weight_decay_in_step else group.get('weight_decay', 0)
            lr = group['lr']
            if not differentiable:
                wd, lr = _scalar(wd), _scalar(lr)
            decoupled = ('decoupled_weight_decay' in self.defaults
                         and group.get('decoupled_weight_decay', False))
            stateful = self._keeps_state(group)
            for p in group['params']:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p] if stateful else None
                if differentiable:
                    g = -grad if maximize else grad
                    if wd != 0:
                        if decoupled:
                            p.mul_(1 - lr * wd)
                        else:
                            g = g.add(p, alpha=wd)
                    yield group, p, g, state
                    continue
                g = grad._data
                if native_update is not None and native_update(group, p, g, state, lr, wd,
                                                               decoupled, maximize):
                    bump_version(p, 'optimizer.step')
                    continue
                if g.__class__ is COO:      # a sparse gradient (Embedding(sparse=True))
                    g = self._sparse_grad(p, g, maximize, wd)
                else:
                    if maximize:
                        g = -g
                    g = _weight_decay(p, g, lr, wd, decoupled)
                yield group, p, g, state
                bump_version(p, 'optimizer.step')

    def _sparse_grad(self, p, g, maximize, wd):
        """A sparse gradient (a ``COO``) as the update takes it. Most optimizers refuse
        one, as PyTorch's do; SGD takes it (and PyTorch's sparse + dense error where weight
        decay would add the parameter to it)."""
        if not self._takes_sparse_grads:
            raise RuntimeError(f'{type(self).__name__} does not support sparse gradients')
        if maximize:
            g = COO(g.indices, -g.values, g.shape, g.coalesced)
        if wd != 0:
            raise RuntimeError('add(sparse, dense) is not supported. Use add(dense, sparse) '
                               'instead.')
        return g

    _takes_sparse_grads = False

    # -- hooks ---------------------------------------------------------------------------
    @staticmethod
    def _register(hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` before step."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None`` after step."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ---------------------------------------------------------------------
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``.

        Parameters are numbered in order over all groups; the state tensors are the
        optimizer's own (not copies), as in PyTorch.
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != 'params'}
            for i, p in enumerate(group['params'], start):
                index.setdefault(id(p), i)
            packed['params'] = [index[id(p)] for p in group['params']]
            start += len(packed['params'])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {'state': state, 'param_groups': groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, sd)
            if result is not None:
                sd = result
        return sd

    def load_state_dict(self, state_dict):
        """Load a state dict made by ``state_dict()`` (of this class, same group sizes).

        The state is copied (tensors cast to each parameter's floating dtype, the step
        count kept as saved); the groups' options are replaced by the saved ones. All
        checks happen before the optimizer changes.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f'state_dict must be a dict, but got {type(state_dict).__name__}')
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        for key in ('state', 'param_groups'):
            if key not in state_dict:
                raise KeyError(f"optimizer state_dict is missing the {key!r} entry")
        groups = self.param_groups
        saved_groups = _deepcopy_groups(state_dict['param_groups'])
        if len(groups) != len(saved_groups):
            raise ValueError('loaded state dict has a different number of parameter groups')
        if any(len(g['params']) != len(s['params']) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {_as_index(k): p for k, p in zip(
            chain.from_iterable(s['params'] for s in saved_groups),
            chain.from_iterable(g['params'] for g in groups))}
        state = defaultdict(dict)
        for k, v in state_dict['state'].items():
            k = _as_index(k)
            if k in id_map:
                param = id_map[k]
                if not isinstance(v, dict):
                    raise TypeError(f'the state of parameter {k} must be a dict, got '
                                    f'{type(v).__name__}')
                if self._state_matches_param_shapes:
                    for name, value in v.items():
                        arr = _as_array(value)
                        if arr is not None and arr.ndim and arr.shape != param._data.shape:
                            raise ValueError(
                                f'loaded state dict has {name!r} of shape {list(arr.shape)} '
                                f'for parameter {k}, whose shape is {list(param.shape)}')
                state[param] = {name: _cast(param, value, name) for name, value in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved['params'] = group['params']
            if 'param_names' in group and 'param_names' not in saved:
                saved['param_names'] = group['param_names']
            new_groups.append(saved)
        self.__setstate__({'state': state, 'param_groups': new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


def _as_index(k):
    """State dict keys are ints; accept their string forms too (after a JSON round trip)."""
    if isinstance(k, str) and k.lstrip('-').isdigit():
        return int(k)
    return k


def _deepcopy_groups(groups):
    if not isinstance(groups, (list, tuple)):
        raise TypeError("optimizer state_dict's 'param_groups' must be a list of dicts")
    out = []
    for g in groups:
        if not isinstance(g, dict) or 'params' not in g:
            raise TypeError("each saved parameter group must be a dict with a 'params' entry")
        g = {k: (list(v) if isinstance(v, list) else v) for k, v in g.items()}
        if isinstance(g.get('betas'), list):
            g['betas'] = tuple(g['betas'])
        out.append(g)
    return out


def _as_array(value):
    if isinstance(value, Tensor):
        return value._data
    if is_any_array(value):
        return value
    return None


def _cast(param, value, key=None):
    """A copy of one saved state value for ``param``: tensors copied, floating ones cast to
    the parameter's dtype, except the step count (PyTorch keeps it as saved)."""
    if isinstance(value, (Tensor, np.ndarray)):
        arr = value._data if isinstance(value, Tensor) else value
        if key != 'step' and is_floating(arr.dtype) and is_floating(param._data.dtype):
            arr = arr.astype(param._data.dtype, copy=True)
        else:
            arr = arr.copy()
        return _state_tensor(arr)
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value

