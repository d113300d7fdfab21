"""Batched tensors: what ``vmap`` hands the function it vectorises.

A ``BatchedTensor`` is a view of one ordinary ("physical") tensor whose leading dims are
batch dims, one per open ``vmap`` level, in level order. The function under ``vmap`` sees
only the rest: the logical per-sample tensor (``shape``, ``dim()``, ``dtype`` are the
sample's). An op applied to batched tensors runs once on the physical tensors, through its
batching rule (``dynagrad.func._batch_rules``), which lines the inputs' batch dims up and
rewrites the op's dim-like parameters; the result is batched again. There is no loop over
the batch and no second implementation of any op.

Autograd happens on the physical tensors: the graph of a vmapped computation is the graph
of one batched computation, so ``loss.backward()`` after a ``vmap`` works as usual, and
the transforms of ``dynagrad.func`` differentiate inside a ``vmap`` per sample (each
sample's computation is independent, so the gradient of the summed batch is every
sample's gradient; inputs not batched are given the batch dims first).

The hook in the op mechanism is one flag test at the top of ``Op.apply``/``Op.apply_``
(``state.active``), false whenever no ``vmap`` is running. What a batched tensor's
``_data`` holds is a value-less stand-in of the logical shape and dtype, so code that reads
shapes works and code that reads values without going through an op fails loudly instead
of reading one sample.
"""
import functools

import numpy as np

from ..tensor import Tensor
from .._torch_function import disabled_torch_function_impl
from . import device_dispatch

__all__ = ['BatchedTensor', 'state', 'batched', 'levels_of', 'physical']

_new = object.__new__


class _Level:
    __slots__ = ('level', 'size', 'randomness')

    def __init__(self, level, size, randomness):
        self.level = level
        self.size = size
        self.randomness = randomness


class _State:
    __slots__ = ('active', 'stack', 'counter', 'rules', 'capture', 'devices')

    def __init__(self):
        self.active = False    # some vmap level is open, a capture records, or a non-CPU
        #                        device is registered (the op mechanism's one test for all)
        self.stack = []        # the open levels, innermost last
        self.counter = 0       # levels are numbered in order of creation, never reused
        self.rules = None      # the dispatcher, installed by dynagrad.func on first use
        # dynagrad.compiler's recorder while it traces a call (it sees every op first)
        self.capture = None
        # a non-CPU device backend is registered: ops on its tensors run with the array
        # door pointed at its library (autograd.device_dispatch)
        self.devices = False


state = _State()


def _update_active():
    state.active = state.capture is not None or bool(state.stack) or state.devices


def set_device_dispatch(on):
    """Send every op past ``device_dispatch`` (on) or not (off: only the CPU is there)."""
    state.devices = on
    _update_active()


def set_capture(recorder):
    """Route every op through ``recorder.record`` (None: stop); returns the previous one."""
    previous = state.capture
    state.capture = recorder
    _update_active()
    return previous


def break_capture(reason):
    """Say that something a compiled program cannot replay happens now (an engine pass, an
    optimizer step): a ``dynagrad.compile`` capture in progress ends here and its call
    signature runs eagerly (``fullgraph=True`` raises)."""
    if state.capture is not None:
        state.capture.breaks(reason)


def enter_level(size, randomness):
    state.counter += 1
    lvl = _Level(state.counter, size, randomness)
    state.stack.append(lvl)
    state.active = True
    return lvl


def exit_level(lvl):
    state.stack.remove(lvl)
    _update_active()


def innermost():
    return state.stack[-1] if state.stack else None


# -- the value-less stand-in ----------------------------------------------------------------

# (reshape and transpose only say whether a view is possible: a stand-in still)
_SHAPE_ONLY = {np.result_type, np.shape, np.ndim, np.size, np.can_cast, np.min_scalar_type,
               np.reshape, np.transpose, np.broadcast_to, np.expand_dims}


def _refuse(what):
    raise RuntimeError(
        f'vmap: {what} read the values of a batched tensor directly, which has no batching '
        'rule (the operation would see one sample). Use dynagrad operations on the tensor, '
        'or move this code out of the vmapped function.')


