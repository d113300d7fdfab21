"""How an op is declared and run: the one mechanism behind every differentiable op.

A built-in op is a subclass of ``Op`` holding its forward and its backward side by side::

    class Exp(Op):
        def forward(self, x):              # NumPy arrays in, an array out
            y = xp.exp(x)
            self.save_for_backward(y)
            return y

        def backward(self, gy):            # the chain rule, one formula
            y, = self.saved_tensors
            return gy * y

``backward`` is written only with operations that NumPy arrays and dynagrad tensors
share (operators, and the helpers of ``dynagrad.ops.formula``). The engine feeds it
arrays, which is fast, unless ``create_graph=True``: then it feeds tensors with grad
mode on, so the same formula records its own graph and higher derivatives come free.

The mechanism does the shared work once: it skips the graph when nothing needs a
gradient, builds the edges, resolves saved arrays to the tensors they came from (and
checks their versions at backward), sums gradients back over broadcast dimensions,
casts them to each input's dtype, and runs in-place variants safely.

``Function`` is PyTorch's custom-op API (static ``forward(ctx, ...)`` and
``backward(ctx, ...)``) on the same graph.
"""
import functools

import numpy as np

from .. import _dtype
from ..backend import fp_errors_off, fp_errors_restore, xp
from ..tensor import Tensor, VersionCounter, bump_version, legacy, wrap  # noqa: F401
from .graph import Node, SavedTensor, grad_accumulator
from .variable import Variable
from .grad_mode import state as _grad_state
from .anomaly import state as _anomaly, note_forward, capture_stack

__all__ = ['Op', 'Function', 'FunctionCtx', 'once_differentiable', 'VersionCounter']

_ndarray = np.ndarray
_new = object.__new__
def _edge(t):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)


_NO_EDGE = (None, 0)
_NO_EDGES = (_NO_EDGE,) * 16  # what a node that records nothing reports: no input needs grad
_NONE_NEEDED = (False,) * 16
_VARIANTS = {}   # (op class, node name) -> the op's subclass recording that name (Op.named)


