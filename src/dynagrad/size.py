"""dynagrad.Size: the tuple subclass that ``Tensor.size()`` and ``Tensor.shape`` return."""


class Size(tuple):
    __slots__ = ()

    def __repr__(self):
        return f'dynagrad.Size([{", ".join(str(d) for d in self)}])'

    __str__ = __repr__

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))
