"""The declarative op-conformance table: one ``OpInfo`` row per op.

In the spirit of PyTorch's OpInfo and Chainer's op tests: a row names the op, how to call
it on a library (``dynagrad`` or ``torch``: the same callable runs on both), its method
and in-place forms, a generator of sample inputs, flags, and bad inputs with the
exception type both libraries must raise. ``tests/ops/test_conformance.py`` checks every
row the same way against torch. Adding an op means adding a row here.

Sample arguments are NumPy arrays (they become tensors of both libraries, float ones
requiring grad), ``NC(array, view)`` for a non-contiguous input (a leaf of ``array``'s
shape seen through ``view``, e.g. a transpose or a strided slice), or anything else
(Python scalars, dims, keys), which is passed as is; arrays nested in tuples or lists
(indexing keys) become tensors that do not require grad.
"""
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

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


def pow_scalar_samples(rng):
    s = [Sample((R(rng, 3, 4), 2), desc='square'),
         Sample((R(rng, 3, 4), 3), desc='cube'),
         Sample((POS(rng, 3, 4), 0.5), desc='sqrt'),
         Sample((NZ(rng, 3, 4), -1), desc='reciprocal'),
         Sample((POS(rng, 2, 3), 2.5), desc='float_exp'),
         Sample((R(rng, 2, 3), 0), desc='zero_exp'),
         Sample((R(rng, 2, 3), 1), desc='one_exp'),
         Sample((R(rng), 2), desc='0dim'),
         Sample((R(rng, 0, 2), 2), desc='empty'),
         Sample((nc(R(rng, 4, 3), TR), 2), desc='noncontig_T'),
         Sample((R(rng, 2, 3).astype(np.float64), 3), desc='f64'),
         Sample((I64(rng, 2, 3), 2), desc='int_pow_int'),
         Sample((maker('positive', np.int64)(rng, 2, 3), 0.5), desc='int_pow_float')]
    return s


def pow_tensor_samples(rng):
    return [Sample((POS(rng, 3, 4), R(rng, 3, 4)), desc='same_shape'),
            Sample((POS(rng, 3, 1), R(rng, 1, 4)), desc='broadcast'),
            Sample((POS(rng), R(rng, 3)), desc='0dim_base'),
            Sample((POS(rng, 3), R(rng)), desc='0dim_exp'),
            Sample((nc(POS(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig'),
            Sample((POS(rng, 2, 3), maker('real', np.int64)(rng, 2, 3)), desc='f32_i64'),
            Sample((maker('positive', np.int64)(rng, 2, 3), R(rng, 2, 3)), desc='i64_f32'),
            Sample((maker('positive', np.int64)(rng, 2, 3),
                    maker('positive', np.int64)(rng, 2, 3)), desc='i64_i64'),
            Sample((POS(rng, 2, 3), POS(rng).astype(np.float64)), desc='f32_f64_0dim')]


def rpow_samples(rng):
    return [Sample((R(rng, 3, 4), 2), desc='int_base'),
            Sample((R(rng, 3, 4), 1.5), desc='float_base'),
            Sample((R(rng), 3.0), desc='0dim'),
            Sample((R(rng, 0), 2.0), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 2), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 0.5), desc='f64'),
            Sample((I64(rng, 2, 3), 2.5), desc='int_exp_float_base')]


def scalar_left_samples(make=R):
    """Samples for ``scalar <op> tensor`` (reflected operators); args are (tensor, scalar)."""
    def gen(rng):
        return [Sample((make(rng, 3, 4), 2.5), desc='pyfloat'),
                Sample((make(rng, 3, 4), 3), desc='pyint'),
                Sample((make(rng), 2.0), desc='0dim'),
                Sample((make(rng, 0, 2), 2.0), desc='empty'),
                Sample((nc(make(rng, 4, 3), TR), 1.5), desc='noncontig'),
                Sample((maker('nonzero', np.int64)(rng, 2, 3), 2.5), desc='int_pyfloat'),
                Sample((maker('nonzero', np.int64)(rng, 2, 3), 3), desc='int_pyint')]
    return gen


def clamp_samples(rng):
    return [Sample((R(rng, 3, 4),), dict(min=-0.5), desc='min'),
            Sample((R(rng, 3, 4),), dict(max=0.7), desc='max'),
            Sample((R(rng, 3, 4),), dict(min=-0.5, max=0.5), desc='both'),
            Sample((R(rng, 3, 4), -1.0, 1.0), desc='positional'),
            Sample((R(rng),), dict(min=0.1), desc='0dim'),
            Sample((R(rng, 0, 3),), dict(max=0.1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), dict(min=-0.3, max=0.3), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64),), dict(min=-1, max=1), desc='f64_int_bounds'),
            Sample((I64(rng, 2, 3),), dict(min=-1, max=2), desc='int64'),
            Sample((R(rng, 2, 3),), dict(min=1.0, max=-1.0), desc='min_gt_max')]


