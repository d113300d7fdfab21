"""Rows for elementwise ops: arithmetic, unary math, activations, comparisons."""
import numpy as np  # noqa: F401
from dataclasses import replace as dataclass_replace

from ._core import *  # noqa: F401,F403
from ._core import _f


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


OPS = [
    # arithmetic
    OpInfo('add', None, binary_samples(), method='add', inplace='add_',
           operator=lambda a, b: a + b, inplace_operator=iop('iadd'), errors=binary_errors),
    OpInfo('add_alpha', lambda lib, a, b: lib.add(a, b, alpha=2), binary_samples(
        scalars=(2.5, 3), bool_ok=False), method=None, errors=binary_errors),
    OpInfo('sub', None, binary_samples(bool_ok=False, scalars=(2.5, 3)), method='sub',
           inplace='sub_', operator=lambda a, b: a - b, inplace_operator=iop('isub'),
           errors=lambda rng: binary_errors(rng) + [
               ErrorSample((B(rng, 2), B(rng, 2)), desc='bool_bool'),
               ErrorSample((R(rng, 2), True), desc='pybool')],
           aliases=('subtract',)),
    OpInfo('sub_alpha', lambda lib, a, b: lib.sub(a, b, alpha=0.5), binary_samples(
        scalars=(2.5,), promotion=False)),
    # alpha given as a 0-dim tensor is read as its number; one with dims is refused
    OpInfo('add_tensor_alpha', lambda lib, a, b, alpha: a.clone().add_(b, alpha=alpha),
           lambda rng: [Sample((R(rng, 2, 3), R(rng, 2, 3), R(rng)), requires_grad=False,
                               desc='0dim'),
                        Sample((F64(rng, 3), R(rng, 3), F64(rng)), requires_grad=False,
                               desc='f64')],
           method=None,
           errors=lambda rng: [ErrorSample((R(rng, 2), R(rng, 2), R(rng, 2)), exc=TypeError,
                                           desc='two_elements'),
                               ErrorSample((R(rng, 2), R(rng, 2), R(rng, 1)), exc=TypeError,
                                           desc='one_element_1d')]),
    OpInfo('sub_tensor_alpha', lambda lib, a, b, alpha: lib.sub(a, b, alpha=alpha),
           lambda rng: [Sample((R(rng, 2, 3), R(rng, 3), R(rng)), requires_grad=False,
                               desc='0dim')],
           method=None),
    OpInfo('mul', None, binary_samples(), method='mul', inplace='mul_',
           operator=lambda a, b: a * b, inplace_operator=iop('imul'), errors=binary_errors,
           aliases=('multiply',)),
    OpInfo('div', None, binary_samples(rhs=NZ, int_rhs=I64NZ, rhs64=F64NZ), method='div',
           inplace='div_', operator=lambda a, b: a / b, inplace_operator=iop('itruediv'),
           errors=binary_errors, aliases=('true_divide', 'divide'), domain='divisor != 0'),
    OpInfo('radd', lambda lib, x, s: s + x, scalar_left_samples()),
    OpInfo('rsub', lambda lib, x, s: s - x, scalar_left_samples()),
    OpInfo('rmul', lambda lib, x, s: s * x, scalar_left_samples()),
    OpInfo('rtruediv', lambda lib, x, s: s / x, scalar_left_samples(NZ), domain='x != 0'),
    OpInfo('pow', None, pow_scalar_samples, method='pow', inplace='pow_',
           operator=lambda a, b: a ** b, inplace_operator=ipow,
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
             operator=iop(n), errors=lambda rng: binary_errors(rng)[:2])
      for n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge')],
]


# =======================================================================================
# The op library: rounding division, unary math, special functions, binary math,
# clamp with tensor bounds, lerp, predicates, logical and bitwise ops.
# =======================================================================================

def _between(low, high):
    def make(rng, *shape):
        return np.asarray(rng.uniform(low, high, shape), dtype=np.float32)
    return make


UNIT = maker('unit')                       # (-0.9, 0.9)
PROB = _between(0.1, 0.9)                  # logit's domain
GT1 = _between(1.2, 3.0)                   # acosh's domain
LGAMMA_NEG = _between(-2.9, -2.1)          # between the poles at -3 and -2
I64POS = maker('positive', np.int64)


def with_kwargs(gen, **kwargs):
    """Every sample of ``gen`` with ``kwargs`` added (e.g. rounding_mode)."""
    def wrapped(rng):
        out = gen(rng)
        for s in out:
            s.kwargs = {**kwargs, **s.kwargs}
        return out
    return wrapped


def extra(gen, more):
    def wrapped(rng):
        return gen(rng) + more(rng)
    return wrapped


def tensor_binary_samples(lhs=R, rhs=R, *, ints=True, bools=True, int_rhs=I64):
    """Binary ops that take tensors only (no Python scalars): broadcasting and promotion."""
    base = binary_samples(lhs, rhs, promotion=False, scalars=())

    def gen(rng):
        s = base(rng)
        s += [Sample((lhs(rng, 2, 3), rhs(rng, 2, 3).astype(np.float64)), desc='f32_f64'),
              Sample((lhs(rng, 2, 3), F64(rng) if rhs is R else rhs(rng).astype(np.float64)),
                     desc='f32_f64_0dim'),
              Sample((lhs(rng, 2, 3), int_rhs(rng, 2, 3)), desc='f32_i64')]
        if ints:
            s += [Sample((I64(rng, 2, 3), int_rhs(rng, 2, 3)), desc='i64_i64'),
                  Sample((I32(rng, 2, 3), int_rhs(rng, 2, 3)), desc='i32_i64')]
        if bools:
            s += [Sample((B(rng, 2, 3), B(rng, 2, 3)), desc='bool_bool'),
                  Sample((B(rng, 2, 3), int_rhs(rng, 2, 3)), desc='bool_i64')]
        return s
    return gen


def tensor_only_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2.5), exc=TypeError, desc='python_scalar'),
            ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch')]


