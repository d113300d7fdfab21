"""``dynagrad.func``: function transforms with ``torch.func``'s API (``grad``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``functional_call``...).

Every transform runs on the reverse-mode engine with ``create_graph`` whenever it is
nested in another transform or its inputs carry a graph of their own, so the transforms
compose to any depth (``grad(grad(f))``, ``jacfwd(jacrev(f))``) with no second
implementation of any derivative. ``jvp`` is the "double vjp": the vector-Jacobian product
``u -> J^T u`` is linear in ``u``, so ``J v`` is its own vector-Jacobian product with ``v``.

Inputs and outputs may be tensors or nested tuples, lists and dicts of tensors.
Inside ``vmap`` the transforms differentiate each sample's function: an input not batched
over every open level is first given those batch dims (``_per_sample``), so the gradient
of the batch's summed output is every sample's own gradient.
"""
import functools

from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from ..nn.utils.stateless import call_with_state
from ..autograd.batched import state as _vmap_state, BatchedTensor, batched as _batched
from ._vmap import vmap

__all__ = ['vmap', 'grad', 'grad_and_value', 'vjp', 'jvp', 'linearize', 'jacrev', 'jacfwd',
           'hessian', 'functional_call', 'stack_module_state']


class _Depth:
    value = 0   # how many transforms are running around the current call


_depth = _Depth()


# -- pytrees of tensors ---------------------------------------------------------------------

