"""Building blocks of the op table: samples, rows, value makers, shared generators."""
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np


# -- samples ---------------------------------------------------------------------------------

class NC:
    """A non-contiguous input: a leaf of ``array``'s shape, passed as ``view(leaf)``."""

    def __init__(self, array, view, desc='view'):
        self.array, self.view, self.desc = array, view, desc

    def __repr__(self):
        return f'NC({self.desc})'


class DT:
    """A dtype argument, resolved by name on each library (``DT('float64')``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


TR = ('T', lambda t: t.mT)                      # transpose of the last two dims
STEP = ('step', lambda t: t[..., ::2])          # every other column


def nc(array, how):
    return NC(array, how[1], how[0])


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ''
    requires_grad: bool = True   # float tensor arguments require grad
    check_grad_fn: bool = True   # False where torch's node name is an implementation detail
    gradcheck: bool = True       # False where finite differences are ill-posed (kinks, ...)
    method_only: bool = False    # only the method form takes these args (t.reshape(2, 6))
    xfail: dict = field(default_factory=dict)   # test kind -> reason (known bugs, strict)

    def tensor_arrays(self):
        out = []
        for a in self.args:
            if isinstance(a, NC):
                out.append(a.array)
            elif isinstance(a, np.ndarray):
                out.append(a)
        return out

    @property
    def has_float_input(self):
        return any(a.dtype.kind == 'f' for a in self.tensor_arrays())

    @property
    def has_empty(self):
        return any(a.size == 0 for a in self.tensor_arrays())

    @property
    def all_float64(self):
        return all(a.dtype == np.float64 for a in self.tensor_arrays() if a.dtype.kind == 'f')

    @property
    def numel(self):
        return sum(a.size for a in self.tensor_arrays())


@dataclass
class ErrorSample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    exc: type = RuntimeError
    desc: str = ''
    variant: str = 'fn'          # 'fn', 'method' or 'inplace'
    xfail: str = ''              # reason, for a known bug (strict xfail)


@dataclass
class OpInfo:
    name: str
    fn: Optional[Callable]                   # fn(lib, *args, **kwargs) -> tensor
    samples: Callable                        # samples(rng) -> [Sample]
    method: Optional[str] = None             # tensor.<method>(*args[1:], **kwargs)
    inplace: Optional[str] = None            # tensor.<inplace>(*args[1:], **kwargs)
    operator: Optional[Callable] = None      # operator(*args) (no kwargs), e.g. a + b
    inplace_operator: Optional[Callable] = None   # e.g. a += b
    errors: Callable = lambda rng: []        # errors(rng) -> [ErrorSample]
    differentiable: bool = True
    twice_differentiable: bool = True
    domain: str = ''                         # documentation: the input domain samples keep to
    aliases: tuple = ()                      # other names of the function form, checked too
    inplace_xfail: str = ''                  # known bug of the in-place form (version checks)

    def call(self, lib, *args, **kwargs):
        if self.fn is None:
            return getattr(lib, self.name)(*args, **kwargs)
        return self.fn(lib, *args, **kwargs)

    def get_samples(self):
        samples = self.samples(np.random.default_rng(zlib.crc32(self.name.encode())))
        for s in samples:
            for op_name, kind, descs, reason in KNOWN_BUGS:
                if op_name == self.name and kind != 'error' and s.desc in descs:
                    s.xfail[kind] = reason
        return samples

    def get_errors(self):
        errors = self.errors(np.random.default_rng(zlib.crc32(self.name.encode()) + 1))
        for e in errors:
            for op_name, kind, descs, reason in KNOWN_BUGS:
                if op_name == self.name and kind == 'error' and e.desc in descs:
                    e.xfail = reason
        return errors


# -- value makers ------------------------------------------------------------------------------

def _f(rng, shape, low=-2.0, high=2.0, dtype=np.float32):
    return np.asarray(rng.uniform(low, high, shape), dtype=dtype)


def maker(kind, dtype=np.float32):
    """A function (rng, *shape) -> array drawn from the domain ``kind``."""
    def make(rng, *shape):
        if dtype == np.bool_:
            return np.asarray(rng.random(shape) > 0.5)
        if np.dtype(dtype).kind in 'iu':
            if kind == 'nonzero':
                v = rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)
            elif kind == 'positive':
                v = rng.integers(1, 5, shape)
            else:
                v = rng.integers(-4, 5, shape)
            return np.asarray(v, dtype=dtype)
        if kind == 'positive':
            return _f(rng, shape, 0.5, 2.0, dtype)
        if kind == 'nonzero':        # away from 0: kinks and poles stay out of reach
            mag = _f(rng, shape, 0.3, 2.0, dtype)
            return np.asarray(mag * rng.choice([-1, 1], shape), dtype=dtype)
        if kind == 'unit':
            return _f(rng, shape, -0.9, 0.9, dtype)
        return _f(rng, shape, -2.0, 2.0, dtype)
    return make


R = maker('real')
NZ = maker('nonzero')
POS = maker('positive')
I64 = maker('real', np.int64)
I64NZ = maker('nonzero', np.int64)
I32 = maker('real', np.int32)
B = maker('real', np.bool_)
F64 = maker('real', np.float64)
F64NZ = maker('nonzero', np.float64)


# -- sample generators ------------------------------------------------------------------------

def binary_samples(lhs=R, rhs=R, *, int_rhs=I64, promotion=True, bool_ok=True,
                   scalars=(2.5, 3, True), rhs64=F64):
    """Broadcasting, 0-dim, empty, non-contiguous, Python scalars and dtype promotion."""
    def gen(rng):
        L = lambda *s: lhs(rng, *s)  # noqa: E731
        Rh = lambda *s: rhs(rng, *s)  # noqa: E731
        s = [
            Sample((L(3, 4), Rh(3, 4)), desc='same_shape'),
            Sample((L(3, 1), Rh(1, 4)), desc='broadcast_both'),
            Sample((L(2, 3, 2), Rh(2)), desc='broadcast_rank'),
            Sample((L(), Rh(3)), desc='0dim_lhs'),
            Sample((L(3), Rh()), desc='0dim_rhs'),
            Sample((L(), Rh()), desc='0dim_both'),
            Sample((L(0, 3), Rh(3)), desc='empty'),
            Sample((nc(L(4, 3), TR), Rh(3, 4)), desc='noncontig_T'),
            Sample((L(3, 2), nc(Rh(3, 4), STEP)), desc='noncontig_step'),
        ]
        s += [Sample((L(2, 3), v), desc=f'scalar_{type(v).__name__}') for v in scalars]
        if promotion:
            s += [
                Sample((L(2, 3), int_rhs(rng, 2, 3)), desc='f32_i64'),
                Sample((int_rhs(rng, 2, 3), Rh(2, 3)), desc='i64_f32'),
                Sample((L(2, 3), rhs64(rng)), desc='f32_f64_0dim'),
                Sample((lhs(rng, 2, 3).astype(np.float64), Rh(2, 3)), desc='f64_f32'),
                Sample((L(), rhs64(rng, 2)), desc='f32_0dim_f64'),
                Sample((I64(rng, 2, 3), 2.5), desc='i64_pyfloat'),
                Sample((I64(rng, 2, 3), int_rhs(rng, 2, 3)), desc='i64_i64'),
                Sample((I32(rng, 2, 3), int_rhs(rng, 2, 3)), desc='i32_i64'),
                Sample((I64(rng, 2, 3), rhs64(rng)), desc='i64_f64_0dim'),
                Sample((I32(rng, 2, 3), 3), desc='i32_pyint'),
            ]
            if bool_ok:
                s += [Sample((B(rng, 2, 3), int_rhs(rng, 2, 3)), desc='bool_i64'),
                      Sample((B(rng, 2, 3), 2.5), desc='bool_pyfloat')]
        return s
    return gen


def binary_errors(rng):
    return [
        ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch'),
        ErrorSample((R(rng, 2, 3), R(rng, 3, 3)), desc='shape_mismatch_2d'),
        ErrorSample((R(rng, 3), R(rng, 2, 3)), desc='inplace_broadcast_target',
                    variant='inplace'),
        ErrorSample((I64(rng, 2, 3), R(rng, 2, 3)), desc='inplace_float_into_int',
                    variant='inplace'),
    ]


def unary_samples(make=R, *, ints=True, bools=False):
    def gen(rng):
        s = [
            Sample((make(rng, 3, 4),), desc='2d'),
            Sample((make(rng),), desc='0dim'),
            Sample((make(rng, 0),), desc='empty'),
            Sample((make(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(make(rng, 4, 3), TR),), desc='noncontig_T'),
            Sample((nc(make(rng, 3, 4), STEP),), desc='noncontig_step'),
            Sample((make(rng, 2, 3).astype(np.float64),), desc='f64'),
        ]
        if ints:
            mk = maker('positive' if make is POS else 'real', np.int64)
            s.append(Sample((mk(rng, 2, 3),), desc='int64'))
            s.append(Sample((maker('positive', np.int32)(rng, 2, 3),), desc='int32'))
        if bools:
            s.append(Sample((B(rng, 2, 3),), desc='bool'))
        return s
    return gen


def unary_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 1), exc=TypeError, desc='extra_arg')]


# -- callables shared by dynagrad and torch -------------------------------------------------

def clone_then(method):
    """An in-place method as a function: ``x.clone().<method>(*rest)`` (records on a non-leaf)."""
    def fn(lib, x, *rest, **kwargs):
        return getattr(x.clone(), method)(*rest, **kwargs)
    return fn


def iop(name):
    import operator
    op = getattr(operator, name)

    def fn(a, b):
        return op(a, b)
    return fn


def ipow(a, b):
    a **= b
    return a



# -- known bugs and statistics ----------------------------------------------------------

# (op name, check kind, sample descs, reason). Kinds: forward, backward, grad_fn,
# gradcheck, gradgradcheck, inplace, error. Family modules may append; a fixed bug
# turns its entries into XPASS failures: delete them then.
KNOWN_BUGS = []

# Filled by the conformance tests, read by conftest's terminal summary.
STATS = {'ops': set(), 'samples': set()}
