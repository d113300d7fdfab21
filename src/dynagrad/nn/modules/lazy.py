"""Lazy modules: LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*.

Their parameters (and buffers) start as ``UninitializedParameter``/``UninitializedBuffer``;
the first forward reads the missing size off its input, materializes them in place and turns
the module into ``cls_to_become`` (a ``LazyLinear`` becomes a ``Linear``), as PyTorch does.
Loading a state dict with initialized values materializes them with the loaded shapes.
"""
import math

from ..parameter import UninitializedParameter, UninitializedBuffer, is_lazy
from .. import init
from ... import ops
from ... import _dtype
from .linear import Linear
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                   ConvTranspose3d)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)


class LazyModuleMixin:
    """Mixin for modules whose parameter shapes are inferred at the first forward.

    A subclass lists it first among its bases, holds uninitialized parameters, defines
    ``initialize_parameters(*inputs)`` and names the class to become in ``cls_to_become``.
    """
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f'initialize_parameters is not implemented for {type(self).__name__}')

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Uninitialized tensors are saved as they are (they cannot be detached).
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()

    def _lazy_load_hook(self, state_dict, prefix):
        """Materialize each uninitialized tensor that ``state_dict`` has a value for."""
        from ...autograd.grad_mode import no_grad
        stores = [self._parameters.items(),
                  ((n, b) for n, b in self._buffers.items()
                   if n not in self._non_persistent_buffers_set)]
        with no_grad():
            for store in stores:
                for name, t in list(store):
                    value = state_dict.get(prefix + name)
                    if t is not None and value is not None and is_lazy(t) \
                            and not is_lazy(value):
                        t.materialize(value.shape, dtype=value.dtype)


def _infer_parameters(module, args):
    """The forward pre-hook: initialize from the first input, then become the concrete
    class and drop the hook."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f'module {module._get_name()} has not been fully initialized')
    # found by identity rather than kept as a handle, so the module still pickles
    for key, hook in list(module._forward_pre_hooks.items()):
        if hook is _infer_parameters:
            del module._forward_pre_hooks[key]
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


def _shape_of(input, what):
    """The input's shape: the first argument to a lazy module must be a tensor."""
    shape = getattr(input, 'shape', None)
    if shape is None:
        raise TypeError(f'{what}: expected a Tensor as the first input, got '
                        f'{type(input).__name__}')
    return shape


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is inferred from the first input's last dimension."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            # Linear's default: uniform in +-1/sqrt(in_features) for weight and bias.
            bound = 1 / math.sqrt(self.in_features)
            init.uniform_(self.weight, -bound, bound)
            if self.bias is not None:
                init.uniform_(self.bias, -bound, bound)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad
            with no_grad():
                self.in_features = _shape_of(input, 'LazyLinear')[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    _base = None

    def _lazy_setup(self, out_channels, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        n = self._n
        unbatched, batched = n + 1, n + 2
        if input.dim() not in (unbatched, batched):
            raise RuntimeError(f'Expected {unbatched}D (unbatched) or {batched}D (batched) '
                               f'input to {type(self).__name__}, but got input of size: '
                               f'{input.shape}')
        return input.shape[1] if input.dim() == batched else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad
            _shape_of(input, type(self).__name__)
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError('in_channels must be divisible by groups')
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            with no_grad():
                self.weight.materialize(shape + self.kernel_size)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(name, base):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', device=None, dtype=None):
        # out_channels=0 at first, so the 0-channel checks pass; the real size follows.
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode, device, dtype)
        self._lazy_setup(out_channels, bias, dtype)
        self.register_forward_pre_hook(_infer_parameters)

    return type(name, (_LazyConvXdMixin, base), {
        '__init__': __init__, 'cls_to_become': base, '__module__': __name__,
        '__doc__': f'``{base.__name__}`` whose ``in_channels`` is inferred from the first '
                   'input.'})


def _lazy_conv_transpose(name, base):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode='zeros', device=None,
                 dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode, device, dtype)
        self._lazy_setup(out_channels, bias, dtype)
        self.register_forward_pre_hook(_infer_parameters)

    return type(name, (_LazyConvXdMixin, base), {
        '__init__': __init__, 'cls_to_become': base, '__module__': __name__,
        '__doc__': f'``{base.__name__}`` whose ``in_channels`` is inferred from the first '
                   'input.'})


LazyConv1d = _lazy_conv('LazyConv1d', Conv1d)
LazyConv2d = _lazy_conv('LazyConv2d', Conv2d)
LazyConv3d = _lazy_conv('LazyConv3d', Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose('LazyConvTranspose1d', ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose('LazyConvTranspose2d', ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose('LazyConvTranspose3d', ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin):
    """Batch and instance norm whose ``num_features`` is the first input's dimension 1."""

    def _lazy_setup(self, affine, track_running_stats, bias, dtype):
        self.affine = affine
        self.bias_flag = affine and bias
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = ops.tensor(0, dtype=_dtype.int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad
            self.num_features = _shape_of(input, type(self).__name__)[1]
            with no_grad():
                for name in ('weight', 'bias', 'running_mean', 'running_var'):
                    t = getattr(self, name)
                    if t is not None and is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(name, base, affine_default, track_default):
    def __init__(self, eps=1e-5, momentum=0.1, affine=affine_default,
                 track_running_stats=track_default, device=None, dtype=None, *, bias=True):
        base.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self._lazy_setup(affine, track_running_stats, bias, dtype)
        self.register_forward_pre_hook(_infer_parameters)

    return type(name, (_LazyNormBase, base), {
        '__init__': __init__, 'cls_to_become': base, '__module__': __name__,
        '__doc__': f'``{base.__name__}`` whose ``num_features`` is inferred from the first '
                   'input.'})


LazyBatchNorm1d = _lazy_norm('LazyBatchNorm1d', BatchNorm1d, True, True)
LazyBatchNorm2d = _lazy_norm('LazyBatchNorm2d', BatchNorm2d, True, True)
LazyBatchNorm3d = _lazy_norm('LazyBatchNorm3d', BatchNorm3d, True, True)
# PyTorch's lazy instance norms default to affine=True, track_running_stats=True too.
LazyInstanceNorm1d = _lazy_norm('LazyInstanceNorm1d', InstanceNorm1d, True, True)
LazyInstanceNorm2d = _lazy_norm('LazyInstanceNorm2d', InstanceNorm2d, True, True)
LazyInstanceNorm3d = _lazy_norm('LazyInstanceNorm3d', InstanceNorm3d, True, True)

# LazyModuleMixin stays out of __all__: torch.nn does not export it either.
__all__ = ['LazyLinear', 'LazyConv1d', 'LazyConv2d', 'LazyConv3d',
           'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d',
           'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyInstanceNorm1d',
           'LazyInstanceNorm2d', 'LazyInstanceNorm3d']
