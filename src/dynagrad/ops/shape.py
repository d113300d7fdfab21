"""Shape ops. Most are views: they share storage and version counter with their input
(as_strided, the in-place view ops, the *_scatter and *_copy families live in strided.py)."""
import math
import warnings

import numpy as np

from ..autograd.batched import vmap_function
from ..backend import xp
from ..autograd.function import Op, untracked, untracked_view
from ..tensor import Tensor, method, size_args, wrap
from .formula import sum_to, is_array, broadcast_to as _bcast
from .indexing import BasicIndex, IndexScatter, IndexSelect
from ._elementwise import REFUSED, refused

_ndarray = np.ndarray


class View(Op):
    __slots__ = ('in_shape',)
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
    __slots__ = ('dims',)
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
        self.inverse = tuple(xp.argsort(dims))
        return x.transpose(dims)

    def backward(self, g):
        return g.transpose(self.inverse) if is_array(g) else g.permute(self.inverse)


class Squeeze(Op):
    is_view = True

    def forward(self, x, dim=None):
        self.in_shape = x.shape
        if dim is None:
            return x.squeeze()
        dims = (dim,) if isinstance(dim, int) else dim
        return x.squeeze(tuple(d for d in dims if x.ndim and x.shape[d] == 1))

    def backward(self, g):
        return g.reshape(self.in_shape)


class SqueezeDim(Squeeze):
    """``squeeze(int)``."""
    node_name = 'SqueezeBackward1'


class SqueezeDims(Squeeze):
    """``squeeze(tuple)``."""
    node_name = 'SqueezeBackward2'


class Unsqueeze(Op):
    __slots__ = ('in_shape',)
    is_view = True

    def forward(self, x, dim):
        self.in_shape = x.shape
        return xp.expand_dims(x, dim)

    def backward(self, g):
        return g.reshape(self.in_shape)


class Expand(Op):
    __slots__ = ('in_shape',)
    is_view = True

    def forward(self, x, shape):
        self.in_shape = x.shape
        lead = len(shape) - x.ndim
        if tuple(shape[lead:]) == x.shape and not any(n != 1 for n in shape[:lead]):
            # no element repeats (leading 1s only): a writable view, as torch's, which
            # copy_ into arange(n).expand(1, -1) needs (NumPy's broadcasts are read-only)
            return xp.expand_dims(x, tuple(range(lead))) if lead else x[...]
        return xp.broadcast_to(x, shape)

    def backward(self, g):
        return sum_to(g, self.in_shape)


# -- helpers shared by the ops below -----------------------------------------------------


def _along(dim, index):
    """The key selecting ``index`` (an int or a slice) along ``dim``."""
    return (slice(None),) * dim + (index,)


def _diag_view(a, offset, dim1, dim2):
    """A writable NumPy view of the diagonal of ``a`` in the (dim1, dim2) plane, appended last."""
    rest = [d for d in range(a.ndim) if d != dim1 and d != dim2]
    v = a.transpose(rest + [dim1, dim2])
    v = v[..., :, offset:] if offset >= 0 else v[..., -offset:, :]
    n = min(v.shape[-2], v.shape[-1])
    return xp.lib.stride_tricks.as_strided(
        v, v.shape[:-2] + (n,), v.strides[:-2] + (v.strides[-2] + v.strides[-1],))


# -- reordering ---------------------------------------------------------------------------


class Repeat(Op):
    """``x.repeat(*repeats)``: ``x`` tiled; ``len(repeats) >= x.ndim``."""

    def forward(self, x, repeats):
        self.in_shape = x.shape
        lead = len(repeats) - x.ndim
        sizes = (1,) * lead + x.shape
        self.inter = tuple(v for r, s in zip(repeats, sizes) for v in (r, s))
        out = xp.empty(tuple(r * s for r, s in zip(repeats, sizes)), x.dtype)
        out.reshape(self.inter)[...] = x.reshape(tuple(v for s in sizes for v in (1, s)))
        return out

    def backward(self, g):
        g = g.reshape(self.inter).sum(tuple(range(0, len(self.inter), 2)))
        return g.reshape(self.in_shape)


class RepeatInterleave(Op):
    """``x.repeat_interleave(int, dim)``: each slice along ``dim`` repeated ``repeats`` times."""
    node_name = 'ViewBackward0'   # torch: expand + reshape

    def forward(self, x, repeats, dim):
        self.in_shape = x.shape
        self.dim = dim
        self.repeats = repeats
        return xp.repeat(x, repeats, axis=dim)

    def backward(self, g):
        d, shp = self.dim, self.in_shape
        return g.reshape(shp[:d + 1] + (self.repeats,) + shp[d + 1:]).sum((d + 1,))


class Flip(Op):
    def forward(self, x, dims):
        self.dims = dims
        return xp.flip(x, dims).copy() if dims else x.copy()

    def backward(self, g):
        return Flip.run(g, dims=self.dims)


class Roll(Op):
    def forward(self, x, shifts, dims):
        self.shifts, self.dims = shifts, dims
        if dims is None:
            return xp.roll(x.reshape(-1), shifts).reshape(x.shape)
        return xp.roll(x, shifts, axis=dims)

    def backward(self, g):
        back = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return Roll.run(g, shifts=back, dims=self.dims)


