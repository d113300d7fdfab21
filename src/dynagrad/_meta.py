"""The 'meta' device: tensors with a shape, a dtype and strides but no data.

A meta tensor's array is a ``MetaArray``: NumPy's array class, marked, laid over a region
of address space that is mapped read-only and never backed by memory (every page reads
as the kernel's one zero page), so a tensor of any size costs no memory and its views
have the strides PyTorch's have. Where no such mapping can be made (not Linux, or an
address-space limit), its elements all share one zero (strides 0) and the tensor reports
the contiguous strides of its shape instead. That makes meta one more device backend like
CuPy's, with its own array door:

- factories on 'meta' allocate through ``NAMESPACE`` (NumPy's API), whose ``empty``,
  ``zeros``, ``full``... return placeholders without touching memory, and whose other
  functions run NumPy and hand back a placeholder of the result's shape and dtype;
- ops on meta tensors run their ordinary code (the op mechanism points the door here, as
  for any device) on the placeholders. NumPy hands ``MetaArray`` operands to the class's
  ``__array_ufunc__`` and ``__array_function__``: element-wise ufuncs get their shape by
  broadcasting and their dtype from the ufunc applied to 0-d zeros, without iterating;
  views stay views of the region; the rest compute on the zeros (reading the zero page)
  and become placeholders of their result's shape and dtype;
- writes into a meta array (in-place ops, ``copy_``, ``fill_``, random fills) change
  nothing: there is nothing to change;
- reading values (``item``, ``tolist``, moving to another device) raises what PyTorch
  raises, as do the ops whose result depends on the values (``nonzero``, masks).
"""
import numpy

from ._device import DeviceBackend

__all__ = ['MetaArray', 'NAMESPACE', 'placeholder', 'is_meta', 'load', 'NO_DATA',
           'contiguous_strides', 'has_strides', 'zero_region', 'storage_bytes', 'refuse_masks', 'LAPACK']

NO_DATA = 'Cannot copy out of meta tensor; no data!'


class _Region:
    """The zero region: a NumPy byte array over a read-only anonymous mapping that the
    kernel never commits memory for (made on first use; None when it cannot be)."""
    array = None
    start = 0
    made = False


_region = _Region()


def zero_region():
    """The zero region's byte array (None where it cannot be mapped)."""
    if not _region.made:
        _region.made = True
        try:
            import mmap
            import sys
            noreserve = getattr(mmap, 'MAP_NORESERVE', 0x4000 if sys.platform == 'linux' else 0)
            flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve
        except (ImportError, AttributeError):
            return None
        for size in (1 << 40, 1 << 36):
            try:
                memory = mmap.mmap(-1, size, flags=flags, prot=mmap.PROT_READ)
            except (OSError, ValueError, OverflowError, TypeError):
                continue
            _region.array = numpy.frombuffer(memory, numpy.uint8)
            _region.start = _region.array.__array_interface__['data'][0]
            break
    return _region.array


def storage_bytes(array):
    """The bytes of the storage the meta array ``array`` views, as a flat uint8 array.

    Every placeholder starts at the region's start, so a view's offset in its storage is
    its distance from there. The storage ends where the placeholder the view was taken
    from ends, when the view still leads to it through its bases (NumPy's own views do;
    what came back through ``_wrap`` does not), else where the view itself ends."""
    region = _region.array
    if region is None:      # the fallback's arrays: one element each
        root = array
        while isinstance(root.base, numpy.ndarray):
            root = root.base
        return root.reshape(-1)[:1].view(numpy.uint8)
    end = 0
    if array.size:
        start = array.__array_interface__['data'][0] - _region.start
        end = start + array.itemsize + sum((n - 1) * st
                                           for n, st in zip(array.shape, array.strides))
    base = array.base
    while base is not None and base is not region:
        if isinstance(base, MetaArray) and base.base is region:
            end = max(end, base.nbytes)
        base = getattr(base, 'base', None)
    if array.base is region:
        end = max(end, array.nbytes)
    return region[:end]


