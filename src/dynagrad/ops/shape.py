"""Shape ops. Most are views: they share storage and version counter with their input."""
import math

import numpy as np

from ..backend import xp
from ..autograd.function import Op
from ._formula import sum_to, is_array


class View(Op):
    is_view = True

    def forward(self, x, shape):
        self.in_shape = x.shape
        return x.reshape(shape)

    def backward(self, g):
        return g.reshape(self.in_shape)


class UnsafeView(View):
    """A reshape that had to copy: not a view of its input."""
    is_view = False

    def forward(self, x, shape):
        self.in_shape = x.shape
        return x.reshape(shape).copy()


class Transpose(Op):
    is_view = True

    def forward(self, x, dim0, dim1):
        self.dims = (dim0, dim1)
        return x.swapaxes(dim0, dim1) if x.ndim else x.view()

    def backward(self, g):
        return g.swapaxes(*self.dims) if g.ndim else g


class T(Transpose):
    pass


class Permute(Op):
    is_view = True

    def forward(self, x, dims):
        self.inverse = tuple(np.argsort(dims))
        return x.transpose(dims)

    def backward(self, g):
        return g.transpose(self.inverse) if is_array(g) else g.permute(self.inverse)


class Squeeze(Op):
    is_view = True

    def forward(self, x, dim=None):
        self.in_shape = x.shape
        if dim is None:
            return x.squeeze()
        self._node_name = 'SqueezeBackward1' if isinstance(dim, int) else 'SqueezeBackward2'
        dims = (dim,) if isinstance(dim, int) else dim
        return x.squeeze(tuple(d for d in dims if x.ndim and x.shape[d] == 1))

    def backward(self, g):
        return g.reshape(self.in_shape)


class Unsqueeze(Op):
    is_view = True

    def forward(self, x, dim):
        self.in_shape = x.shape
        return xp.expand_dims(x, dim)

    def backward(self, g):
        return g.reshape(self.in_shape)


class Expand(Op):
    is_view = True

    def forward(self, x, shape):
        self.in_shape = x.shape
        return xp.broadcast_to(x, shape)

    def backward(self, g):
        return sum_to(g, self.in_shape)


# -- in-place writes through views ----------------------------------------------------


def replay_view(base, chain):
    """Re-derive a view from its base by re-running the view ops (recorded, on tensors)."""
    v = base
    for cls, params in chain:
        v = cls.apply(v, **params)
    return v


def view_of_array(array, chain):
    """The same view, taken of a plain array (a NumPy view, so writes go through)."""
    for cls, params in chain:
        array = Op.__new__(cls).forward(array, **params)
    return array


class CopySlices(Op):
    """The history of a base after an in-place op on one of its views.

    The gradient of the base is the incoming gradient, except in the view's region,
    where it is what the in-place op's backward gives for the view's old value.
    """
    node_name = 'CopySlices'

    @classmethod
    def _make(cls, base, chain, inner):
        from ..autograd.function import _edge, _NO_EDGE
        node = Op.__new__(cls)
        node._saved = ()
        node.chain = chain
        node.inner = inner
        base_edge = _edge(base) if base._requires_grad else _NO_EDGE
        node.next_functions = (base_edge,) + tuple(inner.next_functions[1:])
        return node

    def backward(self, g):
        if is_array(g):
            g_base = g.copy()
            region = view_of_array(g_base, self.chain)
            grads = self.inner._run_backward((region.copy(),), False)
            region[...] = 0 if grads[0] is None else grads[0]
            return (g_base,) + tuple(grads[1:])
        region = replay_view(g, self.chain)
        grads = self.inner._run_backward((region,), True)
        inner_grad = grads[0] if grads[0] is not None else region * 0
        return (ViewScatter.apply(g, inner_grad, chain=self.chain),) + tuple(grads[1:])

    def _release_saved(self):
        self.inner._release_saved()


