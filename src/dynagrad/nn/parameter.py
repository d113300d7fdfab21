"""``Parameter``: a tensor that a Module registers as trainable."""
from ..tensor import Tensor, wrap


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and registers itself on a Module."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f'Parameter data must be a Tensor, got {type(data).__name__}')
        p = Tensor._make(data._data, False, None, 0, data._vc, cls)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __repr__(self):
        from .._tensor_str import get_printoptions
        if get_printoptions().get('legacy'):
            # 0.3: 'Parameter containing:' + repr(self.data), whose text starts with '\n'.
            from ..autograd.variable import legacy_body
            return 'Parameter containing:' + legacy_body(self._data)
        return 'Parameter containing:\n' + Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (Parameter, (wrap(self._data),
                            self._requires_grad))
