"""Custom functions: PyTorch's ``torch.autograd.Function`` API on the same graph as the
built-in ops (a custom Function's node is an ``Op``), with its forward-mode and vmap rules,
``once_differentiable`` and the legacy ``NestedIOFunction``."""

import functools

from .. import _dtype
from ..backend import xp
from ..tensor import INFERENCE_COUNTER, Tensor, bump_version, legacy, wrap
from .anomaly import state as _anomaly, capture_stack
from .batched import state as _vmap
from .forward_ad import state as _forward_ad
from .function import Op, _edge, _enable_bfloat16, _new
from .grad_mode import state as _grad_state
from .graph import NO_EDGE, NO_EDGES, SavedTensor
from .outputs import INFERENCE_SAVE_ERROR, sum_to
from .variable import legacy_flags


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

    def save_for_forward(self, *tensors):
        """Tensors the ``jvp`` staticmethod reads (it may read any ctx attribute too)."""
        self.saved_for_forward = tensors

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
            if meta is not None:
                if g.shape != meta[0]:
                    # torch sums a gradient the input broadcasts to (more leading dims, or
                    # size 1 where the gradient has more) down to it; refuses any other shape
                    if not _expands_to(meta[0], g.shape):
                        raise RuntimeError(
                            f'Function {self.name()} returned an invalid gradient at index {i}'
                            f' - got {list(g.shape)} but expected shape compatible with '
                            f'{list(meta[0])}')
                    g = sum_to(g, meta[0])
                if g._data.dtype.kind == 'c' and meta[1].kind in 'fV':   # complex into real
                    raise RuntimeError('Expected isFloatingType(grad.scalar_type()) || '
                                       '(input_is_complex == grad_is_complex) to be true, but '
                                       'got false.')
            out.append(g if as_tensors else g._data)
        return tuple(out)