class _NoValues(np.ndarray):
    """An array with a batched tensor's per-sample shape and dtype but no values."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse(f'numpy.{ufunc.__name__}')

    def __array_function__(self, func, types, args, kwargs):
        if func in _SHAPE_ONLY:
            return super().__array_function__(func, types, args, kwargs)
        _refuse(f'numpy.{func.__name__}')

    def _refused(name):
        def method(self, *args, **kwargs):
            _refuse(f'ndarray.{name}')
        method.__name__ = name
        return method

    for _name in ('__getitem__', '__setitem__', '__iter__', '__array__', '__float__',
                  '__int__', '__bool__', '__index__', 'copy', 'astype', 'tolist', 'item',
                  'tobytes', 'fill', 'take', 'put', 'nonzero', 'sort', 'argsort', 'clip',
                  'round', 'dot', 'any', 'all'):
        locals()[_name] = _refused(_name)
    del _name, _refused


_ONE_ELEMENT = {}


def _no_values(shape, dtype):
    buf = _ONE_ELEMENT.get(dtype)
    if buf is None:
        buf = _ONE_ELEMENT[dtype] = bytes(max(dtype.itemsize, 1))
    return np.ndarray.__new__(_NoValues, shape, dtype, buf, 0, (0,) * len(shape))


# -- the batched tensor ---------------------------------------------------------------------

_ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
               "over calling .item() on a Tensor, please try to rewrite what you're doing with "
               "other operations. If error is occurring somewhere inside PyTorch internals, "
               "please file a bug report.")
_CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some "
                       "data-dependent control flow. We don't support that yet, please shout "
                       "over at https://github.com/pytorch/functorch/issues/257 .")


class BatchedTensor(Tensor):
    """One sample's view of a tensor batched over the open ``vmap`` levels (see above)."""
    __slots__ = ('_phys', '_levels')
    __torch_function__ = disabled_torch_function_impl   # vmap's own, not a user subclass

    # -- autograd state lives on the physical tensor ----------------------------------------
    @property
    def requires_grad(self):
        return self._phys._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._phys.requires_grad = flag
        self._requires_grad = self._phys._requires_grad

    def requires_grad_(self, requires_grad=True):
        self._phys.requires_grad_(requires_grad)
        self._requires_grad = self._phys._requires_grad
        return self

    @property
    def grad_fn(self):
        return self._phys.grad_fn

    @property
    def is_leaf(self):
        return self._phys.is_leaf

    @property
    def grad(self):
        g = self._phys.grad
        return None if g is None else batched(g, self._levels)

    @property
    def _version(self):
        return self._phys._version

    def detach(self):
        return batched(self._phys.detach(), self._levels)

    @property
    def data(self):
        return batched(self._phys.data, self._levels)

    def retain_grad(self):
        self._phys.retain_grad()

    # -- what a per-sample function cannot do ----------------------------------------------
    def item(self):
        raise RuntimeError(_ITEM_ERROR)

    def tolist(self):
        raise RuntimeError(_ITEM_ERROR)

    def _scalar(self):
        raise RuntimeError(_ITEM_ERROR)

    def __bool__(self):
        raise RuntimeError(_CONTROL_FLOW_ERROR)

    def __index__(self):
        raise RuntimeError(_CONTROL_FLOW_ERROR)

    def numpy(self, *, force=False):
        raise RuntimeError('vmap: .numpy() of a batched tensor is not supported: the function '
                           'under vmap sees one sample, which has no array of its own. '
                           'Return the tensor from the vmapped function instead.')

    def __repr__(self):
        inner = repr(self._phys).replace('\n', '\n    ')
        return (f'BatchedTensor(lvl={self._levels[-1]}, bdim={len(self._levels) - 1}, '
                f'value=\n    {inner}\n)')


def batched(phys, levels):
    """``phys`` (its first ``len(levels)`` dims the batch dims of ``levels``) as seen by one
    sample; ``phys`` itself when ``levels`` is empty."""
    if not levels:
        return phys
    t = _new(BatchedTensor)
    t._phys = phys
    t._levels = levels
    data = phys._data
    t._data = _no_values(data.shape[len(levels):], data.dtype)
    t._requires_grad = phys._requires_grad
    t._grad_fn = None
    t._output_nr = 0
    return t


def levels_of(x):
    return x._levels if x.__class__ is BatchedTensor else ()


def physical(x):
    return x._phys if x.__class__ is BatchedTensor else x


def has_batched(values):
    """Whether any of ``values`` (or of the tuples and lists among them) is batched."""
    for x in values:
        if x.__class__ is BatchedTensor:
            return True
        if x.__class__ in (tuple, list) and has_batched(x):
            return True
    return False


