"""The Tensor: a NumPy array plus what autograd needs to know about it.

Math lives in ``dynagrad.ops``; its functions are bound as methods and operators there.
This file holds storage, autograd state, conversion and printing.
"""
import numbers
import operator
import threading
import warnings

import numpy as np

from . import _dtype
from ._device import backend_of, as_device, device_of_type, resolve
from ._device import CPU, CPU_BACKEND, DEVICE_ARRAY_TYPES, check_device  # noqa: F401  (re-exported: ops and serialization use them)
from .size import Size
from ._layout import (strided, sparse_coo, contiguous_format, preserve_format, memory_order,
                      MEMORY_ORDERS)
from ._coo import COO
from ._meta import MetaArray, contiguous_strides, has_strides

__all__ = ['Tensor', 'VersionCounter', 'legacy_type_name', 'wrap', 'bump_version', 'method',
           'grad_mode', 'legacy', 'INFERENCE_COUNTER', 'inference_blocks',
           'INFERENCE_WRITE_ERROR', 'NOT_FLOAT_FACTORY_ERROR']

_new = object.__new__

# Tensor.reinforce (and the 0.3 Variable's): the method PyTorch removed, and what to use.
REINFORCE_REMOVED = (
    'reinforce() was removed.\nUse dynagrad.distributions instead.\n'
    'See https://pytorch.org/docs/master/distributions.html\n\n'
    'Instead of:\n\nprobs = policy_network(state)\naction = probs.multinomial()\n'
    'next_state, reward = env.step(action)\naction.reinforce(reward)\n'
    'action.backward()\n\nUse:\n\nprobs = policy_network(state)\n'
    '# NOTE: categorical is equivalent to what used to be called multinomial\n'
    'm = dynagrad.distributions.Categorical(probs)\naction = m.sample()\n'
    'next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n'
    'loss.backward()')

_ndarray = np.ndarray


class VersionCounter:
    """Counts in-place writes to one storage; shared by its views and detached aliases.

    It also remembers the last in-place op that wrote (and where, under anomaly
    detection), so the error about a modified saved tensor can name the culprit.
    """
    __slots__ = ('value', 'modified_by', 'modified_at', 'written_by')

    def __init__(self):
        self.value = 0
        self.modified_by = self.modified_at = self.written_by = None


class _InferenceCounter(VersionCounter):
    """The one counter every inference tensor shares, and the mark that makes it one.

    PyTorch's inference tensors track no versions: nothing can save them for backward, so
    no write to them needs counting. Holding this counter is what ``is_inference()`` asks;
    views and detached aliases share their source's counter, so they are inference tensors
    with no extra work, as in PyTorch.
    """
    __slots__ = ()


INFERENCE_COUNTER = _InferenceCounter()

INFERENCE_WRITE_ERROR = (
    'Inplace update to inference tensor outside InferenceMode is not allowed.You can make a '
    'clone to get a normal tensor before doing inplace update.See '
    'https://github.com/pytorch/rfcs/pull/17 for more details.')


# requires_grad=True asked of a factory (torch.ones, new_zeros, ...) for a dtype that is not
# floating point: PyTorch's wording there, which differs from requires_grad_()'s
NOT_FLOAT_FACTORY_ERROR = 'Only Tensors of floating point and complex dtype can require gradients'


class _InferenceBlocks:
    """How many ``inference_mode`` blocks are open, in all threads. ``wrap`` reads it first,
    so that tensors made while none is open (nearly all) skip the thread-local flag."""
    __slots__ = ('open', 'lock')

    def __init__(self):
        self.open = 0
        self.lock = threading.Lock()


inference_blocks = _InferenceBlocks()


class _GradMode(threading.local):
    """Whether ops record a graph (thread-local, as in PyTorch). It lives with the Tensor,
    which reads it (``numpy()`` refuses a tensor that requires grad only while recording);
    ``dynagrad.autograd.grad_mode`` holds the context managers that set it."""
    grad_enabled = True
    inference = False
    # grad mode turned on inside inference_mode: reported by is_grad_enabled(), while
    # grad_enabled stays False, since PyTorch records nothing there
    grad_in_inference = False


grad_mode = _GradMode()


