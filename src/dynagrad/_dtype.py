"""dtypes as PyTorch names them, backed by NumPy dtypes, and PyTorch's type promotion.

``uint16``, ``uint32`` and ``uint64`` have PyTorch's "limited support": they exist, convert,
print and promote with floating dtypes, but promotion with any other integer or bool dtype is
refused (``promote_types`` raises, as torch does), and most kernels refuse them.

``bfloat16`` is backed by ``ml_dtypes`` (the NumPy extension the JAX team maintains), an
optional dependency imported the first time a bfloat16 array is needed: the dtype object,
its name, size, ``finfo`` and promotion work without it.

The float8 dtypes (``float8_e4m3fn``, ``float8_e5m2``, their ``fnuz`` variants and
``float8_e8m0fnu``) are stored through ml_dtypes the same way. As in PyTorch they are storage
formats: they convert, print, index, copy and save, promote with nothing but themselves, and
most kernels refuse them. ``to_float8`` rounds into them as PyTorch does (ml_dtypes' own cast
differs where values overflow, for NaN's bits, and for e8m0's signs and zeros).
"""
import numpy as np

__all__ = ['dtype', 'float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128',
           'cfloat', 'cdouble', 'int8', 'int16', 'int32',
           'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool', 'float8_e4m3fn', 'float8_e5m2',
           'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu', 'half', 'float', 'double', 'short', 'int', 'long',
           'get_default_dtype', 'set_default_dtype', 'promote_types', 'result_type',
           'finfo', 'iinfo']

# Categories order the kinds the way PyTorch promotes across them.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    __slots__ = ('name', 'numpy', 'category', 'itemsize', 'legacy_name')

    def __init__(self, name, numpy_dtype, category, legacy_name, itemsize=None):
        self.name = name
        if numpy_dtype is not None:  # None: an extension dtype, loaded on first use (below)
            self.numpy = np.dtype(numpy_dtype)
        self.category = category
        self.itemsize = self.numpy.itemsize if itemsize is None else itemsize
        self.legacy_name = legacy_name

    def __getattr__(self, name):
        # Only reached for an unset slot: the NumPy dtype of bfloat16 before ml_dtypes loads.
        if name == 'numpy' and self.name in _EXTENSIONS:
            return _load_extension(self)
        raise AttributeError(f"'dynagrad.dtype' object has no attribute {name!r}")

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_inexact(self):
        """Floating or complex: the dtypes that can require gradients."""
        return self.category >= _FLOAT

    @property
    def is_signed(self):
        return self.name not in ('uint8', 'bool', 'float8_e8m0fnu') and self not in WIDE_UNSIGNED

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        """The real dtype of the same precision (itself for a real dtype)."""
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self):
        """The complex dtype of the same precision, as PyTorch's ``to_complex``."""
        if self.category == _COMPLEX:
            return self
        if self in _REAL_TO_COMPLEX:
            return _REAL_TO_COMPLEX[self]
        raise RuntimeError(f'Unknown Complex ScalarType for {type_name(self)}')

    def __repr__(self):
        return 'dynagrad.' + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = half = dtype('float16', np.float16, _FLOAT, 'HalfTensor')
