"""Normalization layers: batch, layer, group, instance and RMS normalization."""
import numbers

from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from .. import functional as F
from ... import ops
from ... import _dtype


def _affine_parameters(module, affine, bias, shape, dtype):
    """``weight`` (ones) and ``bias`` (zeros) of ``shape``, or None where switched off."""
    if affine:
        module.weight = Parameter(ops.ones(*shape, dtype=dtype))
        if bias:
            module.bias = Parameter(ops.zeros(*shape, dtype=dtype))
        else:
            module.register_parameter('bias', None)
    else:
        module.register_parameter('weight', None)
        module.register_parameter('bias', None)


class _NormBase(Module):
    """Affine parameters and running statistics shared by batch and instance norm."""
    _version = 2    # PyTorch's: num_batches_tracked exists (state dicts record it)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.bias_flag = affine and bias
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, (num_features,), dtype)
        if track_running_stats:
            self.register_buffer('running_mean', ops.zeros(num_features, dtype=dtype))
            self.register_buffer('running_var', ops.ones(num_features, dtype=dtype))
            self.register_buffer('num_batches_tracked', ops.tensor(0, dtype=_dtype.int64))
        else:
            self.register_buffer('running_mean', None)
            self.register_buffer('running_var', None)
            self.register_buffer('num_batches_tracked', None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            from .. import init
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        pass

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, '
                f'affine={self.affine}, bias={self.bias_flag}, '
                f'track_running_stats={self.track_running_stats}')

    def _momentum_factor(self):
        """The running-average factor; momentum=None means a cumulative average."""
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                return 1.0 / float(self.num_batches_tracked.item())
        return 0.0 if self.momentum is None else self.momentum


class _BatchNorm(_NormBase):
    _dims = ()

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f'expected {" or ".join(f"{d}D" for d in self._dims)} input '
                             f'(got {input.dim()}D input)')

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._momentum_factor()
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        return F.batch_norm(input,
                            self.running_mean if not self.training or self.track_running_stats
                            else None,
                            self.running_var if not self.training or self.track_running_stats
                            else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        check_device(device)   # an unavailable device raises here
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f'expected {" or ".join(f"{d}D" for d in self._dims)} input '
                             f'(got {input.dim()}D input)')
        unbatched = input.dim() == self._dims[0]
        feature_dim = 0 if unbatched else 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f'num_features ({self.num_features}), but got: '
                                 f'{input.shape[feature_dim]}.')
            import warnings
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          'You can silence this warning by not passing in num_features, '
                          'which is not used because affine=False')
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.1, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _dims = (4, 5)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.bias_flag = bias
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f'{self.normalized_shape}, eps={self.eps}, '
                f'elementwise_affine={self.elementwise_affine}, bias={self.bias_flag}')


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        if num_channels % num_groups:
            raise ValueError('num_channels must be divisible by num_groups')
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self.bias_flag = affine and bias
        _affine_parameters(self, affine, bias, (num_channels,), dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f'{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, '
                f'bias={self.bias_flag}')


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.ones(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter('weight', None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f'{self.normalized_shape}, eps={self.eps}, '
                f'elementwise_affine={self.elementwise_affine}')


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f'{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}'


class CrossMapLRN2d(Module):
    """Local response normalization across channels of 4-D input (the legacy Lua layer):
    ``x / (k + alpha / size * s) ** beta`` with ``s`` a sum of squares over nearby channels.

    PyTorch's kernel sums the channels ``c - h .. c + h`` (``h = (size - 1) // 2 + 1``, less
    one) and, for every channel past the first window, also channel 0's square; this layer
    reproduces those values."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f'CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D '
                             'instead.')
        channels = input.shape[1]
        half = int((self.size - 1) / 2 + 1) - 1
        squares = input * input
        padded = F.pad(squares, (0, 0, 0, 0, half, half))
        window = padded.narrow(1, 0, channels)
        for offset in range(1, 2 * half + 1):
            window = window + padded.narrow(1, offset, channels)
        if channels > half + 1:
            first = squares.narrow(1, 0, 1).expand(-1, channels - half - 1, -1, -1)
            extra = ops.cat([ops.zeros_like(squares.narrow(1, 0, half + 1)), first], 1)
            window = window + extra
        scale = window * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f'{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}'


__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'InstanceNorm1d', 'InstanceNorm2d',
           'InstanceNorm3d', 'LayerNorm', 'GroupNorm', 'RMSNorm', 'LocalResponseNorm',
           'CrossMapLRN2d']