def clamp_errors(rng):
    return [ErrorSample((R(rng, 2, 3),), desc='no_bounds'),
            ErrorSample((R(rng, 2, 3),), desc='no_bounds_method', variant='method')]


def where_samples(rng):
    return [Sample((B(rng, 3, 4), R(rng, 3, 4), R(rng, 3, 4)), desc='same_shape'),
            Sample((B(rng, 3, 1), R(rng, 1, 4), R(rng, 3, 4)), desc='broadcast'),
            Sample((B(rng, 3, 4), R(rng, 3, 4), 0.0), desc='scalar_other'),
            Sample((B(rng, 3, 4), 1.5, R(rng, 4)), desc='scalar_input'),
            Sample((B(rng), R(rng, 3), R(rng)), desc='0dim'),
            Sample((B(rng, 0, 2), R(rng, 0, 2), R(rng, 2)), desc='empty'),
            Sample((B(rng, 3, 4), nc(R(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig'),
            Sample((B(rng, 2, 3), R(rng, 2, 3), F64(rng, 2, 3)), desc='f32_f64'),
            Sample((B(rng, 2, 3), I64(rng, 2, 3), R(rng, 2, 3)), desc='i64_f32'),
            Sample((B(rng, 2, 3), I64(rng, 2, 3), 2.5), desc='i64_pyfloat'),
            Sample((B(rng, 2, 3), I64(rng, 2, 3), I64(rng, 2, 3)), desc='i64_i64')]


def where_errors(rng):
    return [ErrorSample((B(rng, 2, 3), R(rng, 4), R(rng, 2, 3)), desc='shape_mismatch')]


def compare_samples(rng):
    ints = lambda *s: rng.integers(-2, 3, s).astype(np.int64)  # noqa: E731 (ties happen)
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='same_shape'),
            Sample((R(rng, 3, 1), R(rng, 1, 4)), desc='broadcast'),
            Sample((R(rng), R(rng, 3)), desc='0dim'),
            Sample((R(rng, 0, 3), R(rng, 3)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig'),
            Sample((ints(3, 4), ints(3, 4)), desc='int_ties'),
            Sample((ints(3, 4), R(rng, 3, 4)), desc='int_float'),
            Sample((R(rng, 3, 4), 0.5), desc='pyfloat'),
            Sample((ints(3, 4), 1), desc='pyint'),
            Sample((B(rng, 3, 4), B(rng, 3, 4)), desc='bool'),
            Sample((ints(2, 3), 0.5), desc='int_pyfloat')]


def reduction_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4), 0), desc='dim0'),
            Sample((R(rng, 3, 4), -1), desc='neg_dim'),
            Sample((R(rng, 3, 4),), dict(dim=1, keepdim=True), desc='keepdim'),
            Sample((R(rng, 2, 3, 2), (0, 2)), desc='tuple_dims'),
            Sample((R(rng, 2, 3, 2), (-1, 0)), dict(keepdim=True), desc='tuple_neg_keepdim'),
            Sample((R(rng, 2, 3, 2),), dict(dim=[1]), desc='list_dim'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng), -1), dict(keepdim=True), desc='0dim_neg_keepdim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((R(rng, 0, 3), 1), desc='empty_dim1'),
            Sample((nc(R(rng, 4, 3), TR), 0), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((R(rng, 2, 3),), dict(dtype=DT('float64')), desc='dtype_kw')]


