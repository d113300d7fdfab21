"""``dynagrad._C``: the few names of torch's C extension that Python libraries call.

Libraries ask ``torch._C._get_tracing_state()`` to take a trace-friendly path (pyro, and
torch.distributions itself); dynagrad has no TorchScript tracer, so there is never a tracing
state. ``_LinAlgError`` is what ``torch.linalg.LinAlgError`` is an alias of.
"""
from .ops.linalg import LinAlgError as _LinAlgError  # noqa: F401


def _get_tracing_state():
    return None


from ._torch_function import (disabled_torch_function_impl, DisableTorchFunction,  # noqa
                              DisableTorchFunctionSubclass)
_disabled_torch_function_impl = disabled_torch_function_impl


def _is_torch_function_enabled():
    from ._torch_function import state
    return state.subclasses


def _is_torch_function_mode_enabled():
    from ._torch_function import mode_active
    return mode_active()


def _has_torch_function(args):
    from .overrides import has_torch_function
    return has_torch_function(args)


def _has_torch_function_unary(arg):
    from .overrides import has_torch_function_unary
    return has_torch_function_unary(arg)


def _has_torch_function_variadic(*args):
    from .overrides import has_torch_function
    return has_torch_function(args)
