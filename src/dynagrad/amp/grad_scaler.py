"""``dynagrad.amp.GradScaler``: dynamic loss scaling, with PyTorch's semantics.

A training step under a scaler::

    scaler.scale(loss).backward()   # gradients come out multiplied by the scale
    scaler.step(optimizer)          # unscale them (unless unscale_ did), skip on inf/nan
    scaler.update()                 # back off after an overflow, grow after a calm spell

The scale starts at ``init_scale``; a step whose gradients hold an inf or a nan is skipped
and the scale multiplied by ``backoff_factor``; after ``growth_interval`` clean steps in a
row it is multiplied by ``growth_factor``. The default device is 'cuda', as in PyTorch:
without CUDA such a scaler warns and disables itself (every method then passes through);
``GradScaler('cpu')`` works on the CPU, as PyTorch's does.
"""
import warnings
from collections import abc, defaultdict
from enum import Enum

import numpy as np

from .._dtype import float32, int32
from ..autograd.grad_mode import no_grad
from ..ops.creation import full
from ..tensor import Tensor, bump_version

__all__ = ['GradScaler', 'OptState']

_F32 = np.dtype(np.float32)


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {'stage': OptState.READY, 'found_inf_per_device': {}}


def _cuda_unavailable():
    from .. import cuda
    return not cuda.is_available()