def int_div_errors(rng):
    return [ErrorSample((I64(rng, 3), np.array([1, 0, 2])), desc='int_zero_division'),
            ErrorSample((I64(rng, 3), 0), desc='int_zero_scalar'),
            ErrorSample((B(rng, 3), B(rng, 3)), exc=NotImplementedError, desc='bool_bool'),
            ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch'),
            ErrorSample((I64(rng, 2, 3), R(rng, 2, 3)), desc='inplace_float_into_int',
                        variant='inplace')]


def bool_not_implemented(rng):
    return unary_errors(rng) + [ErrorSample((B(rng, 3),), exc=NotImplementedError,
                                            desc='bool')]


def int_not_implemented(rng):
    return bool_not_implemented(rng) + [ErrorSample((I64(rng, 3),), exc=NotImplementedError,
                                                    desc='int64')]


def int_float_result_inplace(rng):
    return unary_errors(rng) + [ErrorSample((I64(rng, 3),), desc='int_target_float_result',
                                            variant='inplace')]


def ties_samples(rng):
    a = R(rng, 3, 4)
    b = np.where(rng.random((3, 4)) < 0.5, a, R(rng, 3, 4)).astype(np.float32)
    return [Sample((a, b), desc='ties', gradcheck=False),   # kink at a == b
            Sample((np.array([1.0, np.nan, 2.0], np.float32),
                    np.array([np.nan, 1.0, 2.0], np.float32)), desc='nan_and_tie',
                   gradcheck=False)]


def special_values(rng):
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5], np.float32)
    return [Sample((v,), desc='special_values', requires_grad=False),
            Sample((v.astype(np.float64),), desc='special_values_f64', requires_grad=False)]


def unary_rows(specs):
    """(name, domain maker, kwargs of OpInfo, sample options) -> OpInfo rows."""
    rows = []
    for name, make, opts, sopts in specs:
        samples = extra(unary_samples(make, **sopts), special_values)
        # asinh_, acosh_, atanh_ have no derivative in PyTorch: checked in the extra tests
        inplace = None if name in ('asinh', 'acosh', 'atanh') else name + '_'
        rows.append(OpInfo(name, None, samples, method=name, inplace=inplace,
                           errors=int_float_result_inplace, **opts))
    return rows


def xlogy_samples(rng):
    x = R(rng, 3, 4)
    x[0, :2] = 0.0
    return [Sample((x, POS(rng, 3, 4)), desc='zeros_in_x'),
            Sample((R(rng, 3, 1), POS(rng, 1, 4)), desc='broadcast'),
            Sample((R(rng), POS(rng, 3)), desc='0dim_x'),
            Sample((R(rng, 0, 3), POS(rng, 3)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), POS(rng, 3, 4)), desc='noncontig'),
            Sample((R(rng, 2, 3), 2.5), desc='scalar_other'),
            Sample((1.5, POS(rng, 2, 3)), desc='scalar_self'),
            Sample((I64(rng, 2, 3), I64POS(rng, 2, 3)), desc='i64_i64'),
            Sample((R(rng, 2, 3), POS(rng, 2, 3).astype(np.float64)), desc='f32_f64'),
            Sample((np.array([0.0, 0.0, 2.0, np.nan], np.float32),
                    np.array([0.0, np.nan, -1.0, 1.0], np.float32)), desc='special',
                   gradcheck=False)]


def addc_samples(third=R):
    def gen(rng):
        return [Sample((R(rng, 3, 4), R(rng, 3, 4), third(rng, 3, 4)), desc='same_shape'),
                Sample((R(rng, 3, 4), R(rng, 3, 4), third(rng, 3, 4)), dict(value=0.5),
                       desc='value'),
                Sample((R(rng, 4), R(rng, 3, 1), third(rng, 1, 4)), dict(value=-2),
                       desc='broadcast'),
                Sample((R(rng), R(rng), third(rng)), desc='0dim'),
                Sample((R(rng, 0, 2), R(rng, 2), third(rng, 0, 2)), desc='empty'),
                Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4), third(rng, 3, 4)), desc='noncontig'),
                Sample((R(rng, 2, 3).astype(np.float64), R(rng, 2, 3), third(rng, 2, 3)),
                       desc='f64_f32'),
                Sample((I64(rng, 2, 3), R(rng, 2, 3), third(rng, 2, 3)), desc='i64_f32'),
                Sample((I64(rng, 2, 3), I64(rng, 2, 3) if third is R else R(rng, 2, 3),
                        I64NZ(rng, 2, 3)), dict(value=2), desc='int', requires_grad=False),
                Sample((I64(rng, 2, 3), I64(rng, 2, 3) if third is R else R(rng, 2, 3),
                        I64NZ(rng, 2, 3)), dict(value=-2.7), desc='int_float_value',
                       requires_grad=False)]
    return gen


def addc_errors(name):
    def gen(rng):
        e = [ErrorSample((R(rng, 2, 3), R(rng, 4), R(rng, 2, 3)), desc='shape_mismatch')]
        if name == 'addcdiv':
            e.append(ErrorSample((R(rng, 2), I64(rng, 2), I64NZ(rng, 2)), desc='int_division'))
        return e
    return gen


def rounding_samples(rng):
    return unary_samples(R)(rng) + [Sample((np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7],
                                                     np.float32),), desc='halves',
                                           gradcheck=False)]


def round_decimals_samples(rng):
    return [Sample((R(rng, 3, 4),), dict(decimals=1), desc='decimals_1'),
            Sample((R(rng, 3, 4) * 100,), dict(decimals=-1), desc='decimals_neg'),
            Sample((R(rng, 2, 3).astype(np.float64),), dict(decimals=3), desc='f64'),
            Sample((R(rng),), dict(decimals=2), desc='0dim'),
            Sample((R(rng, 0),), dict(decimals=2), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), dict(decimals=1), desc='noncontig')]


def logit_samples(rng):
    return unary_samples(PROB, ints=False)(rng) + [
        Sample((PROB(rng, 3, 4),), dict(eps=0.2), desc='eps'),
        Sample((np.array([0.05, 0.5, 0.95, 0.3], np.float32),), dict(eps=0.1),
               desc='eps_clamped'),
        Sample((np.array([-0.5, 1.5, 0.0, 1.0], np.float32),), desc='outside',
               gradcheck=False),
        Sample((I64(rng, 2, 3),), desc='int64')]


