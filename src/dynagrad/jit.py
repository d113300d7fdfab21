"""``dynagrad.jit``: PyTorch's TorchScript entry points, mapped onto ``dynagrad.compile``
where their semantics allow.

``trace(fn_or_module, example_inputs)`` captures the program the example inputs run (as
``torch.jit.trace`` records one) and returns the compiled callable, ready to replay; later
calls with other shapes recapture, where TorchScript's trace would silently reuse the
first. ``script`` compiles Python source to TorchScript in PyTorch, which dynagrad has no
counterpart for: it raises, naming what to use instead.
"""
from .compiler import compile as _compile

__all__ = ['trace', 'script', 'ignore', 'unused', 'is_scripting', 'is_tracing']


def trace(func, example_inputs=None, *, check_trace=True, strict=True, example_kwarg_inputs=None,
          **kwargs):
    """Capture ``func`` (a function or module) on ``example_inputs`` (a tensor or tuple) and
    return it compiled, with its program made."""
    compiled = _compile(func, fullgraph=True)
    args = () if example_inputs is None else (
        example_inputs if isinstance(example_inputs, tuple) else (example_inputs,))
    kw = example_kwarg_inputs or {}
    for _ in range(2):      # a capture and its confirming capture: the program exists after
        compiled(*args, **kw)
    return compiled


def script(obj, *args, **kwargs):
    raise RuntimeError(
        'dynagrad.jit.script: dynagrad has no TorchScript compiler. Use dynagrad.compile(fn or '
        'module) to capture and replay a program, or dynagrad.jit.trace(fn, example_inputs).')


def ignore(drop=False, **kwargs):
    """TorchScript's marker for functions it must not compile: nothing to mark here."""
    if callable(drop):
        return drop
    return lambda fn: fn


unused = ignore


def is_scripting():
    return False


def is_tracing():
    from .compiler.capture import is_capturing
    return is_capturing()

