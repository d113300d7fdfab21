"""Grad mode: whether ops record a graph. Thread-local, as in PyTorch."""
import functools
import inspect

from ..tensor import grad_mode as state  # the flags live with the Tensor, which reads them

__all__ = ['no_grad', 'enable_grad', 'set_grad_enabled', 'is_grad_enabled',
           'inference_mode', 'is_inference_mode_enabled']


def is_grad_enabled():
    return state.grad_enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                while True:
                    with self.clone():
                        try:
                            item = next(gen)
                        except StopIteration as stop:
                            return stop.value
                    yield item
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable graph recording: results have requires_grad=False and no grad_fn."""

    def __init__(self, orig_func=None):
        # Allow the common mistake `@no_grad` without parentheses, as PyTorch does.
        self._orig_func = orig_func

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):
            self.__init__()
            return self(orig_func)
        return self

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev
        return False


class enable_grad(no_grad):
    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode now; as a context manager, restore the previous mode on exit."""

    def __init__(self, mode):
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.grad_enabled = self.prev
        return False

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        # Used as a decorator the constructor already flipped the mode: undo that.
        state.grad_enabled = self.prev
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """Like no_grad; dynagrad keeps no view or version bookkeeping to skip beyond that."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.__init__(True)
            return self(mode)
        return self

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True
        else:
            state.inference = False

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev
        return False

    def clone(self):
        return inference_mode(self.mode)
