"""The legacy ``Variable`` of PyTorch 0.3, the seeds' API, kept with its 0.3 semantics.

A Variable is a Tensor; ops on Variables return Variables; ``volatile=True`` marks a
whole computation as inference-only: anything computed from a volatile input is volatile,
requires no grad and records no graph, whatever ``requires_grad`` says elsewhere.
"""
import warnings

from .._dtype import get_default_dtype
from .._tensor_str import format_legacy
from ..backend import xp
from ..tensor import Tensor, legacy, legacy_type_name, wrap
from .._torch_function import disabled_torch_function_impl
from .device_dispatch import as_array
from .graph import NO_EDGES

__all__ = ['Variable']

_new = object.__new__


class Variable(Tensor):
    """``Variable(tensor, requires_grad=False, volatile=False)``."""
    _legacy_variable = True
    __torch_function__ = disabled_torch_function_impl   # computes plain tensors

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None):
        if data is None:
            data = wrap(xp.empty(0, get_default_dtype().numpy))
        if not isinstance(data, Tensor):
            raise TypeError(f'Variable data has to be a tensor, but got {type(data).__name__}')
        if volatile and requires_grad:
            raise RuntimeError("Variable can't be volatile and require_grad at the same time!")
        legacy.active = True
        v = Tensor._make(data._data, False, None, 0, data._vc, cls)
        if requires_grad:
            v.requires_grad_(True)
        if volatile:
            v._volatile = True
        return v

    @property
    def data(self):
        """The wrapped tensor: a plain Tensor sharing this Variable's memory."""
        return wrap(self._data)

    @data.setter
    def data(self, value):
        Tensor.data.fset(self, value)

    @property
    def volatile(self):
        return self._volatile

    @volatile.setter
    def volatile(self, flag):
        if self._grad_fn is not None:
            raise RuntimeError('volatile can only be set on leaf variables')
        if flag and self._requires_grad:
            raise RuntimeError("Variable can't be volatile and require_grad at the same time!")
        self._volatile = bool(flag)

    @property
    def grad(self):
        """The gradient as a Variable (0.3), the same object on every read.

        The engine stores plain tensors; the first read wraps the stored gradient in a
        Variable sharing its data, version counter and history, and keeps that wrapper,
        so ``v.grad is v.grad`` and in-place edits (``v.grad.data.zero_()``) stick.
        """
        g = Tensor.grad.fget(self)
        if g is None or isinstance(g, Variable):
            return g
        wrapped = Tensor._make(g._data, g._requires_grad, g._grad_fn, g._output_nr, g._vc,
                               Variable)
        self._grad = wrapped
        return wrapped

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(self, value)

    def backward(self, gradient=None, retain_graph=None, create_graph=False,
                 retain_variables=None, inputs=None):
        """As ``Tensor.backward``, also taking 0.3's deprecated ``retain_variables``."""
        if retain_variables is not None:
            if retain_graph is not None:
                raise ValueError('only one of retain_graph and retain_variables can be '
                                 'specified')
            warnings.warn('retain_variables option is deprecated and will be removed in 0.3. '
                          'Use retain_graph instead.', DeprecationWarning, stacklevel=2)
            retain_graph = retain_variables
        Tensor.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def __repr__(self):
        return 'Variable containing:' + legacy_body(self._data)

    __str__ = __repr__


def legacy_body(array):
    """The 0.3 tensor text of ``array``, as a Variable or Parameter prints it.

    0.3 had no 0-dim tensors: reductions and indexing on a Variable gave a Variable of
    size 1 (``torch.mean(v)`` printed `` 7.5000`` / ``[torch.FloatTensor of size 1]``).
    A 0-dim value is therefore shown the way 0.3 showed that result, with its value,
    rather than as the value-less ``with no dimension`` line of an empty 0.3 tensor.
    """
    if array.ndim == 0:
        array = array.reshape(1)
    return format_legacy(array, type_name=legacy_type_name(array.dtype))


# ---------------------------------------------------------------------------------------
# Op.apply's part: which class its results are, and volatile computations.

def volatile_result(cls, arrays, params, out_cls):
    """0.3: anything computed from a volatile input is volatile and records nothing."""
    node = _new(cls)
    node._saved = ()
    node.next_functions = NO_EDGES
    out = node.forward(*arrays, **params)
    outs = out if out.__class__ is tuple else (out,)
    tensors = []
    for o in outs:
        t = Tensor._make(as_array(o), False, None, 0, None, out_cls)
        t._volatile = True
        tensors.append(t)
    return tuple(tensors) if out.__class__ is tuple else tensors[0]


def legacy_flags(inputs):
    out_cls, volatile = Tensor, False
    for x in inputs:
        if isinstance(x, Variable):
            out_cls = Variable
            if x._volatile:
                volatile = True
    return out_cls, volatile


def mark_volatile(target):
    """0.3: writing a volatile value makes the target (and its base) volatile."""
    target._volatile = True
    if target._base is not None:
        target._base._volatile = True