def dispatch(cls, inputs, params):
    """Run ``cls`` on batched inputs through its batching rule; NotImplemented when none of
    the inputs is batched (the op runs as usual)."""
    if state.capture is not None:
        return state.capture.record(cls, inputs, params)
    for x in inputs:
        if x.__class__ is BatchedTensor:
            return state.rules.apply(cls, inputs, params)
    for v in params.values():
        if v.__class__ is BatchedTensor or (v.__class__ in (tuple, list) and has_batched(v)):
            return state.rules.apply(cls, inputs, params)
    if state.devices:
        return device_dispatch.dispatch(cls, inputs, params)
    return NotImplemented


def dispatch_inplace(cls, target, others, params):
    if state.capture is not None:
        return state.capture.record_inplace(cls, target, others, params)
    if target.__class__ is BatchedTensor or has_batched(others) or has_batched(params.values()):
        return state.rules.apply_inplace(cls, target, others, params)
    if state.devices:
        return device_dispatch.dispatch_inplace(cls, target, others, params)
    return NotImplemented


def check_random():
    """Called by every random draw: refuse it inside a vmap in 'error' randomness mode."""
    lvl = innermost()
    if lvl is not None and lvl.randomness == 'error':
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap")


def random_batch():
    """The batch dims a random draw inside vmap needs: ``(levels, sizes)`` of the open
    levels in 'different' mode (each sample draws its own), else ``((), ())``."""
    levels, sizes = [], []
    for lvl in state.stack:
        if lvl.randomness == 'different':
            levels.append(lvl.level)
            sizes.append(lvl.size)
    return tuple(levels), tuple(sizes)


def captured_whole(fn):
    """A random factory (``rand``, ``randn``...): while dynagrad.compiler captures, one
    step that draws again at every replay (an eager island), not a constant. Costs the
    factory one flag test otherwise."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if state.capture is not None:
            return state.capture.function(wrapper, fn, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


def vmap_function(strategy):
    """Give a function that reads its inputs' arrays directly (statistics, index checks) a
    batching rule of its own, ``strategy`` in ``dynagrad.func._batch_rules.FUNCTION_RULES``.
    Costs the function one flag test while no vmap is running."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if state.active:
                if state.capture is not None:       # dynagrad.compiler: an eager island
                    return state.capture.function(wrapper, fn, args, kwargs)
                if has_batched(args) or has_batched(kwargs.values()):
                    return state.rules.function(strategy, fn, args, kwargs)
                if state.devices:       # its arrays computed on their device's library
                    return device_dispatch.call(fn, args, kwargs)
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def physical_backward_args(outputs, grads, inputs):
    """``autograd.grad``/``backward`` of batched tensors, as the physical call it is: each
    batched output seeds its physical tensor (a batch of cotangents), each batched input's
    gradient comes back batched. Inside a vmap, only inputs batched like the outputs may be
    asked for (PyTorch refuses the rest; ``dynagrad.func`` batches its inputs first)."""
    if state.active:
        # As in PyTorch: inside vmap, the ordinary autograd sees no per-sample graph. A
        # gradient with respect to a tensor every sample shares would be their sum, not any
        # sample's; dynagrad.func.grad gives each sample its own copy first.
        batched_levels = {lvl for o in outputs for lvl in levels_of(o)}
        active = {lvl.level for lvl in state.stack}
        if batched_levels & active and (inputs is None or any(
                not (batched_levels & active) <= set(levels_of(x)) for x in inputs)):
            raise RuntimeError(
                'element 0 of tensors does not require grad and does not have a grad_fn '
                '(inside vmap, autograd.grad and backward() of a batched tensor work only '
                'with respect to tensors batched like it; use dynagrad.func.grad or '
                'vjp inside vmap, which batch the inputs they differentiate)')
    outs, gos = [], []
    for o, g in zip(outputs, grads):
        own = levels_of(o)
        p = physical(o)
        if g is None:
            if own and o._data.size == 1:
                g = p.new_ones(p.shape)
        else:
            gl = levels_of(g)
            pg = physical(g)
            if gl != own or tuple(pg.shape) != tuple(p.shape):
                if any(lvl not in own for lvl in gl):
                    raise RuntimeError('autograd.grad: a grad_output is batched over a vmap '
                                       'level its output is not')
                if gl:
                    lead = [pg.shape[gl.index(lvl)] if lvl in gl else 1 for lvl in own]
                    pg = pg.reshape(tuple(lead) + tuple(pg.shape[len(gl):]))
                pg = pg.expand(p.shape)
            g = pg
        outs.append(p)
        gos.append(g)
    ins = None if inputs is None else tuple(physical(x) for x in inputs)

    def rewrap(results):
        return tuple(r if r is None else batched(r, levels_of(x))
                     for r, x in zip(results, inputs))
    return tuple(outs), tuple(gos), ins, rewrap
