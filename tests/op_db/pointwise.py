"""Rows for elementwise ops: arithmetic, unary math, activations, comparisons."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


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
