"""dynagrad.autograd: reverse-mode automatic differentiation on define-by-run graphs."""
import importlib

from .grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,  # noqa: F401
                        inference_mode, is_inference_mode_enabled, set_multithreading_enabled,
                        is_multithreading_enabled, enforce_grad_layout_policy,
                        is_view_replay_enabled)
from .custom_function import (Function, FunctionCtx, once_differentiable,  # noqa: F401
                              NestedIOFunction)
from .graph import Node  # noqa: F401
from .engine import run_backward as _run_backward
from ..backend import xp
from . import batched as _batched
from ..tensor import Tensor, method, wrap

__all__ = ['backward', 'grad', 'Variable', 'Function', 'NestedIOFunction', 'no_grad',
           'enable_grad', 'set_grad_enabled', 'gradcheck', 'gradgradcheck',
           'set_multithreading_enabled', 'enforce_grad_layout_policy']


def is_tensor_like(inp):
    """Whether ``inp`` is a Tensor (or an instance of a Tensor subclass)."""
    return isinstance(inp, Tensor)


def kineto_available():
    """False: dynagrad has no Kineto profiler."""
    return False


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or ``inputs``)."""
    tensors = _as_tuple(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f'got {len(grads)} gradients for {len(tensors)} tensors')
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if _batched.has_batched(tensors) or (inputs and _batched.has_batched(inputs)):
        tensors, grads, inputs, _ = _batched.physical_backward_args(tensors, grads, inputs)
    _run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


@method('backward')
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs``; touch no ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = (_as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs))
    if len(grads) != len(outputs):
        raise RuntimeError(f'grad requires one grad_output per output: got {len(grads)} for '
                           f'{len(outputs)} outputs')
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        return _grads_batched(outputs, inputs, grads, retain_graph, create_graph,
                              allow_unused, materialize_grads)
    rewrap = None
    if _batched.has_batched(outputs) or _batched.has_batched(inputs):
        outputs, grads, inputs, rewrap = _batched.physical_backward_args(outputs, grads, inputs)
    result = _run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                           accumulate=False, allow_unused=allow_unused)
    if rewrap is not None:
        result = rewrap(result)
    if materialize_grads:
        result = tuple(wrap(xp.zeros_like(x._data)) if g is None else g
                       for g, x in zip(result, inputs))
    return result


def _grads_batched(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                   materialize_grads):
    """``is_grads_batched``: the first dim of every grad_output is a batch of cotangents.
    One backward pass for all of them: the cotangents enter as one batched tensor (a vmap
    level of their own), and the backward formulas, written in dynagrad ops, run on it
    through the ops' batching rules, as ``create_graph`` runs them on tensors."""
    if any(g is None for g in grads):
        raise RuntimeError('grad_outputs must be given for every output when '
                           'is_grads_batched=True')
    sizes = {g.shape[0] if g.dim() else None for g in grads}
    if None in sizes or len(sizes) != 1:
        raise RuntimeError('If `is_grads_batched=True`, we interpret the first dimension of '
                           'each grad_output as the batch dimension, which must be the same '
                           f'for every grad_output; got shapes {[list(g.shape) for g in grads]}')
    n = sizes.pop()
    if _batched.state.rules is None:    # the rules live in dynagrad.func, a layer above
        importlib.import_module('dynagrad.func._vmap')._install_rules()
    level = _batched.enter_level(n, 'error')
    try:
        seeds = tuple(_batched.batched(g, _batched.levels_of(g) + (level.level,))
                      if not _batched.levels_of(g) else _move_in(g, level.level) for g in grads)
        result = _run_backward(outputs, seeds, True if retain_graph is None else retain_graph,
                               True, inputs=inputs, accumulate=False, allow_unused=allow_unused)
    finally:
        _batched.exit_level(level)
    out = []
    for r, x in zip(result, inputs):
        if r is None:
            out.append(x.new_zeros((n,) + tuple(x.shape)) if materialize_grads else None)
            continue
        p = _unbatch(r, level.level, n)
        out.append(p if create_graph else p.detach())
    return tuple(out)


def _move_in(g, level):
    """A grad_output already batched over open vmap levels: its first dim joins as the
    innermost level."""
    own = _batched.levels_of(g)
    p = _batched.physical(g).movedim(len(own), len(own))
    return _batched.batched(p, own + (level,))


def _unbatch(r, level, n):
    own = _batched.levels_of(r)
    if level not in own:        # the same for every cotangent
        return r.unsqueeze(0).expand((n,) + tuple(r.shape))
    i = own.index(level)
    p = _batched.physical(r)
    rest = own[:i] + own[i + 1:]
    if i != len(rest):
        p = p.movedim(i, len(rest))
    return _batched.batched(p, rest)


from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (functions shadow the module)
from .anomaly import (detect_anomaly, set_detect_anomaly, is_anomaly_enabled,  # noqa: E402,F401
                      is_anomaly_check_nan_enabled)


def __getattr__(name):
    # Variable needs dynagrad.tensor, which imports this package first.
    if name == 'Variable':
        from .variable import Variable
        return Variable
    if name == 'functional':
        return importlib.import_module('.functional', __name__)
    raise AttributeError(f"module 'dynagrad.autograd' has no attribute '{name}'")

from . import graph  # noqa: E402,F401  (dynagrad.autograd.graph.saved_tensors_hooks)