class ViewScatter(Op):
    """``base`` with the region of a view replaced by ``values`` (CopySlices' double backward)."""

    def forward(self, base, values, chain):
        self.chain = chain
        out = base.copy()
        view_of_array(out, self.chain)[...] = values
        return out

    def backward(self, g):
        if is_array(g):
            g_base = g.copy()
            view_of_array(g_base, self.chain)[...] = 0
            return g_base, view_of_array(g, self.chain)
        zeros = replay_view(g, self.chain) * 0
        return ViewScatter.apply(g, zeros, chain=self.chain), replay_view(g, self.chain)


# -- function forms ---------------------------------------------------------------------


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel, op='view'):
    if shape.count(-1) > 1:
        raise RuntimeError('only one dimension can be inferred')
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _can_view(array, shape):
    if array.flags.c_contiguous:
        return True
    try:
        np.reshape(array, shape, copy=False)
        return True
    except ValueError:
        return False


def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input._data.size, 'reshape')
    if _can_view(input._data, shape):
        return View.apply(input, shape=shape)
    return UnsafeView.apply(input, shape=shape)


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, np.integer)):
        return input.to(shape[0])
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    if not _can_view(input._data, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           'least one dimension spans across two contiguous subspaces). Use '
                           '.reshape(...) instead.')
    return View.apply(input, shape=shape)


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return reshape(input, 1)
    s, e = _wrap(start_dim, nd), _wrap(end_dim, nd)
    if s > e:
        raise RuntimeError('flatten() has invalid args: start_dim cannot come after end_dim')
    shp = input._data.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, {n - 1}], '
                         f'but got {dim})')
    return dim % n


def transpose(input, dim0, dim1):
    nd = input.ndim
    return Transpose.apply(input, dim0=_wrap(dim0, nd), dim1=_wrap(dim1, nd))


swapaxes = swapdims = transpose


def t(input):
    nd = input.ndim
    if nd > 2:
        raise RuntimeError(f't() expects a tensor with <= 2 dimensions, but self is {nd}D')
    if nd < 2:
        return T.apply(input, dim0=0, dim1=0) if nd == 1 else View.apply(input, shape=())
    return T.apply(input, dim0=0, dim1=1)


def permute(input, *dims):
    dims = _shape_arg(dims)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f'permute(sparse_coo): number of dimensions in the tensor input does '
                           f'not match the length of the desired ordering of dimensions i.e. '
                           f'input.dim() = {nd} is not equal to len(dims) = {len(dims)}')
    dims = tuple(_wrap(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError('permute(): duplicate dims are not allowed.')
    return Permute.apply(input, dims=dims)


def squeeze(input, dim=None):
    nd = input.ndim
    if dim is None:
        return Squeeze.apply(input)
    if isinstance(dim, int):
        return Squeeze.apply(input, dim=_wrap(dim, nd))
    return Squeeze.apply(input, dim=tuple(_wrap(d, nd) for d in dim))


def unsqueeze(input, dim):
    return Unsqueeze.apply(input, dim=_wrap(dim, input.ndim + 1))


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    shp = input._data.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f'expand({input.type()}{{{list(shp)}}}, size={list(sizes)}): the '
                           f'number of sizes provided ({len(sizes)}) must be greater or equal to '
                           f'the number of dimensions in the tensor ({len(shp)})')
    lead = len(sizes) - len(shp)
    target = []
    for i, s in enumerate(sizes):
        have = shp[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise RuntimeError(f'The expanded size of the tensor (-1) isn\'t allowed in a '
                                   f'leading, non-existing dimension {i}')
            s = have
        elif have is not None and have != 1 and have != s:
            raise RuntimeError(
                f'The expanded size of the tensor ({s}) must match the existing size ({have}) '
                f'at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: '
                f'{list(shp)}')
        target.append(s)
    return Expand.apply(input, shape=tuple(target))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, shape)


__all__ = ['reshape', 'view', 'view_as', 'reshape_as', 'flatten', 'transpose', 'swapaxes',
           'swapdims', 't', 'permute', 'squeeze', 'unsqueeze', 'expand', 'expand_as',
           'broadcast_to']
METHODS = {name: globals()[name] for name in __all__}