class Rot90(Op):
    def forward(self, x, k, dims):
        self.k, self.dims = k, dims
        return xp.rot90(x, k, axes=dims).copy()

    def backward(self, g):
        return Rot90.run(g, k=(4 - self.k) % 4, dims=self.dims)


# -- joining --------------------------------------------------------------------------


def _skipped(a):
    """torch's legacy rule: 1-d empty tensors are left out of a concatenation."""
    return a.shape == (0,)


class Cat(Op):
    """``cat(tensors, dim)``: one input per tensor; backward gives each its slice."""
    supports_complex = True
    promotes = True

    def forward(self, *arrays, dim):
        self.dim = dim
        for a in arrays:
            if a.shape == (0,):
                break
        else:                   # none left out (the common case: one pass, no copies)
            self.sizes = [a.shape[dim] for a in arrays]
            return xp.concatenate(arrays, axis=dim)
        kept = [a for a in arrays if not _skipped(a)]
        if not kept:
            self.sizes = None
            return xp.concatenate(arrays)
        self.sizes = [None if _skipped(a) else a.shape[dim] for a in arrays]
        return xp.concatenate(kept, axis=dim)

    def backward(self, g):
        if self.sizes is None:
            return tuple(g for _ in self.next_functions)
        grads = []
        start = 0
        for n in self.sizes:
            if n is None:
                grads.append(g.reshape((-1,))[0:0])
            else:
                grads.append(g[_along(self.dim, slice(start, start + n))])
                start += n
        return tuple(grads)


class Stack(Op):
    supports_complex = True
    promotes = True

    def forward(self, *arrays, dim):
        self.dim = dim
        self.n = len(arrays)
        return xp.stack(arrays, axis=dim)

    def backward(self, g):
        return tuple(g[_along(self.dim, k)] for k in range(self.n))


# -- splitting: several views of one input ----------------------------------------------


class _MultiView(Op):
    """An op whose outputs are views ``x[key]`` for the ``keys`` it is given: each output
    shares the storage and version counter of ``x`` and replays as that basic index."""

    @classmethod
    def apply(cls, x, keys, **params):
        outs = super().apply(x, keys=keys, **params)
        if x._base is None:
            base, prefix = x, ()
        else:
            base, prefix = x._base, x._view_fn
        for t, key in zip(outs, keys):
            t._vc = x._vc
            t._base = base
            t._view_fn = prefix + ((BasicIndex, {'key': key}, None),)
            if t._grad_fn is not None:  # torch refuses in-place writes into these views
                t._multi_view_of = t._grad_fn.name()
        return outs

    def forward(self, x, keys, dim):
        self.dim = dim
        return tuple(x[k] for k in keys)


class Split(_MultiView):
    """``split``/``chunk``: consecutive pieces along ``dim``; backward concatenates."""

    def backward(self, *grads):
        return Cat.run(*grads, dim=self.dim)


class SplitWithSizes(Split):
    """``split`` with a list of sizes."""
    node_name = 'SplitWithSizesBackward0'


class Unbind(_MultiView):
    def backward(self, *grads):
        return Stack.run(*grads, dim=self.dim)


class Narrow(Op):
    """``x.narrow(dim, start, length)``: a view (torch records a slice)."""
    node_name = 'SliceBackward0'
    is_view = True

    def forward(self, x, key):
        self.in_shape = x.shape
        self.key = key
        return x[key]

    def backward(self, g):
        return IndexScatter.run(g, key=self.key, shape=self.in_shape)


# -- triangles and diagonals ---------------------------------------------------------------


class Tril(Op):
    def forward(self, x, diagonal=0):
        self.diagonal = diagonal
        return xp.tril(x, diagonal)

    def backward(self, g):
        return Tril.run(g, diagonal=self.diagonal)


class Triu(Op):
    def forward(self, x, diagonal=0):
        self.diagonal = diagonal
        return xp.triu(x, diagonal)

    def backward(self, g):
        return Triu.run(g, diagonal=self.diagonal)


class Diagonal(Op):
    """``x.diagonal(offset, dim1, dim2)``: a view, the diagonal as the last dim."""
    is_view = True

    def forward(self, x, offset, dim1, dim2):
        self.in_shape = x.shape
        self.args = dict(offset=offset, dim1=dim1, dim2=dim2)
        return _diag_view(x, offset, dim1, dim2)

    def backward(self, g):
        return DiagonalScatter.run(g, shape=self.in_shape, **self.args)


class DiagCopy(Diagonal):
    """``diag`` of a matrix: the diagonal, copied."""
    node_name = 'DiagonalBackward0_copy'
    is_view = False

    def forward(self, x, offset, dim1, dim2):
        return super().forward(x, offset, dim1, dim2).copy()


class DiagonalScatter(Op):
    """Zeros of ``shape`` with ``g`` on the diagonal (the adjoint of ``Diagonal``)."""

    def forward(self, g, shape, offset, dim1, dim2):
        self.args = dict(offset=offset, dim1=dim1, dim2=dim2)
        out = xp.zeros(shape, g.dtype)
        _diag_view(out, offset, dim1, dim2)[...] = g
        return out

    def backward(self, gg):
        if is_array(gg):
            return _diag_view(gg, **self.args).copy()
        return Diagonal.apply(gg, **self.args)


class DiagEmbed(DiagonalScatter):
    """``x.diag_embed(offset, dim1, dim2)``: the last dim of ``x`` put on a diagonal."""

    def forward(self, x, offset, dim1, dim2):
        m = x.shape[-1] + abs(offset)
        batch = iter(x.shape[:-1])
        shape = tuple(m if d == dim1 or d == dim2 else next(batch) for d in range(x.ndim + 1))
        return super().forward(x, shape, offset, dim1, dim2)


