"""``torch.autograd.functional``: Jacobians, Hessians and their products for functions of
tensors, on the reverse-mode engine (``vjp``, ``jvp``, ``vhp``, ``hvp``, ``jacobian``,
``hessian``).

Every function here runs ``func`` once on fresh copies of the inputs and asks the engine
for gradients; ``jvp`` and ``hvp`` use the double-vjp trick (the vector-Jacobian product
is linear in its cotangent, so its own gradient along ``v`` is ``J v``), so nothing here
has a derivative of its own. ``create_graph=True`` keeps the results differentiable.
Only Tensor methods are used (this module sits below the op library).
"""
from .grad_mode import enable_grad
from ..tensor import Tensor
from . import grad as _grad

__all__ = ['vjp', 'jvp', 'vhp', 'hvp', 'jacobian', 'hessian']


def _as_tuple(x, arg, fn):
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            if is_tuple:
                raise TypeError(f'The {arg} given to {fn} must be either a Tensor or a tuple of '
                                f'Tensors but the value at index {i} has type {type(t)}.')
            raise TypeError(f'The {arg} given to {fn} must be either a Tensor or a tuple of '
                            f'Tensors but the given {arg} has type {type(t)}.')
    return is_tuple, xs


def _prepare(inputs, create_graph):
    """Copies of the inputs that require grad: still connected to their own graph when
    ``create_graph`` asks for that."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(x.dtype.is_inexact))
    return tuple(out)


def _outputs(func, inputs, fn, strict=False):
    with enable_grad():
        res = func(*inputs)
    is_tuple, outs = _as_tuple(res, 'outputs of the user-provided function', fn)
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(f'Output {i} of the user-provided function does not '
                                   'require gradients. The outputs must be computed in a '
                                   'differentiable manner from the input when running in '
                                   'strict mode.')
    return is_tuple, outs


def _finish(xs, create_graph, is_tuple):
    xs = tuple(x if x is None or create_graph else x.detach() for x in xs)
    return xs if is_tuple else xs[0]


_INDEPENDENT = ('The output of the user-provided function is independent of input {}. This '
                'is not allowed in strict mode.')


def _grads(outputs, inputs, cotangents, create_graph, strict, fn, message=_INDEPENDENT):
    """The vector-Jacobian products, zeros where an input does not reach the outputs (or
    strict mode's error)."""
    live = [(o, v) for o, v in zip(outputs, cotangents) if o.requires_grad and v is not None]
    if live:
        got = _grad([o for o, _ in live], inputs, [v for _, v in live], retain_graph=True,
                    create_graph=create_graph, allow_unused=True)
    else:
        got = (None,) * len(inputs)
    result = []
    for i, (g, x) in enumerate(zip(got, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(message.format(i))
            g = x.new_zeros(x.shape)
        result.append(g)
    return tuple(result)


def _check_v(v, outputs, fn, name='v'):
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(f'The vector {name} can only be None if the user-provided '
                               'function returns a single Tensor with a single element.')
        return (outputs[0].new_ones(outputs[0].shape),)
    _, vs = _as_tuple(v, name, fn)
    if len(vs) != len(outputs):
        raise RuntimeError(f'{name} is a tuple of invalid length: should be {len(outputs)} but '
                           f'got {len(vs)}.')
    for i, (a, b) in enumerate(zip(vs, outputs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f'Mismatch in shape: grad_output[{i}] has a shape of '
                               f'{tuple(a.shape)} and output[{i}] has a shape of '
                               f'{tuple(b.shape)}.')
    return vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T J)``."""
    is_tuple, xs = _as_tuple(inputs, 'inputs', 'vjp')
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs(func, xs, 'vjp', strict)
    vs = _check_v(v, outs, 'vjp')
    g = _grads(outs, xs, vs, create_graph, strict, 'vjp')
    return _finish(outs, create_graph, out_tuple), _finish(g, create_graph, is_tuple)


def _check_v_inputs(v, xs, fn):
    """The vector ``v`` of a product with the inputs' shapes (jvp, hvp, vhp)."""
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise RuntimeError('The vector v can only be None if the input to the '
                               'user-provided function is a single Tensor with a single '
                               'element.')
        return (xs[0].new_ones(xs[0].shape),)
    _, vs = _as_tuple(v, 'v', fn)
    if len(vs) != len(xs) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, xs)):
        raise RuntimeError('v has invalid size: should be the same as inputs')
    return vs


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), J v)`` by the double vjp."""
    is_tuple, xs = _as_tuple(inputs, 'inputs', 'jvp')
    vs = _check_v_inputs(v, xs, 'jvp')
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs(func, xs, 'jvp', strict)
    with enable_grad():
        us = tuple(o.new_zeros(o.shape).requires_grad_() for o in outs)
        g = _grads(outs, xs, us, True, strict, 'jvp')
        # J v: the gradient of <J^T u, v> with respect to u (the double vjp)
        jv = _grads(g, us, vs, create_graph, strict, 'jvp')
    return _finish(outs, create_graph, out_tuple), _finish(jv, create_graph, out_tuple)


def _check_strategy(strategy, vectorize, create_graph, strict, fn):
    if strategy not in ('forward-mode', 'reverse-mode'):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                           'Hint: If your function has more outputs than inputs, '
                           '"forward-mode" tends to be more performant. Otherwise, prefer to '
                           'use "reverse-mode".')
    if strict and vectorize:
        raise RuntimeError(f'torch.autograd.functional.{fn}: `strict=True` and '
                           '`vectorized=True` are not supported together. Please either set '
                           '`strict=False` or `vectorize=False`.')
    if strategy == 'forward-mode':
        if not vectorize:   # (PyTorch's words, its missing space too)
            raise NotImplementedError('Computing Jacobian using forward-AD or '
                                      'forward-over-reverse Hessian isonly implemented for '
                                      '`vectorize=True`.')
        if create_graph:
            raise NotImplementedError(f'torch.autograd.functional.{fn}: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together '
                                      '(yet). Please either set `create_graph=False` or make '
                                      '`strategy="reverse-mode"`.')


def _assemble(rows, out, x):
    """Rows (one per output element, each of ``x``'s shape) as ``out.shape + x.shape``."""
    jac = x.new_zeros((out.numel(),) + tuple(x.shape)).to(out.dtype if out.dtype ==
                                                             x.dtype else x.dtype)
    for k, r in enumerate(rows):
        jac[k] = r
    return jac.reshape(tuple(out.shape) + tuple(x.shape))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy='reverse-mode'):
    """The Jacobian of ``func`` at ``inputs``: one tensor per (output, input) pair, of shape
    ``output.shape + input.shape``. ``vectorize`` and ``strategy`` choose how it is computed
    (rows by reverse mode or columns by forward mode); the values are the same."""
    _check_strategy(strategy, vectorize, create_graph, strict, 'jacobian')
    is_tuple, xs = _as_tuple(inputs, 'inputs', 'jacobian')
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs(func, xs, 'jacobian', strict)
    if strategy == 'forward-mode':
        return _jacobian_forward(func, xs, outs, is_tuple, out_tuple)
    if vectorize:
        return _jacobian_vectorized(xs, outs, create_graph, is_tuple, out_tuple)
    per_output = []
    for i, o in enumerate(outs):
        flat = o.reshape(-1)
        rows = [[] for _ in xs]
        for k in range(flat.numel()):
            e = o.new_zeros(o.shape).reshape(-1)
            e[k] = 1
            cot = [e.reshape(o.shape) if m == i else None for m in range(len(outs))]
            try:
                g = _grads(outs, xs, cot, create_graph, strict, 'jacobian')
            except RuntimeError as err:
                if 'independent' in str(err):
                    raise RuntimeError(f'Output {i} of the user-provided function is '
                                       f'independent of input {str(err).split("input ")[1]}'
                                       ) from None
                raise
            for r, gi in zip(rows, g):
                r.append(gi)
        jac = tuple(_assemble(r, o, x) for r, x in zip(rows, xs))
        per_output.append(_finish(jac, create_graph, True))
    result = tuple(j if is_tuple else j[0] for j in per_output)
    return result if out_tuple else result[0]