class _Legacy:
    """Set once a 0.3 ``Variable`` exists, so programs that never make one skip its checks."""
    active = False


legacy = _Legacy()


def method(*names):
    """Decorator: bind the function as the Tensor method(s) ``names`` (by default its own
    name; ``@method`` and ``@method()`` do the same).

    The layers above the Tensor (autograd, ops) declare the methods they implement where
    they implement them; this module imports none of them.
    """
    if len(names) == 1 and callable(names[0]):      # bare @method
        fn, = names
        setattr(Tensor, fn.__name__, fn)
        return fn

    def bind(fn):
        for name in names or (fn.__name__,):
            setattr(Tensor, name, fn)
        return fn
    return bind


def wrap(array):
    """A Tensor with no history around ``array`` (no copy): how code that computed an array
    hands it out as a tensor."""
    t = _new(Tensor)
    t._data = array
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    if inference_blocks.open and grad_mode.inference:
        t._vc_slot = INFERENCE_COUNTER  # made inside inference_mode: an inference tensor
    return t


def bump_version(tensor, writer='an in-place write'):
    """Count a write into ``tensor``'s array made outside an op (an optimizer's update,
    nn.init, gradient clipping, DDP's averaged gradients), so that a graph that saved the
    old value refuses to use it, as PyTorch's version counters do."""
    vc = tensor._vc_slot    # (the property's work, inline: an optimizer bumps each parameter)
    if vc is None:
        vc = tensor._vc
    vc.value += 1
    vc.modified_by = vc.modified_at = None
    vc.written_by = writer


def legacy_type_name(np_dtype):
    """``dynagrad.FloatTensor`` and friends: the names PyTorch's messages and 0.3 prints use."""
    return 'dynagrad.' + _dtype.FROM_NUMPY[np_dtype].legacy_name


