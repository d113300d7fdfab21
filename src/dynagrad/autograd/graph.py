"""The backward graph: nodes, the edges between them, saved tensors and hooks."""
import itertools
import threading
import weakref
from typing import NamedTuple

from .._dtype import FROM_NUMPY
from ..tensor import Tensor, bump_version, legacy_type_name, method

__all__ = ['saved_tensors_hooks', 'save_on_cpu', 'disable_saved_tensors_hooks',
           'register_multi_grad_hook', 'allow_mutation_on_saved_tensors', 'Node',
           'GradientEdge', 'get_gradient_edge', 'increment_version']

ERR_BACKWARD_TWICE = (
    'Trying to backward through the graph a second time (or directly access saved tensors '
    'after they have already been freed). Saved intermediate values of the graph are freed '
    'when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to '
    'backward through the graph a second time or if you need to access saved tensors after '
    'calling backward.')


def real_grad_as(g, dtype):
    """The gradient ``g`` (an array or a tensor) in ``dtype`` (a NumPy dtype): a complex
    gradient reaching a real tensor keeps its real part, as PyTorch defines the gradient of a
    real input of a complex computation (and without NumPy's ComplexWarning)."""
    if isinstance(g, Tensor):
        if g._data.dtype.kind == 'c' and dtype.kind != 'c':
            g = g.real
        return g if g._data.dtype == dtype else g.to(FROM_NUMPY[dtype])
    if g.dtype.kind == 'c' and dtype.kind != 'c':
        g = g.real
    return g if g.dtype == dtype else g.astype(dtype)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook (idempotent), from
    ``hooks_dict`` and from each of ``extra_dict`` (a dict or a list of them) too."""
    _ids = itertools.count()
    __slots__ = ('_hooks_ref', 'id', '_extra_refs')

    def __init__(self, hooks_dict, *, extra_dict=None):
        self._hooks_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extras = [] if extra_dict is None else \
            extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self._extra_refs = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self._hooks_ref,) + self._extra_refs:
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """A dict that can be weakly referenced by handles."""
    __slots__ = ('__weakref__',)


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    An input is kept as the tensor itself. An output is kept as its array only, and
    rebuilt on demand with this node as grad_fn: holding the output tensor would make a
    reference cycle output -> grad_fn -> output.
    """
    __slots__ = ('data', 'tensor', 'version_counter', 'version', 'output_nr', 'grad_fn',
                 'packed', 'unpack_hook', 'requires_grad')

    def __init__(self, data, tensor, version_counter, output_nr=-1):
        self.data = data
        self.tensor = tensor
        self.version_counter = version_counter
        self.version = version_counter.value
        self.output_nr = output_nr
        # The producer at save time: an in-place op may give the tensor another one later.
        self.grad_fn = tensor._grad_fn if tensor is not None else None
        if _saved_hooks.stack:
            self._pack()

    def _pack(self):
        """Hand the value to the innermost saved_tensors_hooks' pack hook; keep only what it
        returns (plus what re-attaches the value to the graph), so its memory can go."""
        pack, unpack = _saved_hooks.stack[-1]
        if pack is None:
            raise RuntimeError(unpack)  # disable_saved_tensors_hooks' message
        t = self.tensor
        self.requires_grad = t._requires_grad if t is not None else True
        value = Tensor._make(self.data, False, None, 0, self.version_counter, Tensor)
        self.packed = pack(value)
        self.unpack_hook = unpack
        self.data = None
        if t is not None and t._grad_fn is not None:
            self.tensor = None  # a leaf (a parameter) is kept: its memory is the model's

    def check_version(self, node):
        if self.version_counter.value != self.version:
            t = self.tensor
            if t is not None and self.grad_fn is not None:
                where = f', which is output {t._output_nr} of {self.grad_fn.name()},'
            elif self.output_nr >= 0:
                where = f', which is output {self.output_nr} of {node.name()},'
            else:
                where = ''
            size = ', '.join(str(d) for d in self.data.shape)
            vc = self.version_counter
            if vc.modified_by is not None:
                culprit = (f' It was last modified in place by the op recorded as '
                           f'{vc.modified_by} (e.g. `x.mul_(...)`, `x += ...`, `x[i] = ...`)')
                culprit += (f', here:\n{vc.modified_at}' if vc.modified_at else
                            '; turn on anomaly detection to see where.')
            elif vc.written_by is not None:
                culprit = (f' It was modified in place outside any recorded op, by '
                           f'{vc.written_by}.')
            else:
                culprit = (' It was modified in place outside any recorded op (an optimizer '
                           'step, .data, or a write under no_grad()).')
            raise RuntimeError(
                'one of the variables needed for gradient computation has been modified by an '
                f'inplace operation: [{legacy_type_name(self.data.dtype)} [{size}]]{where} is at '
                f'version {vc.value}; expected version {self.version} instead. '
                f'The tensor was saved by {node.name()}.{culprit} Hint: the usual fix is to '
                '.clone() the tensor before the in-place op, or to use the out-of-place op; '
                'enable anomaly detection to find the operation that failed to compute its '
                'gradient, with dynagrad.autograd.set_detect_anomaly(True).')

    def unpack(self, node, as_tensor):
        if self.data is None:
            return self._unpack_hooked(node, as_tensor)
        self.check_version(node)
        if not as_tensor:
            return self.data
        t = self.tensor
        if t is not None:
            if t._data.dtype != self.data.dtype:  # the mechanism cast this input
                return t.to(FROM_NUMPY[self.data.dtype])
            return t
        return Tensor._make(self.data, True, node, self.output_nr, self.version_counter, Tensor)


    def _unpack_hooked(self, node, as_tensor):
        """The value the unpack hook gives back (no version check, as in PyTorch)."""
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError(f'the unpack hook of saved_tensors_hooks must return a Tensor, got '
                            f'{type(value).__name__}')
        if not as_tensor:
            return value._data
        if self.tensor is not None:
            return self.tensor
        grad_fn = self.grad_fn if self.output_nr < 0 else node
        return Tensor._make(value._data, self.requires_grad and grad_fn is not None, grad_fn,
                            max(self.output_nr, 0), None, Tensor)