def _expands_to(shape, target):
    """Whether ``shape`` broadcasts to exactly ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(n == m or n == 1 for n, m in zip(reversed(shape), reversed(target)))


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

    # PyTorch 2's forms: forward(*args) without ctx, with setup_context(ctx, inputs, output)
    # filling ctx; jvp(ctx, *tangents) for forward mode; vmap(info, in_dims, *args) or
    # generate_vmap_rule = True for vmap.
    generate_vmap_rule = False

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError('setup_context is not implemented.')

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError('You must implement the jvp function for custom autograd.'
                                  'Function to use it with forward mode AD.')

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError('To use autograd.Function with vmap, you must either '
                                  'override the vmap staticmethod or set generate_vmap_rule='
                                  'True.')

    @classmethod
    def _uses_setup_context(cls):
        return any('setup_context' in c.__dict__ for c in cls.__mro__
                   if c is not Function and issubclass(c, Function))

    @classmethod
    def _overrides(cls, name):
        return any(name in c.__dict__ for c in cls.__mro__
                   if c is not Function and issubclass(c, Function))

    @classmethod
    def _run_forward(cls, node, args, kwargs):
        if cls._uses_setup_context():
            output = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, output)
            return output
        return cls.forward(node, *args, **kwargs)

    @classmethod
    def apply(cls, *args, **kwargs):
        if _vmap.active and (_batched_any(args) or _batched_any(kwargs.values())):
            return _custom_function_vmap(cls, args, kwargs)
        if _forward_ad.propagate and _any_tangent(args):
            return _custom_function_jvp(cls, args, kwargs)
        return cls._apply(*args, **kwargs)

    @classmethod
    def _apply(cls, *args, **kwargs):
        from .grad_mode import no_grad
        node = _new(cls._backward_cls)
        node._saved = ()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _grad_state.grad_enabled and any(a._requires_grad for a in tensor_args)
        volatile = False
        if legacy.active:
            _, volatile = legacy_flags(tensor_args)
            record = record and not volatile
        node.next_functions = tuple(
            _edge(a) if isinstance(a, Tensor) and a._requires_grad and record else NO_EDGE
            for a in args)
        versions = [a._vc.value for a in tensor_args]
        with no_grad():
            outputs = cls._run_forward(node, args, kwargs)
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
            diff = (record and o._data.dtype.kind in 'fVc'
                    and not any(o is n for n in non_diff))
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
                elif t._vc_slot is INFERENCE_COUNTER:
                    raise RuntimeError(INFERENCE_SAVE_ERROR)
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


from .batched import has_batched as _batched_any  # noqa: E402
from .forward_ad import tangent_of_tensor as _tangent_of  # noqa: E402


def _any_tangent(args):
    return any(isinstance(a, Tensor) and _tangent_of(a) is not None for a in args)


def _custom_function_jvp(cls, args, kwargs):
    """Forward mode through a custom Function: its ``jvp`` staticmethod gives the output
    tangents from the input tangents (None for an input without one)."""
    from . import forward_ad as fw
    if not cls._overrides('jvp'):
        raise NotImplementedError('You must implement the jvp function for custom autograd.'
                                  'Function to use it with forward mode AD.')
    tangents = [_tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    with fw._suspended():
        primals = [fw.unpack_dual(a).primal if t is not None else a
                   for a, t in zip(args, tangents)]
        out = cls._apply(*primals, **kwargs)
        first = out[0] if isinstance(out, tuple) else out
        ctx = getattr(first, '_grad_fn', None)
        if not isinstance(ctx, cls._backward_cls):
            # nothing recorded (no input needs a gradient): a ctx of its own for jvp to read
            from .grad_mode import no_grad
            ctx = _new(cls._backward_cls)
            ctx._saved = ()
            ctx.next_functions = NO_EDGES
            with no_grad():
                cls._run_forward(ctx, primals, kwargs)
        out_tangents = cls.jvp(ctx, *tangents)
    outs = out if isinstance(out, tuple) else (out,)
    ts = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    if len(ts) != len(outs):
        raise RuntimeError(f'{cls.__name__}.jvp returned {len(ts)} tangents for {len(outs)} '
                           'outputs')
    duals = tuple(fw.make_dual(o, t) if t is not None and isinstance(o, Tensor) else o
                  for o, t in zip(outs, ts))
    return duals if isinstance(out, tuple) else duals[0]


class VmapInfo:
    """What a custom Function's ``vmap`` staticmethod is told: the batch size and the
    randomness mode of the vmap it runs under."""
    __slots__ = ('batch_size', 'randomness')

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


def _custom_function_vmap(cls, args, kwargs):
    """A custom Function under vmap: its ``vmap`` staticmethod (given the inputs with the
    innermost batch dim at ``in_dims``), or with ``generate_vmap_rule`` the Function once
    per sample (its forward and backward are written for one sample)."""
    from . import batched as b
    lvl = b.innermost()
    if cls._overrides('vmap'):
        in_dims, plain = [], []
        for a in args:
            if isinstance(a, b.BatchedTensor) and lvl.level in a._levels:
                # the innermost level's dim leads the sample dims once the level is dropped
                plain.append(b.batched(a._phys, a._levels[:-1]) if a._levels[-1] == lvl.level
                             else _move_level_last(a, lvl.level))
                in_dims.append(0)
            else:
                plain.append(a)
                in_dims.append(None)
        saved = b.state.stack.pop()
        b.state.active = bool(b.state.stack) or b.state.devices
        try:
            output, out_dims = cls.vmap(VmapInfo(lvl.size, lvl.randomness), tuple(in_dims),
                                        *plain, **kwargs)
        finally:
            b.state.stack.append(saved)
            b.state.active = True
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
        res = []
        for o, d in zip(outs, dims):
            if d is None:
                o = o.unsqueeze(0).expand((lvl.size,) + tuple(o.shape))
                d = 0
            k = len(b.levels_of(o))
            p = b.physical(o)
            d = d % o.dim()
            if d != 0 or k:
                p = p.movedim(k + d, k)
            res.append(b.batched(p, b.levels_of(o) + (lvl.level,)))
        return res[0] if single else tuple(res)
    if cls.generate_vmap_rule:
        return _generated_vmap(cls, args, kwargs)
    raise RuntimeError(f'In order to use an autograd.Function with functorch transforms '
                       f'(vmap, grad, jvp, jacrev, ...), it must override the setup_context '
                       f'staticmethod. For more details, please see https://pytorch.org/docs/'
                       f'main/notes/extending.func.html' if not cls._uses_setup_context() else
                       f'To use autograd.Function with vmap, you must either override the vmap '
                       f'staticmethod or set generate_vmap_rule=True.')


class _BatchedCtx(FunctionCtx):
    """The ctx a custom Function's forward, setup_context and backward see under vmap
    with ``generate_vmap_rule``: its saved tensors are the batched tensors themselves."""

    def __init__(self, needs):
        self._needs = needs
        self._to_save = ()

    @property
    def saved_tensors(self):
        return tuple(self._to_save)

    @property
    def needs_input_grad(self):
        return self._needs


def _generated_vmap(cls, args, kwargs):
    """``generate_vmap_rule=True``: the Function's own forward and backward run once on
    the batched tensors (their ops through the batching rules), recorded as one node of
    the physical graph."""
    from . import batched as b
    phys = [b.physical(a) if isinstance(a, Tensor) else a for a in args]
    arg_levels = [b.levels_of(a) for a in args]
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    seen = []       # the output levels forward found

    def logical(i, p):
        return b.batched(p, arg_levels[i]) if arg_levels[i] else p

    class Generated(Function):
        @staticmethod
        def forward(ctx, *ps):
            inner = _BatchedCtx(tuple(isinstance(a, Tensor) and a.requires_grad
                                      for a in args))
            ctx.inner = inner
            xs = [logical(i, p) if i in tensor_pos else p for i, p in enumerate(ps)]
            out = cls._run_forward(inner, xs, kwargs)
            single = not isinstance(out, tuple)
            outs = (out,) if single else out
            ctx.single = single
            ctx.out_levels = [b.levels_of(o) for o in outs]
            seen.append(ctx.out_levels)
            res = tuple(b.physical(o) if isinstance(o, Tensor) else o for o in outs)
            return res[0] if single else res

        @staticmethod
        def backward(ctx, *gs):
            was = b.state.active
            b.state.active = True       # the level may have closed: the rules need no more
            try:
                grads = [b.batched(g, lv) if g is not None and lv else g
                         for g, lv in zip(gs, ctx.out_levels)]
                got = cls.backward(ctx.inner, *grads)
            finally:
                b.state.active = was
            got = got if isinstance(got, tuple) else (got,)
            result = []
            for i, g in enumerate(got[:len(args)]):
                if g is None or i not in tensor_pos:
                    result.append(None)
                    continue
                own = arg_levels[i]
                have = b.levels_of(g)
                p = b.physical(g)
                # a level the input lacks: the input was shared by the samples, its
                # gradient is their sum
                extra = [k for k, lvl in enumerate(have) if lvl not in own]
                if extra:
                    p = p.sum(tuple(extra))
                kept = tuple(lvl for lvl in have if lvl in own)
                if kept != own:
                    p = b.physical(b.batched(p, kept)) if not own else _lift_to(
                        b.batched(p, kept) if kept else p, own, args[i])
                result.append(p)
            return tuple(result)
    out = Generated.apply(*phys)
    outs = (out,) if not isinstance(out, tuple) else out
    out_levels = seen[-1]
    wrapped = tuple(b.batched(o, lv) if isinstance(o, Tensor) and lv else o
                    for o, lv in zip(outs, out_levels))
    return wrapped if isinstance(out, tuple) else wrapped[0]


def _lift_to(g, levels, like):
    """A gradient batched over fewer levels than its input: broadcast to the input's."""
    from . import batched as b
    p = b.physical(g)
    have = b.levels_of(g)
    shape = []
    i = 0
    for lvl, n in zip(levels, b.physical(like).shape):
        if i < len(have) and have[i] == lvl:
            shape.append(p.shape[i])
            i += 1
        else:
            shape.append(1)
    p = p.reshape(tuple(shape) + tuple(p.shape[len(have):]))
    return p.expand(tuple(b.physical(like).shape))


