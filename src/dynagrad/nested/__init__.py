"""``torch.nested``: a batch of tensors whose sizes differ along some dimensions (a ragged
batch of sequences), as one tensor.

A nested tensor keeps its components (dense tensors of one rank and dtype) and answers what
PyTorch's nested tensors answer about themselves: ``is_nested``, ``layout`` (``strided``, or
``jagged`` when only the first dimension of the components differs), ``dim()``, ``size(0)``,
``unbind()``, ``to_padded_tensor()``, ``values()``/``offsets()`` for the jagged layout, and
element-wise arithmetic with numbers or a nested tensor of the same structure. Dense ops do
not take nested tensors: they raise an error that says to unbind or pad first.
Gradients flow through ``as_nested_tensor``, arithmetic, ``unbind`` and ``to_padded_tensor``
to the components.
"""
import numpy as np

from .. import _dtype
from .._layout import jagged, strided
from .._torch_function import disabled_torch_function_impl
from ..tensor import Tensor

__all__ = ['nested_tensor', 'as_nested_tensor', 'nested_tensor_from_jagged',
           'to_padded_tensor']

_REFUSED = ('a nested tensor takes part in its own methods only (unbind, to_padded_tensor, '
            'values, size(0), element-wise arithmetic): this op needs dense tensors, so pass '
            'nt.unbind() or nt.to_padded_tensor(padding) instead')


class _Packed:
    """A nested tensor's array slot: a dense kernel that reaches for it gets a clear error
    instead of computing on something that is not the tensor's data."""
    __slots__ = ('dtype',)

    def __init__(self, dtype):
        self.dtype = dtype

    def __getattr__(self, name):
        raise RuntimeError(_REFUSED)

    def __array__(self, *args, **kwargs):
        raise RuntimeError(_REFUSED)

    def __len__(self):
        raise RuntimeError(_REFUSED)

    def __getitem__(self, index):
        raise RuntimeError(_REFUSED)

    def __iter__(self):
        raise RuntimeError(_REFUSED)


def _make(components, layout, dtype):
    nt = Tensor._make(_Packed(np.dtype(dtype.numpy)), False, None, 0, None, NestedTensor)
    nt._components = tuple(components)
    nt._nested_layout = layout
    return nt


