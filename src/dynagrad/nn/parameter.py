"""``Parameter``: a tensor that a Module registers as trainable; ``Buffer``, the marker of a
tensor registered as a buffer; the uninitialized placeholders of the lazy modules."""
import numpy as np

from ..tensor import NOT_FLOAT_FACTORY_ERROR, Tensor, wrap
from .._torch_function import disabled_torch_function_impl


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and registers itself on a Module."""
    # as in PyTorch: what a Parameter computes is a plain Tensor
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f'Parameter data must be a Tensor, got {type(data).__name__}')
        p = Tensor._make(data._data, False, None, 0, data._vc, cls)
        if requires_grad:
            p._set_requires_grad(True, NOT_FLOAT_FACTORY_ERROR)    # PyTorch's factory wording
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


class _BufferMeta(type):
    """``isinstance(t, Buffer)``: a tensor made by ``Buffer(...)`` (it carries the flag)."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, '_is_buffer', False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor to register as a buffer when assigned to a Module attribute.

    As in PyTorch the result is a plain (detached) tensor marked with ``_is_buffer`` and
    ``persistent``; ``persistent=False`` keeps it out of ``state_dict``."""
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f'Buffer data must be a Tensor, got {type(data).__name__}')
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


_UNINITIALIZED_USE = (
    'Attempted to use an uninitialized parameter in {what}. This error happens when you are '
    'using a `LazyModule` or explicitly manipulating '
    '`dynagrad.nn.parameter.UninitializedParameter` objects. When using LazyModules Call '
    '`forward` with a dummy batch to initialize the parameters before calling dynagrad '
    'functions')

_UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    'happens in `load_state_dict` when trying to load an uninitialized parameter into an '
    'initialized one. Call `forward` to initialize the parameters before accessing their '
    'attributes.')


class _NoData(np.ndarray):
    """The array of an uninitialized tensor: it keeps the dtype, and every NumPy function
    or ufunc applied to it raises PyTorch's "uninitialized parameter" error."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise ValueError(_UNINITIALIZED_USE.format(what=ufunc.__name__))

    def __array_function__(self, func, types, args, kwargs):
        raise ValueError(_UNINITIALIZED_USE.format(what=func.__name__))

    def _refuse_conversion(self, *args):
        raise ValueError(_UNINITIALIZED_USE.format(what='a conversion'))

    __float__ = __int__ = __index__ = __bool__ = __complex__ = _refuse_conversion


def _no_data(dtype):
    return np.empty((0,), dtype).view(_NoData)


class UninitializedTensorMixin:
    """Placeholder behaviour shared by the uninitialized parameter and buffer: no shape and
    no values until :meth:`materialize` gives them, turning the object into
    ``cls_to_become`` in place (so modules and optimizers holding it keep the same object)."""

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor ``shape`` (uninitialized values) and turn it into
        ``cls_to_become``."""
        from .._device import check_device
        check_device(device)
        if isinstance(shape, int):
            shape = (shape,)
        np_dtype = self._data.dtype if dtype is None else dtype.numpy
        self._data = np.empty(tuple(int(s) for s in shape), np_dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def size(self, dim=None):
        raise ValueError(_UNINITIALIZED_USE.format(what='size'))

    def _uninitialized(name):
        def refuse(self, *args, **kwargs):
            raise ValueError(_UNINITIALIZED_USE.format(what=name))
        refuse.__name__ = name
        return refuse

    numel = _uninitialized('numel')
    dim = _uninitialized('dim')
    item = _uninitialized('item')
    tolist = _uninitialized('tolist')
    numpy = _uninitialized('numpy')
    del _uninitialized

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            'initialize the parameters before calling `module.share_memory()`.')

    def __repr__(self):
        return f'<{type(self).__name__}>'

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (lazy modules); becomes a ``Parameter``."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._device import check_device
        from .. import _dtype
        check_device(device)
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        p = Tensor._make(_no_data(dtype.numpy), False, None, 0, None, cls)
        if requires_grad:
            p._set_requires_grad(True, NOT_FLOAT_FACTORY_ERROR)    # PyTorch's factory wording
        return p


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules); becomes a plain ``Tensor``."""
    __torch_function__ = disabled_torch_function_impl
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._device import check_device
        from .. import _dtype
        check_device(device)
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        t = Tensor._make(_no_data(dtype.numpy), False, None, 0, None, cls)
        if requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