def sum_samples(rng):
    s = reduction_samples(rng)
    s += [Sample((R(rng, 3, 4),), dict(dim=()), desc='empty_dim_tuple'),
          Sample((I64(rng, 3, 4), 1), desc='int64'),
          Sample((I32(rng, 3, 4),), desc='int32_to_int64'),
          Sample((B(rng, 3, 4), 0), desc='bool_to_int64')]
    return s


def reduction_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -3), exc=IndexError, desc='neg_dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), (0, 0)), desc='repeated_dim'),
            ErrorSample((R(rng), 1), exc=IndexError, desc='0dim_out_of_range')]


def mean_errors(rng):
    return reduction_errors(rng) + [ErrorSample((I64(rng, 2, 3),), desc='int_input')]


def matmul_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 4, 2)), desc='mm'),
            Sample((R(rng, 4), R(rng, 4)), desc='dot'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='mv'),
            Sample((R(rng, 3), R(rng, 3, 2)), desc='vm', check_grad_fn=False),
            Sample((R(rng, 2, 2, 3), R(rng, 3, 2)), desc='batched_2d', check_grad_fn=False),
            Sample((R(rng, 2, 3, 2), R(rng, 2, 2, 2)), desc='bmm', check_grad_fn=False),
            Sample((R(rng, 2, 1, 2, 3), R(rng, 3, 3, 2)), desc='broadcast_batch',
                   check_grad_fn=False),
            Sample((R(rng, 3), R(rng, 2, 3, 2)), desc='vec_batched', check_grad_fn=False),
            Sample((R(rng, 2, 3, 2), R(rng, 2)), desc='batched_vec', check_grad_fn=False),
            Sample((nc(R(rng, 4, 3), TR), nc(R(rng, 2, 4), TR)), desc='noncontig'),
            Sample((R(rng, 0, 3), R(rng, 3, 2)), desc='empty_rows'),
            Sample((R(rng, 2, 0), R(rng, 0, 3)), desc='empty_inner'),
            Sample((F64(rng, 2, 3), F64(rng, 3, 2)), desc='f64'),
            Sample((I64(rng, 2, 3), I64(rng, 3, 2)), desc='int64')]


def matmul_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 4, 2)), desc='inner_mismatch'),
            ErrorSample((R(rng, 3), R(rng, 4)), desc='dot_mismatch'),
            ErrorSample((R(rng, 2, 2, 3), R(rng, 2, 2, 3)), desc='batched_mismatch'),
            ErrorSample((R(rng), R(rng, 3)), desc='0dim'),
            ErrorSample((R(rng, 2, 3), F64(rng, 3, 2)), desc='dtype_mismatch')]


def mm_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 4, 2)), desc='mm'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 4, 2)), desc='noncontig'),
            Sample((R(rng, 0, 2), R(rng, 2, 3)), desc='empty'),
            Sample((F64(rng, 1, 3), F64(rng, 3, 1)), desc='f64'),
            Sample((I64(rng, 2, 3), I64(rng, 3, 2)), desc='int64')]


def mm_errors(rng):
    return matmul_errors(rng)[:1] + [
        ErrorSample((R(rng, 3), R(rng, 3, 2)), desc='vector'),
        ErrorSample((R(rng, 2, 3, 2), R(rng, 2, 2)), desc='batched'),
        ErrorSample((R(rng, 2, 3), F64(rng, 3, 2)), desc='dtype_mismatch')]


def reshape_samples(rng):
    return [Sample((R(rng, 3, 4), (4, 3)), desc='2d'),
            Sample((R(rng, 3, 4), (-1,)), desc='infer'),
            Sample((R(rng, 3, 4), (2, -1, 2)), desc='infer_mid'),
            Sample((R(rng, 3, 4), 12), desc='int_arg', method_only=True),
            Sample((R(rng, 3, 4), 2, 6), desc='varargs', method_only=True),
            Sample((R(rng, 1, 1), ()), desc='to_0dim'),
            Sample((R(rng), (1, 1)), desc='from_0dim'),
            Sample((R(rng, 0, 3), (3, 0)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (-1,)), desc='noncontig_copy'),
            Sample((nc(R(rng, 2, 3, 2), TR), (2, 6)), desc='noncontig_copy_3d'),
            Sample((I64(rng, 2, 3), (3, 2)), desc='int64')]