def polygamma_samples(rng):
    return [Sample((POS(rng, 3, 4), 1), desc='trigamma'),
            Sample((POS(rng, 2, 3), 2), desc='n2'),
            Sample((POS(rng, 2, 3).astype(np.float64), 3), desc='n3_f64'),
            Sample((LGAMMA_NEG(rng, 2, 3), 1), desc='negative_x'),
            Sample((POS(rng), 1), desc='0dim'),
            Sample((POS(rng, 0), 1), desc='empty'),
            Sample((nc(POS(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64POS(rng, 2, 3), 1), desc='int64'),
            Sample((POS(rng, 2, 3), 0), desc='n0_is_digamma')]


def nan_to_num_samples(rng):
    def bad(*shape):
        v = R(rng, *shape)
        flat = v.reshape(-1)
        flat[:3] = [np.nan, np.inf, -np.inf][:flat.size]
        return v
    return [Sample((bad(3, 4),), desc='default'),
            Sample((bad(3, 4),), dict(nan=1.0, posinf=2.0, neginf=-3.0), desc='values'),
            Sample((bad(2, 3).astype(np.float64),), dict(posinf=5.0), desc='f64'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(bad(4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64'),
            Sample((B(rng, 2, 3),), desc='bool')]


def clamp_tensor_samples(rng):
    lo = lambda *s: _f(rng, s, -1.0, -0.2)   # noqa: E731
    hi = lambda *s: _f(rng, s, 0.2, 1.0)     # noqa: E731
    return [Sample((R(rng, 3, 4), lo(3, 4), hi(3, 4)), desc='both'),
            Sample((R(rng, 3, 4), lo(1, 4), hi(3, 1)), desc='broadcast'),
            Sample((R(rng, 3, 4), lo(3, 4), None), desc='min_only'),
            Sample((R(rng, 3, 4), None, hi(4)), desc='max_only'),
            Sample((R(rng, 3, 4), hi(3, 4), lo(3, 4)), desc='min_gt_max'),
            Sample((R(rng), lo(3), hi(3)), desc='0dim_input'),
            Sample((R(rng, 0, 3), lo(3), hi(3)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), lo(3, 4), hi(3, 4)), desc='noncontig'),
            Sample((R(rng, 2, 3), lo(2, 3).astype(np.float64), hi(2, 3)), desc='f32_f64_bound'),
            Sample((I64(rng, 2, 3), lo(2, 3), hi(2, 3)), desc='int_float_bounds'),
            Sample((I64(rng, 2, 3), I64(rng, 2, 3) - 2, I64(rng, 2, 3) + 2), desc='int')]


def clamp_tensor_errors(rng):
    return [ErrorSample((R(rng, 3), R(rng, 3)), dict(max=0.5), exc=TypeError,
                        desc='tensor_and_number'),
            ErrorSample((R(rng, 2, 3), R(rng, 4), R(rng, 2, 3)), desc='shape_mismatch')]


def clamp_side_samples(rng):
    return [Sample((R(rng, 3, 4), 0.3), desc='scalar'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='tensor'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='tensor_broadcast'),
            Sample((R(rng), 0.1), desc='0dim'),
            Sample((R(rng, 0, 2), 0.1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 0.2), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64_int_bound'),
            Sample((I64(rng, 2, 3), 1), desc='int'),
            Sample((I64(rng, 2, 3), 0.5), desc='int_float_bound'),
            Sample((I64(rng, 2, 3), R(rng, 2, 3)), desc='int_float_tensor')]


def lerp_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4), 0.3), desc='scalar_weight'),
            Sample((R(rng, 3, 4), R(rng, 3, 4), 0.8), desc='scalar_weight_high'),
            Sample((R(rng, 3, 4), R(rng, 3, 4), 2), desc='int_weight'),
            Sample((R(rng, 3, 4), R(rng, 3, 4), _f(rng, (3, 4), 0, 1)), desc='tensor_weight'),
            Sample((R(rng, 3, 1), R(rng, 1, 4), _f(rng, (4,), -1, 2)), desc='broadcast'),
            Sample((R(rng), R(rng, 3), R(rng)), desc='0dim'),
            Sample((R(rng, 0, 2), R(rng, 2), 0.5), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4), R(rng, 3, 4)), desc='noncontig'),
            Sample((F64(rng, 2, 3), F64(rng, 2, 3), F64(rng, 2, 3)), desc='f64'),
            Sample((R(rng, 2, 3), R(rng, 2, 3), F64(rng)), desc='f64_0dim_weight')]


def lerp_errors(rng):
    return [ErrorSample((R(rng, 3), F64(rng, 3), 0.5), desc='end_dtype'),
            ErrorSample((R(rng, 3), R(rng, 3), F64(rng, 3)), desc='weight_dtype'),
            ErrorSample((I64(rng, 3), I64(rng, 3), 0.5), exc=NotImplementedError, desc='int'),
            ErrorSample((R(rng, 2, 3), R(rng, 4), 0.5), desc='shape_mismatch')]


def isclose_samples(rng):
    a = R(rng, 3, 4)
    near = (a + rng.uniform(-2e-5, 2e-5, a.shape)).astype(np.float32)
    sp = np.array([1.0, np.inf, np.nan, 1e-9, 2.0, -np.inf, np.nan], np.float32)
    sp2 = np.array([1.0, np.inf, np.nan, 0.0, np.inf, np.inf, 1.0], np.float32)
    ints = rng.integers(95, 105, (2, 3))
    return [Sample((a, near), desc='near'),
            Sample((a, near), dict(rtol=1e-3, atol=0.0), desc='rtol'),
            Sample((R(rng, 3, 1), R(rng, 1, 4)), dict(atol=0.5), desc='broadcast'),
            Sample((sp, sp2), desc='special'),
            Sample((sp, sp2), dict(equal_nan=True), desc='equal_nan'),
            Sample((R(rng), R(rng, 3)), desc='0dim'),
            Sample((R(rng, 0), R(rng, 0)), desc='empty'),
            Sample((ints, np.full((2, 3), 100)), dict(rtol=0.02, atol=0), desc='int'),
            Sample((B(rng, 2, 3), B(rng, 2, 3)), desc='bool'),
            Sample((F64(rng, 2, 3), F64(rng, 2, 3)), dict(atol=1.0), desc='f64')]


