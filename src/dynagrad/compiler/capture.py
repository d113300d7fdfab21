"""Capture: record the ops one eager call runs, as a tape an array-level program replays.

The recorder sits where vmap's batching rules do (``dynagrad.autograd.batched``): while it
is installed, every ``Op.apply`` reaches it first. It runs the op eagerly (so the call being
captured computes and differentiates exactly as eager does) and writes a ``Step``: the op
class that ran (its half-precision variant if any), its parameters, where each input comes
from (a slot: an input of the call, a parameter, an earlier step's output; or a constant),
the dtype casts its promotion made, which inputs needed a gradient, and the shapes and
dtypes its gradients are fitted to.

What a tape cannot replay ends the capture (a graph break) and the call finishes eagerly:
an in-place write, a value read by Python (``.item()``, ``bool(t)``, ``.tolist()``,
``.numpy()``), a tensor reaching an op without one (``.detach()``, ``.data``), autocast,
forward-mode AD or vmap inside the call.
"""
import traceback

import numpy as np

from ..autograd import batched
from ..autograd.promotion import forward_arrays
from ..autograd.graph import SavedTensor
from ..autograd.forward_ad import state as _forward_ad
from ..amp.autocast_mode import is_autocast_enabled
from ..tensor import Tensor

_PACKAGE_DIR = __file__.rsplit('/compiler/', 1)[0]


class GraphBreak(RuntimeError):
    """Raised by ``fullgraph=True`` where the capture would break (and, inside the recorder,
    to end a capture)."""