bfloat16 = dtype('bfloat16', None, _FLOAT, 'BFloat16Tensor', itemsize=2)
float32 = float = dtype('float32', np.float32, _FLOAT, 'FloatTensor')
float64 = double = dtype('float64', np.float64, _FLOAT, 'DoubleTensor')
int8 = dtype('int8', np.int8, _INT, 'CharTensor')
int16 = short = dtype('int16', np.int16, _INT, 'ShortTensor')
int32 = int = dtype('int32', np.int32, _INT, 'IntTensor')
int64 = long = dtype('int64', np.int64, _INT, 'LongTensor')
uint8 = dtype('uint8', np.uint8, _INT, 'ByteTensor')
# torch has no UInt16Tensor class; the name gives Tensor.type() 'torch.UInt16Tensor' and
# messages their 'UInt16'.
uint16 = dtype('uint16', np.uint16, _INT, 'UInt16Tensor')
uint32 = dtype('uint32', np.uint32, _INT, 'UInt32Tensor')
uint64 = dtype('uint64', np.uint64, _INT, 'UInt64Tensor')
bool = dtype('bool', np.bool_, _BOOL, 'BoolTensor')
# torch has no ComplexFloatTensor class either: the names are Tensor.type()'s ('ComplexFloat'
# in messages). complex32 (chalf) has no NumPy type, so dynagrad has none.
complex64 = cfloat = dtype('complex64', np.complex64, _COMPLEX, 'ComplexFloatTensor')
complex128 = cdouble = dtype('complex128', np.complex128, _COMPLEX, 'ComplexDoubleTensor')
# torch has no Float8_*Tensor classes either: these names are Tensor.type()'s and messages'.
float8_e4m3fn = dtype('float8_e4m3fn', None, _FLOAT, 'Float8_e4m3fnTensor', itemsize=1)
float8_e5m2 = dtype('float8_e5m2', None, _FLOAT, 'Float8_e5m2Tensor', itemsize=1)
float8_e4m3fnuz = dtype('float8_e4m3fnuz', None, _FLOAT, 'Float8_e4m3fnuzTensor', itemsize=1)
float8_e5m2fnuz = dtype('float8_e5m2fnuz', None, _FLOAT, 'Float8_e5m2fnuzTensor', itemsize=1)
float8_e8m0fnu = dtype('float8_e8m0fnu', None, _FLOAT, 'Float8_e8m0fnuTensor', itemsize=1)

FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
       uint64, bool) + FLOAT8 + (complex64, complex128)
_COMPLEX_TO_REAL = {complex64: float32, complex128: float64}
# float16 and bfloat16 go to complex64: complex32 has no NumPy type (see above)
_REAL_TO_COMPLEX = {float32: complex64, float64: complex128, float16: complex64,
                    bfloat16: complex64}
# The NumPy complex dtype a real float array's complex counterpart has (no complex32 in NumPy,
# so float16 has none): what the complex-making ops compute in.
COMPLEX_NUMPY = {np.dtype(np.float32): np.dtype(np.complex64),
                 np.dtype(np.float64): np.dtype(np.complex128)}
# The unsigned dtypes with PyTorch's "limited support" (see the module docstring).
WIDE_UNSIGNED = frozenset((uint16, uint32, uint64))
# The NumPy dtypes of the dtypes most of PyTorch's CPU kernels refuse ('"add_stub" not
# implemented for 'UInt32''): uint16/32/64, and the float8 ones added when ml_dtypes loads (no
# float8 array exists before). Ops test an array's dtype against these: one hash lookup.
WIDE_UNSIGNED_NUMPY = frozenset(d.numpy for d in WIDE_UNSIGNED)
FLOAT8_NUMPY = set()
REFUSED_NUMPY = set(WIDE_UNSIGNED_NUMPY)
# abs and matmul: torch computes them on the float8 dtypes but float8_e8m0fnu (no sign bit).
WIDE_UNSIGNED_OR_E8M0_NUMPY = set(WIDE_UNSIGNED_NUMPY)
# NumPy dtype -> dtype. The ml_dtypes ones' entries are added when it loads (_load_extension).
FROM_NUMPY = {d.numpy: d for d in ALL if d is not bfloat16 and d not in FLOAT8}
_BY_NAME = {d.name: d for d in ALL}

# -- extension dtypes (ml_dtypes) --------------------------------------------------------

# dynagrad name -> attribute of ml_dtypes (the same names)
_EXTENSIONS = {d.name: d.name for d in (bfloat16,) + FLOAT8}
_on_load = []   # called once ml_dtypes has loaded (layers above prepare for its arrays)


class MissingDependencyError(ImportError):
    """A dtype needs an optional package that is not installed."""


def _load_extension(d):
    """Import ml_dtypes, give every extension dtype its NumPy dtype and register it; return
    ``d``'s. Raise a clear error naming the package to install when it is missing."""
    if extension_loaded():
        return object.__getattribute__(d, 'numpy')
    try:
        import ml_dtypes
    except ImportError:
        raise MissingDependencyError(
            f'dynagrad.{d.name} tensors need the ml_dtypes package (NumPy has no {d.name} '
            f'type): pip install ml_dtypes (or pip install "dynagrad[bfloat16]")') from None
    for name, attribute in _EXTENSIONS.items():
        # bfloat16 last: its numpy slot being set is what extension_loaded() reads
        if name != 'bfloat16':
            _register(_BY_NAME[name], np.dtype(getattr(ml_dtypes, attribute)))
    float8 = {object.__getattribute__(f, 'numpy') for f in FLOAT8}
    FLOAT8_NUMPY.update(float8)
    REFUSED_NUMPY.update(float8)
    WIDE_UNSIGNED_OR_E8M0_NUMPY.add(object.__getattribute__(float8_e8m0fnu, 'numpy'))
    _register(bfloat16, np.dtype(ml_dtypes.bfloat16))
    for callback in _on_load:
        callback()
    return object.__getattribute__(d, 'numpy')


