"""``dynagrad.overrides``: PyTorch's helpers for the ``__torch_function__`` protocol (the
mechanism itself is ``dynagrad._torch_function``).

``handle_torch_function`` and the ``has_torch_function*`` checks let a library's own
functions dispatch like dynagrad's; ``TorchFunctionMode`` intercepts every call made
while it is active."""
import functools

from . import _torch_function as _tf
from .tensor import Tensor

__all__ = ['get_ignored_functions', 'get_overridable_functions', 'get_testing_overrides',
           'handle_torch_function', 'has_torch_function', 'resolve_name', 'is_tensor_like',
           'is_tensor_method_or_property', 'wrap_torch_function', 'enable_reentrant_dispatch',
           'TorchFunctionMode', 'BaseTorchFunctionMode', 'has_torch_function_unary',
           'has_torch_function_variadic']


def is_tensor_like(inp):
    """Whether ``inp`` is a Tensor, or a Tensor-like object whose type defines
    ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, '__torch_function__')


def _has(args):
    st = _tf.state
    if not st.subclasses:
        return False
    if st.stack and st.modes_on:
        return True
    return _tf.overloaded_args(args) is not None


def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` (an iterable) overloads ``__torch_function__``, or a
    mode is active."""
    return _has(tuple(relevant_args))


def has_torch_function_unary(arg):
    return _has((arg,))


def has_torch_function_variadic(*args):
    return _has(args)


def _get_overloaded_args(relevant_args, get_type_fn=None):
    return _tf.overloaded_args(tuple(relevant_args), plain=True) or []


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Dispatch ``public_api(*args, **kwargs)`` to the active mode or the overloaded
    arguments among ``relevant_args``; what the first of them that implements it returns."""
    if not _tf.installed:
        _tf.install()
    found = (_tf.overloaded_args(tuple(relevant_args), plain=True) if _tf.state.subclasses
             else None)
    name = f'{public_api.__module__}.{public_api.__name__}'
    return _tf.dispatch(public_api, found, args, kwargs, name)


def wrap_torch_function(dispatcher):
    """Decorator: the function dispatches on the arguments ``dispatcher(*args, **kwargs)``
    returns."""
    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return decorate


def is_tensor_method_or_property(func):
    """Whether ``func`` is a Tensor method or property getter (its first argument is the
    tensor)."""
    if getattr(func, '__self__', None) is not None and hasattr(func, '__objclass__'):
        return func.__objclass__ is Tensor          # a property's __get__
    name = getattr(func, '__name__', None)
    return name is not None and getattr(Tensor, name, None) is func or any(
        v is func for v in vars(Tensor).values())


def get_ignored_functions():
    """The public functions and Tensor methods that never dispatch (factories, the
    machinery's own)."""
    import dynagrad
    found = {getattr(dynagrad, n) for n in _tf.IGNORED_NAMES
             if callable(getattr(dynagrad, n, None)) and _hashable(getattr(dynagrad, n))}
    found.update(v for n, v in vars(Tensor).items()
                 if n in _tf.TENSOR_IGNORED and callable(v) and _hashable(v))
    return found


def _hashable(v):
    try:
        hash(v)
    except TypeError:
        return False
    return True


def get_overridable_functions():
    """``{namespace: [functions]}`` of the functions that dispatch to
    ``__torch_function__``."""
    import importlib
    result = {}
    for module_name, _ in _tf.NAMESPACES:
        module = importlib.import_module(module_name)
        result[module] = [v for n, v in vars(module).items()
                          if not n.startswith('_') and n not in _tf.IGNORED_NAMES
                          and callable(v) and not isinstance(v, type)
                          and getattr(v, '__module__', '').startswith('dynagrad')]
    result[Tensor] = [v for n, v in _tf._tensor_members()
                      if callable(v) and not isinstance(v, type) and n not in _tf.TENSOR_IGNORED]
    return result


def get_testing_overrides():
    """``{function: dummy}``: a stand-in accepting the same arguments for each overridable
    function (for testing a ``__torch_function__`` implementation against all of them)."""
    import inspect
    result = {}
    for funcs in get_overridable_functions().values():
        for fn in funcs:
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue

            def dummy(*args, __sig=sig, **kwargs):
                __sig.bind(*args, **kwargs)
                return -1
            dummy.__signature__ = sig
            result[fn] = dummy
    return result


def resolve_name(f):
    """``'dynagrad.add'``-style name of a public function or Tensor method, or None."""
    if is_tensor_method_or_property(f):
        return f'dynagrad.Tensor.{f.__name__}'
    module = getattr(f, '__module__', None)
    name = getattr(f, '__name__', None)
    return f'{module}.{name}' if module and name else None


class TorchFunctionMode:
    """Subclass and define ``__torch_function__(self, func, types, args=(), kwargs=None)``;
    ``with mode:`` routes every dynagrad call through it (innermost mode first; inside its
    own ``__torch_function__`` the mode is not active)."""
    inner = None
    is_torch_function_mode = True     # a mode's class alone leaves the dispatch uninstalled

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        raise RuntimeError('TorchFunctionMode.push is no longer supported; use `with mode:`')


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (subclass it to watch calls)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode):
    if not _tf.installed:
        _tf.install()
    _tf.state.stack = _tf.state.stack + (mode,)
    _tf.modes.entered += 1


def _pop_mode():
    stack = _tf.state.stack
    if not stack:
        raise RuntimeError('Trying to pop from an empty mode stack')
    _tf.state.stack = stack[:-1]
    _tf.modes.entered -= 1
    return stack[-1]


def _get_current_function_mode():
    stack = _tf.state.stack
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    return list(_tf.state.stack)


class _pop_mode_temporarily:
    def __enter__(self):
        self._mode = _pop_mode()
        return self._mode

    def __exit__(self, *exc):
        _push_mode(self._mode)


def _is_torch_function_mode_enabled():
    return _tf.mode_active()


class enable_reentrant_dispatch:
    """Kept for PyTorch's API: dynagrad has no dispatcher below Python to re-enter."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