def reshape_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (5, -1)), desc='not_divisible'),
            ErrorSample((R(rng, 3, 4), (5, 2)), desc='wrong_numel'),
            ErrorSample((R(rng, 3, 4), (-1, -1)), desc='two_infers')]


def view_samples(rng):
    return [s for s in reshape_samples(rng) if 'noncontig' not in s.desc] + [
        Sample((nc(R(rng, 3, 4), TR), (4, 3, 1)), desc='noncontig_compatible')]


def view_errors(rng):
    return reshape_errors(rng) + [
        ErrorSample((nc(R(rng, 4, 3), TR), (-1,)), desc='noncontig_incompatible')]


def view_as_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 2, 6)), desc='2d'),
            Sample((R(rng, 1), R(rng)), desc='to_0dim'),
            Sample((R(rng, 0, 2), R(rng, 2, 0)), desc='empty'),
            Sample((I64(rng, 2, 3), R(rng, 6)), desc='int64')]


def flatten_samples(rng):
    return [Sample((R(rng, 2, 3, 2),), desc='all'),
            Sample((R(rng, 2, 3, 2), 1), desc='start1'),
            Sample((R(rng, 2, 3, 2), 0, 1), desc='start0_end1'),
            Sample((R(rng, 2, 3, 2),), dict(start_dim=-2, end_dim=-1), desc='negative'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig')]


def flatten_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 2), 2, 0), desc='start_after_end'),
            ErrorSample((R(rng, 2, 3), 3), exc=IndexError, desc='dim_out_of_range')]


def transpose_samples(rng):
    return [Sample((R(rng, 3, 4), 0, 1), desc='2d'),
            Sample((R(rng, 2, 3, 2), 0, -1), desc='3d_neg'),
            Sample((R(rng, 2, 3, 2), 1, 1), desc='same_dim'),
            Sample((R(rng), 0, -1), desc='0dim'),
            Sample((R(rng, 0, 3), 0, 1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1, 0), desc='noncontig'),
            Sample((I64(rng, 2, 3), 0, 1), desc='int64')]


def transpose_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 0, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -3, 0), exc=IndexError, desc='neg_out_of_range')]


def t_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 4),), desc='1d'),
            Sample((R(rng),), desc='0dim', check_grad_fn=False),
            Sample((R(rng, 0, 2),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig')]


def t_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 2),), desc='3d')]


def mT_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def bigT_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 4),), desc='1d'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def permute_samples(rng):
    return [Sample((R(rng, 2, 3, 2), (2, 0, 1)), desc='tuple'),
            Sample((R(rng, 2, 3, 2), 1, 0, 2), desc='varargs',
                   method_only=True),
            Sample((R(rng, 2, 3, 2), (-1, 0, -2)), desc='negative'),
            Sample((R(rng), ()), desc='0dim'),
            Sample((R(rng, 0, 3), (1, 0)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (1, 0)), desc='noncontig')]


def permute_errors(rng):
    return [ErrorSample((R(rng, 2, 3), (0,)), desc='too_few'),
            ErrorSample((R(rng, 2, 3), (0, 0)), desc='duplicate'),
            ErrorSample((R(rng, 2, 3), (0, 2)), exc=IndexError, desc='out_of_range')]


def squeeze_samples(rng):
    return [Sample((R(rng, 3, 1, 4, 1),), desc='all'),
            Sample((R(rng, 3, 1, 4), 1), desc='dim'),
            Sample((R(rng, 3, 1, 4), 0), desc='dim_not_1'),
            Sample((R(rng, 3, 1, 4, 1), -1), desc='neg_dim'),
            Sample((R(rng, 1, 3, 1), (0, 2)), desc='tuple'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng, 1, 0),), desc='empty'),
            Sample((nc(R(rng, 3, 1), TR), 0), desc='noncontig')]


def squeeze_errors(rng):
    return [ErrorSample((R(rng, 2, 1), 2), exc=IndexError, desc='dim_out_of_range')]