def _register(d, np_dtype):
    d.numpy = np_dtype
    FROM_NUMPY[np_dtype] = d


def extension_loaded():
    """Whether ml_dtypes has loaded (so bfloat16 arrays may exist)."""
    try:
        object.__getattribute__(bfloat16, 'numpy')   # unset until then (see dtype.__getattr__)
    except AttributeError:
        return False
    return True


def on_extension_load(callback):
    """Call ``callback()`` when ml_dtypes loads (at once if it already has)."""
    _on_load.append(callback)
    if extension_loaded():
        callback()


# ml_dtypes' type characters: bfloat16, then float8 e4m3fn, e4m3fnuz, e5m2fnuz, e8m0fnu
# (float8_e5m2's kind is 'f' already)
_EXTENSION_FLOAT_CHARS = frozenset('E4GCW')


def is_floating(np_dtype):
    """Whether a NumPy dtype is one of dynagrad's floating dtypes (most of ml_dtypes' have
    kind 'V')."""
    return np_dtype.kind == 'f' or np_dtype.char in _EXTENSION_FLOAT_CHARS


def is_float8(np_dtype):
    """Whether a NumPy dtype is one of the float8 dtypes (all are one byte, kind 'f' or
    'V')."""
    return np_dtype.itemsize == 1 and np_dtype.kind in 'fV'


def _register_foreign(np_dtype):
    """An array made by ml_dtypes before dynagrad needed it: load and register its dtype.
    Returns the dtype, or None when ``np_dtype`` is not one of ours."""
    if getattr(np_dtype.type, '__module__', '').split('.')[0] != 'ml_dtypes':
        return None
    for name in _EXTENSIONS:
        d = _BY_NAME[name]
        if _load_extension(d) == np_dtype:
            return d
    return None


def _by_name(name):
    return _BY_NAME[name]


_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    d = to_dtype(d)
    if d.category != _FLOAT:
        raise TypeError(f'only floating-point types are supported as the default type, got {d}')
    _default_float = d


def to_dtype(d):
    """Accept a dynagrad dtype, a NumPy dtype or type, or a Python type."""
    if d.__class__ is dtype:
        return d
    if d is builtins_float:
        return _default_float
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if d is builtins_complex:
        return default_complex_dtype()
    legacy = getattr(d, '_dtype', None)  # FloatTensor and the other legacy type classes
    if legacy.__class__ is dtype:
        return legacy
    try:
        np_dtype = np.dtype(d)
        return FROM_NUMPY.get(np_dtype) or FROM_NUMPY[_register_foreign(np_dtype).numpy]
    except (KeyError, TypeError, AttributeError):
        raise TypeError(f'dynagrad has no dtype for {d!r}; use one of '
                        + ', '.join(repr(x) for x in ALL)) from None


def from_numpy_dtype(np_dtype):
    try:
        return FROM_NUMPY.get(np_dtype) or FROM_NUMPY[_register_foreign(np_dtype).numpy]
    except (KeyError, AttributeError):
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported "
                        'types are: float64, float32, float16, complex64, complex128, int64, '
                        'int32, int16, int8, uint64, uint32, uint16, uint8, and bool.') from None


import builtins as _builtins  # noqa: E402  (the names float/int/bool are dtypes in this module)
builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool
builtins_complex = _builtins.complex


def type_name(d):
    """PyTorch's scalar-type name of a dtype in messages ('Float', 'Long', 'UInt16')."""
    return d.legacy_name[:-6]


