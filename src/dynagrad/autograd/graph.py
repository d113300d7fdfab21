"""The backward graph: nodes, the edges between them, saved tensors and hooks."""
import itertools
import threading
import weakref

from .._dtype import FROM_NUMPY
from ..tensor import Tensor, legacy_type_name, method

__all__ = ['Node', 'AccumulateGrad', 'RemovableHandle']

ERR_BACKWARD_TWICE = (
    'Trying to backward through the graph a second time (or directly access saved tensors '
    'after they have already been freed). Saved intermediate values of the graph are freed '
    'when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to '
    'backward through the graph a second time or if you need to access saved tensors after '
    'calling backward.')


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook (idempotent)."""
    _ids = itertools.count()
    __slots__ = ('_hooks_ref', 'id')

    def __init__(self, hooks_dict):
        self._hooks_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        hooks = self._hooks_ref()
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

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._saved = ()


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
