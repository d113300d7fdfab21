"""Grad mode: whether ops record a graph. Thread-local, as in PyTorch."""
import functools
import inspect
import threading

from ..tensor import grad_mode as state  # the flags live with the Tensor, which reads them
from ..tensor import inference_blocks

__all__ = ['no_grad', 'enable_grad', 'set_grad_enabled', 'is_grad_enabled',
           'inference_mode', 'is_inference_mode_enabled', 'set_multithreading_enabled',
           'is_multithreading_enabled', 'enforce_grad_layout_policy', 'is_view_replay_enabled']


def is_grad_enabled():
    # grad mode as set; inside inference_mode it may be on while nothing is recorded
    return state.grad_enabled or state.grad_in_inference


def _set_grad(mode):
    """Turn grad mode on or off. Inside inference_mode PyTorch keeps its autograd off even
    with grad mode on: the mode is noted apart, so ``grad_enabled`` (what every op reads)
    stays False and the op hot path needs no extra check."""
    if state.inference:
        state.grad_in_inference = mode
    else:
        state.grad_enabled = mode


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
        self.prev = (state.grad_enabled, state.grad_in_inference)
        _set_grad(False)

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_in_inference = self.prev
        return False


class enable_grad(no_grad):
    """Turn grad mode on. Inside inference_mode nothing is recorded still, as in PyTorch."""

    def __enter__(self):
        self.prev = (state.grad_enabled, state.grad_in_inference)
        _set_grad(True)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode now; as a context manager, restore the previous mode on exit."""

    def __init__(self, mode):
        self.prev = (state.grad_enabled, state.grad_in_inference)
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_in_inference = self.prev
        return False

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        # Used as a decorator the constructor already flipped the mode: undo that.
        state.grad_enabled, state.grad_in_inference = self.prev
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and what is made inside is an inference tensor (``is_inference()``):
    outside inference mode it cannot be saved for backward, written in place or made to
    require grad; ``clone()`` gives a normal tensor. Tensors made before keep being normal."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.__init__(True)
            return self(mode)
        return self

    def __enter__(self):
        self.prev = (state.grad_enabled, state.grad_in_inference, state.inference)
        if self.mode:
            with inference_blocks.lock:
                inference_blocks.open += 1
            state.grad_enabled, state.inference = False, True
        else:   # leaving inference mode turns grad mode on, as PyTorch's does
            state.grad_enabled, state.inference = True, False
        state.grad_in_inference = False

    def __exit__(self, *exc):
        state.grad_enabled, state.grad_in_inference, state.inference = self.prev
        if self.mode:
            with inference_blocks.lock:
                inference_blocks.open -= 1
        return False

    def clone(self):
        return inference_mode(self.mode)


class _EngineFlags(threading.local):
    """Switches PyTorch's engine reads that change nothing in dynagrad's: its backward runs
    on the calling thread, gradients are laid out as NumPy gives them, and a view's
    history is always replayed from its base. Kept so programs can set and read them."""
    multithreading = True
    layout_policy = True
    view_replay = False


engine_flags = _EngineFlags()


class _FlagSetter(_DecoratorContextManager):
    """Set an engine flag now (a function call); as a context manager or decorator, restore
    the previous value on exit. Thread-local, as PyTorch's."""
    flag = None

    def __init__(self, mode=True):
        self.prev = getattr(engine_flags, self.flag)
        self.mode = bool(mode)
        setattr(engine_flags, self.flag, self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        setattr(engine_flags, self.flag, self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_FlagSetter):
    """Whether backward may run on per-device worker threads; dynagrad's always runs on the
    calling thread, so either value gives the same result."""
    flag = 'multithreading'

    def __init__(self, mode):
        super().__init__(mode)


class enforce_grad_layout_policy(_FlagSetter):
    """Whether accumulated gradients are forced into the parameter's strides; dynagrad
    keeps no stride contract for ``.grad``, so either value gives the same result."""
    flag = 'layout_policy'


def is_multithreading_enabled():
    return engine_flags.multithreading


def is_view_replay_enabled():
    """False unless changed: the flag PyTorch's ``_force_original_view_tracking`` sets."""
    return engine_flags.view_replay