def user_line():
    """``file:line`` of the innermost frame outside dynagrad (the user's code)."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if not frame.filename.startswith(_PACKAGE_DIR):
            return f'{frame.filename}:{frame.lineno}'
    return '<unknown>'


class Step:
    """One op of a tape (see the module docstring)."""
    __slots__ = ('cls', 'params', 'refs', 'casts', 'needs', 'meta', 'outs', 'multi',
                 'real', 'inplace', 'out_meta', 'fill')

    def __init__(self, cls, params, refs, casts, needs, meta, outs, multi, real=True,
                 inplace=False):
        self.cls, self.params, self.refs, self.casts = cls, params, refs, casts
        self.needs, self.meta, self.outs, self.multi = needs, meta, outs, multi
        self.real = real        # no complex output: its gradients need no conjugation
        self.inplace = inplace  # writes its result into its first input's array
        self.out_meta = None    # (shape, dtype) of each output, as captured
        self.fill = None        # the node's _output_meta: missing gradients become zeros

    def signature(self):
        """What two captures of one program must agree on."""
        return (self.cls, comparable(self.params), self.refs, self.casts, self.needs,
                self.meta, self.outs, self.multi, self.inplace)


def comparable(value):
    if isinstance(value, dict):
        return tuple((k, comparable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(comparable(v) for v in value)
    if isinstance(value, np.ndarray):
        return ('array', value.shape, str(value.dtype), value.tobytes())
    if isinstance(value, Tensor):
        return ('tensor', comparable(value._data))
    return value


# The Tensor methods that hand a value to Python: each ends a capture (the program could not
# replay the decision Python takes on it).
_VALUE_READS = ('item', 'tolist', 'numpy', '__bool__', '__float__', '__int__', '__index__',
                '__array__', '__complex__')


# What a replay would not repeat: tensor methods with effects beyond computing a value, and
# attributes written from Python. Each ends a capture too.
_EFFECTS = ('register_hook', 'register_post_accumulate_grad_hook', 'retain_grad',
            'requires_grad_')
_WRITTEN = ('grad', 'data', 'requires_grad')


def _owner(name):
    return next(c for c in Tensor.__mro__ if name in c.__dict__)


class Recorder:
    """Records one call. ``known`` maps id(tensor) -> slot for the call's inputs and the
    module's parameters and buffers (slots 0..n-1)."""

    def __init__(self, known, fullgraph, n_inputs=None):
        self.known = dict(known)
        self.arrays = {}                 # slot -> the array it held in this call (inputs)
        # (a tensor passed twice has one entry in ``known`` but two input slots)
        self.n_slots = len(known) if n_inputs is None else n_inputs
        self.n_inputs = self.n_slots
        self.steps = []
        self.constants = []
        self.constant_versions = []      # (version counter, value) of each constant's source
        self.keep = []                   # tensors whose ids are in ``known``: kept alive
        self.fullgraph = fullgraph
        self.broken = None               # the reason and place the capture ended, if it did
        self._patched = {}
        # leaves requiring grad the call reads without taking them as arguments (a closure's
        # or a global's parameters): inputs of the program too, read afresh at every call
        self.lifted = []
        self.lifted_ids = {}
        self.eager_nodes = []            # the graph nodes the captured call recorded

    # -- installing ------------------------------------------------------------------------
    def __enter__(self):
        self.previous = batched.set_capture(self)
        methods = [(name, 'hands a value to Python') for name in _VALUE_READS
                   if name in Tensor.__dict__]
        methods += [(name, 'has an effect a replay would not repeat') for name in _EFFECTS]
        for name, why in methods:
            owner = _owner(name)
            original = owner.__dict__[name]
            self._patched[owner, name] = original
            setattr(owner, name, self._reading(name, original, f'Tensor.{name}() {why}'))
        for name in _WRITTEN:
            owner = _owner(name)
            prop = owner.__dict__[name]
            self._patched[owner, name] = prop
            setattr(owner, name, property(prop.fget, self._reading(
                name, prop.fset, f'Tensor.{name} is assigned (a replay would not repeat '
                                 'it)'), prop.fdel))
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def finish(self):
        """After the call: drop what only the capture needed (the tensors kept so their ids
        stay unique, the arrays checked for sharing, the eager graph's nodes), so a tape
        kept for later comparison holds no activations."""
        self.keep = []
        self.arrays = {}
        self.eager_nodes = []

    def stop(self):
        if batched.state.capture is self:
            batched.set_capture(self.previous if self.previous is not self else None)
        for (owner, name), original in self._patched.items():
            setattr(owner, name, original)
        self._patched = {}

    def _reading(self, name, original, reason):
        recorder = self

        def read(tensor, *args, **kwargs):
            if batched.state.capture is recorder:
                recorder.breaks(reason)
            return original(tensor, *args, **kwargs)
        read.__name__ = name
        return read

    def breaks(self, reason):
        """End the capture here: the rest of the call runs eagerly."""
        where = user_line()
        self.broken = f'{reason} (at {where})'
        self.stop()
        if self.fullgraph:
            raise GraphBreak(f'dynagrad.compile(fullgraph=True): the call cannot be captured '
                             f'whole: {self.broken}')

    # -- recording ---------------------------------------------------------------------------
    def _ref(self, x):
        if not isinstance(x, Tensor):
            return ('v', x)
        slot = self.known.get(id(x))
        if slot is not None:
            return ('s', slot)
        if x._requires_grad and x._grad_fn is None:
            index = self.lifted_ids.get(id(x))
            if index is None:
                index = self.lifted_ids[id(x)] = len(self.lifted)
                self.lifted.append(x)
            return ('p', index)
        data = x._data
        for array in self.arrays.values():
            if np.may_share_memory(data, array):
                raise _Unreplayable('a tensor reached an op without one (.detach(), .data or '
                                    'a view made outside the ops)')
        self.constants.append(data.copy())
        # a tensor made before the call (a module's plain tensor attribute, a global) may be
        # written in place later: the program checks its version at every call
        vc = x._vc
        self.constant_versions.append((vc, vc.value))
        return ('c', len(self.constants) - 1)

    def record(self, cls, inputs, params):
        if is_autocast_enabled('cpu') or _forward_ad.propagate or batched.state.stack:
            self.breaks('autocast, forward-mode AD or vmap inside the call')
            return cls.apply(*inputs, **params)
        try:
            variant, arrays = forward_arrays(cls, inputs)
            # a number enters as promotion made it (1 -> 1.0 beside a float tensor)
            refs = tuple(self._ref(x) if isinstance(x, Tensor) else ('v', a)
                         for x, a in zip(inputs, arrays))
        except _Unreplayable as e:
            self.breaks(str(e))
            return cls.apply(*inputs, **params)
        batched.set_capture(None)
        try:
            out = cls.apply(*inputs, **params)
        finally:
            if self.broken is None:
                batched.set_capture(self)
        casts = tuple(a.dtype if isinstance(x, Tensor) and a.dtype != x._data.dtype else None
                      for x, a in zip(inputs, arrays))
        outputs = out if isinstance(out, tuple) else (out,)
        node = next((o._grad_fn for o in outputs
                     if isinstance(o, Tensor) and o._grad_fn is not None), None)
        fill = None
        if node is not None and isinstance(node, cls):   # the op recorded a node
            needs = tuple(e[0] is not None for e in node.next_functions)
            meta = node._input_meta
            fill = getattr(node, '_output_meta', None)
            self.eager_nodes.append(node)
        else:
            needs = meta = None
        slots = []
        for o in outputs:
            if isinstance(o, Tensor):
                self.known[id(o)] = self.n_slots
                self.arrays[self.n_slots] = o._data
                self.keep.append(o)
                slots.append(self.n_slots)
                self.n_slots += 1
            else:
                slots.append(None)
        real = all(o._data.dtype.kind != 'c' for o in outputs if isinstance(o, Tensor))
        self.steps.append(Step(variant, dict(params), refs, casts, needs, meta, tuple(slots),
                               isinstance(out, tuple), real))
        self.steps[-1].out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                                        else None for o in outputs)
        self.steps[-1].fill = fill
        return out

    def record_inplace(self, cls, target, others, params):
        """An in-place op writing a tensor the program knows (an argument, a parameter or
        buffer, an op's result) that is not a view and has no views: replayed as a write
        into the same array. Writes through views (whose histories PyTorch rebuilds) end the
        capture."""
        inputs = (target,) + others
        slot = self.known.get(id(target))
        problem = None
        if is_autocast_enabled('cpu') or _forward_ad.propagate or batched.state.stack:
            problem = 'autocast, forward-mode AD or vmap inside the call'
        elif slot is None or target._base is not None or any(
                t._base is target for t in self.keep):
            problem = (f'an in-place op ({cls._node_name}) on a view, a tensor with views or '
                       'one made outside the ops')
        elif self._saved_by_earlier_op(target):
            # eager's version check would refuse the backward; a replay has no such check
            problem = (f'an in-place op ({cls._node_name}) on a tensor an earlier op saved '
                       'for backward')
        if problem is None:
            try:
                variant, arrays = forward_arrays(cls, inputs)
                refs = tuple(self._ref(x) if isinstance(x, Tensor) else ('v', a)
                             for x, a in zip(inputs, arrays))
            except _Unreplayable as e:
                problem = str(e)
            else:
                if arrays[0] is not target._data:
                    problem = f'an in-place op ({cls._node_name}) that casts its target'
        if problem is not None:
            self.breaks(problem)
            return cls.apply_(target, *others, **params)
        batched.set_capture(None)
        try:
            out = cls.apply_(target, *others, **params)
        finally:
            if self.broken is None:
                batched.set_capture(self)
        casts = tuple(a.dtype if isinstance(x, Tensor) and a.dtype != x._data.dtype else None
                      for x, a in zip(inputs, arrays))
        node = target._grad_fn
        if node is not None and isinstance(node, cls):
            needs = tuple(e[0] is not None for e in node.next_functions)
            meta = node._input_meta
            self.eager_nodes.append(node)
        else:
            needs = meta = None
        self.keep.append(target)
        new_slot = self.known[id(target)] = self.n_slots
        self.arrays[new_slot] = target._data
        self.n_slots += 1
        self.steps.append(Step(variant, dict(params), refs, casts, needs, meta, (new_slot,),
                               False, target._data.dtype.kind != 'c', inplace=True))
        self.steps[-1].out_meta = ((target._data.shape, target._data.dtype),)
        return out

    def _saved_by_earlier_op(self, target):
        vc = target._vc
        for node in self.eager_nodes:
            for s in node._saved or ():
                if s.__class__ is SavedTensor and s.version_counter is vc:
                    return True
        return False

    def function(self, wrapper, fn, args, kwargs):
        """A value-reading function called during the capture: an eager island, unless the
        function has a capture rule (``_capture_rule``: the same computation as recorded ops
        that check the values themselves) for these arguments."""
        rule = getattr(wrapper, '_capture_rule', None)
        if rule is not None:
            out = rule(*args, **kwargs)
            if out is not None:
                return out
        leaves = []
        treedef = flatten((args, kwargs), leaves)
        try:
            refs = tuple(self._ref(t) for t in leaves)
        except _Unreplayable as e:
            self.breaks(str(e))
            return fn(*args, **kwargs)
        batched.set_capture(None)
        try:
            out = fn(*args, **kwargs)
        finally:
            if self.broken is None:
                batched.set_capture(self)
        if self.broken is not None:
            return out
        outs = []
        flatten(out, outs)
        slots = []
        for o in outs:
            self.known[id(o)] = self.n_slots
            self.arrays[self.n_slots] = o._data
            self.keep.append(o)
            slots.append(self.n_slots)
            self.n_slots += 1
        from ..autograd.grad_mode import is_grad_enabled
        needs = tuple(is_grad_enabled() and t._requires_grad for t in leaves)
        self.steps.append(Step(Island, {'fn': fn, 'treedef': treedef}, refs,
                               (None,) * len(refs), needs if any(needs) else None, None,
                               tuple(slots), len(outs) != 1,
                               all(o._data.dtype.kind != 'c' for o in outs)))
        self.steps[-1].out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
        return out

    def output_ref(self, x):
        try:
            return self._ref(x)
        except _Unreplayable as e:
            self.breaks(str(e))
            return None