class _SavedHooksState(threading.local):
    def __init__(self):
        self.stack = []


_saved_hooks = _SavedHooksState()


class saved_tensors_hooks:
    """Within this context, every tensor saved for backward goes through ``pack_hook(tensor)``
    and the saved object is what it returns; backward gets ``unpack_hook(saved)`` back."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack.pop()
        return False


class disable_saved_tensors_hooks:
    """Within this context, saving a tensor for backward raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _saved_hooks.stack.append((None, self.error_message))
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's offload of saved tensors to the CPU: everything is on the CPU here already."""

    def __init__(self, pin_memory=False, device_type='cuda'):
        super().__init__(lambda t: t, lambda t: t)


class Node:
    """One node of the backward graph.

    ``next_functions`` holds one ``(node, output_nr)`` edge per input of the forward op:
    the node that produced that input (an ``AccumulateGrad`` for a leaf) or ``None`` when
    the input needs no gradient.
    """
    __slots__ = ('next_functions', '_saved', '_as_tensors', '__weakref__', '__dict__')

    _node_name = 'Node'
    # Rarely set, so they live in the instance dict on demand; these are the defaults.
    _tensor_hooks = _retain_refs = _hooks = _pre_hooks = _metadata = _trace = None
    _output_meta = None  # (shape, dtype) per output, for nodes with several outputs
    _hooked = False      # any hook or retain_grad before the node: the engine's slow path
    # whether backward takes a sparse gradient (a COO) as it is: the sparse ops and leaves
    # do; other nodes get it densified by the engine
    takes_sparse_grads = False

    def name(self):
        return self._node_name

    def __repr__(self):
        return f'<{self.name()} object at {hex(id(self))}>'

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- hooks -----------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = HookDict()
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = HookDict()
        self._hooked = True
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        self._hooked = True
        hooks = self._tensor_hooks.get(output_nr)
        if hooks is None:
            hooks = self._tensor_hooks[output_nr] = HookDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _retain_grad_of(self, output_nr, tensor):
        if self._retain_refs is None:
            self._retain_refs = {}
        self._hooked = True
        self._retain_refs[output_nr] = weakref.ref(tensor)

    # -- saved tensors -----------------------------------------------------------------
    def _release_saved(self):
        # A node that saved only constants can run again, as PyTorch's can.
        saved = self._saved
        if saved:
            for s in saved:
                if s.__class__ is SavedTensor:
                    self._saved = None
                    return

    def _unpack_saved(self, as_tensor):
        saved = self._saved
        if saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE + f' (the saved tensors of {self.name()} were '
                               'freed; if this graph reaches back into a previous iteration, '
                               'for example a recurrent state, detach() it there instead.)')
        if as_tensor:
            return [s.unpack(self, True) if s.__class__ is SavedTensor else s for s in saved]
        values = []  # the fast path, inlined: arrays, after the version check
        for s in saved:
            if s.__class__ is SavedTensor:
                data = s.data
                if data is None:
                    values.append(s._unpack_hooked(self, False))
                    continue
                if s.version_counter.value != s.version:
                    s.check_version(self)
                values.append(data)
            else:
                values.append(s)
        return values

    def __call__(self, *grads):
        """Run this node's backward directly on gradients (tensors), as PyTorch allows."""
        result = self._backward_tensors(tuple(grads))
        return result if isinstance(result, Tensor) or result is None else tuple(result)


