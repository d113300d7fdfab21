"""One program for a varying batch dimension.

Two captures of the same call at two batch sizes B1 and B2 are compared value by value
(``symbolize``): what is equal stays a constant; an integer that is ``k * B1`` in the
first and ``k * B2`` in the second (a ``view(B * T, C)``, a shape to sum a gradient back
to, a ``randn(B, 4)``) becomes ``Sym(k)``, read ``k * B`` at every call (``instantiate``);
anything else that differs (a constant tensor the size of the batch, a Python float
computed from it) means no dynamic program, and each batch size keeps its own. This is
PyTorch's "automatic dynamic shapes" with the one symbol its users meet most, the batch,
found by comparison rather than by tracing symbolic integers through Python.
"""
import numpy as np

from ..tensor import Tensor

__all__ = ['Sym', 'Differ', 'symbolize', 'instantiate', 'has_symbols']


class Sym:
    """``k * B``, B being the call's batch size (an integer, or a number of ``kind``)."""
    __slots__ = ('k', 'kind')

    def __init__(self, k, kind=int):
        self.k, self.kind = k, kind

    def value(self, batch):
        return self.kind(self.k * batch)

    def __eq__(self, other):
        return isinstance(other, Sym) and (self.k, self.kind) == (other.k, other.kind)

    def __hash__(self):
        return hash((Sym, self.k, self.kind))

    def __repr__(self):      # s0: the batch size, as torch.export names its first symbol
        return f'{self.k}*s0' if self.k != 1 else 's0'


class Differ(Exception):
    """Two captures differ in a way a batch symbol does not explain."""


_INTEGERS = (int, np.integer)
_REALS = (float, np.floating)


def symbolize(a, b, b1, b2):
    """A template equal to ``a`` at batch ``b1`` and to ``b`` at batch ``b2``."""
    if a is b:
        return a
    if type(a) is not type(b):
        raise Differ(f'{type(a).__name__} against {type(b).__name__}')
    if isinstance(a, (bool, np.bool_)):
        if a == b:
            return a
        raise Differ(f'{a!r} against {b!r}')
    if isinstance(a, _INTEGERS):
        if a == b:
            return a
        if a and a % b1 == 0 and (a // b1) * b2 == b:
            return Sym(int(a // b1), type(a))
        raise Differ(f'{a} against {b} (batch {b1} against {b2})')
    if isinstance(a, _REALS):
        if a == b:
            return a
        k = a / b1
        if k * b2 == b and float(k).is_integer():
            return Sym(int(k), type(a))
        raise Differ(f'{a} against {b} (batch {b1} against {b2})')
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            raise Differ(f'{len(a)} items against {len(b)}')
        items = [symbolize(x, y, b1, b2) for x, y in zip(a, b)]
        if hasattr(a, '_make'):
            return a._make(items)
        return type(a)(items)
    if isinstance(a, dict):
        if a.keys() != b.keys():
            raise Differ('different keys')
        return {k: symbolize(v, b[k], b1, b2) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(*(symbolize(x, y, b1, b2) for x, y in
                       ((a.start, b.start), (a.stop, b.stop), (a.step, b.step))))
    if isinstance(a, np.ndarray):
        if a.shape == b.shape and a.dtype == b.dtype and (a == b).all():
            return a
        raise Differ('an array that changed with the batch')
    if isinstance(a, Tensor):
        symbolize(a._data, b._data, b1, b2)
        return a
    try:
        same = bool(a == b)
    except Exception:       # noqa: BLE001 - an object that cannot say: not the same
        same = False
    if same:
        return a
    raise Differ(f'{a!r} against {b!r}')


def has_symbols(template):
    if isinstance(template, Sym):
        return True
    if isinstance(template, (tuple, list)):
        return any(has_symbols(x) for x in template)
    if isinstance(template, dict):
        return any(has_symbols(x) for x in template.values())
    if isinstance(template, slice):
        return any(has_symbols(x) for x in (template.start, template.stop, template.step))
    return False


def instantiate(template, batch):
    """``template`` with each ``Sym`` replaced by its value at ``batch``."""
    if isinstance(template, Sym):
        return template.value(batch)
    if isinstance(template, (tuple, list)):
        items = [instantiate(x, batch) for x in template]
        if hasattr(template, '_make'):
            return template._make(items)
        return type(template)(items)
    if isinstance(template, dict):
        return {k: instantiate(v, batch) for k, v in template.items()}
    if isinstance(template, slice):
        return slice(*(instantiate(x, batch)
                       for x in (template.start, template.stop, template.step)))
    return template