def promote_types(a, b):
    """PyTorch's promotion of two dtypes: the higher category wins; within one, NumPy's rule,
    except bfloat16, which with float16 gives float32 and otherwise yields to the wider.
    uint16/32/64 promote only with themselves and floating dtypes (torch refuses the rest);
    float8 dtypes only with themselves."""
    if a is b:
        return a
    if a.itemsize == 1 and a.category == _FLOAT or b.itemsize == 1 and b.category == _FLOAT:
        raise RuntimeError('Promotion for Float8 Types is not supported, attempted to promote '
                           f'{type_name(a)} and {type_name(b)}')
    if a in WIDE_UNSIGNED or b in WIDE_UNSIGNED:
        if a.category == _FLOAT or b.category == _FLOAT:
            return a if a.category == _FLOAT else b
        raise RuntimeError('Promotion for uint16, uint32, uint64 types is not supported, '
                           f'attempted to promote {type_name(a)} and {type_name(b)}')
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == _COMPLEX and low.category == _FLOAT:
            # complex64 with float64 is complex128: the precision of the wider part wins
            return _REAL_TO_COMPLEX[promote_types(high.to_real(), low)]
        return high
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return FROM_NUMPY[np.promote_types(a.numpy, b.numpy)]


def scalar_category(x):
    # np.bool_ is no numbers.Number: torch reads it as a float (int32 + np.True_ is float32)
    if x.__class__ is builtins_bool:
        return _BOOL
    if isinstance(x, (builtins_int, np.integer)):
        return _INT
    if isinstance(x, (builtins_complex, np.complexfloating)):
        return _COMPLEX
    return _FLOAT


def default_complex_dtype():
    """The complex dtype of the default float dtype (complex64 for float32)."""
    return _REAL_TO_COMPLEX[_default_float]


_CATEGORY_DEFAULT = {_BOOL: bool, _INT: int64}


def result_type(*operands):
    """The dtype PyTorch gives an op over tensors and Python scalars.

    Three priority levels: tensors with dimensions, zero-dim tensors, then Python
    scalars. A lower level only matters when it brings a higher category.
    """
    dim_t = zero_t = None
    scalar_cat = -1
    for x in operands:
        data = getattr(x, '_data', None)
        if data is None:
            scalar_cat = max(scalar_cat, scalar_category(x))
            continue
        d = FROM_NUMPY[data.dtype]
        if data.ndim:
            dim_t = d if dim_t is None else promote_types(dim_t, d)
        else:
            zero_t = d if zero_t is None else promote_types(zero_t, d)
    result = dim_t
    if zero_t is not None:
        if result is None:
            result = zero_t
        elif zero_t.category > result.category:
            # promote (not replace) so that bool with uint16/32/64 is refused, as in torch
            result = promote_types(result, zero_t)
    if scalar_cat >= 0 and (result is None or scalar_cat > result.category):
        if scalar_cat == _COMPLEX:
            # a complex number keeps a float tensor's precision: float64 * 1j is complex128
            result = (result.to_complex() if result is not None and result.category == _FLOAT
                      else default_complex_dtype())
        else:
            result = _default_float if scalar_cat == _FLOAT else _CATEGORY_DEFAULT[scalar_cat]
    return result


# -- rounding into float8 as PyTorch does -------------------------------------------------

def cast(array, np_dtype):
    """``array.astype(np_dtype)``, except where NumPy or ml_dtypes leave the result to their
    release or the platform: into a float8 dtype it rounds as PyTorch does (``to_float8``:
    ml_dtypes' own conversion saturates and writes NaN differently), and from a floating
    dtype into an integer one it follows PyTorch's rule (``float_to_integer``)."""
    kind = np_dtype.kind
    if kind in 'iu':
        if array.dtype.kind in 'fV':
            return float_to_integer(array, np_dtype)
    elif np_dtype.itemsize == 1 and kind in 'fV':
        return to_float8(array, FROM_NUMPY[np_dtype])
    elif kind in 'fVc' and (np_dtype.itemsize <= 2 or np_dtype.itemsize < array.dtype.itemsize):
        # a value beyond the target's range becomes inf, as in PyTorch, silently
        with np.errstate(over='ignore'):
            return array.astype(np_dtype)
    return array.astype(np_dtype)


# -- floating -> integer as PyTorch's CPU kernels convert --------------------------------

