"""SparseAdam: Adam for sparse gradients (PyTorch's lazy variant, which updates only the
rows a sparse gradient touches).

dynagrad has no sparse tensors yet (the numerics issue), so every gradient it makes is
dense, and a dense gradient is what PyTorch's SparseAdam refuses at ``step``. This class is
therefore PyTorch's SparseAdam for every input dynagrad can give it: the same constructor,
checks, defaults, state dict and refusal; the update itself comes with sparse gradients.
"""
from .optimizer import Optimizer
from .sgd import _check_lr


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        if not 0.0 < eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f'Invalid beta parameter at index {i}: {beta}')
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    raise RuntimeError('SparseAdam does not support dense gradients, please '
                                       'consider Adam instead')
        return loss
