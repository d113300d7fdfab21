"""Rows for ``torch.special``'s own functions (``dynagrad.special``): the aliases of
top-level functions are checked under their top-level names in ``pointwise.py``."""
from ._core import *  # noqa: F401,F403
from .pointwise import special_values

UNITP = maker('unit')


def special(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


def _prob(rng, *shape):
    return np.asarray(rng.uniform(0.05, 0.95, shape), np.float32)


def _wide(rng, *shape):
    return np.asarray(rng.uniform(-6.0, 6.0, shape), np.float32)


def special_unary(make=R, *, ints=True, extremes=(), f64=True):
    """``f64=False`` for functions PyTorch computes in float64 from float32-accurate
    rational approximations (the Bessel and Airy functions, errors up to ~1e-5 relative):
    float32 samples only here; tests/ops/test_special_namespace.py checks dynagrad's float64
    values against mpmath instead."""
    base = unary_samples(make, ints=ints)

    def gen(rng):
        s = base(rng) + special_values(rng)[:1 if not f64 else 2]
        if not f64:
            s = [x for x in s if all(getattr(a, 'dtype', None) != np.float64
                                     for a in x.args)]
        for k, values in enumerate(extremes):
            s.append(Sample((np.array(values, np.float64 if f64 else np.float32),),
                            desc=f'extremes{k}', gradcheck=False))
        return s
    return gen


def xlog1py_samples(rng):
    x = R(rng, 3, 4)
    x[0, :2] = 0.0
    return [Sample((x, POS(rng, 3, 4)), desc='zeros_in_x'),
            Sample((R(rng, 3, 1), POS(rng, 1, 4)), desc='broadcast'),
            Sample((R(rng, 2, 3).astype(np.float64), POS(rng, 2, 3).astype(np.float64)),
                   desc='f64'),
            Sample((R(rng, 3), 0.5), desc='scalar_other'),
            Sample((np.array([0.0, 0.0, 1.0], np.float32),
                    np.array([np.nan, -1.0, np.nan], np.float32)), desc='zero_nan',
                   requires_grad=False)]


def zeta_samples(rng):
    x = np.asarray(rng.uniform(1.5, 4.0, (3, 4)), np.float32)
    q = np.asarray(rng.uniform(0.5, 3.0, (3, 4)), np.float32)
    return [Sample((x, q), desc='x_and_q', requires_grad=False),
            Sample((x.astype(np.float64), q.astype(np.float64)), desc='f64',
                   requires_grad=False),
            Sample((3.0, q.astype(np.float64)), desc='scalar_x'),
            Sample((np.array([1.0, 0.5, 2.0, np.inf]), np.array([1.0, 1.0, -1.0, 2.0])),
                   desc='edges', requires_grad=False)]


def zeta_errors(rng):
    return [ErrorSample((2.0, 3.0), exc=TypeError, desc='no_tensor')]


def polynomial_samples(lo, hi):
    def gen(rng):
        # float32 only at low degree: PyTorch evaluates float32 in float32, and its
        # cos(n acos x) form (degree > 6) keeps ~1e-5 relative there; float64 at any degree
        x = np.asarray(rng.uniform(lo, hi, (3, 5)), np.float32)
        n = rng.integers(-1, 7, (3, 5))
        return [Sample((x, n), desc='tensor_n'),
                Sample((x.astype(np.float64), rng.integers(-1, 14, (3, 5))),
                       desc='tensor_n_f64'),
                Sample((x.astype(np.float64), 4), desc='int_n_f64'),
                Sample((x, np.array(2.7)), desc='fractional_n'),
                Sample((np.array([lo, hi, (lo + hi) / 2, -1.0, 1.0, 0.0]), 9), desc='edges'),
                Sample((x[:1], 0), desc='n0'),
                Sample((x.astype(np.float64), np.arange(15).reshape(3, 5) + 20),
                       desc='high_degree')]
    return gen


_DIFFERENTIABLE = [
    # name, domain, extreme values checked without gradients
    ('entr', POS, [[0.0, 1e-300, 1.0, 2.5, -1.0]]),
    ('erfcx', R, [[-30.0, -5.0, 0.0, 5.0, 26.5, 1e3, 1e10]]),
    ('i0e', R, [[-800.0, -30.0, 0.0, 30.0, 800.0]]),
    ('i1', R, [[-20.0, -5.0, 0.0, 5.0, 20.0]]),
    ('i1e', R, [[-800.0, -30.0, 0.0, 30.0, 800.0]]),
    ('ndtri', _prob, [[1e-300, 1e-10, 0.5, 1 - 1e-12, 0.0, 1.0]]),
    ('log_ndtr', _wide, [[-40.0, -10.0, 0.0, 10.0, 40.0]]),
    ('ndtr', R, [[-40.0, -10.0, 0.0, 10.0]]),
]

OPS = [OpInfo('special.' + name, special(name),
              special_unary(make, ints=name not in ('ndtri',), extremes=ext),
              domain='see ops/special.py')
       for name, make, ext in _DIFFERENTIABLE]

OPS += [
    OpInfo('special.xlog1py', special('xlog1py'), xlog1py_samples),
    OpInfo('special.zeta', special('zeta'), zeta_samples, errors=zeta_errors,
           domain='x > 1, q > 0 (differentiable in q only)'),
    *[OpInfo('special.' + name, special(name),
             special_unary(_wide, extremes=([-80.0, -30.0, 0.0, 1e-5, 30.0, 80.0],),
                           f64=False),
             differentiable=False)
      for name in ('bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0',
                   'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1',
                   'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1',
                   'spherical_bessel_j0')],
    OpInfo('special.airy_ai', special('airy_ai'), special_unary(R, f64=False),
           differentiable=False),
    *[OpInfo('special.' + name, special(name),
             polynomial_samples(*((0.0, 1.0) if 'shifted' in name else (-1.0, 1.0)
                                  if 'chebyshev' in name or 'legendre' in name
                                  else (-2.0, 2.0))),
             differentiable=False)
      for name in ('chebyshev_polynomial_t', 'chebyshev_polynomial_u',
                   'chebyshev_polynomial_v', 'chebyshev_polynomial_w',
                   'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
                   'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w',
                   'hermite_polynomial_h', 'hermite_polynomial_he',
                   'laguerre_polynomial_l', 'legendre_polynomial_p')],
]
