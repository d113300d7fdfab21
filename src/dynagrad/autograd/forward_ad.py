"""Forward-mode automatic differentiation (``torch.autograd.forward_ad``).

Inside a ``dual_level``, ``make_dual(x, v)`` pairs a primal tensor with a tangent, and
every op applied to such a dual tensor returns one whose tangent is the op's
Jacobian-vector product: ``unpack_dual(f(make_dual(x, v))).tangent`` is ``J_f(x) v``,
computed alongside the value in one forward pass.

Where an op's tangent comes from, in the order ``tangent_of`` tries them:

1. the op's own ``jvp`` rule, declared in its class beside ``forward`` and ``backward``
   (elementwise ``Unary`` ops get one from ``df``: their Jacobian is diagonal, so the
   backward formula applied to the tangent is the forward derivative);
2. ops that are linear in their float inputs (every view op, and those that say
   ``linear = True``): the op itself applied to the tangents;
3. any other op: the "double vjp". Its backward formula, ``g -> J^T g``, is written in
   dynagrad ops and is linear in ``g``, so ``J v`` is the gradient of ``<J^T g, v>`` with
   respect to ``g``: two reverse passes over one node, with no second implementation of
   the op's derivative (the same formula that gives higher-order reverse gradients).

The one hook in the op mechanism is a flag test at the top of ``Op.apply``: while no level
is open it costs one attribute read.
"""
import collections
import weakref

from ..backend import xp
from ..tensor import Tensor, grad_mode as _grad_state, wrap

__all__ = ['UnpackedDualTensor', 'enter_dual_level', 'exit_dual_level', 'make_dual',
           'unpack_dual', 'dual_level']


class _State:
    __slots__ = ('level', 'propagate', 'duals')

    def __init__(self):
        self.level = None      # the open level (PyTorch allows one at a time)
        self.propagate = False  # a level is open and no tangent rule is running
        self.duals = []        # weak references to the tensors given tangents at this level


state = _State()

UnpackedDualTensor = collections.namedtuple('UnpackedDualTensor', ['primal', 'tangent'])


def enter_dual_level():
    """Open a level for dual tensors; returns its index. Only one may be open."""
    if state.level is not None:
        raise RuntimeError('Nested forward mode AD is not supported at the moment')
    state.level = 0
    state.propagate = True
    state.duals = []
    return 0


def exit_dual_level(*, level=None):
    """Close the level: every tangent made at it is dropped."""
    if level is None:
        level = -1 if state.level is None else state.level
    if level < 0:
        raise RuntimeError('Dual level must be a positive number.')
    if level != state.level:
        raise RuntimeError('Trying to exit a forward AD level that was not the last one that '
                           'was created. This is not supported.')
    for ref in state.duals:
        t = ref()
        if t is not None:
            t.__dict__.pop('_fw_grad', None)
    state.duals = []
    state.level = None
    state.propagate = False