def has_strides():
    """Whether meta arrays have real strides (the zero region exists)."""
    return zero_region() is not None


def placeholder(shape, dtype, strides=None):
    """A meta array of ``shape`` and ``dtype`` (row-major unless ``strides``, in bytes,
    are given)."""
    shape = tuple(shape)
    dtype = numpy.dtype(dtype)
    region = zero_region()
    if region is not None:
        if strides is None:
            extent = dtype.itemsize
            for n in shape:
                extent *= n
        else:
            extent = dtype.itemsize + sum((n - 1) * st for n, st in zip(shape, strides))
        if extent <= region.size:
            return MetaArray.__new__(MetaArray, shape, dtype, buffer=region, strides=strides)
    one = numpy.zeros(1, dtype)
    return numpy.lib.stride_tricks.as_strided(one, shape, (0,) * len(shape),
                                              writeable=True).view(MetaArray)


def is_meta(array):
    return isinstance(array, MetaArray)


def contiguous_strides(shape):
    """Row-major strides in elements (a zero-length dim counted as 1, as in PyTorch)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _map_meta(fn, value):
    """``value`` with ``fn`` applied to every meta array in it (through tuples, lists and
    dicts)."""
    if isinstance(value, MetaArray):
        return fn(value)
    cls = value.__class__
    if cls is tuple or cls is list:
        return cls(_map_meta(fn, v) for v in value)
    if cls is dict:
        return {k: _map_meta(fn, v) for k, v in value.items()}
    return value


def _as_numpy(array):
    return array.view(numpy.ndarray)


def _plain(value):
    """``value`` with every meta array in it seen as NumPy's."""
    return _map_meta(_as_numpy, value)


def _in_region(array):
    region = _region.array
    if region is None or not array.size:
        return False
    address = array.__array_interface__['data'][0]
    return _region.start <= address < _region.start + region.size


def _wrap(value):
    """A result of NumPy as meta: views of the zero region stay what they are (their
    strides are the meta tensor's), other arrays and NumPy scalars become placeholders of
    their shape and dtype (their memory is dropped)."""
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        if value.__class__ is not numpy.generic and isinstance(value, numpy.ndarray):
            if _in_region(value):
                return value if isinstance(value, MetaArray) else value.view(MetaArray)
            if isinstance(value, MetaArray) and value.size > 1 and not any(value.strides):
                return value        # the fallback's placeholders
        return placeholder(numpy.shape(value), value.dtype)
    cls = value.__class__
    if cls is tuple or cls is list:
        return cls(_wrap(v) for v in value)
    if isinstance(value, tuple):        # NumPy's named results (QRResult, SVDResult...)
        return cls(*(_wrap(v) for v in value))
    return value


def _probe(value):
    """What stands for an operand when only the result dtype is asked: 0-d zeros."""
    if isinstance(value, numpy.ndarray):
        return numpy.zeros((), value.dtype)
    return value


def _dtype_of(value):
    # frompyfunc's ufuncs give Python objects for 0-d operands: their arrays are objects
    return value.dtype if hasattr(value, 'dtype') else numpy.dtype(object)


def refuse_masks(*arrays):
    """Raise PyTorch's error where a program selects by a mask of a meta tensor (the
    result's size would be the mask's count of True values)."""
    for a in arrays:
        if isinstance(a, MetaArray) and a.dtype == numpy.bool_ and a.ndim:
            raise _data_dependent('a mask')


def _data_dependent(name):
    # ``name`` is NumPy's function: the message names the kinds of op instead
    return NotImplementedError(
        'meta tensors have no values, and this op (nonzero, unique, masked indexing or '
        'selection, equal, bincount, repeat_interleave...) needs them for its result: run it '
        'on tensors with data (cpu)')


class _Flags:
    """What ``array.flags`` answers for a meta array without the zero region: a dense,
    writable block (its zero strides are an implementation detail)."""
    c_contiguous = contiguous = writeable = aligned = True
    owndata = False

    def __init__(self, ndim):
        self.f_contiguous = ndim <= 1

    def __getitem__(self, key):
        return getattr(self, key.lower())