class Trace(Op):
    supports_complex = True
    autocast = 'fp32'
    widens_half = True
    def forward(self, x):
        self.shape = x.shape
        return xp.trace(x, dtype=xp.int64 if x.dtype.kind in 'biu' else None)

    def backward(self, g):
        n = min(self.shape)
        return DiagonalScatter.run(_bcast(g, (n,)), shape=self.shape, offset=0, dim1=0,
                                   dim2=1)


# -- in-place writes through views ----------------------------------------------------


# -- function forms ---------------------------------------------------------------------


def _shape_arg(shape):
    return size_args(shape)


def _infer_shape(shape, numel, op='view'):
    if -1 not in shape and math.prod(shape) == numel:
        return shape
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
    """Whether ``array`` reshaped to ``shape`` can share its memory: each run of dimensions
    laid out contiguously in memory must be split or merged by the new shape on its own."""
    if array.flags.c_contiguous or array.size == 0:
        return True
    old = [(n, step) for n, step in zip(array.shape, array.strides) if n != 1]
    new = [n for n in shape if n != 1]
    j = 0
    i = 0
    while i < len(old):
        run, k = old[i][0], i
        while k + 1 < len(old) and old[k][1] == old[k + 1][1] * old[k + 1][0]:
            k += 1
            run *= old[k][0]
        covered = 1
        while j < len(new) and covered < run:
            covered *= new[j]
            j += 1
        if covered != run:
            return False
        i = k + 1
    return True


@method
def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input._data.size, 'reshape')
    if _can_view(input._data, shape):
        if untracked(input):
            return untracked_view(View, input, input._data.reshape(shape), {'shape': shape})
        return View.apply(input, shape=shape)
    return UnsafeView.apply(input, shape=shape)


@method
def view(input, *shape, dtype=None):
    if dtype is None and len(shape) == 1 and hasattr(shape[0], 'is_floating_point'):
        dtype = shape[0]
    if dtype is not None:
        return _view_as_dtype(input, dtype)
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    if not _can_view(input._data, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           'least one dimension spans across two contiguous subspaces). Use '
                           '.reshape(...) instead.')
    if untracked(input):
        return untracked_view(View, input, input._data.reshape(shape), {'shape': shape})
    return View.apply(input, shape=shape)


def _view_as_dtype(input, dtype):
    """``x.view(dtype)``: the same bytes read as ``dtype``, sharing memory and version
    counter, with no gradient (as in PyTorch)."""
    from .._dtype import to_dtype, type_name
    dtype = to_dtype(dtype)
    a = input._data
    old, new = a.dtype.itemsize, dtype.numpy.itemsize
    if old != new:
        names = f'to view {type_name(input.dtype)} as {type_name(dtype)} (different element sizes)'
        if a.ndim == 0:
            raise RuntimeError(f'self.dim() cannot be 0 {names}')
        if a.shape[-1] != 1 and a.strides[-1] != old:
            raise RuntimeError(f'self.stride(-1) must be 1 {names}, but got '
                               f'{a.strides[-1] // old}')
        if new > old:
            ratio = new // old
            if a.shape[-1] % ratio:
                raise RuntimeError(f'self.size(-1) must be divisible by {ratio} {names}, but '
                                   f'got {a.shape[-1]}')
            offset = input.storage_offset()
            if offset % ratio:
                raise RuntimeError(f'self.storage_offset() must be divisible by {ratio} '
                                   f'{names}, but got {offset}')
    return Tensor._make(a.view(dtype.numpy), False, None, 0, input._vc, Tensor)


@method
def view_as(input, other):
    return view(input, other.shape)


@method
def reshape_as(input, other):
    return reshape(input, other.shape)


@method
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


@method('transpose', 'swapaxes', 'swapdims')
def transpose(input, dim0, dim1):
    a = input._data
    nd = a.ndim
    dim0, dim1 = _wrap(dim0, nd), _wrap(dim1, nd)
    if nd and untracked(input):
        return untracked_view(Transpose, input, a.swapaxes(dim0, dim1),
                              {'dim0': dim0, 'dim1': dim1})
    return Transpose.apply(input, dim0=dim0, dim1=dim1)


swapaxes = swapdims = transpose


@method
def t(input):
    nd = input.ndim
    if nd > 2:
        raise RuntimeError(f't() expects a tensor with <= 2 dimensions, but self is {nd}D')
    if nd < 2:
        return T.apply(input, dim0=0, dim1=0) if nd == 1 else View.apply(input, shape=())
    return T.apply(input, dim0=0, dim1=1)


@method
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


@method('T')
@property
def _dims_reversed(self):
    """``tensor.T``: every dimension reversed."""
    return permute(self, tuple(range(self.ndim))[::-1])


@method('mT')
@property
def _last_two_dims_swapped(self):
    """``tensor.mT``: the last two dimensions swapped (a batch of matrices transposed)."""
    return transpose(self, -2, -1)


@method
def squeeze(input, dim=None):
    nd = input.ndim
    if dim is None:
        return Squeeze.apply(input)
    if isinstance(dim, int):
        return SqueezeDim.apply(input, dim=_wrap(dim, nd))
    dims = tuple(_wrap(d, nd) for d in dim)
    _no_duplicates(dims)
    return SqueezeDims.apply(input, dim=dims)


