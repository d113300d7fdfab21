"""PyTorch's module path for the batch-norm layers (``torch.nn.modules.batchnorm``); the
plain ones live in ``normalization.py`` with the other normalization layers, the lazy ones
in ``lazy.py``. ``SyncBatchNorm`` is here: batch norm whose training statistics are reduced
over the ``dynagrad.distributed`` process group."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
from ...autograd.custom_function import Function
from ...autograd.grad_mode import no_grad


class _AllReduceSum(Function):
    """Sum over ranks; the gradient is summed over ranks too, so each rank gets the gradient
    of the sum of every rank's loss (every rank must then run backward, as in PyTorch)."""

    @staticmethod
    def forward(ctx, tensor, group):
        from ... import distributed
        ctx.group = group
        total = tensor.clone()
        distributed.all_reduce(total, group=group)
        return total

    @staticmethod
    def backward(ctx, grad):
        from ... import distributed
        total = grad.clone()
        distributed.all_reduce(total, group=ctx.group)
        return total, None


def _world_size(group):
    """The number of ranks statistics are reduced over (1 without a process group)."""
    from ... import distributed
    if not distributed.is_initialized():
        return 1
    return distributed.get_world_size(group)


class SyncBatchNorm(_BatchNorm):
    """Batch norm over N-D input whose batch statistics, in training, are the statistics of
    the whole batch across the ranks of ``process_group`` (the world by default). Without an
    initialised ``dynagrad.distributed`` (or on one rank) it is ``BatchNorm``."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f'expected at least 2D input (got {input.dim()}D input)')

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError('SyncBatchNorm number of input channels should be non-zero')
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        if not (batch_stats and self.training) or _world_size(self.process_group) == 1:
            return super().forward(input)
        return self._synced_forward(input)

    def _synced_forward(self, input):
        factor = self._momentum_factor()
        group = self.process_group
        dims = [d for d in range(input.dim()) if d != 1]
        shape = [1, -1] + [1] * (input.dim() - 2)
        from ... import ops
        count = ops.tensor(float(input.numel() // input.shape[1]), dtype=input.dtype)
        total = _AllReduceSum.apply(ops.cat([input.sum(dims), count.reshape(1)]), group)
        n = total[-1]
        mean = total[:-1] / n
        centred = input - mean.reshape(shape)
        var = _AllReduceSum.apply((centred * centred).sum(dims), group) / n
        out = centred * (var + self.eps).rsqrt().reshape(shape)
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():
                n_all = float(n.item())
                unbiased = var.detach() * (n_all / max(n_all - 1.0, 1.0))
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                self.running_var.mul_(1 - factor).add_(unbiased * factor)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Return ``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` that
        shares its parameters and buffers (the root itself when it is one)."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                      module.affine, module.track_running_stats,
                                      process_group, bias=True)
            if module.affine:
                converted.weight = module.weight
                if module.bias is None:
                    converted.register_parameter('bias', None)
                else:
                    converted.bias = module.bias
                converted.bias_flag = module.bias_flag
            for name in ('running_mean', 'running_var', 'num_batches_tracked'):
                converted._buffers[name] = module._buffers.get(name)
            converted.training = module.training
            if hasattr(module, 'qconfig'):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted


__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d',
           'LazyBatchNorm3d', 'SyncBatchNorm']
