"""``layout`` and ``memory_format``: the objects PyTorch programs pass around as
``torch.strided`` or ``torch.channels_last``.

A dense tensor is a strided NumPy array (``strided``); a sparse COO tensor
(``dynagrad.ops.sparse``) has the layout ``sparse_coo``. The compressed sparse layouts
(``sparse_csr``, ``sparse_csc``, ``sparse_bsr``, ``sparse_bsc``) exist as names to compare
against; no dynagrad tensor has them. Memory formats describe
the order of a 4-D (5-D) tensor's dimensions in memory: ``channels_last`` is NHWC strides
behind NCHW indexing, which a NumPy array expresses directly.
"""

__all__ = ['layout', 'strided', 'sparse_coo', 'sparse_csr', 'sparse_csc', 'sparse_bsr',
           'sparse_bsc', 'jagged', 'memory_format', 'contiguous_format', 'channels_last',
           'channels_last_3d', 'preserve_format']


class layout:
    __slots__ = ('_name',)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f'dynagrad.{self._name}'

    def __reduce__(self):
        return self._name     # pickles as the module-level singleton


class memory_format:
    __slots__ = ('_name',)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f'dynagrad.{self._name}'

    def __reduce__(self):
        return self._name


strided = layout('strided')
sparse_coo = layout('sparse_coo')
sparse_csr = layout('sparse_csr')
sparse_csc = layout('sparse_csc')
sparse_bsr = layout('sparse_bsr')
sparse_bsc = layout('sparse_bsc')
jagged = layout('jagged')      # nested tensors ragged in their first dimension (nested/)
contiguous_format = memory_format('contiguous_format')
channels_last = memory_format('channels_last')
channels_last_3d = memory_format('channels_last_3d')
preserve_format = memory_format('preserve_format')

# the dimension order in memory of each format, by tensor rank
MEMORY_ORDERS = {(channels_last, 4): (0, 2, 3, 1), (channels_last_3d, 5): (0, 2, 3, 4, 1)}


def memory_order(fmt, ndim):
    """The permutation that lists a tensor's dims from outermost to innermost in memory
    for ``fmt``, or None for the plain row-major order. PyTorch's error for a format that
    does not fit the rank."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    order = MEMORY_ORDERS.get((fmt, ndim))
    if order is None:
        if fmt is channels_last or fmt is channels_last_3d:
            need = 4 if fmt is channels_last else 5
            raise RuntimeError(f'required rank {need} tensor to use {fmt._name} format')
        raise TypeError(f'memory_format must be a dynagrad.memory_format, not '
                        f'{type(fmt).__name__}')
    return order