def float_to_integer(array, np_dtype):
    """``array`` (a real floating dtype) converted to the integer NumPy dtype ``np_dtype``
    with PyTorch's results on x86-64 CPUs, out-of-range values, infinities and NaN included.

    C leaves such conversions undefined; PyTorch's kernels truncate toward zero through a
    hardware conversion that writes the lowest value of its width when the value does not
    fit, and NumPy and ml_dtypes give different answers from one release to the next. The
    rule, found by converting every float8 value and chosen values of the wider dtypes
    with torch 2.13:

    - int8, int16, uint16: through int32, then the low bits; uint8 through int64;
    - int32, int64: truncated; what does not fit (NaN too) becomes -2**31 / -2**63;
    - uint64, and uint32 from float32, float64 and bfloat16 (PyTorch's vectorised path):
      values from 2**(n-1) up are converted less 2**(n-1) and get the top bit back, so what
      does not fit becomes 0 from above and 2**(n-1) from below or NaN;
    - uint32 from float16 and the float8 dtypes (PyTorch's scalar path): through int64,
      then the low 32 bits;
    - NaN of the float8 formats without infinities (``_NAN_TO_ZERO``) becomes 0.

    PyTorch's uint32 answer for a value outside [-2**31, 2**32) depends on where the element
    falls (its vectorised loop or the scalar remainder); dynagrad gives the loop's.
    """
    source = array.dtype
    if source == np.float32 or source == np.float64:
        x = array
    else:
        x = array.astype(np.float32)
        if FROM_NUMPY[source].name in _NAN_TO_ZERO:
            x = np.where(np.isnan(x), np.float32(0), x)
    size = np_dtype.itemsize
    if np_dtype.kind == 'u' and size >= 4:
        vectorised = source.itemsize > 1 and source != np.float16
        if size == 8 or vectorised:
            return _to_unsigned(x, np_dtype)
        return _truncate(x, np.int64).astype(np_dtype)
    out = _truncate(x, np.int64 if size == 8 or np_dtype == np.uint8 else np.int32)
    return out if out.dtype == np_dtype else out.astype(np_dtype)


# the float8 formats whose NaN PyTorch converts to integer 0
_NAN_TO_ZERO = ('float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu')


def _truncate(x, int_dtype):
    """``x`` truncated into the signed ``int_dtype``; what does not fit becomes its lowest
    value (the x86 conversions' "integer indefinite")."""
    lowest = -2.0 ** (8 * np.dtype(int_dtype).itemsize - 1)
    # one pass each for min and max (NaN fails both tests) before any temporary array
    if x.size == 0 or (x.min() >= lowest and x.max() < -lowest):
        return x.astype(int_dtype)
    inside = (x >= lowest) & (x < -lowest)
    return np.where(inside, x, lowest).astype(int_dtype)


def _to_unsigned(x, np_dtype):
    signed = np.dtype(f'i{np_dtype.itemsize}')
    half = 2.0 ** (8 * signed.itemsize - 1)
    high = x >= half
    if not high.any():
        return _truncate(x, signed).view(np_dtype)
    low = _truncate(np.where(high, x - half, x), signed).view(np_dtype)
    return np.where(high, low ^ np_dtype.type(half), low)


def to_float8(array, d):
    """``array`` (any real dtype) converted to the float8 dtype ``d`` bit for bit as PyTorch
    converts: through float32 first (so a float64 is rounded twice, as there), then to
    nearest, ties to even, except:

    - float8_e4m3fn saturates: a finite value beyond 448 or an infinity becomes +-448;
    - float8_e4m3fn and float8_e5m2 write NaN as all ones after the sign (0x7f / 0xff);
    - float8_e8m0fnu (a bare power of two, no sign, no zero) keeps float32's exponent and
      drops the sign: a mantissa over one half rounds up, exactly one half too except in
      float32's subnormals; 0 becomes 2**-127, and NaN, infinities and values rounding past
      2**127 become NaN (0xff).

    The fnuz formats round as ml_dtypes does (overflow and infinities become their NaN).
    """
    target = d.numpy
    with np.errstate(invalid='ignore', over='ignore'):
        x = np.asarray(array).astype(np.float32)
    if d is float8_e8m0fnu:
        bits = x.view(np.uint32)
        exponent = (bits >> 23) & 0xFF
        mantissa = bits & 0x7FFFFF
        round_up = (mantissa > 0x400000) | ((mantissa == 0x400000) & (exponent != 0))
        out = np.where(exponent == 0xFF, 0xFF, exponent + round_up).astype(np.uint8)
        return out.view(target)
    with np.errstate(invalid='ignore', over='ignore'):
        out = x.astype(target)
    if d is float8_e4m3fn or d is float8_e5m2:
        raw = out.view(np.uint8)
        sign = (np.signbit(x).astype(np.uint8) << 7)
        nan = np.isnan(x)
        if d is float8_e4m3fn:
            over = ~nan & (np.abs(x) > 448.0)    # ml_dtypes gives NaN there, PyTorch 448
            raw = np.where(over, sign | 0x7E, raw)
        raw = np.where(nan, sign | 0x7F, raw).astype(np.uint8)
        out = raw.view(target)
    return out