def unsqueeze_samples(rng):
    return [Sample((R(rng, 3, 4), 0), desc='front'),
            Sample((R(rng, 3, 4), 2), desc='back'),
            Sample((R(rng, 3, 4), -1), desc='neg'),
            Sample((R(rng, 3, 4), -3), desc='neg_front'),
            Sample((R(rng), 0), desc='0dim'),
            Sample((R(rng, 0), 1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64(rng, 2), 0), desc='int64')]


def unsqueeze_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 3), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -4), exc=IndexError, desc='neg_out_of_range')]


def expand_samples(rng):
    return [Sample((R(rng, 3, 1), (3, 4)), desc='expand_dim'),
            Sample((R(rng, 1, 3), 2, 2, 3), desc='varargs_new_dims'),
            Sample((R(rng, 3, 1), (2, -1, 2)), desc='minus_one'),
            Sample((R(rng), (2, 3)), desc='0dim'),
            Sample((R(rng, 1, 0), (3, 0)), desc='empty'),
            Sample((nc(R(rng, 1, 3), TR), (3, 4)), desc='noncontig'),
            Sample((I64(rng, 1, 2), (2, 2)), desc='int64')]


def expand_errors(rng):
    return [ErrorSample((R(rng, 3, 2), (3, 4)), desc='non_singleton'),
            ErrorSample((R(rng, 3, 2), (2,)), desc='too_few_sizes'),
            ErrorSample((R(rng, 3), (-1, 3)), desc='minus_one_leading')]


def expand_as_samples(rng):
    return [Sample((R(rng, 3, 1), R(rng, 3, 4)), desc='2d'),
            Sample((R(rng), R(rng, 2, 3)), desc='0dim'),
            Sample((R(rng, 3), I64(rng, 2, 3)), desc='other_int')]


def broadcast_to_samples(rng):
    return [Sample((R(rng, 3, 1), (3, 4)), desc='2d'),
            Sample((R(rng, 3), (2, 3)), desc='new_dim'),
            Sample((R(rng), ()), desc='0dim'),
            Sample((nc(R(rng, 1, 3), TR), (2, 3, 4)), desc='noncontig')]


def _idx(*v):
    return np.asarray(v, dtype=np.int64)


def getitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    return [
        Sample((x(), 1), desc='int'),
        Sample((x(), -1), desc='neg_int'),
        Sample((x(), (1, 2)), desc='int_int'),
        Sample((x(), slice(1, None)), desc='slice'),
        Sample((x(), slice(None)), desc='full_slice'),
        Sample((x(), (slice(None), slice(None))), desc='full_slices'),
        Sample((x(), (slice(None, None, 2), slice(3, 0, -1) if False else slice(1, 4, 2))),
               desc='steps'),
        Sample((x(), (0, slice(1, 3))), desc='int_then_slice'),
        Sample((x(), (slice(1, 3), 0)), desc='slice_then_int'),
        Sample((x(), (slice(None), 2)), desc='full_then_int'),
        Sample((x(), None), desc='none'),
        Sample((x(), (Ellipsis, None)), desc='ellipsis_none'),
        Sample((x(), (0, None)), desc='int_none'),
        Sample((x(), (None, 0)), desc='none_int'),
        Sample((x(), Ellipsis), desc='ellipsis'),
        Sample((x(), (Ellipsis, 1)), desc='ellipsis_int'),
        Sample((R(rng, 2, 3, 2), (0, Ellipsis, 1)), desc='int_ellipsis_int'),
        Sample((x(), slice(5, 9)), desc='empty_slice'),
        Sample((R(rng), None), desc='0dim_none'),
        Sample((R(rng), Ellipsis), desc='0dim_ellipsis'),
        Sample((nc(R(rng, 4, 3), TR), (slice(None), 1)), desc='noncontig'),
        Sample((x(), _idx(0, 2)), desc='int_tensor'),
        Sample((x(), _idx(2, 0, 2)), desc='int_tensor_repeats'),
        Sample((x(), _idx([0, 1], [1, 1])), desc='int_tensor_2d'),
        Sample((x(), (_idx(0, 2), _idx(1, 3))), desc='int_tensor_pair'),
        Sample((x(), (slice(None), _idx(3, 0, 3))), desc='slice_int_tensor'),
        Sample((x(), (slice(1, None), [0, 2])), desc='slice_list'),
        Sample((x(), [2, 0]), desc='list'),
        Sample((x(), _idx(-1, 0)), desc='neg_int_tensor'),
        Sample((x(), mask), desc='bool_mask'),
        Sample((x(), np.array([True, False, True])), desc='bool_mask_dim0'),
        Sample((x(), np.zeros((3, 4), bool)), desc='bool_mask_empty'),
        Sample((x(), _idx()), desc='empty_int_tensor'),
        Sample((I64(rng, 3, 4), (slice(None), 1)), desc='int64_basic'),
        Sample((I64(rng, 3, 4), _idx(1, 1)), desc='int64_advanced'),
    ]


def getitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 3), exc=IndexError, desc='int_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, -5)), exc=IndexError, desc='neg_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, 0, 0)), exc=IndexError, desc='too_many'),
            ErrorSample((R(rng, 3, 4), _idx(0, 3)), exc=IndexError, desc='tensor_out_of_range'),
            ErrorSample((R(rng), 0), exc=IndexError, desc='index_0dim')]


def _setitem(lib, x, key, value):
    y = x.clone()
    y[key] = value
    return y


def setitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    return [
        Sample((x(), 1, R(rng, 4)), desc='int_tensor_value'),
        Sample((x(), 1, 2.5), desc='int_scalar'),
        Sample((x(), (slice(None), 1), R(rng, 3)), desc='column'),
        Sample((x(), (slice(None, None, 2), slice(1, 3)), R(rng, 2, 2)), desc='strided_block'),
        Sample((x(), slice(0, 2), R(rng, 4)), desc='broadcast_value'),
        Sample((x(), (0, 1), R(rng)), desc='element_0dim_value'),
        Sample((x(), Ellipsis, R(rng, 1, 4)), desc='ellipsis'),
        Sample((x(), (None, 1), R(rng, 1, 4)), desc='none'),
        Sample((x(), _idx(0, 2), R(rng, 2, 4)), desc='int_tensor'),
        Sample((x(), (_idx(0, 2), _idx(1, 3)), R(rng, 2)), desc='int_tensor_pair'),
        Sample((x(), mask, R(rng, 6)), desc='bool_mask'),
        Sample((x(), mask, -1.0), desc='bool_mask_scalar'),
        Sample((x(), (slice(None), [0, 3]), R(rng, 3, 1)), desc='list_broadcast'),
        Sample((x(), slice(5, 9), 1.0), desc='empty_region'),
        Sample((x(), 0, I64(rng, 4)), desc='int_value_into_float'),
        Sample((I64(rng, 3, 4), 0, 7), desc='int64_target'),
        Sample((F64(rng, 3, 4), 1, R(rng, 4)), desc='f32_value_into_f64'),
    ]


def setitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, R(rng, 3)), desc='value_shape'),
            ErrorSample((R(rng, 3, 4), 3, 1.0), exc=IndexError, desc='out_of_range')]


def fill_samples(rng):
    return [Sample((R(rng, 3, 4), 2.5), desc='pyfloat'),
            Sample((R(rng, 3, 4), 2), desc='pyint'),
            Sample((R(rng), -1.0), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR), 0.5), desc='noncontig'),
            Sample((I64(rng, 2, 3), 7), desc='int64')]


def zero_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng),), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64')]


def copy_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='same'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='broadcast'),
            Sample((R(rng, 3, 4), F64(rng, 3, 4)), desc='f64_into_f32'),
            Sample((F64(rng, 2, 3), R(rng, 2, 3)), desc='f32_into_f64'),
            Sample((R(rng, 2, 3), I64(rng, 2, 3)), desc='int_into_float'),
            Sample((I64(rng, 2, 3), R(rng, 2, 3)), desc='float_into_int'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig')]


def copy_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 2, 4)), desc='shape')]


# -- callables shared by dynagrad and torch -------------------------------------------------