class _Live:
    """How many meta arrays exist. The op mechanism routes every op through the device
    dispatch while a non-CPU backend is registered (some cost per op), so the meta
    backend is registered only while meta arrays are alive: a program that builds a model
    on meta and then loads its weights (``from_pretrained``) computes at full speed after."""
    count = 0


_live = _Live()


def _meta_present():
    from . import _device
    if _device.backend_for_or_none('meta') is None:
        _device.register_backend(load())


def _no_meta_left():
    try:
        from . import _device
        _device.unregister_backend('meta')
        _device.register_lazy('meta', load)
    except Exception:   # noqa: BLE001 (interpreter shutdown: modules already torn down)
        pass


class MetaArray(numpy.ndarray):
    """An array on the meta device: shape and dtype, no values (see the module)."""

    def __array_finalize__(self, obj):
        _live.count += 1
        if _live.count == 1:
            # the collector may free the last meta array of a garbage cycle while this one
            # is being made, after its factory found the backend: register it again
            _meta_present()

    def __del__(self):
        _live.count -= 1
        if not _live.count:
            _no_meta_left()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop('out', None)
        if out is not None:
            if not all(isinstance(o, MetaArray) for o in out):
                raise NotImplementedError(NO_DATA)
            return out[0] if len(out) == 1 else out      # a write into meta: nothing to do
        if method == 'at':
            if isinstance(inputs[0], MetaArray):
                return None         # an unbuffered write into meta: nothing to do
            raise NotImplementedError(NO_DATA)
        if method == '__call__' and ufunc.signature is None and 'where' not in kwargs:
            shape = numpy.broadcast_shapes(*(numpy.shape(x) for x in inputs))
            result = ufunc(*(_probe(x) for x in inputs), **kwargs)
            if isinstance(result, tuple):
                return tuple(placeholder(shape, _dtype_of(r)) for r in result)
            return placeholder(shape, _dtype_of(result))
        return _wrap(getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name in _WRITERS:
            target = args[0] if args else next(iter(kwargs.values()))
            if isinstance(target, MetaArray):
                return None
            raise NotImplementedError(NO_DATA)
        if name in _DATA_DEPENDENT or name == 'repeat' and _repeats_of_meta(args, kwargs):
            raise _data_dependent(name)
        if name in _VERDICTS and _whole(args, kwargs):
            return _VERDICTS[name]
        return _wrap(_compute(func, args, kwargs))

    # An op's checks of its inputs' values (``if (q < 0).any(): raise``, ``if not
    # isfinite(x).all(): raise``) pass on meta, whose tensors have no values to refuse:
    # whole-array any() is False and all() is True, as if every element were valid.
    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        if axis is None and not keepdims and out is None:
            return numpy.False_
        return _wrap(numpy.ndarray.any(self.view(numpy.ndarray), axis, None, keepdims))

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        if axis is None and not keepdims and out is None:
            return numpy.True_
        return _wrap(numpy.ndarray.all(self.view(numpy.ndarray), axis, None, keepdims))

    def __getitem__(self, key):
        # a mask selects as many elements as it has True ones on the zeros: any number
        # will do inside an op, whose writes into meta are dropped (a program's own
        # masked indexing is refused by the index ops, as in PyTorch)
        return _wrap(numpy.ndarray.__getitem__(self.view(numpy.ndarray), _plain(key)))

    def __setitem__(self, key, value):
        pass

    def fill(self, value):
        pass

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):
        dtype = numpy.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return placeholder(self.shape, dtype)

    def copy(self, order='C'):
        return placeholder(self.shape, self.dtype)

    def item(self, *args):     # the values: none (checks inside ops may still test them)
        raise RuntimeError('Tensor.item() cannot be called on meta tensors')


    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order='C'):
        raise NotImplementedError(NO_DATA)

    def __reduce__(self):
        return placeholder, (self.shape, self.dtype)

    def __deepcopy__(self, memo):
        return placeholder(self.shape, self.dtype)

    @property
    def flags(self):
        flags = numpy.ndarray.flags.__get__(self)
        return flags if _region.array is not None else _Flags(self.ndim)

    def refuse_read(self):
        """Called where an array's values are about to be read on the host."""
        raise NotImplementedError(NO_DATA)


