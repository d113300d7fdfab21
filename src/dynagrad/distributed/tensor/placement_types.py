"""How a DTensor's data is laid over a mesh dimension, as ``torch.distributed.tensor``'s
placement classes (printed and compared as PyTorch's)."""

__all__ = ['Placement', 'Shard', 'Replicate', 'Partial']


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    def __init__(self, dim=0):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self):
        return hash((type(self), self.dim))

    def __repr__(self):
        return f'Shard(dim={self.dim})'

    def __str__(self):
        return f'S({self.dim})'

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(size, offset) of rank's chunk when ``curr_local_size`` items are split into
        ``num_chunks`` as ``torch.chunk`` splits them (the last chunks may be short or
        empty)."""
        full = -(-curr_local_size // num_chunks)
        offset = min(full * rank, curr_local_size)
        return max(0, min(curr_local_size, full * (rank + 1)) - offset), offset


class _StridedShard(Placement):
    """Not a ``Shard`` (as in PyTorch: ``isinstance(p, Shard)`` is False for it)."""

    def __init__(self, dim, *, split_factor=1, sf=None):
        self.dim = dim
        self.split_factor = split_factor if sf is None else sf

    def __eq__(self, other):
        return type(other) is _StridedShard and (other.dim, other.split_factor) == \
            (self.dim, self.split_factor)

    def __hash__(self):
        return hash((type(self), self.dim, self.split_factor))

    def __repr__(self):
        return f'_StridedShard(dim={self.dim}, sf={self.split_factor})'

    def __str__(self):
        return f'_S({self.dim}, {self.split_factor})'


class Replicate(Placement):
    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return hash(Replicate)

    def __repr__(self):
        return 'Replicate()'

    def __str__(self):
        return 'R'


class Partial(Placement):
    def __init__(self, reduce_op='sum'):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash((Partial, self.reduce_op))

    def __repr__(self):
        return f'Partial({self.reduce_op})'

    def __str__(self):
        return f'P({self.reduce_op})'