class NestedTensor(Tensor):
    """What ``nested_tensor`` and ``as_nested_tensor`` return (a ``Tensor``)."""
    # dynagrad's own subclass: its methods decide, not a subclass dispatch to install
    __torch_function__ = disabled_torch_function_impl

    is_nested = property(lambda self: True)
    layout = property(lambda self: self._nested_layout)
    is_sparse = property(lambda self: False)

    @property
    def device(self):
        from .._device import device
        return self._components[0].device if self._components else device('cpu')

    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._components)

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        for c in self._components:
            c.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return None

    def dim(self):
        return 1 + (self._components[0].dim() if self._components else 0)

    ndim = property(dim)

    def _ragged(self):
        shapes = [tuple(c.shape) for c in self._components]
        return [len({s[d] for s in shapes}) > 1 for d in range(self.dim() - 1)]

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes: a "
                               'nested tensor has no single size; ask size(d) of a regular '
                               'dimension d, or unbind() it')
        d = dim + self.dim() if dim < 0 else dim
        if not 0 <= d < self.dim():
            raise IndexError(f'Dimension out of range (expected to be in range of '
                             f'[{-self.dim()}, {self.dim() - 1}], but got {dim})')
        if d == 0:
            return len(self._components)
        if self._ragged()[d - 1]:
            raise RuntimeError(f'Given dimension {dim} is irregular and does not have a size.')
        return int(self._components[0].shape[d - 1])

    shape = property(size)

    def numel(self):
        return sum(c.numel() for c in self._components)

    def element_size(self):
        return self.dtype.itemsize

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError('unbind(): nested tensors can only be unbound along dimension '
                               f'0, got {dim}')
        return self._components

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    def values(self):
        from .. import cat
        if self._nested_layout is jagged:
            return cat(list(self._components), 0)
        # a strided nested tensor's buffer: every component's elements, one after the other
        return cat([c.reshape(-1) for c in self._components], 0)

    def offsets(self):
        self._need_jagged('offsets')
        from .. import tensor
        return tensor(np.cumsum([0] + [int(c.shape[0]) for c in self._components]),
                      dtype=_dtype.int64)

    def lengths(self):
        self._need_jagged('lengths')
        return None

    def _need_jagged(self, name):
        if self._nested_layout is not jagged:
            raise RuntimeError(f'{name}(): only nested tensors of layout torch.jagged have '
                               'it; this one is torch.strided')

    def _each(self, fn, other=None):
        if isinstance(other, NestedTensor):
            if len(other._components) != len(self._components):
                raise RuntimeError(f'nested tensors of {len(self._components)} and '
                                   f'{len(other._components)} components cannot be combined')
            parts = [fn(a, b) for a, b in zip(self._components, other._components)]
        elif isinstance(other, Tensor) and other.dim() > 0:
            raise RuntimeError('element-wise ops between a nested tensor and a dense tensor '
                               'take numbers or 0-d tensors only: ' + _REFUSED)
        else:
            parts = [fn(a, other) for a in self._components]
        return _make(parts, self._nested_layout, parts[0].dtype if parts else self.dtype)

    __add__ = __radd__ = lambda self, o: self._each(lambda a, b: a + b, o)
    __sub__ = lambda self, o: self._each(lambda a, b: a - b, o)
    __rsub__ = lambda self, o: self._each(lambda a, b: b - a, o)
    __mul__ = __rmul__ = lambda self, o: self._each(lambda a, b: a * b, o)
    __truediv__ = lambda self, o: self._each(lambda a, b: a / b, o)
    __pow__ = lambda self, o: self._each(lambda a, b: a ** b, o)
    __neg__ = lambda self: self._each(lambda a, _: -a)
    add, sub, mul, div = __add__, __sub__, __mul__, __truediv__

    def detach(self):
        return _make([c.detach() for c in self._components], self._nested_layout, self.dtype)

    def clone(self, *, memory_format=None):
        return _make([c.clone() for c in self._components], self._nested_layout, self.dtype)

    def to(self, *args, **kwargs):
        parts = [c.to(*args, **kwargs) for c in self._components]
        return _make(parts, self._nested_layout, parts[0].dtype if parts else self.dtype)

    def cpu(self):
        return self.to('cpu')

    def is_contiguous(self, memory_format=None):
        return True

    def __len__(self):
        return len(self._components)

    def __iter__(self):
        return iter(self._components)

    def __getitem__(self, index):
        if isinstance(index, int):
            return self._components[index]
        raise RuntimeError('nested tensors are indexed by an int along dimension 0 only; '
                           'unbind() or to_padded_tensor() for more')

    def __repr__(self):
        if self._nested_layout is jagged:
            sizes = ', '.join(['{}'.format(len(self._components)), 'j1']
                              + [str(s) for s in tuple(self._components[0].shape)[1:]]) \
                if self._components else '0, j1'
            return (f'NestedTensor(size=({sizes}), offsets={self.offsets()!r}, '
                    'contiguous=True)')
        body = ',\n'.join('  ' + repr(c).replace('\n', '\n  ') for c in self._components)
        return f'nested_tensor([\n{body}\n])' if body else 'nested_tensor([\n\n])'

    __str__ = __repr__


def _components_of(tensor_list, dtype, device, copy):
    from .. import as_tensor
    if isinstance(tensor_list, Tensor):
        parts = list(tensor_list.unbind(0))
    else:
        if not isinstance(tensor_list, (list, tuple)):
            raise TypeError(f'nested_tensor(): expected a list of tensors (or of nested lists '
                            f'of numbers), got {type(tensor_list).__name__}')
        parts = [t if isinstance(t, Tensor) else as_tensor(t, dtype=dtype)
                 for t in tensor_list]
    if copy:
        parts = [p.detach().clone() for p in parts]
    if dtype is not None or device is not None:
        parts = [p.to(device=device, dtype=dtype) for p in parts]
    for i, p in enumerate(parts[1:], 1):
        if p.dim() != parts[0].dim():
            raise RuntimeError(f'All Tensors given to nested_tensor must have the same '
                               f'dimension. Found dimension {p.dim()} for Tensor at index {i} '
                               f'and dimension {parts[0].dim()} for Tensor at index 0.')
        if p.dtype is not parts[0].dtype:
            raise RuntimeError(f'All Tensors given to nested_tensor must have the same dtype. '
                               f'Found {p.dtype} for Tensor at index {i} and '
                               f'{parts[0].dtype} for Tensor at index 0.')
    return parts


