"""``dynagrad._jit_internal``: the TorchScript helpers of ``torch._jit_internal`` that
libraries import (pyro's ``_copy_to_script_wrapper``). With no TorchScript compiler (see
``dynagrad.jit``), each marker returns what it marks, as PyTorch's do when not scripting."""
from .jit import Final, export, ignore, is_scripting, unused  # noqa: F401

# markers on functions TorchScript would compile specially: the function itself here
_copy_to_script_wrapper = _overload = _overload_method = export