def _move_level_last(a, level):
    from . import batched as b
    i = a._levels.index(level)
    k = len(a._levels)
    return b.batched(a._phys.movedim(i, k - 1), a._levels[:i] + a._levels[i + 1:])


class _OnceDifferentiableBackward(Op):
    node_name = 'OnceDifferentiableBackward'
    message = ('trying to differentiate twice a function that was marked with '
               '@once_differentiable')

    def backward(self, *grads):
        raise RuntimeError(self.message)


def guard_second_derivative(results, edges, message=None):
    """``results`` (a backward formula's, computed without history) as tensors whose
    backward raises: differentiating them again, towards any of ``edges`` (the incoming
    gradients' and the op's inputs'), is refused instead of silently missing terms."""
    edges = tuple(e for e in edges if e[0] is not None)
    if not edges:
        return results
    guard = _new(_OnceDifferentiableBackward)
    if message is not None:
        guard.message = message
    guard._saved = ()
    guard.next_functions = edges
    return tuple(Tensor._make(r._data, True, guard, 0, None, Tensor)
                 if isinstance(r, Tensor) and r._data.dtype.kind in 'fVc' else r
                 for r in results)


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
        wrapped = guard_second_derivative(
            results, [_edge(g) for g in grads if isinstance(g, Tensor) and g._requires_grad])
        return wrapped[0] if single else wrapped
    return wrapper