# -- finfo / iinfo ---------------------------------------------------------------------------

def _short(x):
    """A number as PyTorch's finfo repr writes it (C's %g)."""
    return f'{x:g}'


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``: ``bits``, ``eps``, ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype`` (its name).

    Computed from the format itself, so ``finfo(bfloat16)`` needs no ml_dtypes.
    """
    # dtype name -> (bits, mantissa bits, max exponent); IEEE-style binary formats
    _FORMATS = {'float16': (16, 10, 15), 'bfloat16': (16, 7, 127), 'float32': (32, 23, 127),
                'float64': (64, 52, 1023)}
    _DIGITS = {'float16': 3, 'bfloat16': 2, 'float32': 6, 'float64': 15}
    # The float8 formats bend the IEEE pattern (no infinities, one NaN, no sign, fnuz's
    # exponent bias one higher), so their limits are listed: name -> (eps, max, min, tiny).
    # Their resolution is 1 (no full decimal digit).
    _FLOAT8 = {'float8_e4m3fn': (2.0 ** -3, 448.0, -448.0, 2.0 ** -6),
               'float8_e5m2': (2.0 ** -2, 57344.0, -57344.0, 2.0 ** -14),
               'float8_e4m3fnuz': (2.0 ** -3, 240.0, -240.0, 2.0 ** -7),
               'float8_e5m2fnuz': (2.0 ** -3, 57344.0, -57344.0, 2.0 ** -15),
               'float8_e8m0fnu': (1.0, 2.0 ** 127, 2.0 ** -127, 2.0 ** -127)}

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else to_dtype(type)
        d = d.to_real()   # a complex dtype's limits are its parts' (torch: dtype='float32')
        if d.category != _FLOAT:
            raise TypeError('dynagrad.finfo() requires a floating point input type. Use '
                            "dynagrad.iinfo to handle 'dynagrad.finfo'")
        self.dtype = d.name
        if d.name in self._FLOAT8:
            self.bits, self.resolution = 8, 1.0
            self.eps, self.max, self.min, self.tiny = self._FLOAT8[d.name]
            self.smallest_normal = self.tiny
            return
        bits, mantissa, emax = self._FORMATS[d.name]
        self.bits = bits
        self.eps = 2.0 ** -mantissa
        self.max = (2.0 - 2.0 ** -mantissa) * 2.0 ** emax
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** (1 - emax)
        self.resolution = 10.0 ** -self._DIGITS[d.name]

    def __repr__(self):
        return (f'finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, '
                f'max={_short(self.max)}, eps={_short(self.eps)}, '
                f'smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, '
                f'dtype={self.dtype})')

    __str__ = __repr__


class iinfo:
    """Limits of an integer (or bool) dtype, as ``torch.iinfo``: ``bits``, ``min``, ``max``,
    ``dtype`` (its name)."""

    def __init__(self, type):
        d = to_dtype(type)
        if d.category >= _FLOAT:
            raise TypeError('dynagrad.iinfo() requires an integer input type. Use '
                            "dynagrad.finfo to handle 'dynagrad.iinfo'")
        if d is bool:
            raise TypeError('dynagrad.bool is not supported by dynagrad.iinfo')
        self.bits = d.itemsize * 8
        info = np.iinfo(d.numpy)
        self.min, self.max = builtins_int(info.min), builtins_int(info.max)
        self.dtype = d.name

    def __repr__(self):
        return f'iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})'

    __str__ = __repr__