def _flatten(tree):
    """(leaves, rebuild): the tensors of nested tuples/lists/dicts and how to put them back."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [x for p in parts for x in p[0]]

        def rebuild(xs, kind=type(tree), parts=parts):
            out, k = [], 0
            for ls, rb in parts:
                out.append(rb(xs[k:k + len(ls)]))
                k += len(ls)
            return kind(out) if kind in (tuple, list) else kind(*out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = _flatten([tree[k] for k in keys])
        return leaves, lambda xs: dict(zip(keys, rebuild_values(xs)))
    return [tree], lambda xs: xs[0]


def _check_tensors(leaves, api, what):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f'{api}: Expected {what} to be a Tensor or a (nested) tuple, list or '
                             f'dict of Tensors, got {type(x).__name__}')


def _fresh(x, create):
    """``x`` as an input this transform differentiates with respect to: connected to the
    graph around it when an enclosing computation needs that, else a new leaf."""
    if _vmap_state.stack:
        x = _per_sample(x)
    if create and x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_()


def _per_sample(x):
    """``x`` batched over every open vmap level: each sample differentiates its own copy
    (a broadcast view, no memory), not one tensor shared by the batch."""
    levels = tuple(lvl.level for lvl in _vmap_state.stack)
    own = x._levels if x.__class__ is BatchedTensor else ()
    if own == levels:
        return x
    from ._batch_rules import lift
    size = tuple(lvl.size for lvl in _vmap_state.stack)
    return _batched(lift(x, levels, expand=size), levels)


def _needs_graph(leaves):
    return _depth.value > 0 or any(isinstance(x, Tensor) and x.requires_grad for x in leaves)


def _finish(x, create):
    if isinstance(x, Tensor) and not create:
        return x.detach()
    return x


def _argnums_tuple(argnums, nargs, api):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError(f'{api}: argnums must be non-empty')
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f'{api}: argnums must be int or Tuple[int, ...], got: {argnums}')
        if not -nargs <= n < nargs:
            raise RuntimeError(f'Got argnums={n}, but only {nargs} positional inputs')
    return single, tuple(n % nargs for n in nums)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f'{api}(f, ...)(*args): output of function f should be a tuple: '
                           f'(output, aux) if has_aux is True')
    return out


def _grads(outputs, inputs, cotangents, create):
    """Vector-Jacobian products, zeros where an input does not reach the output."""
    live = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not live:
        return [_zeros_like(x) for x in inputs]
    got = _autograd_grad([o for o, _ in live], inputs, [c for _, c in live],
                         retain_graph=True, create_graph=create, allow_unused=True)
    return [g if g is not None else _zeros_like(x) for g, x in zip(got, inputs)]


def _zeros_like(x):
    # not x * 0, which is nan where x is infinite
    from ..ops.creation import zeros_like   # func sits above ops
    return zeros_like(x)


class _nested:
    def __enter__(self):
        _depth.value += 1

    def __exit__(self, *exc):
        _depth.value -= 1


# -- grad, vjp ------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the ``argnums`` arguments, and its value."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), 'grad_and_value')
        all_leaves = [x for a in args for x in _flatten(a)[0]]
        create = _needs_graph(all_leaves)
        args = list(args)
        diff = []
        for n in nums:
            leaves, rebuild = _flatten(args[n])
            _check_tensors(leaves, 'grad_and_value', 'inputs')
            fresh = [_fresh(x, create) for x in leaves]
            args[n] = rebuild(fresh)
            diff.append((fresh, rebuild))
        with enable_grad(), _nested():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, 'grad_and_value')
        if not isinstance(out, Tensor):
            raise RuntimeError(f'grad_and_value(f)(*args): Expected f(*args) to return a Tensor, '
                               f'got {type(out)}')
        if out.dim() != 0:
            raise RuntimeError(f'grad_and_value(f)(*args): Expected f(*args) to return a scalar '
                               f'Tensor, got tensor with {out.dim()} dims. Maybe you wanted to '
                               f'use the vjp or jacrev APIs instead?')
        flat = [x for fresh, _ in diff for x in fresh]
        with enable_grad():
            gs = _grads([out], flat, [None], create)
        results, k = [], 0
        for fresh, rebuild in diff:
            results.append(rebuild([_finish(g, create) for g in gs[k:k + len(fresh)]]))
            k += len(fresh)
        g = results[0] if single else tuple(results)
        value = _finish(out, create)
        if has_aux:
            return g, (value, _tree_map(lambda t: _finish(t, create), aux))
        return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the ``argnums`` arguments (``torch.func.grad``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _tree_map(fn, tree):
    leaves, rebuild = _flatten(tree)
    return rebuild([fn(x) for x in leaves])


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one gradient per primal."""
    leaves, rebuild = _flatten(primals)
    _check_tensors(leaves, 'vjp', 'primals')
    create = _needs_graph(leaves)
    fresh = [_fresh(x, create) for x in leaves]
    with enable_grad(), _nested():
        out, aux = _split_aux(func(*rebuild(fresh)), has_aux, 'vjp')
    out_leaves, out_rebuild = _flatten(out)
    _check_tensors(out_leaves, 'vjp', 'outputs')

    def vjp_fn(cotangents):
        cot_leaves, _ = _flatten(cotangents)
        if len(cot_leaves) != len(out_leaves):
            raise RuntimeError(f'Expected pytree structure of cotangents to be the same as '
                               f'pytree structure of outputs to the function: got '
                               f'{len(cot_leaves)} cotangents for {len(out_leaves)} outputs')
        for c, o in zip(cot_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f'Mismatch in shape: grad_output has a shape of '
                                   f'{tuple(c.shape)} and output has a shape of '
                                   f'{tuple(o.shape)}.')
        inner = create or _needs_graph(cot_leaves)
        with enable_grad():
            gs = _grads(out_leaves, fresh, cot_leaves, inner)
        return rebuild([_finish(g, inner) for g in gs])

    def vjp_batched(cot_leaves):
        """The vector-Jacobian products of a batch of cotangents (first dim), in one
        backward pass (``is_grads_batched``); flat lists in and out."""
        inner = create
        live = [(o, c) for o, c in zip(out_leaves, cot_leaves) if o.requires_grad]
        n = cot_leaves[0].shape[0]
        if not live:
            return [_zeros_like(x).unsqueeze(0).expand((n,) + tuple(x.shape)) for x in fresh]
        with enable_grad():
            got = _autograd_grad([o for o, _ in live], fresh, [c for _, c in live],
                                 retain_graph=True, create_graph=inner, allow_unused=True,
                                 is_grads_batched=True)
        return [_finish(g, inner) if g is not None else
                _zeros_like(x).unsqueeze(0).expand((n,) + tuple(x.shape))
                for g, x in zip(got, fresh)]
    vjp_fn.batched = vjp_batched

    value = out_rebuild([_finish(o, create) for o in out_leaves])
    if has_aux:
        return value, vjp_fn, _tree_map(lambda t: _finish(t, create), aux)
    return value, vjp_fn


# -- jvp, linearize -------------------------------------------------------------------------