def _clone_then(method):
    """An in-place method as a function: ``x.clone().<method>(*rest)`` (records on a non-leaf)."""
    def fn(lib, x, *rest, **kwargs):
        return getattr(x.clone(), method)(*rest, **kwargs)
    return fn


def _iop(name):
    import operator
    op = getattr(operator, name)

    def fn(a, b):
        return op(a, b)
    return fn


def _ipow(a, b):
    a **= b
    return a


BINARY_ERRORS = binary_errors

# -- known bugs outside the op files: strict xfails, listed for the lead ---------------------
# (op name, test kind, sample descs, reason). Kinds: forward, backward, grad_fn, gradcheck,
# gradgradcheck, inplace, error. Fixing a bug turns its entries into XPASS failures: delete
# them then.

KNOWN_BUGS = []  # (op name, check kind, sample descs, reason) for bugs not yet fixed

OPS = [
    # arithmetic
    OpInfo('add', None, binary_samples(), method='add', inplace='add_',
           operator=lambda a, b: a + b, inplace_operator=_iop('iadd'), errors=binary_errors),
    OpInfo('add_alpha', lambda lib, a, b: lib.add(a, b, alpha=2), binary_samples(
        scalars=(2.5, 3), bool_ok=False), method=None, errors=binary_errors),
    OpInfo('sub', None, binary_samples(bool_ok=False, scalars=(2.5, 3)), method='sub',
           inplace='sub_', operator=lambda a, b: a - b, inplace_operator=_iop('isub'),
           errors=lambda rng: binary_errors(rng) + [
               ErrorSample((B(rng, 2), B(rng, 2)), desc='bool_bool'),
               ErrorSample((R(rng, 2), True), desc='pybool')],
           aliases=('subtract',)),
    OpInfo('sub_alpha', lambda lib, a, b: lib.sub(a, b, alpha=0.5), binary_samples(
        scalars=(2.5,), promotion=False)),
    OpInfo('mul', None, binary_samples(), method='mul', inplace='mul_',
           operator=lambda a, b: a * b, inplace_operator=_iop('imul'), errors=binary_errors,
           aliases=('multiply',)),
    OpInfo('div', None, binary_samples(rhs=NZ, int_rhs=I64NZ, rhs64=F64NZ), method='div',
           inplace='div_', operator=lambda a, b: a / b, inplace_operator=_iop('itruediv'),
           errors=binary_errors, aliases=('true_divide', 'divide'), domain='divisor != 0'),
    OpInfo('radd', lambda lib, x, s: s + x, scalar_left_samples()),
    OpInfo('rsub', lambda lib, x, s: s - x, scalar_left_samples()),
    OpInfo('rmul', lambda lib, x, s: s * x, scalar_left_samples()),
    OpInfo('rtruediv', lambda lib, x, s: s / x, scalar_left_samples(NZ), domain='x != 0'),
    OpInfo('pow', None, pow_scalar_samples, method='pow', inplace='pow_',
           operator=lambda a, b: a ** b, inplace_operator=_ipow,
           errors=lambda rng: [ErrorSample((I64(rng, 2), -1), desc='int_negative_power'),
                               ErrorSample((R(rng, 2, 3), R(rng, 3, 3)), desc='shape_mismatch')],
           domain='positive base for fractional exponents, nonzero for negative'),
    OpInfo('pow_tensor', lambda lib, a, b: lib.pow(a, b), pow_tensor_samples, method='pow',
           inplace='pow_', operator=lambda a, b: a ** b, domain='positive base'),
    OpInfo('rpow', lambda lib, x, base: base ** x, rpow_samples, domain='positive base'),
    OpInfo('neg', None, unary_samples(), method='neg', inplace='neg_',
           operator=lambda a: -a, aliases=('negative',),
           errors=lambda rng: unary_errors(rng) + [ErrorSample((B(rng, 3),), desc='bool')]),
    # unary math and activations
    OpInfo('exp', None, unary_samples(bools=True), method='exp', inplace='exp_',
           errors=unary_errors),
    OpInfo('log', None, unary_samples(POS), method='log', inplace='log_', errors=unary_errors,
           domain='x > 0'),
    OpInfo('sqrt', None, unary_samples(POS), method='sqrt', inplace='sqrt_',
           errors=unary_errors, domain='x > 0'),
    OpInfo('tanh', None, unary_samples(), method='tanh', inplace='tanh_', errors=unary_errors),
    OpInfo('sigmoid', None, unary_samples(bools=True), method='sigmoid', inplace='sigmoid_',
           errors=unary_errors),
    OpInfo('relu', None, unary_samples(NZ), method='relu', inplace='relu_',
           errors=unary_errors, domain='x != 0 (kink)'),
    OpInfo('abs', None, unary_samples(NZ), method='abs', inplace='abs_', operator=abs,
           aliases=('absolute',), errors=unary_errors, domain='x != 0 (kink)'),
    OpInfo('sign', None, unary_samples(NZ, bools=True), method='sign', inplace='sign_',
           errors=unary_errors, twice_differentiable=False),
    OpInfo('clamp', None, clamp_samples, method='clamp', inplace='clamp_', aliases=('clip',),
           errors=clamp_errors, domain='x away from the bounds (kinks)'),
    OpInfo('where', None, where_samples, errors=where_errors),
    OpInfo('clone', None, unary_samples(bools=True), method='clone'),
    # comparisons
    *[OpInfo(n, None, compare_samples, method=n, differentiable=False,
             operator=_iop(n), errors=lambda rng: binary_errors(rng)[:2])
      for n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge')],
    # reductions
    OpInfo('sum', None, sum_samples, method='sum', errors=reduction_errors),
    OpInfo('mean', None, reduction_samples, method='mean', errors=mean_errors),
    # linear algebra
    OpInfo('matmul', None, matmul_samples, method='matmul', operator=lambda a, b: a @ b,
           errors=matmul_errors),
    OpInfo('mm', None, mm_samples, method='mm', errors=mm_errors),
    # shapes and views
    OpInfo('reshape', None, reshape_samples, method='reshape', errors=reshape_errors),
    OpInfo('view', lambda lib, x, *shape: x.view(*shape), view_samples, method='view',
           errors=view_errors),
    OpInfo('view_as', lambda lib, x, o: x.view_as(o), view_as_samples),
    OpInfo('flatten', None, flatten_samples, method='flatten', errors=flatten_errors),
    OpInfo('transpose', None, transpose_samples, method='transpose',
           aliases=('swapaxes', 'swapdims'), errors=transpose_errors),
    OpInfo('t', None, t_samples, method='t', errors=t_errors),
    OpInfo('mT', lambda lib, x: x.mT, mT_samples),
    OpInfo('T', lambda lib, x: x.T, bigT_samples),
    OpInfo('permute', None, permute_samples, method='permute', errors=permute_errors),
    OpInfo('squeeze', None, squeeze_samples, method='squeeze', errors=squeeze_errors),
    OpInfo('unsqueeze', None, unsqueeze_samples, method='unsqueeze', errors=unsqueeze_errors),
    OpInfo('expand', lambda lib, x, *sizes: x.expand(*sizes), expand_samples,
           errors=expand_errors),
    OpInfo('expand_as', lambda lib, x, o: x.expand_as(o), expand_as_samples),
    OpInfo('broadcast_to', None, broadcast_to_samples, method='broadcast_to',
           errors=lambda rng: [ErrorSample((R(rng, 3, 2), (3, 4)), desc='non_singleton')]),
    # indexing
    OpInfo('getitem', lambda lib, x, key: x[key], getitem_samples, errors=getitem_errors),
    OpInfo('setitem', _setitem, setitem_samples, errors=setitem_errors),
    # in-place-only ops, run as clone().op_() so they record on a non-leaf
    OpInfo('fill_', _clone_then('fill_'), fill_samples, inplace='fill_'),
    OpInfo('zero_', _clone_then('zero_'), zero_samples, inplace='zero_'),
    OpInfo('copy_', _clone_then('copy_'), copy_samples, inplace='copy_', errors=copy_errors),
]

OP_BY_NAME = {op.name: op for op in OPS}
assert len(OP_BY_NAME) == len(OPS), 'op names must be unique'

# Filled by the conformance tests, read by conftest's terminal summary.
STATS = {'ops': set(), 'samples': set()}