def _jacobian_vectorized(xs, outs, create_graph, is_tuple, out_tuple):
    """Every row of an output's Jacobian in one backward pass: the unit cotangents as one
    batch (``is_grads_batched``, the backward formulas run through vmap's rules)."""
    per_output = []
    for i, o in enumerate(outs):
        m = o.numel()
        jac = []
        if m and o.requires_grad:
            unit = o.new_zeros((m, m))
            unit[range(m), range(m)] = 1
            rows = _grad((o,), xs, (unit.reshape((m,) + tuple(o.shape)),), retain_graph=True,
                         create_graph=create_graph, allow_unused=True, is_grads_batched=True)
        else:
            rows = (None,) * len(xs)
        for r, x in zip(rows, xs):
            if r is None:
                r = x.new_zeros((m,) + tuple(x.shape))
            jac.append(r.reshape(tuple(o.shape) + tuple(x.shape)))
        jac = tuple(jac)
        per_output.append(_finish(jac, create_graph, True) if is_tuple else
                          _finish(jac, create_graph, True)[0])
    return tuple(per_output) if out_tuple else per_output[0]


def _jacobian_forward(func, xs, outs, is_tuple, out_tuple):
    from . import forward_ad as fw
    cols = [[[] for _ in xs] for _ in outs]
    for j, x in enumerate(xs):
        for k in range(x.numel()):
            e = x.new_zeros(x.shape).reshape(-1)
            e[k] = 1
            with fw.dual_level():
                duals = [fw.make_dual(y.detach(), e.reshape(x.shape)) if m == j else y.detach()
                         for m, y in enumerate(xs)]
                res = func(*duals)
                res = res if isinstance(res, tuple) else (res,)
                tangents = [fw.unpack_dual(r).tangent for r in res]
            for i, (t, o) in enumerate(zip(tangents, outs)):
                cols[i][j].append(o.new_zeros(o.shape) if t is None else t.detach())
    per_output = []
    for i, o in enumerate(outs):
        jac = []
        for j, x in enumerate(xs):
            m = x.new_zeros((x.numel(),) + tuple(o.shape))
            for k, c in enumerate(cols[i][j]):
                m[k] = c
            jac.append(m.reshape((x.numel(), o.numel())).t().reshape(
                tuple(o.shape) + tuple(x.shape)))
        per_output.append(tuple(jac) if is_tuple else jac[0])
    return tuple(per_output) if out_tuple else per_output[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy='reverse-mode'):
    """The Hessian of a scalar ``func``: the Jacobian of its gradient."""
    is_tuple, xs = _as_tuple(inputs, 'inputs', 'hessian')
    if outer_jacobian_strategy == 'forward-mode' and not vectorize:
        raise NotImplementedError('Computing Jacobian using forward-AD or forward-over-reverse '
                                  'Hessian isonly implemented for `vectorize=True`.')

    def gradient(*ys):
        out_tuple, outs = _outputs(func, ys, 'hessian')
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError('The function given to hessian should return a single Tensor')
        if out_tuple:
            raise RuntimeError('The function given to hessian should return a single Tensor')
        g = _grads(outs, ys, (outs[0].new_ones(outs[0].shape),), True, strict, 'hessian')
        return g
    result = jacobian(gradient, xs, create_graph=create_graph, strict=strict)
    if not is_tuple:
        return result[0][0]
    return result


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T H)`` for a scalar ``func``."""
    return _hessian_product(func, inputs, v, create_graph, strict, 'vhp')


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), H v)`` for a scalar ``func`` (H is symmetric for the twice
    continuously differentiable functions this is meant for: the same double backward)."""
    return _hessian_product(func, inputs, v, create_graph, strict, 'hvp')


def _hessian_product(func, inputs, v, create_graph, strict, fn):
    is_tuple, xs = _as_tuple(inputs, 'inputs', fn)
    vs = _check_v_inputs(v, xs, fn)
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _outputs(func, xs, fn, strict)
    if len(outs) != 1 or outs[0].numel() != 1:
        raise RuntimeError('The function given to hvp should return a single Tensor with a '
                           'single element.' if fn == 'hvp' else
                           'The Tensor returned by the function given to vhp should contain '
                           'a single element')
    with enable_grad():
        g = _grads(outs, xs, (outs[0].new_ones(outs[0].shape),), True, strict, fn)
        res = _grads(g, xs, vs, create_graph, strict, fn, message=(
            'The hessian of the user-provided function with respect to input {} is '
            'independent of the input. This is not allowed in strict mode.'))
    return (_finish(outs, create_graph, out_tuple),
            _finish(res, create_graph, is_tuple))