class dual_level:
    """Context manager for a forward-AD level::

        with dual_level():
            y = f(make_dual(x, v))
            jvp = unpack_dual(y).tangent
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _type_name(dtype):
    return f'dynagrad.{dtype.name}'


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient."""
    if state.level is None or (level is not None and level != state.level):
        raise RuntimeError('Trying to create a dual Tensor for forward AD but no level exists, '
                           'make sure to enter_dual_level() first.')
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f'make_dual: expected two Tensors, got {type(tensor).__name__} and '
                        f'{type(tangent).__name__}')
    if not tensor.dtype.is_inexact:
        raise ValueError(f'Expected primal to be floating point or complex, but got: '
                         f'{_type_name(tensor.dtype)}')
    if not tangent.dtype.is_inexact:
        raise ValueError(f'Expected tangent to be floating point or complex, but got: '
                         f'{_type_name(tangent.dtype)}')
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            f'Trying to set a forward gradient that has a different size than that of the '
            f'original Tensor, this is not supported. Tensor is of size '
            f'{list(tensor.shape)} while the given forward gradient is of size '
            f'{list(tangent.shape)}.')
    with _suspended():
        dual = tensor.view_as(tensor)
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    _attach(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of ``tensor`` without its tangent, and the tangent (None
    when it has none at this level)."""
    tangent = tangent_of_tensor(tensor) if isinstance(tensor, Tensor) else None
    if tangent is None or (level is not None and level != state.level):
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def tangent_of_tensor(t):
    """The tangent ``t`` carries at the open level, or None."""
    return t.__dict__.get('_fw_grad') if state.level is not None else None


def has_tangent(t):
    """Whether ``t`` carries a tangent: for an op that picks a cheaper path when an input
    needs no derivative, as ``requires_grad`` tells it for reverse mode."""
    return state.level is not None and t.__dict__.get('_fw_grad') is not None


def _attach(t, tangent):
    t.__dict__['_fw_grad'] = tangent
    state.duals.append(weakref.ref(t))


class _suspended:
    """No propagation while a tangent rule runs: its ops compute on primals and tangents,
    which must not themselves sprout tangents."""

    def __enter__(self):
        self.was = state.propagate
        state.propagate = False

    def __exit__(self, *exc):
        state.propagate = self.was


# -- propagation (called from Op.apply and Op.apply_ while a level is open) ---------------

def _tangents(inputs):
    found = False
    out = []
    for x in inputs:
        t = x.__dict__.get('_fw_grad') if isinstance(x, Tensor) else None
        if t is not None:
            found = True
        out.append(t)
    return out if found else None


def apply_dual(cls, inputs, params):
    """Run ``cls`` on inputs of which some are dual; None when none is (the caller then
    goes on as usual)."""
    tangents = _tangents(inputs)
    if tangents is None:
        return None
    with _suspended():
        if not cls.differentiable:
            return cls.apply(*inputs, **params)
        if cls.jvp is None and not (cls.is_view or cls.linear):
            out, out_tangents = _double_vjp(cls, inputs, params, tangents)
        else:
            out = cls.apply(*inputs, **params)
            out_tangents = tangent_of(cls, inputs, params, tangents, out)
    _attach_outputs(out, out_tangents)
    return out


def apply_dual_inplace(cls, target, others, params):
    """The in-place form: the target's tangent becomes the op's tangent, written into the
    tangent array it already has, so that a base sharing that array through a view sees
    the change (``z[0] = 5.`` zeroes the first entry of ``z``'s tangent)."""
    inputs = (target,) + others
    tangents = _tangents(inputs)
    if tangents is None:
        return None
    with _suspended():
        if not cls.differentiable:
            return cls.apply_(target, *others, **params)
        before = target.detach().clone()    # the rule needs the value before the write
        # only an op's own rule reads the output (the other two ways run the op themselves)
        out = cls.apply(before, *others, **params) if cls.jvp is not None else None
        new = tangent_of(cls, (before,) + others, params, tangents, out)
        cls.apply_(target, *others, **params)
    if new is None:
        new = _zeros_for(target)
    if new.dtype != target.dtype:
        new = new.to(target.dtype)
    old = tangents[0]
    if old is None and target._base is not None:
        base = target._base
        if base.__dict__.get('_fw_grad') is None:
            _attach(base, _zeros_for(base))
        from .views import view_of_array   # views build on the op mechanism
        old = wrap(view_of_array(base.__dict__['_fw_grad']._data, target._view_fn))
    if old is not None and not new._requires_grad:
        old._data[...] = new._data
        new = old
    _attach(target, new)
    return target


def _attach_outputs(out, out_tangents):
    outs = out if isinstance(out, tuple) else (out,)
    tans = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    for o, t in zip(outs, tans):
        if isinstance(o, Tensor) and t is not None and o.dtype.is_inexact:
            if t.dtype != o.dtype:
                t = t.to(o.dtype)
            _attach(o, t)


def _zeros_for(x):
    return wrap(xp.zeros_like(x._data))


def tangent_of(cls, inputs, params, tangents, out):
    """The tangent of ``cls``'s output(s) ``out`` for input ``tangents`` (None where an input
    has none): the op's rule, or the op itself when it is linear, or the double vjp."""
    if cls.jvp is not None:
        return cls.jvp(tangents, inputs, out, **params)
    if cls.is_view or cls.linear:
        args = [t if t is not None else
                (_zeros_for(x) if isinstance(x, Tensor) and x.dtype.is_inexact else x)
                for x, t in zip(inputs, tangents)]
        return cls.apply(*args, **params)
    return _double_vjp(cls, inputs, params, tangents)[1]


def _double_vjp(cls, inputs, params, tangents):
    """Run ``cls`` once, recording its node, and get ``J v`` from its backward formula:
    ``J v = d<J^T g, v>/dg``. Returns (output as the caller should see it, tangents)."""
    from .engine import run_backward   # the engine builds on the op mechanism
    grad_was = _grad_state.grad_enabled
    _grad_state.grad_enabled = True
    try:
        xs, wrt, vs = list(inputs), [], []
        # reverse mode over this op (an input requiring grad) needs its own graph kept
        keeps_graph = grad_was and any(isinstance(x, Tensor) and x._requires_grad
                                       for x in inputs)
        for i, (x, v) in enumerate(zip(inputs, tangents)):
            if v is None:
                continue
            # one tensor per occurrence (x * x): a gradient taken with respect to a tensor
            # passed twice would sum both slots' contributions into each
            xs[i] = x.view_as(x) if x._requires_grad and grad_was else \
                x.detach().requires_grad_()
            wrt.append(xs[i])
            vs.append(v)
        out = cls.apply(*xs, **params)
        outs = out if isinstance(out, tuple) else (out,)
        ys = [(k, y) for k, y in enumerate(outs)
              if isinstance(y, Tensor) and y._requires_grad and y.dtype.is_inexact]
        result = [None] * len(outs)
        if ys:
            gs = [wrap(xp.zeros_like(y._data)).requires_grad_() for _, y in ys]
            gx = run_backward([y for _, y in ys], gs, True, True, inputs=wrt,
                              accumulate=False, allow_unused=True)
            total = None
            for g, v in zip(gx, vs):
                if g is not None and g._requires_grad:
                    # the real inner product <J^T g, v>: for complex values Re(conj(u) v),
                    # whose gradient in g (PyTorch's convention) is J v again
                    term = (g * v).sum() if not g.dtype.is_complex else \
                        (g.conj() * v).real.sum()
                    total = term if total is None else total + term
            if total is not None:
                higher = keeps_graph or any(v._requires_grad for v in vs)
                jv = run_backward([total], [None], higher, higher, inputs=gs,
                                  accumulate=False, allow_unused=True)
                for (k, _), t in zip(ys, jv):
                    result[k] = t
        if not keeps_graph:
            # nothing outside asked for a graph: hand back the value alone
            outs = tuple(y.detach() if isinstance(y, Tensor) and y._requires_grad else y
                         for y in outs)
            out = outs if isinstance(out, tuple) else outs[0]
        tans = tuple(result)
        return out, (tans if isinstance(out, tuple) else tans[0])
    finally:
        _grad_state.grad_enabled = grad_was
