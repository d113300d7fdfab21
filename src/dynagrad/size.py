"""dynagrad.Size: the tuple subclass that ``Tensor.size()`` and ``Tensor.shape`` return."""


def _as_dim(d, i):
    """One size: a Python int as is; anything with ``__index__`` (NumPy ints, bools,
    one-element integer tensors) converted; anything else refused as torch.Size does."""
    index = getattr(type(d), '__index__', None)
    if index is not None:
        try:
            return index(d)
        except TypeError:
            pass
    cls = type(d)
    name = cls.__qualname__ if cls.__module__ in ('builtins', 'dynagrad.tensor') \
        else f'{cls.__module__.split(".")[0]}.{cls.__qualname__}'
    raise TypeError(f"dynagrad.Size() takes an iterable of 'int' (item {i} is '{name}')")


class Size(tuple):
    __slots__ = ()

    def __new__(cls, sizes=()):
        t = tuple.__new__(cls, sizes)
        for d in t:
            if d.__class__ is not int:
                return tuple.__new__(cls, [_as_dim(d, i) for i, d in enumerate(t)])
        return t

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
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        result = tuple.__mul__(self, n)
        return result if result is NotImplemented else Size(result)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