def _linearized(func, primals, api, has_aux=False):
    """Run ``func`` once and return (value leaves, rebuild, J v function, aux)."""
    leaves, rebuild = _flatten(tuple(primals))
    _check_tensors(leaves, api, 'primals')
    create = _needs_graph(leaves)
    fresh = [_fresh(x, create) for x in leaves]
    with enable_grad(), _nested():
        out, aux = _split_aux(func(*rebuild(fresh)), has_aux, api)
    out_leaves, out_rebuild = _flatten(out)
    _check_tensors(out_leaves, api, 'outputs')
    with enable_grad():
        # u -> J^T u, recorded, with u a leaf: its gradient along the tangents is J v
        us = [_zeros_like(o) for o in out_leaves]
        if _vmap_state.stack:       # each sample its own u (a shared one sums the batch)
            us = [_per_sample(u) for u in us]
        us = [u.requires_grad_() for u in us]
        vjps = _grads(out_leaves, fresh, us, True)

    def push(tangent_leaves):
        if len(tangent_leaves) != len(leaves):
            raise RuntimeError(f'{api}: Expected primals and tangents to have the same python '
                               f'structure.')
        for t, p in zip(tangent_leaves, leaves):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(f'{api}: Expected primals and tangents to have the same '
                                   f'shape, got {tuple(p.shape)} and {tuple(t.shape)}')
        inner = create or _needs_graph(tangent_leaves)
        with enable_grad():
            terms = [g for g in vjps if g.requires_grad]
            if not terms:
                return [_zeros_like(o) for o in out_leaves], inner
            got = _autograd_grad(terms, us, [t for g, t in zip(vjps, tangent_leaves)
                                             if g.requires_grad],
                                 retain_graph=True, create_graph=inner, allow_unused=True)
        return [g if g is not None else _zeros_like(o) for g, o in zip(got, out_leaves)], inner

    return out_leaves, out_rebuild, push, create, aux


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J v)`` with ``v`` the ``tangents`` (``torch.func.jvp``)."""
    if not isinstance(primals, tuple):
        raise RuntimeError('jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it '
                           'should be valid to call f(*primals).')
    out_leaves, out_rebuild, push, create, aux = _linearized(func, primals, 'jvp', has_aux)
    jv, inner = push(_flatten(tuple(tangents))[0])
    value = out_rebuild([_finish(o, create) for o in out_leaves])
    result = out_rebuild([_finish(t, inner) for t in jv])
    if has_aux:
        return value, result, _tree_map(lambda t: _finish(t, create), aux)
    return value, result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``J v`` at the primals."""
    out_leaves, out_rebuild, push, create, _ = _linearized(func, primals, 'linearize')

    def jvp_fn(*tangents):
        jv, inner = push(_flatten(tangents)[0])
        return out_rebuild([_finish(t, inner) for t in jv])
    return out_rebuild([_finish(o, create) for o in out_leaves]), jvp_fn


# -- Jacobians and Hessians -----------------------------------------------------------------

def _basis(x):
    """Unit tensors shaped like ``x``, one per element."""
    flat = _zeros_like(x).reshape(-1)
    for k in range(flat.numel()):
        e = flat.clone()
        e[k] = 1
        yield e.reshape(x.shape)


def _stack_jacobian(rows, out_shape, in_shape, by_output):
    from ..ops.shape import stack     # func sits above ops
    if not rows:
        from ..ops.creation import zeros
        return zeros(tuple(out_shape) + tuple(in_shape))
    j = stack(rows)
    if by_output:     # rows: d out[k] / d in, one per output element
        return j.reshape(tuple(out_shape) + tuple(in_shape))
    # rows: d out / d in[k], one per input element
    moved = j.reshape((-1,) + tuple(out_shape)).movedim(0, -1)
    return moved.reshape(tuple(out_shape) + tuple(in_shape))