class GradScaler:
    """Scale the loss so small float16/bfloat16 gradients do not flush to zero; unscale
    them before the optimizer steps, skipping steps that overflowed."""

    def __init__(self, device='cuda', init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == 'cuda' and enabled and _cuda_unavailable():
            warnings.warn('dynagrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  '
                          'Disabling.', UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError('The growth factor must be > 1.0.')
            if backoff_factor >= 1.0:
                raise AssertionError('The backoff factor must be < 1.0.')
            self._init_scale = init_scale
            self._scale = None              # made by the first scale() (a float32 0-d tensor)
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None     # clean steps in a row (an int32 0-d tensor)
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # -- the scale and the step counter ----------------------------------------------------
    def _check_scale_growth_tracker(self, funcname):
        fix = ('This may indicate your script did not use scaler.scale(loss or outputs) '
               'earlier in the iteration.')
        if self._scale is None:
            raise AssertionError(f'Attempted {funcname} but _scale is None.  ' + fix)
        if self._growth_tracker is None:
            raise AssertionError(f'Attempted {funcname} but _growth_tracker is None.  ' + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError('_growth_tracker initialized before _scale')
        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or a list/tuple/iterable of them, nested) times the scale."""
        if not self._enabled:
            return outputs

        def apply_scale(value):
            if isinstance(value, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(value.device)
                return value * self._scale
            if isinstance(value, abc.Iterable):
                scaled = map(apply_scale, value)
                if isinstance(value, (list, tuple)):
                    return type(value)(scaled)
                return scaled
            raise ValueError('outputs must be a Tensor or an iterable of Tensors')
        return apply_scale(outputs)

    # -- unscaling -----------------------------------------------------------------------
    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Multiply every gradient of ``optimizer``'s parameters by ``inv_scale`` in place and
        set ``found_inf`` to 1 if any holds an inf or a nan; one flag per device."""
        grads = []
        with no_grad():
            for group in optimizer.param_groups:
                for param in group['params']:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f'expected param to be dynagrad.Tensor, got '
                                             f'{type(param).__name__}')
                    grad = param._grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad._data.dtype == np.float16:
                        raise ValueError('Attempting to unscale FP16 gradients.')
                    grads.append(grad)
            inv = np.float32(inv_scale.item())
            for grad in grads:
                data = grad._data
                if not np.isfinite(data.astype(_F32, copy=False)).all():
                    found_inf._data[...] = 1.0
                if data.dtype == _F32 or data.dtype == np.float64:
                    data *= data.dtype.type(inv)
                else:       # float16/bfloat16: multiplied in float32, rounded once
                    data[...] = data.astype(_F32) * inv
                bump_version(grad, 'GradScaler.unscale_')
        return {found_inf.device: found_inf} if grads else {}

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place (once per step: before
        clipping them, say); ``step`` then does not unscale them again."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker('unscale_')
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state['stage'] is OptState.UNSCALED:
            raise RuntimeError('unscale_() has already been called on this optimizer since the '
                               'last update().')
        if optimizer_state['stage'] is OptState.STEPPED:
            raise RuntimeError('unscale_() is being called after step().')
        # the reciprocal in double, rounded to float, as PyTorch computes it
        inv_scale = full((), np.float32(1.0 / float(self._scale.item())), dtype=float32,
                         device=self._scale.device)
        found_inf = full((), 0.0, dtype=float32, device=self._scale.device)
        optimizer_state['found_inf_per_device'] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state['stage'] = OptState.UNSCALED

    # -- stepping and updating -------------------------------------------------------------
    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state['found_inf_per_device'].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, unless they hold an inf
        or a nan (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if 'closure' in kwargs:
            raise RuntimeError('Closure use is not currently supported if GradScaler is '
                               'enabled.')
        self._check_scale_growth_tracker('step')
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state['stage'] is OptState.STEPPED:
            raise RuntimeError('step() has already been called since the last update().')
        if optimizer_state['stage'] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state['found_inf_per_device']) == 0:
            raise AssertionError('No inf checks were recorded for this optimizer.')
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state['stage'] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next step: ``new_scale`` (a float or a 1-element float32
        tensor) if given, else back off after an inf/nan this step or grow after
        ``growth_interval`` clean steps in a row."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker('update')
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._fill(_scale, new_scale)
            else:
                reason = ('new_scale should be a float or a 1-element dynagrad.cuda.FloatTensor or '
                          'dynagrad.FloatTensor with requires_grad=False.')
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._fill(_scale, new_scale.item())
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state['found_inf_per_device'].values()]
            if len(found_infs) == 0:
                raise AssertionError('No inf checks were recorded prior to update.')
            found = sum(float(f.item()) for f in found_infs)
            self._update_scale(found)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, found_inf):
        """PyTorch's scale update: back off on an overflow, grow after a calm spell."""
        scale = float(self._scale.item())
        tracker = int(self._growth_tracker.item())
        if found_inf:
            scale = np.float32(scale * self._backoff_factor)
            tracker = 0
        else:
            successful = tracker + 1
            if successful == self._growth_interval:
                grown = np.float32(scale * self._growth_factor)
                if np.isfinite(grown):
                    scale = grown
                tracker = 0
            else:
                tracker = successful
        self._fill(self._scale, scale)
        self._fill(self._growth_tracker, tracker)

    @staticmethod
    def _fill(t, value):
        t._data[...] = value
        bump_version(t, 'GradScaler.update')

    # -- queries and settings --------------------------------------------------------------
    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return (self._init_scale if self._scale is None
                    else float(self._scale.item()))
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (empty when disabled), as PyTorch's."""
        if self._enabled:
            return {'scale': self.get_scale(), 'growth_factor': self._growth_factor,
                    'backoff_factor': self._backoff_factor,
                    'growth_interval': self._growth_interval,
                    '_growth_tracker': self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError('The source state dict is empty, possibly because it was saved '
                               'from a disabled instance of GradScaler.')
        self._init_scale = float(state_dict['scale'])
        if self._scale is not None:
            self._fill(self._scale, state_dict['scale'])
        self._growth_factor = float(state_dict['growth_factor'])
        self._backoff_factor = float(state_dict['backoff_factor'])
        self._growth_interval = int(state_dict['growth_interval'])
        self._init_growth_tracker = int(state_dict['_growth_tracker'])
        if self._growth_tracker is not None:
            self._fill(self._growth_tracker, state_dict['_growth_tracker'])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError('A GradScaler instance may only be pickled at the '
                                     'beginning of an iteration, or at the end after '
                                     'scaler.update().')
            # the tensors are remade on first use, from these
            state['_init_scale'] = self.get_scale()
            state['_init_growth_tracker'] = self._get_growth_tracker()
            state['_scale'] = None
            state['_growth_tracker'] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker('_check_inf_per_device')
        dummy_inv_scale = full((), 1.0, dtype=float32, device=_scale.device)
        found_inf = full((), 0.0, dtype=float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]['found_inf_per_device'] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]['found_inf_per_device']

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]['found_inf_per_device']

