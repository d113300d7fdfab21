"""dynagrad.autograd: reverse-mode automatic differentiation on define-by-run graphs."""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,  # noqa: F401
                        inference_mode, is_inference_mode_enabled, set_multithreading_enabled,
                        is_multithreading_enabled, enforce_grad_layout_policy,
                        is_view_replay_enabled)
from .function import (Function, FunctionCtx, once_differentiable,  # noqa: F401
                       NestedIOFunction)
from .graph import Node  # noqa: F401
from .engine import run_backward as _run_backward
from ..backend import xp
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
    result = _run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                           accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        result = tuple(wrap(xp.zeros_like(x._data)) if g is None else g
                       for g, x in zip(result, inputs))
    return result


from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (functions shadow the module)
from .anomaly import (detect_anomaly, set_detect_anomaly, is_anomaly_enabled,  # noqa: E402,F401
                      is_anomaly_check_nan_enabled)


def __getattr__(name):
    # Variable needs dynagrad.tensor, which imports this package first.
    if name == 'Variable':
        from .variable import Variable
        return Variable
    raise AttributeError(f"module 'dynagrad.autograd' has no attribute '{name}'")

from . import graph  # noqa: E402,F401  (dynagrad.autograd.graph.saved_tensors_hooks)