def isclose_errors(rng):
    return [ErrorSample((R(rng, 3), F64(rng, 3)), desc='dtype_mismatch'),
            ErrorSample((R(rng, 3), R(rng, 3)), dict(rtol=-1.0), desc='negative_rtol'),
            ErrorSample((R(rng, 3), R(rng, 3)), dict(atol=-1.0), desc='negative_atol'),
            ErrorSample((R(rng, 3), 1.0), exc=TypeError, desc='python_scalar'),
            ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch')]


def predicate_samples(rng):
    v = np.array([0.0, np.inf, -np.inf, np.nan, 1.5, -2.0], np.float32)
    return [Sample((v,), desc='special'),
            Sample((v.astype(np.float64).reshape(2, 3),), desc='f64'),
            Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64'),
            Sample((B(rng, 2, 3),), desc='bool')]


def logical_samples(rng):
    z = lambda *s: (rng.integers(-1, 2, s) * rng.uniform(0.5, 2, s)).astype(np.float32)  # noqa
    return [Sample((B(rng, 3, 4), B(rng, 3, 4)), desc='bool'),
            Sample((z(3, 4), z(3, 4)), desc='float_zeros'),
            Sample((B(rng, 3, 1), z(1, 4)), desc='broadcast_mixed'),
            Sample((I64(rng, 2, 3), z(2, 3)), desc='int_float'),
            Sample((B(rng), B(rng, 3)), desc='0dim'),
            Sample((B(rng, 0, 2), B(rng, 2)), desc='empty'),
            Sample((nc(z(4, 3), TR), z(3, 4)), desc='noncontig'),
            Sample((z(2, 3), np.array(np.nan, np.float32)), desc='nan_is_true')]


def logical_not_samples(rng):
    return [Sample((B(rng, 3, 4),), desc='bool'),
            Sample((np.array([0.0, -0.0, 1.5, np.nan], np.float32),), desc='float'),
            Sample((I64(rng, 2, 3),), desc='int64'),
            Sample((B(rng),), desc='0dim'),
            Sample((B(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig')]


IBITS = lambda rng, *s: rng.integers(-100, 100, s).astype(np.int64)  # noqa: E731


def bitwise_samples(rng):
    return [Sample((IBITS(rng, 3, 4), IBITS(rng, 3, 4)), desc='int64'),
            Sample((IBITS(rng, 3, 1), IBITS(rng, 1, 4)), desc='broadcast'),
            Sample((IBITS(rng, 2, 3).astype(np.int32), IBITS(rng, 2, 3)), desc='i32_i64'),
            Sample((IBITS(rng, 2, 3).astype(np.uint8), IBITS(rng, 2, 3).astype(np.uint8)),
                   desc='uint8'),
            Sample((B(rng, 3, 4), B(rng, 3, 4)), desc='bool'),
            Sample((B(rng, 2, 3), IBITS(rng, 2, 3)), desc='bool_i64'),
            Sample((IBITS(rng, 2, 3), 6), desc='pyint'),
            Sample((B(rng, 2, 3), True), desc='bool_pybool'),
            Sample((IBITS(rng), IBITS(rng, 3)), desc='0dim'),
            Sample((IBITS(rng, 0, 2), IBITS(rng, 2)), desc='empty'),
            Sample((nc(IBITS(rng, 4, 3), TR), IBITS(rng, 3, 4)), desc='noncontig')]


def bitwise_errors(rng):
    return [ErrorSample((R(rng, 3), R(rng, 3)), exc=NotImplementedError, desc='float'),
            ErrorSample((IBITS(rng, 3), 2.5), exc=NotImplementedError, desc='pyfloat'),
            ErrorSample((IBITS(rng, 2, 3), IBITS(rng, 4)), desc='shape_mismatch')]


def shift_samples(rng):
    cnt = lambda *s: rng.integers(0, 8, s).astype(np.int64)  # noqa: E731
    return [Sample((IBITS(rng, 3, 4), cnt(3, 4)), desc='int64'),
            Sample((IBITS(rng, 3, 1), cnt(1, 4)), desc='broadcast'),
            Sample((IBITS(rng, 4), np.array([64, -1, 70, 63])), desc='out_of_range'),
            Sample((IBITS(rng, 4).astype(np.int32), np.array([33, -2, 31, 3], np.int32)),
                   desc='int32_out_of_range'),
            Sample((IBITS(rng, 4).astype(np.uint8), np.array([9, 7, 3, 8], np.uint8)),
                   desc='uint8'),
            Sample((np.array([1, 8], np.int8), np.array([4, 7], np.int8)), desc='int8_wrap'),
            Sample((IBITS(rng, 2, 3), 3), desc='pyint'),
            Sample((IBITS(rng), cnt(3)), desc='0dim'),
            Sample((IBITS(rng, 0, 2), cnt(2)), desc='empty'),
            Sample((B(rng, 2, 3), cnt(2, 3)), desc='bool_i64')]


def shift_errors(rng):
    return bitwise_errors(rng) + [ErrorSample((B(rng, 3), B(rng, 3)), exc=NotImplementedError,
                                              desc='bool_bool')]


def bitwise_not_samples(rng):
    return [Sample((IBITS(rng, 3, 4),), desc='int64'),
            Sample((IBITS(rng, 2, 3).astype(np.uint8),), desc='uint8'),
            Sample((B(rng, 3, 4),), desc='bool'),
            Sample((IBITS(rng),), desc='0dim'),
            Sample((IBITS(rng, 0),), desc='empty'),
            Sample((nc(IBITS(rng, 4, 3), TR),), desc='noncontig')]


def div_mode_samples(rng):
    s = binary_samples(rhs=NZ, int_rhs=I64NZ, rhs64=F64NZ)(rng)
    s.append(Sample((np.array([5.0, -5.0, 0.0, 7.5], np.float32),
                     np.array([0.0, 0.0, 0.0, -2.5], np.float32)), desc='float_by_zero',
                    gradcheck=False))
    s.append(Sample((np.array([7, -7, 7, -7, 6]), np.array([2, 2, -2, -2, -3])),
                    desc='int_signs'))
    return s


def mod_samples(rng):
    s = binary_samples(rhs=NZ, int_rhs=I64NZ, rhs64=F64NZ, scalars=(2.5, 3, -1.5))(rng)
    s.append(Sample((np.array([7, -7, 7, -7, 6]), np.array([2, 2, -2, -2, -3])),
                    desc='int_signs'))
    s.append(Sample((np.array([5.5, -5.5, 5.5, -5.5], np.float32),
                     np.array([2.0, 2.0, -2.0, -2.0], np.float32)), desc='float_signs'))
    return s


_UNARY = [
    # name, domain, OpInfo options, unary_samples options
    ('exp2', R, {}, dict(bools=True)),
    ('expm1', R, {}, dict(bools=True)),
    ('log2', POS, dict(domain='x > 0'), {}),
    ('log10', POS, dict(domain='x > 0'), {}),
    ('log1p', UNIT, dict(domain='x > -1'), {}),
    ('rsqrt', POS, dict(domain='x > 0'), {}),
    ('reciprocal', NZ, dict(domain='x != 0'), dict(bools=True)),
    ('sin', R, {}, dict(bools=True)),
    ('cos', R, {}, {}),
    ('tan', UNIT, dict(domain='|x| < pi/2'), {}),
    ('asin', UNIT, dict(domain='|x| < 1', aliases=('arcsin',)), {}),
    ('acos', UNIT, dict(domain='|x| < 1', aliases=('arccos',)), {}),
    ('atan', R, dict(aliases=('arctan',)), {}),
    ('sinh', R, {}, {}),
    ('cosh', R, {}, {}),
    ('asinh', R, dict(aliases=('arcsinh',)), {}),
    ('acosh', GT1, dict(domain='x > 1', aliases=('arccosh',)), {}),
    ('atanh', UNIT, dict(domain='|x| < 1', aliases=('arctanh',)), {}),
    ('erf', R, {}, dict(bools=True)),
    ('erfc', R, {}, {}),
    ('erfinv', UNIT, dict(domain='|x| < 1'), {}),
    ('lgamma', POS, dict(domain='x > 0 (and between poles)'), {}),
    ('digamma', POS, dict(domain='x > 0'), {}),
    ('i0', R, {}, dict(bools=True)),
    ('sinc', R, {}, dict(bools=True)),
    ('rad2deg', R, {}, dict(bools=True)),
    ('deg2rad', R, {}, dict(bools=True)),
]

OPS += unary_rows(_UNARY)

OPS += [
    OpInfo('lgamma_negative', lambda lib, x: lib.lgamma(x),
           lambda rng: [Sample((LGAMMA_NEG(rng, 2, 3),), desc='between_poles')]),
    OpInfo('digamma_negative', lambda lib, x: lib.digamma(x),
           lambda rng: [Sample((LGAMMA_NEG(rng, 2, 3),), desc='between_poles'),
                        Sample((np.array([0.0, -0.0, -1.0, -2.5, 30.2]),), desc='poles',
                               requires_grad=False)]),
    OpInfo('polygamma', lambda lib, x, n: lib.polygamma(n, x), polygamma_samples,
           method='polygamma', inplace='polygamma_', domain='x > 0 or between poles',
           errors=lambda rng: [ErrorSample((POS(rng, 3), -1), desc='negative_n'),
                               ErrorSample((POS(rng, 3), 1.5), exc=TypeError,
                                           desc='float_n')]),
    OpInfo('square', None, unary_samples(R, bools=True), method='square', inplace='square_',
           errors=unary_errors),
    OpInfo('logit', None, logit_samples, method='logit', inplace='logit_',
           errors=lambda rng: int_float_result_inplace(rng)[1:], domain='0 < x < 1'),
    # rounding: zero gradient (gradcheck is fine away from the jumps)
    *[OpInfo(n, None, rounding_samples, method=n, inplace=n + '_', errors=bool_not_implemented,
             aliases=(('fix',) if n == 'trunc' else ()))
      for n in ('floor', 'ceil', 'round', 'trunc')],
    OpInfo('round_decimals', lambda lib, x, **k: lib.round(x, **k), round_decimals_samples,
           method='round', inplace='round_',
           errors=lambda rng: [ErrorSample((I64(rng, 3),), dict(decimals=1),
                                           exc=NotImplementedError, desc='int')]),
    OpInfo('frac', None, extra(unary_samples(R, ints=False), special_values), method='frac',
           inplace='frac_', errors=int_not_implemented),
    OpInfo('nan_to_num', None, nan_to_num_samples, method='nan_to_num', inplace='nan_to_num_'),
    # rounding division and remainders
    OpInfo('div_trunc', lambda lib, a, b, **k: lib.div(a, b, **k),
           with_kwargs(div_mode_samples, rounding_mode='trunc'), method='div', inplace='div_',
           errors=lambda rng: [dataclass_replace(e, kwargs=dict(rounding_mode='trunc'))
                               for e in int_div_errors(rng)] + [
               ErrorSample((R(rng, 3), R(rng, 3)), dict(rounding_mode='round'),
                           desc='bad_mode')],
           aliases=('divide',), domain='divisor != 0'),
    OpInfo('div_floor', lambda lib, a, b, **k: lib.div(a, b, **k),
           with_kwargs(div_mode_samples, rounding_mode='floor'), method='div', inplace='div_',
           errors=lambda rng: [dataclass_replace(e, kwargs=dict(rounding_mode='floor'))
                               for e in int_div_errors(rng)],
           aliases=('divide',), domain='divisor != 0'),
    # floor_divide has no derivative in PyTorch (grad_fn NotImplemented): its backward and
    # in-place form are checked in tests/ops/test_pointwise_extra.py
    OpInfo('floor_divide', None, div_mode_samples, method='floor_divide',
           operator=lambda a, b: a // b, differentiable=False, errors=int_div_errors),
    OpInfo('rfloordiv', lambda lib, x, s: s // x, scalar_left_samples(NZ),
           differentiable=False),
    OpInfo('remainder', None, mod_samples, method='remainder', inplace='remainder_',
           operator=lambda a, b: a % b, inplace_operator=iop('imod'), errors=int_div_errors,
           domain='divisor != 0, a / b away from integers (jumps)'),
    OpInfo('rmod', lambda lib, x, s: s % x, scalar_left_samples(NZ), differentiable=False),
    OpInfo('fmod', None, mod_samples, method='fmod', inplace='fmod_',
           errors=lambda rng: int_div_errors(rng) + [
               ErrorSample((2.5, R(rng, 3)), exc=TypeError, desc='scalar_self')],
           domain='divisor != 0, a / b away from integers (jumps)'),
    # binary math
    OpInfo('atan2', None, tensor_binary_samples(), method='atan2', inplace='atan2_',
           aliases=('arctan2',), errors=tensor_only_errors),
    OpInfo('hypot', None, tensor_binary_samples(ints=False, bools=False), method='hypot',
           inplace='hypot_', errors=lambda rng: tensor_only_errors(rng) + [
               ErrorSample((I64(rng, 3), I64(rng, 3)), exc=NotImplementedError, desc='int')]),
    OpInfo('xlogy', None, xlogy_samples, method='xlogy', inplace='xlogy_',
           errors=lambda rng: [ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch')],
           domain='y > 0'),
    *[OpInfo(n, None, extra(tensor_binary_samples(), ties_samples), method=n,
             errors=tensor_only_errors, domain='a != b (ties split or pick a side)')
      for n in ('maximum', 'minimum', 'fmax', 'fmin')],
    OpInfo('addcmul', None, addc_samples(), method='addcmul', inplace='addcmul_',
           errors=addc_errors('addcmul')),
    OpInfo('addcdiv', None, addc_samples(NZ), method='addcdiv', inplace='addcdiv_',
           errors=addc_errors('addcdiv'), domain='tensor2 != 0'),
    OpInfo('lerp', None, lerp_samples, method='lerp', inplace='lerp_', errors=lerp_errors),
    # clamp with tensor bounds, clamp_min, clamp_max
    OpInfo('clamp_tensor', lambda lib, x, lo, hi: lib.clamp(x, lo, hi), clamp_tensor_samples,
           method='clamp', inplace='clamp_', aliases=(), errors=clamp_tensor_errors,
           domain='x away from the bounds (kinks)'),
    OpInfo('clamp_min', None, clamp_side_samples, method='clamp_min', inplace='clamp_min_',
           domain='x away from the bound (kink)'),
    OpInfo('clamp_max', None, clamp_side_samples, method='clamp_max', inplace='clamp_max_',
           domain='x away from the bound (kink)'),
    # predicates (boolean results)
    OpInfo('isclose', None, isclose_samples, method='isclose', differentiable=False,
           errors=isclose_errors),
    *[OpInfo(n, None, predicate_samples, method=n, differentiable=False,
             errors=unary_errors)
      for n in ('isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf')],
    # logical and bitwise (their in-place forms, which take integer targets or are not
    # differentiable, are checked in tests/ops/test_pointwise_extra.py)
    *[OpInfo(n, None, logical_samples, method=n, differentiable=False,
             errors=tensor_only_errors)
      for n in ('logical_and', 'logical_or', 'logical_xor')],
    OpInfo('logical_not', None, logical_not_samples, method='logical_not',
           differentiable=False, errors=unary_errors),
    OpInfo('bitwise_and', None, bitwise_samples, method='bitwise_and', 
           operator=lambda a, b: a & b, differentiable=False,
           errors=bitwise_errors),
    OpInfo('bitwise_or', None, bitwise_samples, method='bitwise_or', 
           operator=lambda a, b: a | b, differentiable=False,
           errors=bitwise_errors),
    OpInfo('bitwise_xor', None, bitwise_samples, method='bitwise_xor', 
           operator=lambda a, b: a ^ b, differentiable=False,
           errors=bitwise_errors),
    OpInfo('rand_ops', lambda lib, x, s: (s & x, s | x, s ^ x),
           lambda rng: [Sample((IBITS(rng, 2, 3), 6), desc='pyint'),
                        Sample((B(rng, 2, 3), True), desc='pybool')], differentiable=False),
    OpInfo('bitwise_not', None, bitwise_not_samples, method='bitwise_not',
           operator=lambda a: ~a, differentiable=False,
           errors=lambda rng: [ErrorSample((R(rng, 3),), exc=NotImplementedError,
                                           desc='float')]),
    OpInfo('invert_float', lambda lib, x: ~x, lambda rng: [],
           errors=lambda rng: [ErrorSample((R(rng, 3),), exc=TypeError, desc='float')]),
    OpInfo('bitwise_left_shift', None, shift_samples, method='bitwise_left_shift',
           operator=lambda a, b: a << b, differentiable=False, errors=shift_errors),
    OpInfo('bitwise_right_shift', None, shift_samples, method='bitwise_right_shift',
           operator=lambda a, b: a >> b, differentiable=False, errors=shift_errors),
    OpInfo('rshift_ops', lambda lib, x, s: (s << x, s >> x),
           lambda rng: [Sample((rng.integers(0, 8, (2, 3)), 5), desc='pyint')],
           differentiable=False),
]


# =======================================================================================
# Issue 16: copysign, float_power, ldexp, logaddexp(2), nextafter, igamma(c), frexp,
# heaviside, gcd, lcm, sgn, angle, mvlgamma, positive, fill, signbit, isreal, eq_ & co.
# =======================================================================================

def copysign_samples(rng):
    s = binary_samples(NZ, R, scalars=(2.5, -3, -0.0))(rng)
    s.append(Sample((np.array([1.5, -2.0, 0.0, -0.0, 3.0], np.float32),
                     np.array([-1.0, 2.0, -1.0, 1.0, -0.0], np.float32)), desc='zeros',
                    gradcheck=False))
    return s


def copysign_errors(rng):
    return binary_errors(rng) + [ErrorSample((2.5, R(rng, 3)), exc=TypeError,
                                             desc='scalar_self')]


def float_power_samples(rng):
    return [Sample((POS(rng, 3, 4), R(rng, 3, 4)), desc='tensor_exponent'),
            Sample((POS(rng, 3, 1), R(rng, 1, 4)), desc='broadcast'),
            Sample((R(rng, 3, 4), 2), desc='int_exponent'),
            Sample((POS(rng, 2, 3), 2.5), desc='float_exponent'),
            Sample((F64(rng, 2, 3), 3), desc='f64'),
            Sample((I64(rng, 2, 3), 2), desc='int_base'),
            Sample((I64POS(rng, 2, 3), I64(rng, 2, 3)), desc='int_int'),
            Sample((POS(rng, 2, 3), I64(rng, 2, 3)), desc='f32_i64'),
            Sample((POS(rng), R(rng, 3)), desc='0dim'),
            Sample((POS(rng, 0, 2), 2), desc='empty'),
            Sample((nc(POS(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig'),
            Sample((1.5, R(rng, 2, 3)), desc='scalar_base'),
            Sample((2, I64(rng, 2, 3)), desc='int_scalar_base')]


def ldexp_samples(rng):
    s = tensor_binary_samples()(rng) + [
        Sample((R(rng, 4), np.array([1000, -1000, 3, -3])), desc='overflow_underflow')]
    for sample in s:
        # with an integer exponent PyTorch's gradient takes 2 ** e as an integer power (0
        # for e < 0): dynagrad matches it, and finite differences cannot
        if sample.desc in ('f32_i64', 'overflow_underflow'):
            sample.gradcheck = False
    return s


def float_only_errors(rng):
    return tensor_only_errors(rng) + [ErrorSample((I64(rng, 3), I64(rng, 3)),
                                                  exc=NotImplementedError, desc='int')]


def nextafter_samples(rng):
    a = R(rng, 3, 4)
    b = np.where(rng.random((3, 4)) < 0.3, a, R(rng, 3, 4)).astype(np.float32)
    return tensor_binary_samples(ints=False, bools=False)(rng) + [Sample((a, b), desc='ties')]


def igamma_samples(rng):
    # gradcheck would perturb the detached first argument too: it runs in the coverage
    # tests, with the second argument alone as the leaf
    s = tensor_binary_samples(POS, POS, ints=False, bools=False, int_rhs=I64POS)(rng) + [
        Sample((np.array([0.0, 0.0, 1.0, -1.0, 2.0, np.inf, 2.0, 3.0]),
                np.array([1.0, 0.0, 0.0, 1.0, np.inf, 1.0, -1.0, 50.0])), desc='edges',
               requires_grad=False),
        Sample((_between(5, 30)(rng, 6), _between(0.5, 40)(rng, 6)), desc='large')]
    for sample in s:
        sample.gradcheck = False
    return s


def frexp_samples(rng):
    return unary_samples(R, ints=False)(rng) + [
        Sample((np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40, 8.0], np.float32),),
               desc='special', requires_grad=False),
        Sample((R(rng, 2, 3).astype(np.float16),), desc='f16')]


def heaviside_samples(rng):
    def with_zeros(*shape):
        v = R(rng, *shape)
        v.reshape(-1)[::3] = 0.0
        return v
    ints = lambda *s: rng.integers(-2, 3, s).astype(np.int64)  # noqa: E731
    return [Sample((with_zeros(3, 4), R(rng, 3, 4)), desc='same_shape'),
            Sample((with_zeros(3, 1), R(rng, 1, 4)), desc='broadcast'),
            Sample((with_zeros(4), R(rng)), desc='0dim_values'),
            Sample((R(rng, 0, 2), R(rng, 2)), desc='empty'),
            Sample((np.array([np.nan, 0.0, -0.0, np.inf], np.float32),
                    np.array([0.5, 0.25, 2.0, 0.5], np.float32)), desc='special'),
            Sample((ints(2, 3), ints(2, 3)), desc='int64'),
            Sample((B(rng, 2, 3), B(rng, 2, 3)), desc='bool'),
            Sample((F64(rng, 2, 3), F64(rng, 2, 3)), desc='f64')]


def heaviside_errors(rng):
    return [ErrorSample((R(rng, 3), I64(rng, 3)), desc='dtype_mismatch'),
            ErrorSample((R(rng, 3), 0.5), exc=TypeError, desc='python_scalar'),
            ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='shape_mismatch')]


def gcd_samples(rng):
    ints = lambda *s: rng.integers(-30, 31, s).astype(np.int64)  # noqa: E731
    return [Sample((ints(3, 4), ints(3, 4)), desc='int64'),
            Sample((ints(3, 1), ints(1, 4)), desc='broadcast'),
            Sample((ints(2, 3).astype(np.int32), ints(2, 3)), desc='i32_i64'),
            Sample((np.abs(ints(4)).astype(np.uint8), ints(4).astype(np.int8)), desc='u8_i8'),
            Sample((B(rng, 2, 3), ints(2, 3)), desc='bool_i64'),
            Sample((ints(), ints(3)), desc='0dim'),
            Sample((ints(0, 2), ints(2)), desc='empty'),
            Sample((nc(ints(4, 3), TR), ints(3, 4)), desc='noncontig'),
            Sample((np.array([0, 0, -4, 7]), np.array([0, 5, 6, -7])), desc='zeros_signs')]


def gcd_errors(name):
    def gen(rng):
        return [ErrorSample((R(rng, 3), R(rng, 3)), exc=NotImplementedError, desc='float'),
                ErrorSample((B(rng, 3), B(rng, 3)), exc=NotImplementedError, desc='bool'),
                ErrorSample((I64(rng, 3), 6), exc=TypeError, desc='python_scalar'),
                ErrorSample((I64(rng, 2, 3), I64(rng, 4)), desc='shape_mismatch')]
    return gen


MVL = _between(1.6, 4.0)                   # mvlgamma's domain for p <= 3: x > (p - 1) / 2


def mvlgamma_samples(rng):
    return [Sample((MVL(rng, 3, 4), 1), desc='p1'),
            Sample((MVL(rng, 3, 4), 2), desc='p2'),
            Sample((MVL(rng, 2, 3).astype(np.float64), 3), desc='p3_f64'),
            Sample((MVL(rng), 2), desc='0dim'),
            Sample((MVL(rng, 0), 2), desc='empty'),
            Sample((nc(MVL(rng, 4, 3), TR), 2), desc='noncontig'),
            Sample((I64POS(rng, 2, 3) + 1, 2), desc='int64'),
            Sample((np.array([0.5, 1.0, -1.0, 0.75], np.float32), 2), desc='outside',
                   requires_grad=False)]


def mvlgamma_errors(rng):
    return [ErrorSample((MVL(rng, 3), 0), desc='p0'),
            ErrorSample((MVL(rng, 3), 1.5), exc=TypeError, desc='float_p'),
            ErrorSample((I64(rng, 3), 2), desc='int_target', variant='inplace')]


def fill_samples(rng):
    return [Sample((R(rng, 3, 4), 2.5), desc='pyfloat'),
            Sample((R(rng, 3, 4), R(rng)), desc='0dim_tensor'),
            Sample((R(rng), -1), desc='0dim_input'),
            Sample((R(rng, 0, 2), 1.5), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), R(rng)), desc='noncontig'),
            Sample((I64(rng, 2, 3), 2.5), desc='int_pyfloat'),
            Sample((B(rng, 2, 3), 0), desc='bool')]


def fill_errors(rng):
    return [ErrorSample((R(rng, 3), R(rng, 2)), desc='1dim_value'),
            ErrorSample((R(rng, 3), R(rng, 2)), desc='1dim_value_inplace', variant='inplace')]


def inplace_compare_samples(rng):
    """compare_samples whose first operand keeps its shape (the target of x.eq_(y)). Left
    out too: an integer target with a float operand that requires grad, which PyTorch
    turns into an integer tensor requiring grad (dynagrad records nothing there)."""
    return [s for s in compare_samples(rng) if s.desc not in ('broadcast', '0dim',
                                                              'int_float')]


OPS += [
    OpInfo('copysign', None, copysign_samples, method='copysign', inplace='copysign_',
           errors=copysign_errors, domain='a != 0 (kink of |a|)'),
    OpInfo('float_power', None, float_power_samples, method='float_power',
           inplace='float_power_', domain='positive base for fractional exponents',
           errors=lambda rng: [ErrorSample((R(rng, 3), 2), desc='f32_target',
                                           variant='inplace')]),
    OpInfo('ldexp', None, ldexp_samples, method='ldexp', inplace='ldexp_',
           errors=tensor_only_errors),
    OpInfo('logaddexp', None, tensor_binary_samples(ints=False, bools=False), method='logaddexp',
           errors=float_only_errors),
    OpInfo('logaddexp2', None, tensor_binary_samples(ints=False, bools=False),
           method='logaddexp2', errors=float_only_errors),
    OpInfo('nextafter', None, nextafter_samples, method='nextafter', inplace='nextafter_',
           errors=float_only_errors),
    # PyTorch differentiates igamma in its second argument only (the first raises): the
    # rows detach the first; that error is checked in tests/ops/test_pointwise_coverage.py
    OpInfo('igamma', lambda lib, a, x: lib.igamma(a.detach(), x), igamma_samples,
           method='igamma', errors=float_only_errors, domain='a > 0, x > 0'),
    OpInfo('igammac', lambda lib, a, x: lib.igammac(a.detach(), x), igamma_samples,
           method='igammac', errors=float_only_errors, domain='a > 0, x > 0'),
    OpInfo('frexp', None, frexp_samples, method='frexp',
           errors=lambda rng: [ErrorSample((I64(rng, 3),), desc='int64')]),
    OpInfo('heaviside', None, heaviside_samples, method='heaviside', differentiable=False,
           errors=heaviside_errors),
    OpInfo('gcd', None, gcd_samples, method='gcd', differentiable=False,
           errors=gcd_errors('gcd')),
    OpInfo('lcm', None, gcd_samples, method='lcm', differentiable=False,
           errors=gcd_errors('lcm')),
    # sgn's gradient is a ZeroTensor in PyTorch (no NumPy view): the row adds x so the
    # gradient is materialized; the node name and sgn_ are checked in the coverage tests
    OpInfo('sgn', lambda lib, x: lib.sgn(x) + x, extra(unary_samples(NZ, bools=True),
                                                       special_values),
           method='sgn', errors=unary_errors, twice_differentiable=False),
    OpInfo('angle', None, extra(unary_samples(NZ, bools=True), special_values),
           method='angle', errors=unary_errors),
    OpInfo('mvlgamma', lambda lib, x, p: lib.mvlgamma(x, p), mvlgamma_samples,
           method='mvlgamma', inplace='mvlgamma_', errors=mvlgamma_errors,
           domain='x > (p - 1) / 2'),
    OpInfo('sinc_at_zero', lambda lib, x: lib.sinc(x),
           lambda rng: [Sample((np.array([0.0, 0.5, -1.0, 1e-3]),), desc='zero',
                               gradcheck=False)]),
    OpInfo('positive', None, unary_samples(R), method='positive',
           errors=lambda rng: unary_errors(rng) + [ErrorSample((B(rng, 3),), desc='bool')]),
    OpInfo('fill', None, fill_samples, inplace='fill_', errors=fill_errors),
    *[OpInfo(n, None, predicate_samples, method=n, differentiable=False,
             errors=lambda rng: unary_errors(rng) + [
                 ErrorSample((3,), exc=TypeError, desc='python_number')])
      for n in ('signbit', 'isreal')],
    # the in-place comparisons: recorded with a zero gradient (EqBackward1, EqBackward0 for
    # a number); on a clone, so the gradient reaches the leaf
    *[OpInfo(n, clone_then(n), inplace_compare_samples, differentiable=True)
      for n in ('eq_', 'ne_', 'lt_', 'le_', 'gt_', 'ge_', 'greater_', 'greater_equal_',
                'less_', 'less_equal_', 'not_equal_')],
]
