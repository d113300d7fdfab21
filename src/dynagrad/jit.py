"""``dynagrad.jit``: PyTorch's TorchScript entry points, mapped onto ``dynagrad.compile``
where their semantics allow.

``trace(fn_or_module, example_inputs)`` captures the program the example inputs run (as
``torch.jit.trace`` records one) and returns the compiled callable, ready to replay; later
calls with other shapes recapture, where TorchScript's trace would silently reuse the
first. ``script`` compiles Python source to TorchScript in PyTorch, which dynagrad has no
counterpart for: it returns what it is given, to run eagerly, as PyTorch itself does under
``PYTORCH_JIT=0``. Libraries script their helpers at import time (gpytorch,
linear_operator, x-transformers), so refusing there would refuse the whole library; what
needs a real TorchScript artefact (``save``, ``load``, ``freeze``) raises when called.
"""
import typing

from .compiler import compile as _compile

__all__ = ['trace', 'script', 'script_if_tracing', 'ignore', 'unused', 'export', 'interface',
           'annotate', 'is_scripting', 'is_tracing', 'Final', 'ScriptModule', 'ScriptFunction',
           'TracerWarning', 'ScriptWarning', 'save', 'load', 'freeze', 'optimize_for_inference']

Final = typing.Final


class TracerWarning(Warning):
    """What PyTorch warns with when a trace may not generalise (libraries filter it)."""


class ScriptWarning(Warning):
    pass


class ScriptModule:
    """TorchScript's module class, for ``isinstance`` checks: nothing in dynagrad is one,
    since ``script`` returns the module it is given."""


class ScriptFunction:
    """TorchScript's function class, for ``isinstance`` checks (as ``ScriptModule``)."""


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


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (a function, module or class), run eagerly: PyTorch's answer under
    ``PYTORCH_JIT=0``. Use ``dynagrad.compile`` to capture and replay a program."""
    return obj


def script_if_tracing(fn):
    return fn


def export(fn):
    """TorchScript's marker for methods to compile besides ``forward``: nothing to mark."""
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    return the_value


def _no_torchscript(name):
    raise RuntimeError(
        f'dynagrad.jit.{name}: dynagrad has no TorchScript compiler, so no TorchScript program '
        'exists to save, load or freeze. Save the state_dict with dynagrad.save, or use '
        'dynagrad.compile(fn or module) to capture and replay a program.')


def save(m, f, _extra_files=None):
    _no_torchscript('save')


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _no_torchscript('load')


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    _no_torchscript('freeze')


def optimize_for_inference(mod, other_methods=None):
    _no_torchscript('optimize_for_inference')


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