_dtype.on_extension_load(_enable_bfloat16)


# ---------------------------------------------------------------------------------------
# The legacy instance-style Function with nested inputs and outputs.

def _nested_tensors(obj):
    """The tensors inside nested lists/tuples, in order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _nested_tensors(o)


def _refill(structure, values):
    """``structure`` with its tensors replaced, in order, by the items of ``values``."""
    if isinstance(structure, Tensor):
        return next(values)
    if isinstance(structure, (list, tuple)):
        return type(structure)(_refill(s, values) for s in structure)
    return structure


class _NestedCall(Function):
    """Runs one NestedIOFunction object's forward_extended/backward_extended on the graph."""

    @staticmethod
    def forward(ctx, fn, nested_inputs, *flat):
        fn._ctx = ctx
        nested = _refill(nested_inputs, iter(flat))
        fn._nested_output = fn.forward_extended(*nested)
        for name in ('dirty_tensors', 'non_differentiable'):
            marked = getattr(fn, name, ())
            getattr(ctx, 'mark_dirty' if name == 'dirty_tensors' else
                    'mark_non_differentiable')(*marked)
        ctx.save_for_backward(*getattr(fn, 'to_save', ()))
        ctx._fn = fn
        return tuple(_nested_tensors(fn._nested_output))

    @staticmethod
    def backward(ctx, *grads):
        fn = ctx._fn
        nested = _refill(fn._nested_output, iter(grads))
        result = fn.backward_extended(*nested)
        result = result if isinstance(result, tuple) else (result,)
        return (None, None) + tuple(_nested_none_or_tensors(result))


def _nested_none_or_tensors(obj):
    if obj is None or isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _nested_none_or_tensors(o)


class NestedIOFunction(Function):
    """PyTorch's legacy Function: an instance is called on (possibly nested) inputs, and
    its ``forward_extended(*inputs)`` / ``backward_extended(*grad_outputs)`` are ordinary
    methods using ``self`` as the context. Kept for old code; use ``Function`` for new code.
    (PyTorch 2.x keeps the class but calling an instance fails there; here it works.)"""

    def __call__(self, *inputs):
        flat = _NestedCall.apply(self, inputs, *_nested_tensors(inputs))
        flat = flat if isinstance(flat, tuple) else (flat,)
        return _refill(self._nested_output, iter(flat))

    _do_forward = __call__

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError

    def save_for_backward(self, *args):
        self.to_save = tuple(_nested_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _refill(self._to_save_nested, iter(self._ctx.saved_tensors))

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_nested_tensors((args, tuple(kwargs.values()))))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_nested_tensors((args, tuple(kwargs.values()))))