class Op(Node):
    """Base class of built-in differentiable ops. See the module docstring."""
    is_view = False        # the output shares storage (and version counter) with input 0
    float_result = False   # integer inputs are computed in the default float dtype
    promotes = False       # tensor inputs are cast to PyTorch's common dtype first
    differentiable = True  # False for ops with integer or boolean results
    guards_leaves = False  # a non-differentiable in-place op still refuses grad leaves (eq_)
    # The forward can turn finite inputs into inf or nan (log(0), 1/0, exp(1000), 1e200**2):
    # run it with NumPy's floating-point warnings off, since PyTorch never warns there.
    # Off by default so ops that cannot (shape, indexing, comparison) pay nothing.
    quiet_fp = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.quiet_fp and 'forward' in cls.__dict__:
            cls.forward = _fp_quiet(cls.__dict__['forward'])
        # 0: no dtype rule; 1: integer inputs go float; 2: PyTorch's promotion.
        cls._casts = 2 if cls.promotes else 1 if cls.float_result else 0
        if 'node_name' in cls.__dict__:
            cls._node_name = cls.node_name
        else:
            cls._node_name = cls.__name__ + 'Backward0'
        # type(t.grad_fn).__name__ is PyTorch's node name (MulBackward0), as programs that
        # dispatch on it expect; __qualname__ keeps the op's own name (ops.arithmetic.Mul).
        cls.__name__ = cls._node_name

    @classmethod
    def named(cls, node_name):
        """This op recording its node as ``node_name``.

        A node's name is always a class attribute. Where PyTorch's name depends on the call
        (a scalar operand, in place, which kernel it dispatches to), the caller picks the
        variant: a subclass made once per name, differing in nothing else.
        """
        if cls._node_name == node_name:
            return cls
        variant = _VARIANTS.get((cls, node_name))
        if variant is None:
            variant = type(cls.__name__, (cls,), {
                'node_name': node_name, '__module__': cls.__module__,
                '__qualname__': cls.__qualname__, '__doc__': cls.__doc__})
            _VARIANTS[(cls, node_name)] = variant
        return variant

    # -- what an op writes ---------------------------------------------------------------
    def forward(self, *arrays, **params):
        raise NotImplementedError(f'{type(self).__name__} must implement forward')

    def backward(self, *grad_outputs):
        raise NotImplementedError(f'{type(self).__name__} does not support backward')

    def save_for_backward(self, *values):
        self._saved = values

    @property
    def saved_tensors(self):
        return self._unpack_saved(self._as_tensors)

    @property
    def needs_input_grad(self):
        """One flag per input: does it need a gradient? Valid in forward too."""
        edges = self.next_functions
        if edges is _NO_EDGES:
            return _NONE_NEEDED
        return [e[0] is not None for e in edges]

    # -- running forward -------------------------------------------------------------------
    @classmethod
    def apply(cls, *inputs, **params):
        """Run the op on tensors (and Python scalars); record a node if a gradient is needed."""
        # The hot path of every op: kept flat, the rare cases pushed into helpers.
        record = False
        grad_on = _grad_state.grad_enabled
        if grad_on and cls.differentiable:
            arrays = []
            edges = []
            for x in inputs:
                if isinstance(x, Tensor):
                    arrays.append(x._data)
                    if x._requires_grad:
                        record = True
                        fn = x._grad_fn
                        edges.append((fn, x._output_nr) if fn is not None
                                     else (grad_accumulator(x), 0))
                        continue
                else:
                    arrays.append(x)
                edges.append(_NO_EDGE)
        else:
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        casts = cls._casts
        if casts:
            cast_meta = _promote(cls, inputs, arrays) if (
                casts == 2 and not _same_float_dtype(arrays)
                or casts == 1 and arrays[0].dtype.kind != 'f') else None
        else:
            cast_meta = None
        out_cls = Tensor
        if legacy.active:
            out_cls, volatile = _legacy_flags(inputs)
            if volatile:
                return _volatile_result(cls, arrays, params, out_cls)

        node = _new(cls)
        node._saved = ()
        node.next_functions = tuple(edges) if record else _NO_EDGES
        try:
            out = node.forward(*arrays, **params) if params else node.forward(*arrays)
        except ValueError as e:
            raise _as_runtime_error(cls, arrays, e) from None
        if out.__class__ is not _ndarray:
            if out.__class__ is tuple:
                return _wrap_outputs(node, inputs, arrays, out, record, out_cls, params)
            result = xp.asarray(out)
        else:
            result = out
        if record:
            if cast_meta:
                node._input_meta = _input_meta(inputs, arrays, result.shape, cast_meta)
            elif len(arrays) > 1:  # broadcasting: gradients are summed back to each shape
                shape = result.shape
                for a in arrays:
                    if a.__class__ is _ndarray and a.shape != shape:
                        node._input_meta = _input_meta(inputs, arrays, shape, None)
                        break
            t = _new(out_cls)  # Tensor._make, inlined: this is the hot path of every op
            t._data = result
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = 0
            if _anomaly.enabled:
                note_forward(node, arrays, result)
            saved = node._saved
            if saved:
                if saved.__class__ is tuple and len(saved) == 1 and saved[0] is out:
                    node._saved = (SavedTensor(result, None, t._vc, 0),)  # exp, tanh, ...
                else:
                    node._saved = _resolve_saved(saved, inputs, arrays, out, t)
        else:
            t = _new(out_cls)
            t._data = result
            t._requires_grad = False
            t._grad_fn = None
            # -1 marks "computed while grad mode was off", for the error message of a
            # backward() that finds no graph (the output_nr property still says 0).
            t._output_nr = 0 if grad_on else -1
        if cls.is_view:
            _make_view(t, inputs[0], cls, params)
        return t

    @classmethod
    def run(cls, *inputs, **params):
        """Run the op inside a backward formula: on arrays its forward alone (the fast path,
        nothing recorded), on tensors ``apply`` (recorded, so its own backward gives the next
        order of derivative)."""
        for x in inputs:
            if isinstance(x, Tensor):
                return cls.apply(*inputs, **params)
        node = _new(cls)
        node._saved = ()
        node.next_functions = _NO_EDGES
        return node.forward(*inputs, **params)

    @classmethod
    def apply_(cls, target, *others, **params):
        """The in-place variant: write the result into ``target`` and rewrite its history."""
        inputs = (target,) + others
        grad_on = _grad_state.grad_enabled
        record = grad_on and cls.differentiable and target._data.dtype.kind == 'f' and any(
            isinstance(x, Tensor) and x._requires_grad for x in inputs)
        if grad_on and target._requires_grad and (cls.differentiable or cls.guards_leaves):
            _check_inplace_allowed(target)
        if legacy.active:
            _, volatile = _legacy_flags(inputs)
            record = record and not volatile
        else:
            volatile = False
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        cast_meta = _promote(cls, inputs, arrays) if cls._casts else None
        node = _new(cls)
        node._saved = ()
        node.next_functions = tuple(_edge(x) if isinstance(x, Tensor) and x._requires_grad
                                    else _NO_EDGE for x in inputs) if record else _NO_EDGES
        try:
            out = node.forward(*arrays, **params)
        except ValueError as e:
            raise _as_runtime_error(cls, arrays, e) from None
        result = out if out.__class__ is _ndarray else xp.asarray(out)
        _check_inplace_result(cls, target, result)

        if record:
            node._input_meta = _input_meta(inputs, arrays, result.shape, cast_meta)
            if node._saved:
                # Saved values of the target must be its value before the write.
                old = None
                if any(s is arrays[0] for s in node._saved):
                    old = Tensor._make(target._data.copy(), target._requires_grad,
                                       target._grad_fn, target._output_nr, None, Tensor)
                    arrays[0] = old._data
                    node._saved = tuple(old._data if s is target._data else s for s in node._saved)
                resolved_inputs = (old if old is not None else target,) + others
        target._data[...] = result
        vc = target._vc
        vc.value += 1
        vc.modified_by = cls._node_name
        vc.modified_at = capture_stack() if _anomaly.enabled else None
        vc.written_by = None
        if volatile:  # 0.3: writing a volatile value makes the target (and its base) volatile
            target._volatile = True
            if target._base is not None:
                target._base._volatile = True
        if record:
            if _anomaly.enabled:
                note_forward(node, arrays, result)
            if node._saved:
                node._saved = _resolve_saved(node._saved, resolved_inputs, arrays, out, target)
            _rebase_history(target, node)
        return target

    # -- running backward (called by the engine) ---------------------------------------
    def _run_backward(self, grads, as_tensors):
        self._as_tensors = as_tensors
        result = self.backward(*grads)
        if result.__class__ is not tuple:
            result = (result,)
        meta = self._input_meta
        if meta is not None:
            result = tuple(_fit_grad(g, m) for g, m in zip(result, meta))
        return result

    def _backward_tensors(self, grads):
        return self._run_backward(grads, True)