class AccumulateGrad(Node):
    """The node that deposits a leaf's gradient into its ``.grad``."""
    __slots__ = ('variable',)
    _node_name = 'AccumulateGrad'
    takes_sparse_grads = True

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._saved = ()


# What a node that records nothing reports as its edges (no input needs grad): one shared
# tuple, so ``next_functions is NO_EDGES`` tells it at once.
NO_EDGE = (None, 0)
NO_EDGES = (NO_EDGE,) * 16


def grad_accumulator(t):
    """The AccumulateGrad node of leaf ``t``: one per leaf while the graph holds it."""
    ref = t._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = weakref.ref(acc)
    return acc


method('_grad_accumulator')(grad_accumulator)  # DDP hooks a leaf's node through it


@method()
def register_hook(self, hook):
    """``hook(grad) -> Tensor or None`` runs whenever this tensor's gradient is computed."""
    if self._volatile:
        raise RuntimeError('cannot register a hook on a volatile variable')
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        return self._grad_fn._register_tensor_hook(self._output_nr, hook)
    if self._hooks is None:
        self._hooks = HookDict()
    handle = RemovableHandle(self._hooks)
    self._hooks[handle.id] = hook
    return handle


@method()
def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor) -> None`` runs after this leaf's ``.grad`` was accumulated by a
    backward pass (not by ``autograd.grad``); the hook may read and update the tensor."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        raise RuntimeError('post accumulate grad hooks cannot be registered on non-leaf tensors')
    if self._post_acc_hooks is None:
        self._post_acc_hooks = HookDict()
    handle = RemovableHandle(self._post_acc_hooks)
    self._post_acc_hooks[handle.id] = hook
    return handle


# -- gradient edges, version bumps, hooks over several tensors --------------------------

class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: the node and which of its outputs."""
    node: Node
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The edge of the graph where ``tensor``'s gradient arrives (its AccumulateGrad node
    for a leaf)."""
    if not tensor._requires_grad:
        raise RuntimeError('It is not possible to get the gradient edge for a Tensor that does '
                           'not require gradients')
    if tensor._grad_fn is not None:
        return GradientEdge(tensor._grad_fn, tensor._output_nr)
    return GradientEdge(grad_accumulator(tensor), 0)


def increment_version(tensor):
    """Count an in-place write made behind autograd's back (through ``data_ptr()``, another
    library's kernel) into ``tensor`` or each tensor of an iterable."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        bump_version(t, 'a write announced with autograd.graph.increment_version')


class _MultiGradState:
    """The gradients one register_multi_grad_hook collects during one backward pass."""
    __slots__ = ('grads', 'pass_id', 'fired')

    def __init__(self, n):
        self.grads = [None] * n
        self.pass_id = None
        self.fired = False


class _MultiHandle:
    """Removes every per-tensor hook of one register_multi_grad_hook."""
    __slots__ = ('handles',)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode='all'):
    """``mode='all'``: ``fn(grads)`` once per backward pass that computes a gradient for any
    of ``tensors``, with one entry per tensor (None where none was computed).
    ``mode='any'``: ``fn(grad)`` with the first of their gradients computed in a pass."""
    from .engine import current_pass, queue_callback
    if mode not in ('all', 'any'):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f'register_multi_grad_hook: tensors[{i}] is a '
                            f'{type(t).__name__}, not a Tensor')
        if not t._requires_grad:
            raise RuntimeError(f'register_multi_grad_hook: tensors[{i}] does not require grad; '
                               'pass only tensors that do')
    state = _MultiGradState(len(tensors))

    def start_pass():
        pass_id = current_pass()
        if state.pass_id != pass_id:
            state.pass_id, state.fired = pass_id, False
            state.grads = [None] * len(tensors)
            if mode == 'all':
                queue_callback(lambda: fn(list(state.grads)))

    def hook_for(i):
        def hook(grad):
            start_pass()
            if mode == 'all':
                state.grads[i] = grad
            elif not state.fired:
                state.fired = True
                fn(grad)
        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])


class allow_mutation_on_saved_tensors:
    """Within this context, a tensor saved for backward may be modified in place afterwards:
    backward sees the value it had when it was saved (here every saved tensor is kept as a
    copy while the context is active; PyTorch copies on the first write)."""

    def __init__(self):
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._open = False

    def _pack(self, tensor):
        return (self, tensor.clone())

    @staticmethod
    def _unpack(packed):
        ctx, value = packed
        if not ctx._open:     # PyTorch raises an AssertionError here too
            raise AssertionError("Trying to backward outside of the 'allow_mutation_on_saved_"
                               "tensors' context in which the graph was originally recorded.")
        return value

    def __enter__(self):
        self._open = True
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._open = False
        return self._hooks.__exit__(*exc)
