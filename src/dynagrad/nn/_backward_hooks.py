"""Module full backward hooks: identity nodes around a module's inputs and outputs.

The node on the outputs sees the gradients of the outputs (grad_output), lets the
backward pre-hooks replace them, and passes them on; the node on the inputs sees the
gradients of the inputs (grad_input) once the module's whole backward has run, calls the
hooks, and passes on what they return.
"""
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, wrap


class _HookIdentity(Op):
    node_name = 'BackwardHookFunctionBackward'

    def forward(self, *arrays, callback):
        self.callback = callback
        return arrays if len(arrays) > 1 else arrays[0]

    def backward(self, *grads):
        replaced = self.callback(grads)
        return tuple(replaced) if replaced is not None else grads


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return wrap(g)


def _through_identity(values, callback):
    """Pass the tensors of ``values`` that require grad through one identity node."""
    positions = [i for i, v in enumerate(values)
                 if isinstance(v, Tensor) and v.requires_grad]
    if not positions or not is_grad_enabled():
        return values, positions
    outs = _HookIdentity.apply(*[values[i] for i in positions], callback=callback)
    outs = outs if isinstance(outs, tuple) else (outs,)
    values = list(values)
    for i, o in zip(positions, outs):
        o._vc = values[i]._vc  # an alias: same data, same version counter
        values[i] = o
    return tuple(values), positions


def _like(grads, replacements):
    """The hooks' tensors as the node passes gradients on: arrays, unless the incoming
    gradients were tensors (a backward that builds a graph)."""
    as_arrays = not any(isinstance(g, Tensor) for g in grads)
    return [g._data if as_arrays and isinstance(g, Tensor) else g for g in replacements]


class BackwardHook:
    def __init__(self, module, hooks, pre_hooks=()):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.input_positions = []
        self.n_inputs = 0

    def setup_input_hook(self, args):
        self.n_inputs = sum(isinstance(a, Tensor) for a in args)
        self.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        args, self.input_positions = _through_identity(args, self._on_input_grads)
        return args

    def setup_output_hook(self, output):
        single = not isinstance(output, tuple)
        values = (output,) if single else output
        self.n_outputs = sum(isinstance(v, Tensor) for v in values)
        values, _ = _through_identity(values, self._on_output_grads)
        return values[0] if single else tuple(values)

    def _on_output_grads(self, grads):
        self.grad_outputs = tuple(_as_tensor(g) for g in grads)
        replaced = False
        for hook in self.pre_hooks:
            result = hook(self.module, self.grad_outputs)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(self.grad_outputs):
                    raise RuntimeError(f'Backward pre hook returned an invalid number of '
                                       f'grad_output, got {len(result)}, but expected '
                                       f'{len(self.grad_outputs)}')
                self.grad_outputs = tuple(_as_tensor(g) for g in result)
                replaced = True
        if not self.input_positions:  # no input needs a gradient: the hooks run now
            self._run_hooks((None,) * self.n_inputs)
        if not replaced:
            return None
        return _like(grads, self.grad_outputs)

    def _on_input_grads(self, grads):
        by_slot = dict(zip(self.input_positions, grads))
        grad_input = tuple(_as_tensor(by_slot.get(i)) for i in self.tensor_slots)
        grad_input = self._run_hooks(grad_input)
        return _like(grads, [grad_input[self.tensor_slots.index(slot)]
                             for slot in self.input_positions])

    def _run_hooks(self, grad_input):
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f'Backward hook returned an invalid number of grad_input, '
                                       f'got {len(result)}, but expected {len(grad_input)}')
                grad_input = result
        return grad_input
