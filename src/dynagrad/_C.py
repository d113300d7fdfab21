"""``dynagrad._C``: the few names of torch's C extension that Python libraries call.

Libraries ask ``torch._C._get_tracing_state()`` to take a trace-friendly path (pyro, and
torch.distributions itself); dynagrad has no TorchScript tracer, so there is never a tracing
state. ``_LinAlgError`` is what ``torch.linalg.LinAlgError`` is an alias of.
"""
from .ops.linalg import LinAlgError as _LinAlgError  # noqa: F401


def _get_tracing_state():
    return None
