"""The optimizer base class."""
from ..tensor import Tensor


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError('params argument given to the optimizer should be an iterable of '
                            'Tensors or dicts, but got ' + params.type())
        groups = list(params)
        if not groups:
            raise ValueError('optimizer got an empty parameter list')
        if not isinstance(groups[0], dict):
            groups = [{'params': groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        group = dict(group)
        params = group['params']
        group['params'] = [params] if isinstance(params, Tensor) else list(params)
        for p in group['params']:
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
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

    def __repr__(self):
        lines = [type(self).__name__ + ' (']
        for i, group in enumerate(self.param_groups):
            lines.append(f'Parameter Group {i}')
            for k in sorted(group):
                if k != 'params':
                    lines.append(f'    {k}: {group[k]}')
        lines.append(')')
        return '\n'.join(lines)
