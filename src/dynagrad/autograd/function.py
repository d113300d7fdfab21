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

``Op.apply`` runs as a short sequence of steps. A concern that only some calls need costs
a flag test there and lives in a module of its own:

    batched.py, forward_ad.py   vmap and forward-mode AD: the call runs another way
    autocast.py                 the inputs cast first inside an autocast region
    promotion.py, widening.py   PyTorch's dtype rules; float16 and bfloat16 computed in
                                float32 and rounded once, by the op's widened variant
    variable.py                 legacy Variables: volatile computations record nothing
    sparse_dispatch.py          a sparse operand runs the op's sparse kernel
    outputs.py                  output tensors, views, saved values, gradient fitting
    inplace.py                  ``apply_``'s refusals, the write, the rewritten history

``Function`` is PyTorch's custom-op API (static ``forward(ctx, ...)`` and
``backward(ctx, ...)``) on the same graph.
"""
import functools

import numpy as np

from .._coo import COO, SparseRefused
from ..backend import fp_errors_off, fp_errors_restore
from ..tensor import Tensor, VersionCounter, legacy  # noqa: F401
from ..tensor import INFERENCE_COUNTER, INFERENCE_WRITE_ERROR, inference_blocks
from .anomaly import state as _anomaly, note_forward, capture_stack
from .autocast import autocast_state, autocast_inputs
from .batched import state as _vmap, dispatch as _vmap_dispatch
from .batched import dispatch_inplace as _vmap_dispatch_inplace
from .device_dispatch import as_array, is_data_array
from .forward_ad import state as _forward_ad, apply_dual, apply_dual_inplace
from .grad_mode import state as _grad_state
from .graph import NO_EDGE, NO_EDGES, Node, SavedTensor, grad_accumulator
from .inplace import (check_inplace_allowed, check_inplace_result, conj_write_error,
                      inputs_saved_before_write, rebase_history, write_overlapping)
from .outputs import fit_grad, input_meta, make_view, resolve_saved, wrap_outputs
from .promotion import casts_code, float_dtype, promote, widens_bfloat16_only
from .sparse_dispatch import run_sparse_kernel, run_sparse_kernel_inplace
from .variable import legacy_flags, mark_volatile, volatile_result

__all__ = ['Op', 'Function', 'FunctionCtx', 'once_differentiable', 'VersionCounter']

_ndarray = np.ndarray
_new = object.__new__
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_NONE_NEEDED = (False,) * 16


def _edge(t):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)


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
    # Keyword parameters holding a number PyTorch casts to the result dtype like an operand
    # (pow's exponent: x ** 1.7 raises to 1.703125 in bfloat16).
    scalar_params = ()
    # float16 inputs are computed in float32 and the result rounded once, as PyTorch's CPU
    # kernels do for ops that accumulate (sums, matmul, softmax, norms): NumPy's own float16
    # arithmetic would round every step. bfloat16 is always computed that way (NumPy has no
    # bfloat16 arithmetic of its own), whatever this flag says.
    widens_half = False
    # An op with no dtype rule (neither promotes nor float_result) computes bfloat16 in
    # float32 too unless this says False: ml_dtypes' bfloat16 arithmetic turns into float32 or
    # float64 against a Python number, in forward and backward formulas alike. View ops
    # never widen (they compute nothing).
    widens_bfloat16 = True
    # A number (or 0-d tensor) as the second operand is read in float32 against a bfloat16
    # tensor, not rounded to bfloat16 first, as PyTorch's mul/div kernels read a CPU scalar
    # (x * 0.997 can leave x as it is in bfloat16, where 0.99609375 would move it).
    scalar_opmath = False
    # Its category under autocast ('lower', 'fp32', 'promote' or None), read only while an
    # autocast region is active (dynagrad.amp.autocast_mode).
    autocast = None
    # Forward mode (forward_ad.py): an op linear in its float inputs (views always are) has
    # itself as its Jacobian-vector product; ``jvp(tangents, inputs, out, **params)`` is an
    # op's own rule; with neither, the tangent comes from the backward formula.
    linear = False
    jvp = None
    # Under vmap (dynagrad.func): the name of the op's batching rule when its family's is
    # the whole story ('elementwise'); else its row in func/_batch_rules.py's RULES.
    vmap_rule = None
    # Complex gradients follow PyTorch's convention (the conjugate Wirtinger derivative: a
    # holomorphic f gives g * conj(f'(z))). A backward formula written for real numbers,
    # g * f'(x), is run as conj(formula(conj(g))) when the gradient is complex, which is that
    # convention for every op holomorphic in its inputs (and for every R-linear op with real
    # coefficients: sums, views, indexing). Ops that are neither (conj, real, imag, abs,
    # angle, view_as_real...) say False and write their complex formula themselves.
    holomorphic = True
    # Whether the op computes on complex tensors (PyTorch's kernels refuse them for the
    # others: comparisons, rounding, erf...). Checked where an op's dtype rule runs, so a
    # float32 input pays nothing for it.
    supports_complex = False
    # Into an expanded view (elements sharing memory) torch refuses most in-place ops; an op
    # it lets write through says 'silent', or (name, example) for its deprecation warning.
    overlapping_write = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.quiet_fp and 'forward' in cls.__dict__:
            cls.forward = _fp_quiet(cls.__dict__['forward'])
        cls._casts = casts_code(cls)     # the dtype rule apply checks (promotion.py)
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
        if edges is NO_EDGES:
            return _NONE_NEEDED
        return [e[0] is not None for e in edges]

    # -- running forward -------------------------------------------------------------------
    @classmethod
    def apply(cls, *inputs, **params):
        """Run the op on tensors (and Python scalars); record a node if a gradient is needed.

        The hot path of every op, read as its steps. A rare concern costs a flag test here
        and lives in its own module; the common float32 cases stay inline, since each Python
        call costs about as much as one of these steps.
        """
        # 1. Calls run another way: under vmap (batched.py), carrying forward-mode tangents
        #    (forward_ad.py), with inputs cast first under autocast (autocast.py).
        if _vmap.active:
            out = _vmap_dispatch(cls, inputs, params)
            if out is not NotImplemented:
                return out
        if _forward_ad.propagate:
            dual = apply_dual(cls, inputs, params)
            if dual is not None:
                return dual
        if autocast_state.active and cls.autocast is not None:
            inputs = autocast_inputs(cls.autocast, inputs, params)

        # 2. The arrays, and the graph's edges when an input needs a gradient.
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
                edges.append(NO_EDGE)
        else:
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]

        # 3. PyTorch's dtype rules (promotion.py): float32 is told inline by identity, by
        #    the rule's code; anything else is promoted, or run by the op's widened variant.
        casts = cls._casts
        cast_meta = None
        if casts:
            if casts == 2:
                slow = float_dtype(arrays) is None
            elif casts == 1:
                d = arrays[0].dtype
                slow = d is not _F32 and d.kind != 'f'
            elif casts == 3:    # an op that widens float16 (see widens_half) and bfloat16
                d = arrays[0].dtype
                slow = d is not _F32 and d.char in 'eEFD'   # complex: promote checks it
            elif casts == 5:
                d = float_dtype(arrays)
                slow = d is None or d is _F16
            elif casts == 4:
                d = arrays[0].dtype
                slow = d is not _F32 and d.char not in 'fd'
            else:               # 6: no dtype rule, bfloat16 widens (once ml_dtypes loaded)
                first = arrays[0]
                slow = first.__class__ is _ndarray and first.dtype.char == 'E'
            if slow:
                cast_meta = promote(cls, inputs, arrays)
                if cast_meta is not None and cast_meta is not True:
                    return cast_meta.apply(*inputs, **params)   # the widened variant

        # 4. Legacy Variables (variable.py): the output's class; volatile records nothing.
        out_cls = Tensor
        if legacy.active:
            out_cls, volatile = legacy_flags(inputs)
            if volatile:
                return volatile_result(cls, arrays, params, out_cls)

        # 5. The forward; a sparse operand runs the op's sparse kernel (sparse_dispatch.py).
        node = _new(cls)
        node._saved = ()
        node.next_functions = tuple(edges) if record else NO_EDGES
        try:
            out = node.forward(*arrays, **params) if params else node.forward(*arrays)
        except ValueError as e:
            raise _as_runtime_error(cls, arrays, e) from None
        except SparseRefused:
            return run_sparse_kernel(cls, inputs, params)

        # 6. The output tensor (outputs.py for several, views, saved values).
        if out.__class__ is not _ndarray:
            if out.__class__ is tuple:
                return wrap_outputs(node, inputs, arrays, out, record, out_cls, params)
            result = out if out.__class__ is COO else as_array(out)
        else:
            result = out
        if record:
            if cast_meta:
                node._input_meta = input_meta(inputs, arrays, result.shape, cast_meta)
            elif len(arrays) > 1:  # broadcasting: gradients are summed back to each shape
                shape = result.shape
                for a in arrays:
                    if a.__class__ is _ndarray and a.shape != shape:
                        node._input_meta = input_meta(inputs, arrays, shape, None)
                        break
            t = _new(out_cls)  # Tensor._make, inlined
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
                    node._saved = resolve_saved(saved, inputs, arrays, out, t)
        else:
            t = _new(out_cls)
            t._data = result
            t._requires_grad = False
            t._grad_fn = None
            # -1 marks "computed while grad mode was off", for the error message of a
            # backward() that finds no graph (the output_nr property still says 0).
            if grad_on:
                t._output_nr = 0
            else:
                t._output_nr = -1
                # made inside inference_mode (the count spares no_grad the thread-local
                # read); a view takes its source's kind just below
                if inference_blocks.open and _grad_state.inference:
                    t._vc_slot = INFERENCE_COUNTER
        if cls.is_view:
            make_view(t, inputs[0], cls, params)
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
        node.next_functions = NO_EDGES
        return node.forward(*inputs, **params)

    @classmethod
    def apply_(cls, target, *others, **params):
        """The in-place variant: write the result into ``target`` and rewrite its history.

        ``apply``'s steps, with inplace.py's around the write.
        """
        # 1. Calls run another way: under vmap, carrying forward-mode tangents.
        if _vmap.active:
            out = _vmap_dispatch_inplace(cls, target, others, params)
            if out is not NotImplemented:
                return out
        if _forward_ad.propagate:
            dual = apply_dual_inplace(cls, target, others, params)
            if dual is not None:
                return dual

        # 2. What PyTorch refuses to write into, and whether the write is recorded.
        if target._is_conj:
            raise conj_write_error(cls)
        inputs = (target,) + others
        grad_on = _grad_state.grad_enabled
        record = grad_on and cls.differentiable and target._data.dtype.kind in 'fVc' and any(
            isinstance(x, Tensor) and x._requires_grad for x in inputs)
        if grad_on and target._requires_grad and (cls.differentiable or cls.guards_leaves):
            check_inplace_allowed(target)
        if target._vc_slot is INFERENCE_COUNTER and not _grad_state.inference:
            raise RuntimeError(INFERENCE_WRITE_ERROR)
        volatile = False
        if legacy.active:
            volatile = legacy_flags(inputs)[1]
            record = record and not volatile

        # 3. PyTorch's dtype rules (promotion.py).
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        casts = cls._casts
        if casts == 6 or casts == 3:    # widens float16 or bfloat16 only: checked first
            slow = arrays[0].dtype.char in ('E' if casts == 6 else 'eE')
        else:
            slow = casts
        cast_meta = promote(cls, inputs, arrays) if slow else None
        if cast_meta is not None and cast_meta is not True:
            return cast_meta.apply_(target, *others, **params)     # the widened variant

        # 4. The forward, and a result that fits the target.
        node = _new(cls)
        node._saved = ()
        node.next_functions = tuple(_edge(x) if isinstance(x, Tensor) and x._requires_grad
                                    else NO_EDGE for x in inputs) if record else NO_EDGES
        try:
            out = node.forward(*arrays, **params)
        except ValueError as e:
            raise _as_runtime_error(cls, arrays, e) from None
        except SparseRefused:   # a sparse operand: the op's sparse kernel, written back
            return run_sparse_kernel_inplace(cls, target, others, params)
        result = out if out.__class__ is _ndarray else as_array(out)
        check_inplace_result(cls, target, result)
        if record:
            node._input_meta = input_meta(inputs, arrays, result.shape, cast_meta)
            if node._saved:
                saved_inputs = inputs_saved_before_write(node, target, others, inputs, arrays)

        # 5. The write, counted by the target's version; then its history is the node's.
        try:
            target._data[...] = result
        except ValueError:      # a read-only array: an expanded view (elements share memory)
            if target._data.__class__ is not _ndarray or target._data.flags.writeable:
                raise
            write_overlapping(cls, target, result)
        vc = target._vc
        vc.value += 1
        vc.modified_by = cls._node_name
        vc.modified_at = capture_stack() if _anomaly.enabled else None
        vc.written_by = None
        if volatile:
            mark_volatile(target)
        if record:
            if _anomaly.enabled:
                note_forward(node, arrays, result)
            if node._saved:
                node._saved = resolve_saved(node._saved, saved_inputs, arrays, out, target)
            rebase_history(target, node)
        return target

    # -- running backward (called by the engine) ---------------------------------------
    def _run_backward(self, grads, as_tensors):
        self._as_tensors = as_tensors
        for g in grads:     # a complex gradient: PyTorch's convention (see holomorphic)
            if g is not None and (g._data if as_tensors else g).dtype.kind == 'c' \
                    and self.holomorphic:
                result = _conjugated_backward(self, grads)
                break
        else:
            result = self.backward(*grads)
        if result.__class__ is not tuple:
            result = (result,)
        meta = self._input_meta
        if meta is not None:
            result = tuple(fit_grad(g, m) for g, m in zip(result, meta))
        return result

    def _backward_tensors(self, grads):
        return self._run_backward(grads, True)


Op._input_meta = None


def _conj(g):
    return g.conj_physical() if isinstance(g, Tensor) else g.conj()


def _conjugated_backward(node, grads):
    """``conj(backward(conj(g)))``: a real formula made PyTorch's complex gradient (see
    ``Op.holomorphic``)."""
    result = node.backward(*(None if g is None else _conj(g) for g in grads))
    if result.__class__ is not tuple:
        return None if result is None else _conj(result)
    return tuple(None if r is None else _conj(r) for r in result)


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


def _as_runtime_error(cls, arrays, error):
    """NumPy's ValueError for bad input, as PyTorch's RuntimeError naming the op and shapes."""
    shapes = [a.shape for a in arrays if is_data_array(a)]
    op = cls._node_name[:-9].lower() if cls._node_name.endswith('Backward0') else cls.__name__
    if len(shapes) >= 2 and 'broadcast' in str(error):
        a, b = shapes[0], shapes[1]
        for k in range(1, min(len(a), len(b)) + 1):
            if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                dim = max(len(a), len(b)) - k
                return RuntimeError(f'The size of tensor a ({a[-k]}) must match the size of '
                                    f'tensor b ({b[-k]}) at non-singleton dimension {dim} '
                                    f'({op}: shapes {list(a)} and {list(b)})')
    described = ', '.join(f'{list(a.shape)} {a.dtype}' for a in arrays if is_data_array(a))
    return RuntimeError(f'{op}: {error} (inputs: {described})')


def untracked(x):
    """Whether ``Op.apply`` on the tensor ``x`` alone would run plainly: nothing to record
    (grad mode off, or ``x`` needs no gradient), no vmap, forward-mode tangents or legacy
    Variables, a NumPy array. The view ops then build their result with ``untracked_view``:
    a sampling loop's views, splits and slices cost half as much (the node, the edges and the
    dtype rule are all skipped; a view has no dtype rule)."""
    return (x.__class__ is Tensor and x._data.__class__ is _ndarray
            and not (x._requires_grad and _grad_state.grad_enabled)
            and not _vmap.active and not _forward_ad.propagate and not legacy.active)


def untracked_view(cls, source, array, params, output_nr=None):
    """What ``cls.apply(source, **params)`` returns when ``untracked(source)``: ``array``, a
    view of ``source`` (one storage, one version counter) with no node. ``output_nr``: the
    number a multi-output op gives its outputs (0); a single output is marked as made with
    grad mode off (-1) as apply marks it."""
    t = _new(Tensor)
    t._data = array
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = (0 if _grad_state.grad_enabled else -1) if output_nr is None else output_nr
    make_view(t, source, cls, params)
    return t


def _enable_bfloat16():
    """ml_dtypes just loaded: bfloat16 arrays can exist from now on, so the ops with no dtype
    rule start checking for them (until then that check costs them nothing)."""
    pending = list(Op.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls._casts == 0 and widens_bfloat16_only(cls):
            cls._casts = 6


_CUSTOM_FUNCTION_API = ('Function', 'FunctionCtx', 'NestedIOFunction', 'once_differentiable')


def __getattr__(name):
    # torch.autograd.function.Function is this module's path in PyTorch; the API lives in
    # custom_function, which imports this module (so it is reached lazily, not imported here)
    if name in _CUSTOM_FUNCTION_API:
        from . import custom_function
        return getattr(custom_function, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