_VERDICTS = {'any': numpy.False_, 'all': numpy.True_}


def _repeats_of_meta(args, kwargs):
    """Whether ``numpy.repeat`` is given its counts per element by a meta array (then
    the result's length is their sum)."""
    repeats = args[1] if len(args) > 1 else kwargs.get('repeats')
    return isinstance(repeats, MetaArray) and repeats.ndim > 0


def _whole(args, kwargs):
    """Whether ``numpy.any``/``all`` is asked about the whole array (a yes-or-no)."""
    axis = args[1] if len(args) > 1 else kwargs.get('axis')
    keepdims = args[3] if len(args) > 3 else kwargs.get('keepdims', False)
    return axis is None and not keepdims and kwargs.get('out') is None


# NumPy functions that write into their first argument, and those whose result's shape
# comes from the values.
_WRITERS = frozenset(('copyto', 'put', 'place', 'putmask', 'put_along_axis', 'fill_diagonal'))
_DATA_DEPENDENT = frozenset(('nonzero', 'flatnonzero', 'argwhere', 'unique', 'unique_values',
                             'unique_counts', 'unique_inverse', 'unique_all', 'compress',
                             'extract', 'bincount', 'array_equal', 'array_equiv',
                             'allclose', 'trim_zeros'))


def _shape_of(shape):
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _empty(shape, dtype=None, *_, **__):
    return placeholder(_shape_of(shape), numpy.float64 if dtype is None else dtype)


def _full(shape, fill_value, dtype=None, **_):
    return placeholder(_shape_of(shape), numpy.asarray(fill_value).dtype if dtype is None
                       else dtype)


def _like(a, dtype=None, order='K', subok=True, shape=None, **_):
    return placeholder(numpy.shape(a) if shape is None else _shape_of(shape),
                       dtype if dtype is not None else numpy.asarray(a).dtype)


def _full_like(a, fill_value, dtype=None, order='K', subok=True, shape=None, **_):
    return _like(a, dtype, shape=shape)