def _on_device_type(kind):
    """``Tensor.is_cuda`` and friends: whether the tensor's array lives on a ``kind`` device."""
    return property(lambda self: backend_of(self._data).type == kind,
                    doc=f'Whether the tensor is on a {kind!r} device.')


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""
    __slots__ = ('_data', '_requires_grad', '_grad_fn', '_output_nr',
                 '__weakref__', '__dict__')

    # Rarely used state: class-level defaults, set per instance only when needed.
    _grad = None          # set on leaves by backward (kept off the slots: most tensors never
                          # get one, and every op's output would pay to store the None)
    _vc_slot = None       # the version counter, made on first use (see _vc)
    _base = None          # the tensor this one is a view of
    _view_fn = None       # how to re-derive this view from _base: ((op, params, output), ...)
    _grad_acc = None      # weak reference to this leaf's AccumulateGrad node
    _hooks = None         # hooks of a leaf, run before its gradient is accumulated
    _volatile = False     # 0.3 semantics, only ever set on Variables and what they compute
    _legacy_variable = False  # True on the 0.3 Variable class (autograd/variable.py)
    _multi_view_of = None  # name of the node when this is one of several views it returned
    _grad_dtype = False   # dtype .grad is kept in: False is "this tensor's own", None is "any"
    _post_acc_hooks = None  # a leaf's hooks run after its .grad was accumulated
    _is_conj = False      # made by conj() of a complex tensor (ops/complex.py)
    __array_ufunc__ = None  # make NumPy defer to our reflected operators

    @staticmethod
    def _make(data, requires_grad, grad_fn, output_nr, vc, cls):
        t = _new(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        if vc is not None:
            t._vc_slot = vc
        return t

    @property
    def _vc(self):
        """The version counter, made on first use: most tensors are never saved or written."""
        vc = self._vc_slot
        if vc is None:
            vc = self._vc_slot = VersionCounter()
        return vc

    @_vc.setter
    def _vc(self, vc):
        self._vc_slot = vc

    def __new__(cls, *args, **kwargs):
        """Legacy constructor: ``Tensor(3, 4)`` allocates a size, ``Tensor([1, 2])`` copies data."""
        return cls._from_legacy_args(args, kwargs, _dtype.get_default_dtype())

    @classmethod
    def _from_legacy_args(cls, args, kwargs, dtype, typed=False):
        """PyTorch's legacy constructor: sizes, data, or a tensor to alias."""
        unknown = set(kwargs) - {'device'}
        if unknown:
            raise TypeError(f'new() received an invalid combination of arguments: unexpected '
                            f'keyword {sorted(unknown)[0]!r}; pass sizes or data, and use '
                            'dynagrad.tensor(data, dtype=..., requires_grad=...) for the rest')
        wanted = as_device(kwargs.get('device'))
        if wanted is not None and wanted.type != 'cpu':
            raise RuntimeError(f'legacy constructor expects device type: cpu but device type: '
                               f'{wanted.type} was passed')
        np_dtype = dtype.numpy
        if not args:
            data = np.empty((0,), np_dtype)
        elif len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            if typed and src._data.dtype != np_dtype:
                raise TypeError(f'expected {dtype.legacy_name} (got {src.type()})')
            return Tensor._make(src._data, False, None, 0, src._vc, cls)
        elif all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
                 for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
            shape = tuple(int(a) for a in (args[0] if isinstance(args[0], Size) else args))
            negative = [d for d in shape if d < 0]
            if negative:
                raise RuntimeError(f'Trying to create tensor with negative dimension '
                                   f'{negative[0]}: {list(shape)}')
            data = np.empty(shape, np_dtype)
        elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
            data = np.array(to_nested(args[0]), dtype=np_dtype)
        elif len(args) == 1:
            raise TypeError(f'new(): data must be a sequence (got {type(args[0]).__name__})')
        else:
            raise TypeError(f'{cls.__name__}(): pass sizes as ints or data as one sequence, '
                            f'got {args!r}')
        made_inside = inference_blocks.open and grad_mode.inference
        return Tensor._make(data, False, None, 0, INFERENCE_COUNTER if made_inside else None,
                            cls)

    # -- basic properties ---------------------------------------------------------------
    @property
    def _cdata(self):
        # torch: the address of the tensor's C++ object, which libraries compare to tell two
        # tensors apart (pyro's param store); a dynagrad tensor is its Python object
        return id(self)

    @property
    def dtype(self):
        return _dtype.FROM_NUMPY[self._data.dtype]

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, 'size')]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        data = self._data
        if data.size and not (isinstance(data, MetaArray) and not has_strides()):
            strides = tuple(s // data.itemsize for s in data.strides)
        else:
            # NumPy gives an empty array zero strides (and so do meta arrays where the
            # zero region is missing); PyTorch reports row-major ones (a zero-length dim
            # counted as 1)
            strides = contiguous_strides(data.shape)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim, 'stride')]

    def is_contiguous(self, memory_format=None):
        data = self._data
        if memory_format is None or memory_format is contiguous_format:
            return data.flags.c_contiguous
        if memory_format is preserve_format:
            raise RuntimeError('is_contiguous: preserve memory format is unsupported by the '
                               'contiguous operator')
        order = MEMORY_ORDERS.get((memory_format, data.ndim))
        # dense with its dims laid out in the format's order (NHWC for channels_last)
        return order is not None and data.transpose(order).flags.c_contiguous

    @property
    def device(self):
        """The ``dynagrad.device`` holding the data: the owner of its array."""
        return backend_of(self._data).device

    is_cpu, is_cuda, is_mps, is_xpu, is_meta, is_ipu, is_mtia = map(
        _on_device_type, ('cpu', 'cuda', 'mps', 'xpu', 'meta', 'ipu', 'mtia'))

    @property
    def layout(self):
        return sparse_coo if self._data.__class__ is COO else strided

    @property
    def is_sparse(self):
        """Whether this is a sparse COO tensor (``_data`` a ``COO``: dynagrad.ops.sparse)."""
        return self._data.__class__ is COO

    # Kinds of tensor dynagrad does not have (compressed sparse, quantized, nested, vendor
    # layouts): programs ask before taking a special path, and the answer is always no.
    is_sparse_csr = is_quantized = is_nested = is_mkldnn = property(lambda self: False)
    is_vulkan = is_xla = is_maia = property(lambda self: False)

    def is_pinned(self, device=None):
        return False

    def is_distributed(self):
        return False

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (by stride, ties in order)."""
        strides = self._data.strides
        return tuple(sorted(range(self._data.ndim), key=lambda d: -strides[d]))

    def get_device(self):
        """The device index, -1 on the CPU (as PyTorch)."""
        index = backend_of(self._data).device.index
        return -1 if index is None else index

    def data_ptr(self):
        """The address of the first element (0 for a tensor with no elements, as PyTorch)."""
        return array_address(self._data)

    const_data_ptr = data_ptr

    # -- autograd state ---------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._set_requires_grad(flag, 'only Tensors of floating point and complex dtype can '
                                      'require gradients')

    def requires_grad_(self, requires_grad=True):
        # PyTorch words the dtype error three ways: this method's, the attribute's (above)
        # and the factories' (dynagrad.ops.creation)
        return self._set_requires_grad(requires_grad, 'only Tensors of floating point dtype '
                                                      'can require gradients')

    def _set_requires_grad(self, requires_grad, not_float_message):
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                'you can only change requires_grad flags of leaf variables. If you want to use '
                'a computed variable in a subgraph that doesn\'t require differentiation use '
                'var_no_grad = var.detach().')
        if requires_grad and self._data.dtype.kind not in 'fVc':
            raise RuntimeError(f'{not_float_message} (got {self.dtype}; use a floating point '
                               'dtype, e.g. .float())')
        if requires_grad and self._vc_slot is INFERENCE_COUNTER and not grad_mode.inference:
            raise RuntimeError('Setting requires_grad=True on inference tensor outside '
                               'InferenceMode is not allowed. (Make a normal tensor with '
                               '.clone() first.)')
        if requires_grad and self._volatile:
            raise RuntimeError("Variable can't be volatile and require_grad at the same time!")
        if requires_grad and self._base is not None:
            # A view made a leaf that requires grad is the root of its own views' history,
            # so writing through them is caught as writing into a leaf.
            self._base = self._view_fn = None
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def output_nr(self):
        return max(self._output_nr, 0)

    @property
    def _version(self):
        vc = self._vc
        if vc is INFERENCE_COUNTER:
            raise RuntimeError('Inference tensors do not track version counter.')
        return vc.value

    @property
    def grad(self):
        if self._grad_fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(
                'The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. '
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                'indeed want the .grad field to be populated for a non-leaf Tensor, use '
                '.retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by '
                'mistake, make sure you access the leaf Tensor instead.', UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f'assigned grad expected to be a Tensor or None but got grad '
                                f'of type {type(value).__name__}')
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            wanted = self._grad_dtype
            wanted = self.dtype if wanted is False else wanted
            if wanted is not None and value._data.dtype != wanted.numpy:
                raise RuntimeError(
                    f'attempting to assign a gradient with dtype {value.dtype} to a tensor with '
                    f'grad_dtype {wanted}. The gradient must match the tensor\'s grad_dtype '
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    'attribute with a specific dtype, or None to allow any dtype.')
            if value._data.shape != self._data.shape:
                raise RuntimeError('assigned grad has data of a different size: expected '
                                   f'{list(self._data.shape)}, got {list(value._data.shape)}')
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` is kept in (a leaf's own dtype unless set; None: any dtype).
        Incoming gradients are cast to it when they are accumulated."""
        if self._grad_fn is not None:
            raise RuntimeError('grad_dtype can only be accessed on leaf tensors.')
        wanted = self._grad_dtype
        return self.dtype if wanted is False else wanted

    @grad_dtype.setter
    def grad_dtype(self, dtype):
        if dtype is not None and not isinstance(dtype, _dtype.dtype):
            raise RuntimeError(f'grad_dtype must be a torch.dtype or None, but got '
                               f'{type(dtype).__name__}')
        if self._grad_fn is not None:
            raise RuntimeError('grad_dtype can only be set on leaf tensors.')
        grad = self._grad
        if dtype is not None and grad is not None and grad._data.dtype != dtype.numpy:
            raise RuntimeError(f'Cannot set grad_dtype to {dtype} because there is already a '
                               f'gradient with dtype {grad.dtype}. Please clear the gradient '
                               '(.grad = None) before changing grad_dtype, or ensure the new '
                               "grad_dtype matches the existing gradient's dtype.")
        self._grad_dtype = dtype

    @property
    def retains_grad(self):
        fn = self._grad_fn
        if fn is None or fn._retain_refs is None:
            return False
        ref = fn._retain_refs.get(self._output_nr)
        return ref is not None and ref() is self

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return
        self._grad_fn._retain_grad_of(self._output_nr, self)

    def detach(self):
        """A tensor sharing data and version counter, cut from the graph."""
        # A 0.3 Variable detaches to a Variable; anything else (a Parameter too) to a Tensor.
        t = Tensor._make(self._data, False, None, 0, self._vc, type(self) if
                         legacy.active and self._legacy_variable else Tensor)
        if self._volatile:
            t._volatile = True
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        """The values without history (not sharing the version counter, as in PyTorch)."""
        t = wrap(self._data)
        if self._vc_slot is INFERENCE_COUNTER:
            t._vc_slot = INFERENCE_COUNTER    # still an inference tensor, as in PyTorch
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f'data must be a Tensor, got {type(value).__name__}')
        self._data = value._data
        # the storage's kind comes along with it (PyTorch: the tensor becomes an inference
        # tensor, or stops being one)
        if value._vc_slot is INFERENCE_COUNTER:
            self._vc_slot = INFERENCE_COUNTER
        elif self._vc_slot is INFERENCE_COUNTER:
            self._vc_slot = None

    @property
    def volatile(self):
        return self._volatile

    def is_inference(self):
        """Whether this tensor was made inside ``inference_mode`` (or views or aliases one
        that was): such a tensor cannot be saved for backward or written in place outside
        inference mode; ``clone()`` it to get a normal tensor."""
        return self._vc_slot is INFERENCE_COUNTER

    @property
    def name(self):
        """Named tensors are not supported: every tensor's name is None, as PyTorch's
        unnamed tensors."""
        return None

    def reinforce(self, reward):
        raise RuntimeError(REINFORCE_REMOVED)

    def as_subclass(self, cls):
        """This tensor seen as an instance of ``cls`` (a Tensor subclass): the same data and
        version counter; the gradient flows back through it to this tensor."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError('Creating a Tensor subclass from a class that does not inherit from '
                            'Tensor is not possible. Make sure your class inherits from Tensor.')
        from ._torch_function import DisableTorchFunctionSubclass
        with DisableTorchFunctionSubclass():    # PyTorch's as_subclass does not dispatch
            out = self[...]  # an alias (AliasBackward0), as PyTorch records
        out.__class__ = cls
        return out

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """A ``cls`` instance sharing ``data``'s storage, a leaf of no graph (how Tensor
        subclasses are built from a tensor in ``__new__``)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f'_make_subclass(): cls must be a Tensor subclass, not {cls!r}')
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' must be Tensor, not "
                            f'{type(data).__name__}')
        t = Tensor._make(data._data, False, None, 0, data._vc, cls)
        if require_grad:
            t.requires_grad_(True)
        return t

    def module_load(self, other, assign=False):
        """What ``load_state_dict`` swaps in for this parameter or buffer: ``other`` copied
        into this tensor (``other`` itself when ``assign``), detached."""
        if not isinstance(other, Tensor):
            raise TypeError(f'copy_(): argument \'other\' (position 1) must be Tensor, not '
                            f'{type(other).__name__}')
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    # -- conversion -------------------------------------------------------------------
    def numpy(self, *, force=False):
        if self._requires_grad and (grad_mode.grad_enabled or grad_mode.grad_in_inference) \
                and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               'tensor.detach().numpy() instead.')
        if self._data.__class__ is COO:
            raise TypeError("can't convert Sparse layout tensor to numpy. Use "
                            'Tensor.to_dense() first.')
        data = self._data
        dt = data.dtype
        if dt.kind == 'V' or (dt.kind == 'f' and dt.itemsize == 1):
            # PyTorch's error: NumPy itself has no bfloat16 or float8 (convert with .float())
            raise TypeError(f'Got unsupported ScalarType '
                            f'{_dtype.type_name(_dtype.FROM_NUMPY[dt])}')
        if data.__class__ is not np.ndarray and data.__class__ in DEVICE_ARRAY_TYPES:
            if force:   # PyTorch: force=True is detach().cpu().numpy()
                return CPU_BACKEND.asarray(data)
            raise TypeError(f"can't convert {backend_of(data).device} device type tensor to "
                            'numpy. Use Tensor.cpu() to copy the tensor to host memory first.')
        return data

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Share this tensor's memory with another array library (DLPack protocol)."""
        data = self._data
        try:
            return data.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)
        except TypeError:   # NumPy 2.0 takes none of those: a legacy capsule, as the protocol
            return (data.copy() if copy else data).__dlpack__()     # allows a producer

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __array__(self, dtype=None, copy=None):
        if (self._requires_grad and (grad_mode.grad_enabled or grad_mode.grad_in_inference)
                or self._data.dtype.kind == 'V' or self._data.__class__ is COO
                or self._data.__class__ in DEVICE_ARRAY_TYPES):
            self.numpy()  # raises PyTorch's error
        if dtype is not None:
            return self._data.astype(dtype, copy=False)
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f'a Tensor with {self._data.size} elements cannot be converted '
                               'to Scalar')
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError('only one element tensors can be converted to Python scalars')
        return self._data.reshape(()).item()

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __index__(self):
        if self._data.dtype.kind not in 'iub' or self._data.size != 1:
            raise TypeError('only integer tensors of a single element can be converted to an '
                            'index')
        return int(self.item())

    def __bool__(self):
        n = self._data.size
        if n == 1:
            return bool(self._data.reshape(()).item())
        if n == 0:
            raise RuntimeError('Boolean value of Tensor with no values is ambiguous')
        raise RuntimeError('Boolean value of Tensor with more than one value is ambiguous')

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError('len() of a 0-d tensor')
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError('iteration over a 0-d tensor')
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self):
        return id(self)

    def __contains__(self, element):
        # PyTorch: `x in t` is (t == x).any() for a tensor or a number (numbers.Number: so
        # NumPy's numeric scalars, but not np.bool_), and refuses anything else.
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((self == element).any())
        raise RuntimeError('Tensor.__contains__ only supports Tensor or scalar, but you passed '
                           f'in a {type(element)}.')

    def __format__(self, spec):
        if isinstance(self._data, MetaArray):       # no value to format (PyTorch's rule)
            if spec:
                raise TypeError('unsupported format string passed to Tensor.__format__')
            return repr(self)
        if self._data.ndim == 0 or (spec and self._data.size == 1):
            return format(self.item(), spec)
        if spec:
            raise TypeError('unsupported format string passed to Tensor.__format__')
        return repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError('Only Tensors created explicitly by the user (graph leaves) '
                               'support the deepcopy protocol at the moment.')
        t = Tensor._make(self._data.copy(), self._requires_grad, None, 0, None, type(self))
        if self.__dict__:
            import copy
            t.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            name = legacy_type_name(self._data.dtype)
            return name.replace('.', '.sparse.', 1) if self._data.__class__ is COO else name
        if isinstance(dtype, str):
            name = dtype.split('.')[-1]
            matches = [d for d in _dtype.ALL if d.legacy_name == name]
            if not matches:
                raise ValueError(f'invalid type: {dtype!r}')
            dtype = matches[0]
        elif isinstance(dtype, type) and issubclass(dtype, Tensor) and hasattr(dtype, '_dtype'):
            dtype = dtype._dtype
        return self.to(dtype)

    def type_as(self, other):
        return self.to(other.dtype)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def bfloat16(self):
        return self.to(_dtype.bfloat16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def short(self):
        return self.to(_dtype.int16)

    def char(self):
        return self.to(_dtype.int8)

    def byte(self):
        return self.to(_dtype.uint8)

    def bool(self):
        return self.to(_dtype.bool)

    def cpu(self, memory_format=None):
        return self.to(CPU)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on a CUDA device; raises PyTorch's error where there is none."""
        return self.to(device_of_type('cuda', device), non_blocking=non_blocking)

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        return self.to(device_of_type('xpu', device), non_blocking=non_blocking)

    def mtia(self, device=None, non_blocking=False, memory_format=None):
        return self.to(device_of_type('mtia', device), non_blocking=non_blocking)

    def ipu(self, device=None, non_blocking=False, memory_format=None):
        return self.to(device_of_type('ipu', device), non_blocking=non_blocking)

    def contiguous(self, memory_format=None):
        order = memory_order(memory_format, self._data.ndim)
        if order is None:
            return self if self._data.flags.c_contiguous else self.clone()
        if self.is_contiguous(memory_format=memory_format):
            return self
        # a row-major copy of the dims in memory order, seen back in logical order
        inverse = tuple(sorted(range(len(order)), key=order.__getitem__))
        return self.permute(order).clone().permute(inverse)

    # -- creation helpers -------------------------------------------------------------
    def _new_filled(self, fill, size, dtype, device, requires_grad):
        size = size_args(size)
        np_dtype = (dtype or self.dtype).numpy
        ns = (backend_of(self._data) if device is None else resolve(device)).xp
        data = ns.empty(size, np_dtype) if fill is None else ns.full(size, fill, np_dtype)
        return wrap(data)._set_requires_grad(requires_grad, NOT_FLOAT_FACTORY_ERROR)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new_filled(0, size, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new_filled(1, size, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new_filled(None, size, dtype, device, requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return self._new_filled(fill_value, (size,), dtype, device, requires_grad)

    def new(self, *args, **kwargs):
        """The legacy constructor in this tensor's dtype: ``t.new(2, 3)`` allocates a size,
        ``t.new([1, 2])`` copies data, ``t.new(other)`` aliases ``other``."""
        return Tensor._from_legacy_args(args, kwargs, self.dtype, typed=True)

    def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None,
                          pin_memory=False, requires_grad=False):
        """Uninitialised memory seen with ``stride`` (in elements), in this tensor's dtype
        and device unless given."""
        size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError(f'dimensionality of sizes ({len(size)}) must match '
                               f'dimensionality of strides ({len(stride)})')
        if any(n < 0 for n in size):
            raise RuntimeError(f'Trying to create tensor with negative dimension: {list(size)}')
        if any(s < 0 for s in stride):
            raise RuntimeError('as_strided: Negative strides are not supported at the moment, '
                               f'got strides: {list(stride)}')
        np_dtype = np.dtype((dtype or self.dtype).numpy)
        ns = (backend_of(self._data) if device is None else resolve(device)).xp
        count = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
        data = ns.lib.stride_tricks.as_strided(
            ns.empty(count, np_dtype), size, tuple(s * np_dtype.itemsize for s in stride))
        return wrap(data).requires_grad_(requires_grad)

    def apply_(self, callable):
        """Replace every element ``v`` by ``callable(v)``, in place (a Python loop: slow)."""
        return _map_elements(self, 'apply_', (), callable)

    def map_(self, tensor, callable):
        """``self[i] = callable(self[i], tensor[i])`` for every element, in place;
        ``tensor`` broadcasts to this tensor's shape."""
        return _map_elements(self, 'map_', ((tensor, 'other'),), callable)

    def map2_(self, x, y, callable):
        """``self[i] = callable(self[i], x[i], y[i])`` for every element, in place."""
        return _map_elements(self, 'map2_', ((x, 'x'), (y, 'y')), callable)

    # -- printing -------------------------------------------------------------------
    def __repr__(self):
        from . import _tensor_str
        if _tensor_str.get_printoptions().get('legacy'):
            return _tensor_str.format_legacy(self._data, type_name=legacy_type_name(
                self._data.dtype))
        suffixes = []
        if self._grad_fn is not None:
            suffixes.append(f'grad_fn=<{self._grad_fn.name()}>')
        elif self._requires_grad:
            suffixes.append('requires_grad=True')
        tangent = self.__dict__.get('_fw_grad')   # forward mode: shown as PyTorch shows it
        if tangent is not None:
            suffixes.append(f'tangent={tangent!r}')
        if self._data.__class__ is COO:
            return _tensor_str.format_sparse(self._data, dtype_name=self.dtype.name,
                                             suffixes=suffixes,
                                             default_dtype_name=_dtype.get_default_dtype().name)
        data, device = self._data, None
        backend = backend_of(data)
        if backend.type == 'meta':
            return _tensor_str.format_meta(data.shape, dtype_name=self.dtype.name,
                                           suffixes=suffixes,
                                           default_dtype_name=_dtype.get_default_dtype().name)
        if backend is not CPU_BACKEND:
            data, device = CPU_BACKEND.asarray(data), backend.device
        # a user's subclass prints its name, as in PyTorch; dynagrad's own (Parameter, with
        # its own header) print as tensors
        cls = type(self)
        prefix = ('tensor(' if cls is Tensor or cls.__module__.startswith('dynagrad.')
                  else cls.__name__ + '(')
        return _tensor_str.format_tensor(data, dtype_name=self.dtype.name,
                                         suffixes=suffixes, device=device, prefix=prefix,
                                         default_dtype_name=_dtype.get_default_dtype().name)

    __str__ = __repr__


def array_address(array):
    """The address of ``array``'s first element; 0 when it has none, as PyTorch's data_ptr."""
    if array.size == 0 or isinstance(array, MetaArray):
        return 0
    interface = getattr(array, '__array_interface__', None)
    if interface is not None:
        return interface['data'][0]
    return array.data.ptr  # a device array (CuPy's)


def _python_converter(np_dtype):
    """How a value a callable returned becomes an element of ``np_dtype``, refusing what
    PyTorch refuses (a string or None into a number)."""
    def number(v):
        if isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)):
            return v
        if np_dtype.kind in 'iu':
            raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
        raise TypeError(f'must be real number, not {type(v).__name__}')
    if np_dtype.kind in 'iu':
        return lambda v: int(number(v))
    if np_dtype.kind == 'b':
        return lambda v: bool(number(v))
    return lambda v: float(number(v))


def _map_elements(self, op, others, fn):
    """apply_ / map_ / map2_: a Python callable over the elements, written back in place."""
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    if self._requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use "
                           f'var.detach().{op}() instead.')
    if backend_of(self._data).type != 'cpu':
        raise RuntimeError(f'{op}() is only implemented on CPU tensors')
    arrays = []
    for other, arg in others:
        if not isinstance(other, Tensor):
            raise TypeError(f"{op}(): argument '{arg}' (position {len(arrays) + 1}) must be "
                            f'Tensor, not {type(other).__name__}')
        if other._requires_grad:
            raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use "
                               f'var.detach().{op}() instead.')
        if other._data.dtype != self._data.dtype:
            where = f"'{arg}'" if op == 'map_' else f"argument '{arg}'"
            raise TypeError(f'{op}: expected {legacy_type_name(self._data.dtype)} for {where} '
                            f'(got {other.type()})')
        arrays.append(other.expand(self.shape)._data)
    data = self._data
    convert = _python_converter(data.dtype)
    columns = [a.reshape(-1).tolist() for a in [data] + arrays]
    values = [convert(fn(*args)) for args in zip(*columns)]
    data[...] = np.array(values, dtype=data.dtype).reshape(data.shape)
    bump_version(self, op)
    return self


def _rebuild(cls, data, requires_grad):
    t = Tensor._make(data, False, None, 0, None, cls)
    t._requires_grad = requires_grad
    return t


def to_nested(data):
    """Turn tensors inside nested sequences into arrays so NumPy can read them."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [to_nested(d) for d in data]
    return data


def size_args(size, fn=None):
    """Sizes as varargs or one tuple/list/Size: integers (an integer one-element tensor
    too), torch's TypeError for anything else (2.5 is not truncated, 'a' not parsed)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        return tuple(s if s.__class__ is int else operator.index(s) for s in size)
    except TypeError:
        i, bad = next((i, s) for i, s in enumerate(size) if not _is_index(s))
        raise TypeError(f"{fn + '(): ' if fn else ''}argument 'size' must be tuple of ints, but "
                        f'found element of type {type(bad).__name__} at pos {i}') from None


def _is_index(s):
    try:
        operator.index(s)
    except TypeError:
        return False
    return True


def _wrap_dim(dim, ndim, op='dim'):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, {n - 1}], '
                         f'but got {dim})')
    return dim % n