class _Unreplayable(Exception):
    pass


# -- eager islands ------------------------------------------------------------------------------
# A function that reads its inputs' values before it reaches an op (a dropout mask drawn, an
# index read, a class target checked: the functions vmap marks with ``vmap_function``) would
# bake those values into a tape. It is recorded as one step instead, which calls the function
# eagerly at every replay (on tensors made of the step's input arrays) and differentiates
# through the small graph that call made.

def flatten(obj, leaves):
    """(treedef, leaves) of nested tuples/lists/dicts with tensors (or anything) at leaves."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ('T',)
    if isinstance(obj, (tuple, list)) and not hasattr(obj, '_fields'):
        return (type(obj), tuple(flatten(o, leaves) for o in obj))
    if isinstance(obj, dict):
        return (type(obj), tuple((k, flatten(v, leaves)) for k, v in obj.items()))
    return ('V', obj)


def unflatten(treedef, leaves):
    it = iter(leaves)

    def build(d):
        kind = d[0]
        if kind == 'T':
            return next(it)
        if kind == 'V':
            return d[1]
        if issubclass(kind, dict):
            return kind((k, build(v)) for k, v in d[1])
        if hasattr(kind, '_make'):
            return kind._make(build(v) for v in d[1])
        return kind(build(v) for v in d[1])
    return build(treedef)


class Island:
    """A step calling a function eagerly (see above); built like an op node by the
    generated code: ``forward`` on the input arrays, ``_run_backward`` on the gradients."""
    _node_name = 'EagerIsland'
    __qualname__ = 'Island'

    def forward(self, *arrays, fn, treedef):
        from ..autograd.grad_mode import set_grad_enabled
        from ..tensor import wrap
        needed = [e[0] is not None for e in self.next_functions[:len(arrays)]]
        tensors = [wrap(a).requires_grad_() if need else wrap(a)
                   for a, need in zip(arrays, needed)]
        args, kwargs = unflatten(treedef, tensors)
        with set_grad_enabled(any(needed)):
            out = fn(*args, **kwargs)
        outs = []
        flatten(out, outs)
        self._saved = (tensors, outs)
        arrays_out = tuple(o._data for o in outs)
        return arrays_out if len(arrays_out) != 1 else arrays_out[0]

    def _run_backward(self, grads, as_tensors):
        from ..autograd import grad
        from ..tensor import wrap
        tensors, outs = self._saved
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o._requires_grad]
        wrt = [t for t in tensors if t._requires_grad]
        if not pairs or not wrt:
            return (None,) * len(tensors)
        found = iter(grad([o for o, _ in pairs], wrt, [wrap(g) for _, g in pairs],
                          allow_unused=True))
        return tuple((lambda g: None if g is None else g._data)(next(found))
                     if t._requires_grad else None for t in tensors)


def is_capturing():
    return batched.state.capture is not None


__all__ = ['GraphBreak', 'Recorder', 'Step', 'comparable', 'is_capturing']