def _asarray(a, dtype=None, **kwargs):
    if isinstance(a, MetaArray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    return _wrap(numpy.asarray(_plain(a), dtype=dtype))


def _as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of the zero region where ``x`` starts, with the strides asked (PyTorch's
    as_strided on meta: views into one storage)."""
    shape = x.shape if shape is None else tuple(shape)
    strides = x.strides if strides is None else tuple(strides)
    region = zero_region()
    if region is None or not _in_region(x):
        return placeholder(shape, x.dtype)
    start = x.__array_interface__['data'][0]
    extent = x.itemsize + sum((n - 1) * st for n, st in zip(shape, strides))
    if 0 in shape or start + extent > _region.start + region.size:
        return placeholder(shape, x.dtype, strides if 0 not in shape else None)
    return numpy.lib.stride_tricks.as_strided(_plain(x), shape, strides,
                                              writeable=False).view(MetaArray)


class _Namespace:
    """NumPy's API producing meta arrays: the door's library while an op runs on meta."""
    __name__ = 'dynagrad.meta'

    _direct = {'empty': _empty, 'zeros': _empty, 'ones': _empty, 'full': _full,
               'empty_like': _like, 'zeros_like': _like, 'ones_like': _like,
               'full_like': _full_like, 'asarray': _asarray, 'array': _asarray,
               'ascontiguousarray': _asarray, 'asanyarray': _asarray}

    def __getattr__(self, name):
        value = self._direct.get(name)
        if value is None:
            value = getattr(numpy, name)
            if name == 'lib':
                value = _Lib()
            elif name in _DATA_DEPENDENT:
                value = _refusing(name)
            elif name == 'repeat':
                value = _repeat
            elif (callable(value) and not isinstance(value, (type, numpy.ufunc))
                  and name not in _WRITERS):
                value = _producing_meta(value)
        setattr(self, name, value)
        return value


def _repeat(a, repeats, axis=None):
    if _repeats_of_meta((a, repeats), {}):
        raise _data_dependent('repeat')
    return _wrap(numpy.repeat(_plain(a), _plain(repeats), axis))


def _refusing(name):
    def call(*args, **kwargs):
        raise _data_dependent(name)
    return call


def _compute(fn, args, kwargs):
    """``fn`` on the values behind meta arrays (zeros), for the shape and dtype of its
    result. Zeros are singular: where a factorization refuses them, identity matrices of
    the same shapes stand in (the result's shape does not depend on the values)."""
    try:
        return fn(*_plain(args), **_plain(kwargs))
    except numpy.linalg.LinAlgError:
        return fn(*_eye_like(args), **_eye_like(kwargs))


def _eye(array):
    value = array.view(numpy.ndarray)
    if value.ndim >= 2 and value.dtype.kind in 'fc':
        eye = numpy.eye(value.shape[-2], value.shape[-1], dtype=value.dtype)
        return numpy.broadcast_to(eye, value.shape).copy()
    return value


def _eye_like(value):
    return _map_meta(_eye, value)


def _producing_meta(fn):
    def call(*args, **kwargs):
        return _wrap(_compute(fn, args, kwargs))
    call.__name__ = fn.__name__
    call.__wrapped__ = fn
    return call


class _Lib:
    """``numpy.lib`` with ``stride_tricks.as_strided`` giving placeholders."""
    def __init__(self):
        self.stride_tricks = _StrideTricks()

    def __getattr__(self, name):
        return getattr(numpy.lib, name)


class _StrideTricks:
    as_strided = staticmethod(_as_strided)

    def __getattr__(self, name):
        return getattr(numpy.lib.stride_tricks, name)


NAMESPACE = _Namespace()


def _to_meta(array):
    if isinstance(array, MetaArray):
        return array
    get = getattr(array, 'get', None)       # another device's array: only its shape matters
    shape, dtype = numpy.shape(array), getattr(array, 'dtype', None)
    if dtype is None and not callable(get):
        dtype = numpy.asarray(array).dtype
    return placeholder(shape, dtype)


class _Lapack:
    """The LAPACK routines ops call through SciPy (sytrf, sytrs), for meta operands: the
    native routines would read the placeholders' zeros as pivot indices (1-based: out of
    bounds), so their results' shapes are given here instead."""
    def __getattr__(self, name):
        if name.endswith('sytrf'):
            return lambda a, lower=0, **_: (placeholder(a.shape, a.dtype),
                                            placeholder(a.shape[-1:], numpy.int32), 0)
        if name.endswith('sytrs'):
            return lambda a, ipiv, b, lower=0, **_: (placeholder(b.shape, b.dtype), 0)
        raise NotImplementedError(f'LAPACK {name} on meta tensors')


LAPACK = _Lapack()


class _Special:
    """``scipy.special`` for the ops on meta, imported on first use (its ufuncs infer
    shapes through ``MetaArray.__array_ufunc__``); false where SciPy is missing, so the ops
    take their NumPy fallbacks, as on the CPU."""
    def __bool__(self):
        return self._module() is not None

    def _module(self):
        try:
            import scipy.special
        except ImportError:
            return None
        return scipy.special

    def __getattr__(self, name):
        return getattr(self._module(), name)


def load():
    """The meta backend (nothing to import: it is always there)."""
    backend = DeviceBackend('meta', NAMESPACE, (MetaArray,), _to_meta,
                            device_count=lambda: 0, special=_Special())
    backend.device = _make_device()
    return backend


def _make_device():
    from ._device import device
    return device('meta')