def _nested(parts, layout, dtype):
    if layout is None:
        layout = strided
    if layout is not strided and layout is not jagged:
        raise RuntimeError(f'Specified layout is unsupported for nested tensors: {layout}')
    if layout is jagged:
        if parts and parts[0].dim() == 0:
            raise RuntimeError('Cannot construct a nested tensor with layout=torch.jagged from '
                               '0-d tensors')
        if len({tuple(p.shape)[1:] for p in parts}) > 1:
            raise RuntimeError('When constructing a nested tensor with layout=torch.jagged, '
                               'the components may differ in their first dimension only')
    if dtype is None:
        dtype = parts[0].dtype if parts else _dtype.get_default_dtype()
    return _make(parts, layout, dtype)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor of copies of ``tensor_list``'s tensors (or nested lists of numbers),
    with no autograd history: a leaf, as ``torch.nested.nested_tensor`` makes."""
    nt = _nested(_components_of(tensor_list, dtype, device, copy=True), layout, dtype)
    if requires_grad:
        nt.requires_grad_(True)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor of ``ts`` (a list of tensors, or a tensor unbound along dim 0) that
    keeps their autograd history."""
    return _nested(_components_of(ts, dtype, device, copy=False), layout, dtype)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """The jagged nested tensor whose component i is ``values[offsets[i]:offsets[i + 1]]``
    (or ``values[offsets[i]:offsets[i] + lengths[i]]``)."""
    if jagged_dim not in (None, 1):
        raise ValueError(f'nested_tensor_from_jagged(): dynagrad supports jagged_dim=1 only, '
                         f'got {jagged_dim}')
    if offsets is None:
        if lengths is None:
            raise RuntimeError('nested_tensor_from_jagged(): At least one of offsets or '
                               'lengths is required.')
        starts = np.concatenate([[0], np.cumsum(lengths.tolist())])
        stops = starts[1:]
    else:
        starts = [int(v) for v in offsets.tolist()]
        stops = starts[1:] if lengths is None else [s + int(n) for s, n in
                                                     zip(starts, lengths.tolist())]
    parts = [values[int(a):int(b)] for a, b in zip(starts, stops)]
    return _make(parts, jagged, values.dtype)


def to_padded_tensor(input, padding, output_size=None):
    """A dense tensor of ``input``'s components, each padded with ``padding`` up to the
    largest size in every dimension (or to ``output_size``), stacked along dim 0."""
    if not isinstance(input, NestedTensor):
        raise RuntimeError('to_padded_tensor(): expected a nested tensor, got a '
                           f'{type(input).__name__}')
    from .. import stack
    from ..nn.functional import pad
    parts = input._components
    if not parts:
        from .. import zeros
        return zeros(tuple(output_size or (0,)), dtype=input.dtype)
    widest = [max(int(p.shape[d]) for p in parts) for d in range(parts[0].dim())]
    if output_size is not None:
        output_size = tuple(output_size)
        if len(output_size) != input.dim() or output_size[0] != len(parts) or \
                any(o < w for o, w in zip(output_size[1:], widest)):
            raise RuntimeError(f'to_padded_tensor(): output_size {list(output_size)} must '
                               f'have {input.dim()} dimensions, {len(parts)} first, and hold '
                               f'every component (at least {[len(parts)] + widest})')
        widest = list(output_size[1:])
    padded = []
    for p in parts:
        widths = []
        for d in reversed(range(p.dim())):
            widths += [0, widest[d] - int(p.shape[d])]
        padded.append(pad(p, widths, value=padding) if any(widths) else p)
    return stack(padded, 0)