Op._input_meta = None


def _fp_quiet(forward):
    @functools.wraps(forward)
    def quiet_forward(self, *args, **kwargs):
        state = fp_errors_off()
        try:
            return forward(self, *args, **kwargs)
        finally:
            fp_errors_restore(state)
    return quiet_forward


def is_array(x):
    """True for an array (a backward formula's fast path), False for a tensor."""
    return not hasattr(x, '_data')


def sum_to(g, shape):
    """Sum ``g`` (array or tensor) over the dimensions broadcasting added to reach it from
    ``shape``: the gradient of a broadcast input."""
    if g.shape == shape:
        return g
    if g.ndim < len(shape):  # shape has extra leading size-1 dims (copy_ drops them)
        return g.reshape(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = g.sum(axes)
    return g.reshape(shape)


def _as_runtime_error(cls, arrays, error):
    """NumPy's ValueError for bad input, as PyTorch's RuntimeError naming the op and shapes."""
    shapes = [a.shape for a in arrays if a.__class__ is _ndarray]
    op = cls._node_name[:-9].lower() if cls._node_name.endswith('Backward0') else cls.__name__
    if len(shapes) >= 2 and 'broadcast' in str(error):
        a, b = shapes[0], shapes[1]
        for k in range(1, min(len(a), len(b)) + 1):
            if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                dim = max(len(a), len(b)) - k
                return RuntimeError(f'The size of tensor a ({a[-k]}) must match the size of '
                                    f'tensor b ({b[-k]}) at non-singleton dimension {dim} '
                                    f'({op}: shapes {list(a)} and {list(b)})')
    described = ', '.join(f'{list(a.shape)} {a.dtype}' for a in arrays if a.__class__ is _ndarray)
    return RuntimeError(f'{op}: {error} (inputs: {described})')


def _check_inplace_allowed(target):
    multi = target._multi_view_of
    if multi is not None:
        raise RuntimeError(
            f'Output {target._output_nr} of {multi} is a view and is being modified inplace. '
            'This view is the output of a function that returns multiple views. Such functions '
            'do not allow the output views to be modified inplace. You should replace the '
            'inplace operation by an out-of-place one (or .clone() the output first).')
    if target._grad_fn is None:
        raise RuntimeError('a leaf Variable that requires grad is being used in an in-place '
                           'operation. (Wrap the update in `with dynagrad.no_grad():`, as '
                           'optimizers do, or operate on a .clone().)')
    base = target._base
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError('a view of a leaf Variable that requires grad is being used in an '
                           'in-place operation. (Wrap the update in `with dynagrad.no_grad():`, '
                           'or operate on a .clone().)')


def _check_inplace_result(cls, target, result):
    tdata = target._data
    if result.shape != tdata.shape:
        raise RuntimeError(
            f'{cls._node_name[:-9].lower()}_: output with shape {list(tdata.shape)} doesn\'t '
            f'match the broadcast shape {list(result.shape)}')
    if result.dtype != tdata.dtype:
        rd, td = _dtype.FROM_NUMPY[result.dtype], _dtype.FROM_NUMPY[tdata.dtype]
        if rd.category > td.category:
            raise RuntimeError(
                f"result type {_TYPE_NAMES[rd.category]} can't be cast to the desired output "
                f'type {td.legacy_name[:-6]}')


_TYPE_NAMES = {0: 'Bool', 1: 'Long', 2: 'Float'}


def _rebase_history(target, node):
    """After an in-place op recorded ``node``, make it ``target``'s history."""
    base = target._base
    if base is None:
        target._grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
        return
    from .views import CopySlices, replay_view  # views.py builds on this module
    copy_node = CopySlices._make(base, target._view_fn, node)
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = True
    regenerated = replay_view(base, target._view_fn)
    target._grad_fn = regenerated._grad_fn
    target._output_nr = regenerated._output_nr
    target._requires_grad = True


def _make_view(out, source, cls, params, index=None):
    """Record that ``out`` views ``source``: one storage, one version counter.

    ``_view_fn`` says how to take the view again from the base: the view ops with their
    parameters (and which output, for ops that return several views).
    """
    out._vc = source._vc
    base = source._base
    step = ((cls, params, index),)
    if base is None:
        out._base = source
        out._view_fn = step
    else:
        out._base = base
        out._view_fn = source._view_fn + step


def _volatile_result(cls, arrays, params, out_cls):
    """0.3: anything computed from a volatile input is volatile and records nothing."""
    node = _new(cls)
    node._saved = ()
    node.next_functions = _NO_EDGES
    out = node.forward(*arrays, **params)
    outs = out if out.__class__ is tuple else (out,)
    tensors = []
    for o in outs:
        t = Tensor._make(xp.asarray(o), False, None, 0, None, out_cls)
        t._volatile = True
        tensors.append(t)
    return tuple(tensors) if out.__class__ is tuple else tensors[0]


def _legacy_flags(inputs):
    out_cls, volatile = Tensor, False
    for x in inputs:
        if isinstance(x, Variable):
            out_cls = Variable
            if x._volatile:
                volatile = True
    return out_cls, volatile


def _same_float_dtype(arrays):
    """True when NumPy's own arithmetic already gives PyTorch's dtype: one floating dtype
    among the arrays and only Python numbers besides (the common case, checked inline)."""
    d = None
    for a in arrays:
        c = a.__class__
        if c is _ndarray:
            if d is None:
                d = a.dtype
                if d.kind != 'f':
                    return False
            elif a.dtype is not d and a.dtype != d:
                return False
        elif c is not float and c is not int:
            return False
    return d is not None


def _common_dtype(arrays):
    """The one dtype of ``arrays`` when NumPy's arithmetic already gives PyTorch's, else None.

    NumPy 2 treats Python scalars as weak, as PyTorch does, except a float scalar with an
    integer array (NumPy: float64, PyTorch: the default float dtype).
    """
    d = None
    float_scalar = False
    for a in arrays:
        cls = a.__class__
        if cls is _ndarray:
            if d is None:
                d = a.dtype
            elif a.dtype != d:
                return None
        elif cls is float:
            float_scalar = True
        elif cls is not int and cls is not bool:
            return None
    if d is None or (float_scalar and d.kind != 'f'):
        return None
    return d


def _promote(cls, inputs, arrays):
    """Cast, in the list ``arrays``, what PyTorch's promotion casts; return whether it did."""
    common = _common_dtype(arrays)
    if common is not None and (common.kind == 'f' or not cls.float_result):
        return None
    if cls.promotes:
        target = _dtype.result_type(*inputs)
        if cls.float_result and target.category != 2:
            target = _dtype.get_default_dtype()
    else:
        target = _dtype.get_default_dtype()
    np_target = target.numpy
    cast = None
    for i, a in enumerate(arrays):
        if a.__class__ is _ndarray:
            if a.dtype != np_target:
                arrays[i] = a.astype(np_target)
                cast = True
        elif cls.promotes and target.category == 2 and not isinstance(a, float):
            arrays[i] = float(a)
    return cast


def _input_meta(inputs, arrays, out_shape, cast):
    """Shapes and dtypes to fit gradients to, only when some input differs from the output."""
    need = cast
    if not need:
        for a in arrays:
            if a.__class__ is _ndarray and a.shape != out_shape:
                need = True
                break
    if not need:
        return None
    return tuple((x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None
                 for x in inputs)


def _fit_grad(g, meta):
    if g is None or meta is None:
        return g
    shape, dtype = meta
    if g.shape != shape:
        g = sum_to(g, shape)
    if hasattr(g, '_data'):
        if g._data.dtype != dtype:
            g = g.to(_dtype.FROM_NUMPY[dtype])
    elif g.dtype != dtype:
        g = g.astype(dtype)
    return g


def _resolve_saved(saved, inputs, arrays, out, outputs):
    """Turn the arrays an op saved into SavedTensors tied to the inputs or outputs they are.

    ``out`` is what forward returned (an array, a NumPy scalar, or a tuple of them) and
    ``outputs`` the tensor or tensors made of it.
    """
    single = outputs.__class__ is not tuple
    resolved = []
    for s in saved:
        if s.__class__ is _ndarray or isinstance(s, np.generic):
            if single and s is out:
                s = SavedTensor(outputs._data, None, outputs._vc, 0)
            else:
                for i, a in enumerate(arrays):
                    if s is a:
                        x = inputs[i]
                        if isinstance(x, Tensor):
                            s = SavedTensor(s, x, x._vc)
                        break
                else:
                    if not single:
                        for k, o in enumerate(out):
                            if s is o:
                                t = outputs[k]
                                s = SavedTensor(t._data, None, t._vc, t._output_nr)
                                break
        resolved.append(s)
    return tuple(resolved)


def _wrap_outputs(node, inputs, arrays, out, record, out_cls, params):
    """Tensors for an op with several outputs; integer outputs never require grad."""
    arrays_out = tuple(o if o.__class__ is _ndarray else xp.asarray(o) for o in out)
    if record:
        node._input_meta = _input_meta(inputs, arrays, arrays_out[0].shape, None)
        node._output_meta = tuple((o.shape, o.dtype) for o in arrays_out)
    tensors = []
    for k, o in enumerate(arrays_out):
        diff = record and o.dtype.kind == 'f'
        t = Tensor._make(o, diff, node if diff else None, k if diff else 0, None, out_cls)
        if node.is_view:
            _make_view(t, inputs[0], type(node), params, k)
            if diff:
                t._multi_view_of = node.name()
        tensors.append(t)
    tensors = tuple(tensors)
    if record and node._saved:
        node._saved = _resolve_saved(node._saved, inputs, arrays, out, tensors)
    return tensors


# ---------------------------------------------------------------------------------------
# Custom functions: PyTorch's torch.autograd.Function API on the same graph.

class FunctionCtx:
    """What ``forward`` and ``backward`` of a custom Function see as ``ctx``."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError('save_for_backward can only save variables, but argument '
                                f'{tensors.index(t)} is of type {type(t).__name__}')
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)


class _CustomNode(Op, FunctionCtx):
    """The backward node of a custom Function; it is also the ``ctx``."""
    _function = None
    _to_save = ()
    _dirty = ()
    _non_differentiable = ()
    _materialize = True
    save_for_backward = FunctionCtx.save_for_backward

    @property
    def saved_tensors(self):
        return self._unpack_saved(True)

    saved_variables = saved_tensors

    def _run_backward(self, grads, as_tensors):
        from .grad_mode import set_grad_enabled
        wrapped = []
        for g, meta in zip(grads, self._output_meta):
            if g is None:
                if self._materialize and meta is not None:
                    g = wrap(xp.zeros(*meta))
            elif not as_tensors:
                g = wrap(g)
            wrapped.append(g)
        with set_grad_enabled(as_tensors):
            result = self._function.backward(self, *wrapped)
        if result.__class__ is not tuple:
            result = (result,)
        n = len(self.next_functions)
        if len(result) < n:
            raise RuntimeError(f'function {self.name()} returned an incorrect number of '
                               f'gradients (expected {n}, got {len(result)})')
        result = result[:n]
        out = []
        for i, (g, edge, meta) in enumerate(zip(result, self.next_functions, self._input_meta)):
            if g is None or edge[0] is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f'function {self.name()} returned a gradient of type '
                                f'{type(g).__name__} for input {i}; expected a Tensor or None')
            if meta is not None and g.shape != meta[0]:
                raise RuntimeError(f'Function {self.name()} returned an invalid gradient at '
                                   f'index {i} - got {list(g.shape)} but expected shape '
                                   f'compatible with {list(meta[0])}')
            out.append(g if as_tensors else g._data)
        return tuple(out)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + 'Backward', (_CustomNode,),
                                 {'_function': cls, 'node_name': name + 'Backward'})


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; use ``apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError('You must implement the forward function for custom '
                                  'autograd.Function.')

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError('You must implement either the backward or vjp method for '
                                  'your custom autograd.Function to use it with backward '
                                  'mode AD.')

    @classmethod
    def apply(cls, *args, **kwargs):
        from .grad_mode import no_grad
        node = _new(cls._backward_cls)
        node._saved = ()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _grad_state.grad_enabled and any(a._requires_grad for a in tensor_args)
        volatile = False
        if legacy.active:
            _, volatile = _legacy_flags(tensor_args)
            record = record and not volatile
        node.next_functions = tuple(
            _edge(a) if isinstance(a, Tensor) and a._requires_grad and record else _NO_EDGE
            for a in args)
        versions = [a._vc.value for a in tensor_args]
        with no_grad():
            outputs = cls.forward(node, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        dirty = node._dirty
        for t in dirty:
            if not any(t is o for o in outs):
                raise RuntimeError('Some elements marked as dirty during the forward method '
                                   'were not returned as output.')
            if record and t._requires_grad and t._grad_fn is None:
                raise RuntimeError('a leaf Variable that requires grad is being used in an '
                                   'in-place operation.')
        if dirty:
            for a, v in zip(tensor_args, versions):
                if any(a is d for d in dirty) and a._vc.value == v:
                    bump_version(a, f'{cls.__name__}.forward (marked dirty)')
        non_diff = node._non_differentiable
        results = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            is_input = any(o is a for a in tensor_args)
            if is_input and not any(o is d for d in dirty):
                # An input returned unchanged gets a fresh alias: its own history stays.
                o = Tensor._make(o._data, False, None, 0, o._vc, type(o))
            diff = record and o._data.dtype.kind == 'f' and not any(o is n for n in non_diff)
            if diff:
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = k
            if volatile:
                o._volatile = True
            results.append(o)
        if record:
            if _anomaly.enabled:
                node._trace = capture_stack()
            node._input_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor)
                                     else None for a in args)
            node._output_meta = tuple((o._data.shape, o._data.dtype)
                                      if isinstance(o, Tensor) else None for o in results)
            saved = []
            for t in node._to_save:
                if t is None:
                    saved.append(None)
                elif any(t is r for r in results) and t._grad_fn is node:
                    saved.append(SavedTensor(t._data, None, t._vc, t._output_nr))
                else:
                    saved.append(SavedTensor(t._data, t, t._vc))
            node._saved = tuple(saved)
        elif node._to_save:
            node._saved = tuple(SavedTensor(t._data, t, t._vc) if t is not None else None
                                for t in node._to_save)
        return results[0] if single else tuple(results)


_CustomNode._output_meta = ()


class _OnceDifferentiableBackward(Op):
    node_name = 'OnceDifferentiableBackward'

    def backward(self, *grads):
        raise RuntimeError('trying to differentiate twice a function that was marked with '
                           '@once_differentiable')


def once_differentiable(backward):
    """Run ``backward`` on values without history; differentiating its result again raises."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        from .grad_mode import no_grad
        with no_grad():
            results = backward(ctx, *grads)
        if not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return results
        single = not isinstance(results, tuple)
        results = (results,) if single else results
        guard = _new(_OnceDifferentiableBackward)
        guard._saved = ()
        guard.next_functions = tuple(_edge(g) if isinstance(g, Tensor) and g._requires_grad
                                     else _NO_EDGE for g in grads)
        wrapped = tuple(
            Tensor._make(r._data, True, guard, 0, None, Tensor)
            if isinstance(r, Tensor) and r._data.dtype.kind == 'f' else r for r in results)
        return wrapped[0] if single else wrapped
    return wrapper