@method
def unsqueeze(input, dim):
    return Unsqueeze.apply(input, dim=_wrap(dim, input.ndim + 1))


@method
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


@method
def expand_as(input, other):
    return expand(input, other.shape)


@method
def broadcast_to(input, shape):
    return expand(input, shape)


def _is_tensor(x):
    return hasattr(x, '_data')


def _tensor_list(tensors, op):
    """The tensors of a sequence argument (``cat(tensors)``), refusing a lone tensor."""
    if _is_tensor(tensors) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f'not {type(tensors).__name__}')
    for i, t in enumerate(tensors):
        if not _is_tensor(t):
            raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                            f'but found element of type {type(t).__name__} at pos {i}')
    return tuple(tensors)


def _varargs_tensors(tensors):
    """``f(a, b)``, ``f([a, b])`` or ``f((a, b))`` -> (tuple of tensors, given as one?)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0]), False
    return tuple(tensors), len(tensors) == 1


def _dim_list(dims, ndim):
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return tuple(_wrap(int(d), ndim) for d in dims)


def _no_duplicates(dims):
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f'dim {d} appears multiple times in the list of dims')
        seen.add(d)


@method
def unflatten(input, dim, sizes):
    nd = input.ndim
    dim = _wrap(dim, nd)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError('unflatten: sizes must be non-empty')
    shp = input._data.shape
    n = shp[dim]
    if sizes.count(-1) > 1:
        raise RuntimeError('only one dimension can be inferred')
    known = math.prod(s for s in sizes if s != -1)
    if (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f'size of dim {dim} ({n}) in the input tensor')
    if -1 in sizes:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape(input, shp[:dim] + sizes + shp[dim + 1:])


@method('movedim', 'moveaxis')
def movedim(input, source, destination):
    nd = input.ndim
    src = _dim_list(source, nd)
    dst = _dim_list(destination, nd)
    if len(src) != len(dst):
        raise RuntimeError(f'movedim: Invalid source or destination dims: source ({list(src)} '
                           f'dims) should contain the same number of dims as destination '
                           f'({list(dst)} dims)')
    for name, dims in (('source', src), ('destination', dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f'movedim: repeated dim in `{name}` ({list(dims)})')
    if nd == 0:
        return BasicIndex.apply(input, key=Ellipsis)    # torch: an alias
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = tuple(o if o is not None else next(rest) for o in order)
    return Permute.apply(input, dims=order)


moveaxis = movedim


@method
def repeat(input, *repeats):
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _shape_arg(repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError('Number of dimensions of repeat dims can not be smaller than number '
                           'of dimensions of tensor')
    lead = (1,) * (len(repeats) - input.ndim)
    _check_sizes(tuple(r * s for r, s in zip(repeats, lead + input._data.shape)))
    return Repeat.apply(input, repeats=repeats)


def _check_sizes(shape):
    for s in shape:
        if s < 0:
            raise RuntimeError(f'Trying to create tensor with negative dimension {s}: '
                               f'{list(shape)}')


@method
def tile(input, dims):
    dims = _shape_arg((dims,))
    nd = input.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


@method
@vmap_function('repeat_interleave')
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:             # repeat_interleave(counts): indices repeated counts times
        counts = input._data
        if counts.ndim != 1 or counts.dtype.kind not in 'iu':
            raise RuntimeError('repeat_interleave only accept 1D vector as repeat')
        if counts.size and counts.min() < 0:
            raise RuntimeError('repeats can not be negative')
        idx = xp.repeat(xp.arange(counts.shape[0], dtype=np.int64), counts)
        return wrap(idx)
    if dim is None:
        input = reshape(input, -1)
        dim = 0
    else:
        dim = _wrap(dim, input.ndim)
        if input.ndim == 0:
            input = reshape(input, 1)
    n = input._data.shape[dim]
    if _is_tensor(repeats):
        r = repeats._data
        if r.dtype.kind not in 'iu':
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{str(repeats.dtype).split('.')[-1].capitalize()}'")
        if r.ndim > 1:
            raise RuntimeError('repeats must be 0-dim or 1-dim tensor')
        if r.size == 1:
            r = xp.broadcast_to(r.reshape(-1), (n,))
        elif r.shape[0] != n:
            raise RuntimeError(f'repeats must have the same size as input along dim, but got '
                               f'repeats.size(0) = {r.shape[0]} and input.size({dim}) = {n}')
        if r.size and r.min() < 0:
            raise RuntimeError('repeats can not be negative')
        index = xp.repeat(xp.arange(n, dtype=np.int64), r)
        return IndexSelect.apply(input, key=_along(dim, index))
    repeats = int(repeats)
    if repeats < 0:
        raise RuntimeError('Repeats must be non-negative')
    return RepeatInterleave.apply(input, repeats=repeats, dim=dim)


def _check_flip_kernel(input, dims):
    """torch's flip_cpu refuses uint16/32/64 and float8, but it runs only when the innermost
    dim longer than 1 of a non-empty tensor is flipped: other flips are a dtype-blind copy
    of rows there."""
    a = input._data
    if a.dtype in REFUSED and a.size:
        long_dims = [d for d, n in enumerate(a.shape) if n > 1]
        if long_dims and long_dims[-1] in dims:
            raise refused('flip_cpu', a)


@method
def flip(input, *dims):
    dims = _shape_arg(dims)
    dims = tuple(_wrap(d, input.ndim) for d in dims)
    _no_duplicates(dims)
    _check_flip_kernel(input, dims)
    return Flip.apply(input, dims=dims)


@method
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError('Input must be >= 2-d.')
    _check_flip_kernel(input, (1,))
    return Flip.apply(input, dims=(1,))


@method
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError('Input must be >= 1-d.')
    _check_flip_kernel(input, (0,))
    return Flip.apply(input, dims=(0,))


@method
def roll(input, shifts, dims=None):
    nd = input.ndim
    shifts = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(
        int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f'shifts and dimensions must align. shifts: {len(shifts)}, '
                               f'dims:0')
        return Roll.apply(input, shifts=shifts[0], dims=None)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if not shifts:
        raise RuntimeError('`shifts` required')
    if len(shifts) != len(dims):
        raise RuntimeError(f'shifts and dimensions must align. shifts: {len(shifts)}, '
                           f'dims:{len(dims)}')
    dims = tuple(_wrap(d, nd) for d in dims)
    return Roll.apply(input, shifts=shifts, dims=dims)


@method
def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    nd = input.ndim
    if len(dims) != 2:
        raise RuntimeError(f'expected total rotation dims == 2, but got dims = {len(dims)}')
    if nd < 2:
        raise RuntimeError(f'expected total dims >= 2, but got total dims = {nd}')
    d0, d1 = _wrap(dims[0], nd), _wrap(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f'expected rotation dims to be different, but got dim0 = {d0} and '
                           f'dim1 = {d1}')
    k = int(k) % 4
    # torch flips dims[1] then transposes (k=1), flips both (k=2), or flips dims[0] (k=3)
    _check_flip_kernel(input, ((), (d1,), (d0, d1), (d0,))[k])
    return Rot90.apply(input, k=k, dims=(d0, d1))


# -- joining -------------------------------------------------------------------------------


def cat(tensors, dim=0):
    if (tensors.__class__ is tuple or tensors.__class__ is list) and tensors \
            and dim.__class__ is int:
        # the common call (a sampling loop appends a token per step): plain tensors of one
        # rank, none 1-d empty, sizes matching off ``dim``; anything else, errors included,
        # takes the checks below
        shape = tensors[0]._data.shape if tensors[0].__class__ is Tensor else ()
        nd = len(shape)
        if nd and -nd <= dim < nd:
            d = dim % nd
            others = shape[:d] + shape[d + 1:]
            for t in tensors:
                if t.__class__ is not Tensor:
                    break
                s = t._data.shape
                if len(s) != nd or s == (0,) or s[:d] + s[d + 1:] != others:
                    break
            else:
                return Cat.apply(*tensors, dim=d)
    tensors = _tensor_list(tensors, 'cat')
    if not tensors:
        raise ValueError('torch.cat(): expected a non-empty list of Tensors')
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f'zero-dimensional tensor (at position {i}) cannot be '
                               'concatenated')
    kept = [(i, t) for i, t in enumerate(tensors) if not _skipped(t._data)]
    if not kept:                        # only 1-d empty tensors: torch ignores dim
        return Cat.apply(*tensors, dim=0)
    i0, first = kept[0]
    nd = first.ndim
    dim = _wrap(dim, nd)
    shp = first._data.shape
    for i, t in kept[1:]:
        s = t._data.shape
        if len(s) != nd:
            raise RuntimeError(f'Tensors must have same number of dimensions: got {nd} and '
                               f'{len(s)}')
        for d in range(nd):
            if d != dim and s[d] != shp[d]:
                raise RuntimeError(f'Sizes of tensors must match except in dimension {dim}. '
                                   f'Expected size {shp[d]} but got size {s[d]} for tensor '
                                   f'number {i} in the list.')
    return Cat.apply(*tensors, dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = _tensor_list(tensors, 'stack')
    if not tensors:
        raise RuntimeError('stack expects a non-empty TensorList')
    shp = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._data.shape != shp:
            raise RuntimeError(f'stack expects each tensor to be equal size, but got '
                               f'{list(shp)} at entry 0 and {list(t._data.shape)} at entry {i}')
    dim = _wrap(dim, len(shp) + 1)
    return Stack.apply(*tensors, dim=dim)


def _nonempty(tensors, op):
    tensors = _tensor_list(tensors, op)
    if not tensors:
        raise RuntimeError(f'{op} expects a non-empty TensorList')
    return tensors


def hstack(tensors):
    tensors = atleast_1d(_nonempty(tensors, 'hstack'))
    dim = 0 if tensors[0].ndim == 1 else 1
    return cat(tensors, dim)


def vstack(tensors):
    return cat(atleast_2d(_nonempty(tensors, 'vstack')), 0)


row_stack = vstack


def dstack(tensors):
    return cat(atleast_3d(_nonempty(tensors, 'dstack')), 2)


def column_stack(tensors):
    tensors = _nonempty(tensors, 'column_stack')
    cols = tuple(reshape(t, t._data.size, 1) if t.ndim <= 1 else t for t in tensors)
    return cat(cols, 1)


def atleast_1d(*tensors):
    tensors, single = _varargs_tensors(tensors)
    out = tuple(reshape(t, 1) if t.ndim == 0 else t for t in tensors)
    return out[0] if single else out


def atleast_2d(*tensors):
    tensors, single = _varargs_tensors(tensors)
    out = tuple(reshape(t, 1, 1) if t.ndim == 0 else unsqueeze(t, 0) if t.ndim == 1 else t
                for t in tensors)
    return out[0] if single else out


def _to_3d(t):
    nd = t.ndim
    if nd == 0:
        return reshape(t, 1, 1, 1)
    if nd == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    if nd == 2:
        return unsqueeze(t, -1)
    return t


def atleast_3d(*tensors):
    tensors, single = _varargs_tensors(tensors)
    out = tuple(_to_3d(t) for t in tensors)
    return out[0] if single else out


def meshgrid(*tensors, indexing=None):
    tensors, _ = _varargs_tensors(tensors)
    if not tensors:
        raise RuntimeError('meshgrid expects a non-empty TensorList')
    if indexing is None:
        warnings.warn('torch.meshgrid: in an upcoming release, it will be required to pass the '
                      'indexing argument.', UserWarning, stacklevel=2)
        indexing = 'ij'
    if indexing not in ('ij', 'xy'):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f'torch.meshgrid: Expected 0D or 1D tensor in the tensor list '
                               f'but got: {t}')
        if t.dtype != tensors[0].dtype:
            raise RuntimeError('meshgrid expects all tensors to have the same dtype')
    n = len(tensors)
    pos = list(range(n))
    if indexing == 'xy' and n >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * n
    for p, t in zip(pos, tensors):
        shape[p] = t._data.size
    out = []
    for p, t in zip(pos, tensors):
        s = [1] * n
        s[p] = -1
        out.append(expand(reshape(t, tuple(s)), tuple(shape)))
    return tuple(out)


# -- splitting -------------------------------------------------------------------------------


def _split_dim(input, dim, op='split'):
    if input.ndim == 0:
        raise RuntimeError(f'{op} expects at least a 1-dimensional tensor')
    return _wrap(dim, input.ndim)


@method
def split(tensor, split_size_or_sections, dim=0):
    dim = _split_dim(tensor, dim)
    n = tensor._data.shape[dim]
    s = split_size_or_sections
    if isinstance(s, (list, tuple)) or (_is_tensor(s) and s.ndim == 1):
        sizes = [int(v) for v in s]
        if sum(sizes) != n or any(v < 0 for v in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f'split_sizes={sizes}')
        return _split_pieces(tensor, sizes, dim, True)
    s = int(s)
    if s < 0:
        raise RuntimeError(f'split expects split_size be non-negative, but got split_size={s}')
    if s == 0:
        if n:
            raise RuntimeError(f'split_size can only be 0 if dimension size is 0, but got '
                               f'dimension size of {n}')
        return _split_pieces(tensor, [0], dim, False)
    sizes = [s] * (n // s) + ([n % s] if n % s else [])
    return _split_pieces(tensor, sizes or [0], dim, False)


def _split_pieces(tensor, sizes, dim, with_sizes):
    keys = []
    start = 0
    for v in sizes:
        keys.append(_along(dim, slice(start, start + v)))
        start += v
    if untracked(tensor):   # each piece replays as its basic index, as _MultiView records
        a = tensor._data
        return tuple(untracked_view(BasicIndex, tensor, a[key], {'key': key}, 0)
                     for key in keys)
    return (SplitWithSizes if with_sizes else Split).apply(tensor, keys=tuple(keys), dim=dim)


@method
def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


@method
def chunk(input, chunks, dim=0):
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f'chunk expects `chunks` to be greater than 0, got: {chunks}')
    dim = _split_dim(input, dim, 'chunk')
    n = input._data.shape[dim]
    if n == 0:
        return _split_pieces(input, [0] * chunks, dim, True)   # torch: split_with_sizes
    return split(input, -(-n // chunks), dim)


@method
def unbind(input, dim=0):
    if input.ndim == 0:
        raise IndexError('Dimension specified as 0 but tensor has no dimensions')
    dim = _wrap(dim, input.ndim)
    keys = tuple(_along(dim, k) for k in range(input._data.shape[dim]))
    return Unbind.apply(input, keys=keys, dim=dim)


@method
def narrow(input, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError('narrow() cannot be applied to a 0-dim tensor.')
    dim = _wrap(dim, input.ndim)
    n = input._data.shape[dim]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError('narrow(): length must be non-negative.')
    if not -n <= start <= n:
        raise IndexError(f'start out of range (expected to be in range of [{-n}, {n}], but got '
                         f'{start})')
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f'start ({start}) + length ({length}) exceeds dimension size ({n}).')
    return Narrow.apply(input, key=_along(dim, slice(start, start + length)))


@method
def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError('tensor_split expected at least a 1-dimensional tensor, but got a '
                           'tensor with 0 dims')
    dim = _wrap(dim, input.ndim)
    n = input._data.shape[dim]
    s = indices_or_sections
    if _is_tensor(s):
        if s.dtype.is_floating_point or s.ndim > 1:
            raise RuntimeError('tensor_split expected tensor_indices_or_sections to have a '
                               'integral dtype and to be either a zero-dimensional (scalar) or '
                               'one-dimensional tensor')
        s = s.item() if s.ndim == 0 else s.tolist()
    if isinstance(s, (list, tuple)):
        bounds = [0] + [min(max(int(i) + n if int(i) < 0 else int(i), 0), n) for i in s] + [n]
    else:
        k = int(s)
        if k <= 0:
            raise RuntimeError(f'number of sections must be larger than 0, got {k}')
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = [0]
        for v in sizes:
            bounds.append(bounds[-1] + v)
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        out.append(Narrow.apply(input, key=_along(dim, slice(a, max(a, b)))))
    return tuple(out)


# -- triangles and diagonals -------------------------------------------------------------


def _check_matrix(input, op):
    if input.ndim < 2:
        raise RuntimeError(f'{op}: input tensor must have at least 2 dimensions')


@method
def tril(input, diagonal=0):
    _check_matrix(input, 'tril')
    return Tril.apply(input, diagonal=int(diagonal))


@method
def tril_(input, diagonal=0):
    _check_matrix(input, 'tril')
    return Tril.apply_(input, diagonal=int(diagonal))


@method
def triu(input, diagonal=0):
    _check_matrix(input, 'triu')
    return Triu.apply(input, diagonal=int(diagonal))


@method
def triu_(input, diagonal=0):
    _check_matrix(input, 'triu')
    return Triu.apply_(input, diagonal=int(diagonal))


def _diag_dims(nd, dim1, dim2):
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f'diagonal dimensions cannot be identical {dim1}, {dim2}')
    return d1, d2


@method
def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    return Diagonal.apply(input, offset=int(offset), dim1=d1, dim2=d2)


@method
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    if input.ndim == 0:
        _wrap(dim1, 2), _wrap(dim2, 2)      # torch checks dims against ndim + 1 = 1
        raise IndexError('Dimension out of range (expected to be in range of [-1, 0], but got '
                         f'{dim1})')
    d1, d2 = _diag_dims(input.ndim + 1, dim1, dim2)
    return DiagEmbed.apply(input, offset=int(offset), dim1=d1, dim2=d2)


@method
def diag(input, diagonal=0):
    nd = input.ndim
    if nd == 1:
        return DiagEmbed.apply(input, offset=int(diagonal), dim1=0, dim2=1)
    if nd == 2:
        return DiagCopy.apply(input, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(f'diag(): Supports 1D or 2D tensors. Got {nd}D')


@method
def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f'trace: expected a matrix, but got tensor with dim {input.ndim}')
    if input.dtype.numpy == np.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    return Trace.apply(input)


# -- more views: transposes by another name, ravel, unfold -------------------------------


@method('H')
@property
def _conjugate_transposed(self):
    """``tensor.H``: the conjugate transpose of a matrix."""
    nd = self.ndim
    if nd == 0:
        warnings.warn('Tensor.H is deprecated on 0-D tensors. Consider using x.conj().',
                      UserWarning, stacklevel=2)
        return self
    if nd != 2:
        hint = ' For batches of matrices, consider using tensor.mH' if nd > 2 else ''
        raise RuntimeError(f'tensor.H is only supported on matrices (2-D tensors). Got {nd}-D '
                           f'tensor.{hint}')
    return transpose(self, 0, 1).conj()


@method('mH')
@property
def _batch_conjugate_transposed(self):
    """``tensor.mH``: each matrix of a batch transposed and conjugated."""
    nd = self.ndim
    if nd == 0:
        warnings.warn('Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().',
                      UserWarning, stacklevel=2)
        return self
    if nd < 2:
        raise RuntimeError('tensor.mH is only supported on matrices or batches of matrices. '
                           f'Got {nd}-D tensor.')
    return transpose(self, -2, -1).conj()


@method
def adjoint(input):
    if input.ndim < 2:
        raise RuntimeError('tensor.adjoint() is only supported on matrices or batches of '
                           f'matrices. Got {input.ndim}-D tensor.')
    return transpose(input, -2, -1).conj()


@method
def ravel(input):
    return reshape(input, -1)


class Unfold(Op):
    """``x.unfold(dimension, size, step)``: a view of every window of ``size`` along a dim,
    the window appended as the last dim. Windows may overlap, so backward scatter-adds."""
    is_view = True

    def forward(self, x, dimension, size, step):
        self.in_shape = x.shape
        self.args = (dimension, size, step)
        if x.ndim == 0:
            return x.reshape(1)
        n, s = x.shape[dimension], x.strides[dimension]
        count = (n - size) // step + 1
        shape = x.shape[:dimension] + (count,) + x.shape[dimension + 1:] + (size,)
        strides = x.strides[:dimension] + (s * step,) + x.strides[dimension + 1:] + (s,)
        return xp.lib.stride_tricks.as_strided(x, shape, strides)

    def backward(self, g):
        if not self.in_shape:
            return g.reshape(())
        dim, size, step = self.args
        count = g.shape[dim]
        windows = (xp.arange(count) * step).reshape(-1, 1) + xp.arange(size)
        g = xp.moveaxis(g, -1, dim + 1) if is_array(g) else g.movedim(-1, dim + 1)
        return IndexScatter.run(g, key=_along(dim, windows), shape=self.in_shape)


@method
def unfold(input, dimension, size, step):
    size, step = int(size), int(step)
    nd = input.ndim
    dim = _wrap(dimension, nd)
    n = input._data.shape[dim] if nd else 1
    if size > n:
        raise RuntimeError(f'maximum size for tensor at dimension {dim} is {n} but size is '
                           f'{size}')
    if size < 0:
        raise RuntimeError(f'size is {size} but must be >= 0')
    if step <= 0:
        raise RuntimeError(f'step is {step} but must be > 0')
    return Unfold.apply(input, dimension=dim, size=size, step=step)


# -- sum_to_size, is_same_size, detach, broadcast_tensors ----------------------------------


@method
def sum_to_size(input, *size):
    size = _shape_arg(size)
    shp = input._data.shape
    lead = len(shp) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shp[lead:])):
        raise RuntimeError(f'size {{{list(size)}}} is not expandable to size {{{list(shp)}}}.')
    if size == shp:
        return input
    if not size:
        return input.sum()
    kept = tuple(lead + i for i, s in enumerate(size) if s == 1 and shp[lead + i] != 1)
    out = input.sum(tuple(range(lead)) + kept, keepdim=True) if lead or kept else input
    return reshape(out, size) if lead else out


@method
def is_same_size(input, other):
    return input._data.shape == other._data.shape


# The Tensor's own methods (one object, as the function and method of other names are)
detach = Tensor.detach
detach_ = Tensor.detach_


def broadcast_tensors(*tensors):
    tensors, _ = _varargs_tensors(tensors)
    shape = ()
    for t in tensors:
        b = t._data.shape
        for k in range(1, min(len(shape), len(b)) + 1):
            if shape[-k] != b[-k] and shape[-k] != 1 and b[-k] != 1:
                raise RuntimeError(f'The size of tensor a ({shape[-k]}) must match the size of '
                                   f'tensor b ({b[-k]}) at non-singleton dimension '
                                   f'{max(len(shape), len(b)) - k} (broadcast_tensors: shapes '
                                   f'{[list(u._data.shape) for u in tensors]})')
        shape = xp.broadcast_shapes(shape, b)
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


# -- hsplit, vsplit, dsplit, unsafe splits, diagflat -----------------------------------------


def _directional_split(name, min_dims, dim_of):
    def split_fn(input, indices_or_sections):
        nd = input.ndim
        if nd < min_dims:
            raise RuntimeError(f'torch.{name} requires a tensor with at least {min_dims} '
                               f'dimension, but got a tensor with {nd} dimensions!')
        dim = dim_of(nd)
        s = indices_or_sections
        if isinstance(s, (int, np.integer)):
            n = input._data.shape[dim]
            if s == 0 or n % s:
                raise RuntimeError(f'torch.{name} attempted to split along dimension {dim}, but '
                                   f'the size of the dimension {n} is not divisible by the '
                                   f'split_size {s}!')
        return tensor_split(input, s, dim)
    split_fn.__name__ = name
    return method(split_fn)


hsplit = _directional_split('hsplit', 1, lambda nd: 1 if nd > 1 else 0)
vsplit = _directional_split('vsplit', 2, lambda nd: 0)
dsplit = _directional_split('dsplit', 3, lambda nd: 2)


class UnsafeSplit(Split):
    """``unsafe_split``: the pieces share memory with the input but autograd does not treat
    them as views (in-place writes into them are allowed and not tracked into the input)."""
    apply = classmethod(Op.apply.__func__)


class UnsafeSplitWithSizes(UnsafeSplit):
    pass


@method
def unsafe_split(input, split_size, dim=0):
    pieces = split(input, split_size, dim)
    return _unsafe_pieces(input, pieces, dim, UnsafeSplit)


@method
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    pieces = split(input, list(split_sizes), dim)
    return _unsafe_pieces(input, pieces, dim, UnsafeSplitWithSizes)


@method
def unsafe_chunk(input, chunks, dim=0):
    pieces = chunk(input, chunks, dim)
    empty = input.ndim and input._data.shape[_wrap(dim, input.ndim)] == 0
    return _unsafe_pieces(input, pieces, dim, UnsafeSplitWithSizes if empty else UnsafeSplit)


def _unsafe_pieces(input, pieces, dim, cls):
    """The same pieces (``split`` checked the arguments) recorded by the unsafe op."""
    dim = _wrap(dim, input.ndim)
    keys, start = [], 0
    for p in pieces:
        n = p._data.shape[dim]
        keys.append(_along(dim, slice(start, start + n)))
        start += n
    return cls.apply(input, keys=tuple(keys), dim=dim)


@method
def diagflat(input, offset=0):
    return DiagEmbed.apply(reshape(input, -1), offset=int(offset), dim1=0, dim2=1)


__all__ = ['reshape', 'view', 'view_as', 'reshape_as', 'flatten', 'transpose', 'swapaxes',
           'swapdims', 't', 'permute', 'squeeze', 'unsqueeze', 'expand', 'expand_as',
           'broadcast_to', 'unflatten', 'movedim', 'moveaxis', 'repeat_interleave', 'tile',
           'flip', 'fliplr', 'flipud', 'roll', 'rot90', 'cat', 'concat', 'concatenate',
           'stack', 'hstack', 'vstack', 'row_stack', 'dstack', 'column_stack', 'split',
           'split_with_sizes', 'chunk', 'unbind', 'narrow', 'tensor_split', 'tril', 'triu',
           'diagonal', 'diag_embed', 'diag', 'trace', 'meshgrid', 'atleast_1d', 'atleast_2d',
           'atleast_3d', 'adjoint', 'ravel', 'is_same_size', 'detach', 'detach_',
           'broadcast_tensors', 'hsplit', 'vsplit', 'dsplit', 'unsafe_chunk', 'unsafe_split',
           'unsafe_split_with_sizes', 'diagflat']