def _of_argnums(func, args, argnums, api):
    """(single, nums, partial): ``func`` as a function of the ``argnums`` arguments alone,
    the others fixed at ``args``."""
    single, nums = _argnums_tuple(argnums, len(args), api)

    def partial(*diff):
        full = list(args)
        for n, d in zip(nums, diff):
            full[n] = d
        return func(*full)
    return single, nums, partial


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` by reverse mode: one vector-Jacobian product per output
    element (``torch.func.jacrev``)."""
    @functools.wraps(func)
    def wrapper(*args):
        single, nums, partial = _of_argnums(func, args, argnums, 'jacrev')
        out = vjp(partial, *(args[n] for n in nums), has_aux=has_aux)
        value, pullback = out[0], out[1]
        out_leaves, out_rebuild = _flatten(value)
        in_leaves, in_rebuild = _flatten(tuple(args[n] for n in nums))
        if chunk_size is not None and chunk_size <= 0:
            raise ValueError('jacrev: `chunk_size` should be greater than 0.')
        # (state.active is also on while a device backend is registered or dynagrad.compile
        # captures: only open vmap levels change how the Jacobian is taken)
        if not _vmap_state.stack:
            # every row of an output's Jacobian in one backward pass: its cotangents (the
            # unit tensors) as one batch
            from ..ops.creation import eye, zeros
            from ..ops.shape import cat
            per_output = []
            for k, o in enumerate(out_leaves):
                m = o.numel()
                if m == 0:
                    jac = [zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                           for x in in_leaves]
                    jac_tree = in_rebuild(jac)
                    per_output.append(jac_tree[0] if single else jac_tree)
                    continue
                step = m if chunk_size is None else chunk_size
                parts = []
                for start in range(0, m, step):     # chunk_size rows per backward pass
                    c = min(step, m - start)
                    unit = eye(m, dtype=o.dtype)[start:start + c]
                    cot = [unit.reshape((c,) + tuple(o.shape)) if j == k else
                           zeros((c,) + tuple(other.shape), dtype=other.dtype)
                           for j, other in enumerate(out_leaves)]
                    parts.append(pullback.batched(cot))
                rows = parts[0] if len(parts) == 1 else [
                    cat([p[i] for p in parts]) for i in range(len(parts[0]))]
                jac = [r.reshape(tuple(o.shape) + tuple(x.shape))
                       for r, x in zip(rows, in_leaves)]
                jac_tree = in_rebuild(jac)
                per_output.append(jac_tree[0] if single else jac_tree)
            result = out_rebuild(per_output)
            return (result, out[2]) if has_aux else result
        per_output = []
        for k, o in enumerate(out_leaves):
            rows = [[] for _ in in_leaves]
            for e in _basis(o):
                cot = [e if m == k else _zeros_like(other)
                       for m, other in enumerate(out_leaves)]
                gs = _flatten(pullback(out_rebuild(cot)))[0]
                for r, g in zip(rows, gs):
                    r.append(g.reshape(-1))
            jac = [_stack_jacobian(r, o.shape, x.shape, True) for r, x in zip(rows, in_leaves)]
            jac_tree = in_rebuild(jac)
            per_output.append(jac_tree[0] if single else jac_tree)
        result = out_rebuild(per_output)
        return (result, out[2]) if has_aux else result
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness='error'):
    """The Jacobian of ``func`` by Jacobian-vector products, one per input element
    (``torch.func.jacfwd``)."""
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args):
        single, nums, partial = _of_argnums(func, args, argnums, 'jacfwd')
        primals = tuple(args[n] for n in nums)
        out_leaves, out_rebuild, push, create, aux = _linearized(partial, primals, 'jacfwd',
                                                                 has_aux)
        in_leaves, in_rebuild = _flatten(primals)
        columns = [[[] for _ in in_leaves] for _ in out_leaves]
        for i, x in enumerate(in_leaves):
            for e in _basis(x):
                tangents = [e if m == i else _zeros_like(y) for m, y in enumerate(in_leaves)]
                jv, inner = push(tangents)
                for k, t in enumerate(jv):
                    columns[k][i].append(_finish(t, inner))
        per_output = []
        for k, o in enumerate(out_leaves):
            jac = [_stack_jacobian(c, o.shape, x.shape, False)
                   for c, x in zip(columns[k], in_leaves)]
            jac_tree = in_rebuild(jac)
            per_output.append(jac_tree[0] if single else jac_tree)
        result = out_rebuild(per_output)
        return (result, _tree_map(lambda t: _finish(t, create), aux)) if has_aux else result
    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func))``: forward over reverse, as ``torch.func.hessian``."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- modules as functions -------------------------------------------------------------------

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named tensors in place of its own parameters and
    buffers (``torch.func.functional_call``)."""
    return call_with_state(module, parameter_and_buffer_dicts, args, kwargs,
                           tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """The parameters and buffers of several copies of one model, each stacked along a new
    first dimension: ``(params, buffers)`` dicts, for model ensembling."""
    models = list(models)
    if not models:
        raise RuntimeError('stack_module_state: Expected at least one model, got 0.')
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError('stack_module_state: Expected all models to have the same training/'
                           'eval mode.')
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError('stack_module_state: Expected all models to be of the same class.')
    from ..ops.shape import stack
    params = {name: stack([dict(m.named_parameters())[name] for m in models]).detach()
              .requires_grad_() for name, _ in models[0].named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models]).detach()
               for name, _ in models[0].named_buffers()}
    return params, buffers
