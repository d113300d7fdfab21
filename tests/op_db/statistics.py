"""Rows for ops/statistics.py: quantiles, covariance, differences and integrals; and the
differentiable constructors of ops/creation.py (vander, cartesian_prod, combinations,
block_diag). Counts, bins and sorted search (integer results) are checked in
tests/ops/test_statistics.py."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def kw_fn(name):
    """A function form that only exists as ``torch.<name>`` (not as a method)."""
    def fn(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    return fn


def distinct(rng, *shape, dtype=np.float32):
    """Values with no ties (quantiles and sorts differentiate cleanly)."""
    n = int(np.prod(shape))
    return np.asarray(rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.1, n),
                      dtype).reshape(shape)


def composite(samples):
    """Samples of an op PyTorch composes of others: its last node's name is an
    implementation detail (values and gradients are still compared)."""
    for x in samples:
        x.check_grad_fn = False
    return samples


def q(*values, dtype=np.float32):
    return np.array(values, dtype)


# -- quantile, nanquantile ----------------------------------------------------------------

def quantile_samples(rng):
    D = lambda *s: distinct(rng, *s)  # noqa: E731
    s = [Sample((D(3, 5), 0.3), desc='all_scalar_q'),
         Sample((D(3, 5), 0.4, 1), desc='dim1'),
         Sample((D(3, 5), 0.75, 0, True), desc='dim0_keepdim'),
         Sample((D(3, 5), q(0.1, 0.5, 1.0)), dict(dim=1), desc='q_tensor_dim'),
         Sample((D(3, 4), q(0.0, 0.25)), dict(dim=-1, keepdim=True), desc='q_tensor_keepdim'),
         Sample((D(3, 4), q(0.3, 0.9)), desc='q_tensor_all'),
         Sample((D(2, 3), 0.5), dict(keepdim=True), desc='all_keepdim'),
         Sample((D(2, 3), q(0.6)[0]), dict(dim=0), desc='q_0dim_tensor'),
         Sample((D(), 0.5), desc='0dim'),
         Sample((D(), 0.5, 0), desc='0dim_dim0'),
         Sample((D(2, 4).astype(np.float64), q(0.2, 0.7, dtype=np.float64), 1), desc='f64'),
         Sample((nc(D(5, 3), TR), 0.3, 1), desc='noncontig'),
         Sample((np.array([[1., np.nan, 3., 0.5], [2., 1., 4., 0.]], np.float32), 0.5, 1),
                desc='nan_row', gradcheck=False)]
    for interp in ('lower', 'higher', 'midpoint', 'nearest'):
        s.append(Sample((D(3, 5), q(0.1, 0.5, 0.625, 0.9), 1),
                        dict(interpolation=interp), desc=f'interp_{interp}'))
    return composite(s)


def nanquantile_samples(rng):
    s = quantile_samples(rng)
    s += [Sample((np.array([[1., np.nan, 3., 0.5], [np.nan] * 4], np.float32),
                  q(0.25, 0.5), 1), desc='all_nan_row', gradcheck=False),
          Sample((np.array([np.nan, 2., -1., 0.5, np.nan], np.float32), 0.4),
                 dict(interpolation='midpoint'), desc='nans_midpoint', gradcheck=False)]
    return composite(s)


def quantile_errors(rng):
    return [ErrorSample((R(rng, 3), 1.5), desc='q_above_one'),
            ErrorSample((R(rng, 3), -0.1), desc='q_below_zero'),
            ErrorSample((R(rng, 3), q(0.5, 1.2)), desc='q_tensor_out_of_range'),
            ErrorSample((I64(rng, 3), 0.5), desc='int_input'),
            ErrorSample((R(rng, 3), q(0.5, dtype=np.float64)), desc='q_dtype_mismatch'),
            ErrorSample((R(rng, 0), 0.5), desc='empty_input'),
            ErrorSample((R(rng, 3), 0.5), dict(interpolation='cubic'), desc='bad_interpolation'),
            ErrorSample((R(rng, 3), R(rng, 2, 2) * 0 + 0.5), desc='q_2d'),
            ErrorSample((R(rng, 2, 3), 0.5, 2), exc=IndexError, desc='dim_out_of_range')]


# -- cov, corrcoef ------------------------------------------------------------------------

def cov_samples(rng):
    return composite([Sample((R(rng, 3, 5),), desc='2d'),
            Sample((R(rng, 5),), desc='1d'),
            Sample((R(rng, 1, 4),), desc='one_variable'),
            Sample((R(rng, 2, 4),), dict(correction=0), desc='correction0'),
            Sample((R(rng, 2, 4),), dict(correction=2), desc='correction2'),
            Sample((R(rng, 2, 4), ), dict(fweights=np.array([1, 2, 1, 3])), desc='fweights'),
            Sample((R(rng, 2, 4), ), dict(aweights=POS(rng, 4)), desc='aweights'),
            Sample((R(rng, 2, 4), ), dict(fweights=np.array([2, 1, 1, 3]),
                                          aweights=POS(rng, 4), correction=0),
                   desc='both_weights'),
            Sample((R(rng, 2, 4).astype(np.float64),), desc='f64'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 4),), desc='int_to_float'),
            Sample((R(rng, 2, 1),), desc='one_observation_nan', gradcheck=False)])


def cov_errors(rng):
    return [ErrorSample((R(rng, 2, 2, 2),), desc='3d'),
            ErrorSample((R(rng, 2, 4),), dict(fweights=np.array([1, 2, 1])),
                        desc='fweights_wrong_size'),
            ErrorSample((R(rng, 2, 4),), dict(fweights=POS(rng, 4)), desc='fweights_float'),
            ErrorSample((R(rng, 2, 4),), dict(fweights=np.array([1, -2, 1, 1])),
                        desc='fweights_negative'),
            ErrorSample((R(rng, 2, 4),), dict(aweights=np.array([1, 2, 1, 1])),
                        desc='aweights_int'),
            ErrorSample((R(rng, 2, 4),), dict(aweights=-POS(rng, 4)), desc='aweights_negative')]


def corrcoef_samples(rng):
    return [Sample((R(rng, 3, 5),), desc='2d'),
            Sample((R(rng, 5),), desc='1d'),
            Sample((R(rng, 2, 4).astype(np.float64),), desc='f64'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 6),), desc='int_to_float')]


# -- diff, gradient, trapezoid ------------------------------------------------------------

def diff_samples(rng):
    return [Sample((R(rng, 3, 5),), desc='default'),
            Sample((R(rng, 3, 5), 2, 0), desc='n2_dim0'),
            Sample((R(rng, 3, 5), 3), dict(dim=-1), desc='n3'),
            Sample((R(rng, 3, 5), 0), desc='n0', check_grad_fn=False),
            Sample((R(rng, 2, 3), 4), desc='n_beyond_size'),
            Sample((R(rng, 3, 4), 1, 1, R(rng, 3, 2)), desc='prepend'),
            Sample((R(rng, 3, 4),), dict(dim=0, append=R(rng, 1, 4), prepend=R(rng, 2, 4)),
                   desc='prepend_append'),
            Sample((R(rng, 4),), desc='1d'),
            Sample((R(rng, 0, 3), 1, 0), desc='empty'),
            Sample((nc(R(rng, 5, 3), TR),), desc='noncontig'),
            Sample((R(rng, 2, 4).astype(np.float64), 2), desc='f64'),
            Sample((I64(rng, 3, 4),), desc='int64'),
            Sample((B(rng, 3, 4),), desc='bool_xor')]


def diff_errors(rng):
    return [ErrorSample((R(rng),), desc='0dim'),
            ErrorSample((R(rng, 3), -1), desc='negative_n'),
            ErrorSample((R(rng, 3), 1, 1), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 3, 4), 1, 1, R(rng, 3)), desc='prepend_wrong_ndim')]


def gradient_samples(rng):
    return [Sample((R(rng, 3, 5),), desc='all_dims'),
            Sample((R(rng, 5),), dict(spacing=2.0), desc='scalar_spacing'),
            Sample((R(rng, 3, 4),), dict(spacing=[2.0, 0.5], edge_order=2), desc='list_spacing'),
            Sample((R(rng, 3, 5),), dict(dim=1, edge_order=2), desc='dim_edge2'),
            Sample((R(rng, 3, 5),), dict(dim=[1, 0], spacing=3.0), desc='dim_list'),
            Sample((R(rng, 3, 5),), dict(spacing=[np.array([0., 1., 3., 3.5, 5.], np.float32)],
                                          dim=1), desc='coords'),
            Sample((R(rng, 4, 3),), dict(spacing=[np.array([0., .5, 2., 2.5], np.float32)],
                                          dim=0, edge_order=2), desc='coords_edge2'),
            Sample((R(rng, 2, 3).astype(np.float64),), desc='f64'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 3, 4),), desc='int_to_float')]


def gradient_errors(rng):
    return [ErrorSample((R(rng, 1, 3),), desc='size_below_edge_order'),
            ErrorSample((R(rng, 2, 3),), dict(edge_order=2), desc='size_below_edge_order2'),
            ErrorSample((R(rng, 3, 3),), dict(edge_order=3), desc='edge_order3'),
            ErrorSample((R(rng, 3, 3),), dict(spacing=[1.0]), desc='spacing_list_length')]


def trapezoid_samples(rng):
    return composite([Sample((R(rng, 3, 5),), desc='default_dx'),
            Sample((R(rng, 3, 5),), dict(dx=0.5, dim=0), desc='dx_dim0'),
            Sample((R(rng, 3, 5), np.array([0., 1., 3., 3.5, 5.], np.float32)),
                   desc='x_1d'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), dict(dim=0), desc='x_same_shape'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='x_broadcast_1d'),
            Sample((R(rng, 5),), desc='1d'),
            Sample((R(rng, 3, 0),), desc='empty_dim'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64),), dict(dx=2.0), desc='f64'),
            Sample((I64(rng, 3, 4),), desc='int_to_float')])


def trapezoid_errors(rng):
    return [ErrorSample((R(rng, 3), R(rng, 4)), desc='x_wrong_size'),
            ErrorSample((R(rng, 3), ), dict(dim=1), exc=IndexError, desc='dim_out_of_range')]


def cumulative_samples(rng):
    return [x for x in trapezoid_samples(rng) if x.desc != 'empty_dim']


# -- creation ----------------------------------------------------------------------------------

def vander_samples(rng):
    # torch 2.13's own vander backward raises (its in-place cumprod on an expanded view):
    # forward only here; tests/ops/test_statistics.py checks the gradient by gradcheck.
    s = [Sample((R(rng, 3),), desc='default'),
            Sample((R(rng, 4), 3), desc='N3'),
            Sample((R(rng, 3),), dict(N=4, increasing=True), desc='increasing'),
            Sample((np.array([0., 1.5, -2.], np.float32), 4), desc='zero_point'),
            Sample((R(rng, 3), 1), desc='N1'),
            Sample((R(rng, 3).astype(np.float64),), desc='f64'),
            Sample((I64(rng, 3),), desc='int64')]
    for x in s:
        x.requires_grad = False
    return s


def vander_errors(rng):
    return [ErrorSample((R(rng, 2, 2),), desc='2d'),
            ErrorSample((R(rng, 2), -1), desc='negative_N')]


def cartesian_samples(rng):
    return [Sample((R(rng, 2), R(rng, 3)), desc='two'),
            Sample((R(rng, 2), R(rng, 2), R(rng, 3)), desc='three'),
            Sample((R(rng, 3), R(rng, 0)), desc='empty'),
            Sample((I64(rng, 2), I64(rng, 3)), desc='int64')]


def combinations_samples(rng):
    return [Sample((R(rng, 4),), desc='default'),
            Sample((R(rng, 4), 3), desc='r3'),
            Sample((R(rng, 3), 1), desc='r1'),
            Sample((R(rng, 3),), dict(r=2, with_replacement=True), desc='with_replacement'),
            Sample((R(rng, 2), 3), desc='r_above_n'),
            Sample((R(rng, 3).astype(np.float64), 2), desc='f64'),
            Sample((I64(rng, 4), 2), desc='int64')]


def combinations_errors(rng):
    return [ErrorSample((R(rng, 2, 2),), desc='2d')]


def block_diag_samples(rng):
    return [Sample((R(rng, 2, 2), R(rng, 1, 3)), desc='two_matrices'),
            Sample((R(rng), R(rng, 2), R(rng, 2, 1)), desc='0d_1d_2d'),
            Sample((R(rng, 2, 0), R(rng, 0, 3), R(rng, 1, 1)), desc='empty_blocks'),
            Sample((R(rng, 2, 2), I64(rng, 1, 2)), desc='promotes'),
            Sample((R(rng, 2, 2).astype(np.float64), R(rng, 1, 1)), desc='f64_f32')]


def block_diag_errors(rng):
    return [ErrorSample((R(rng, 2, 2, 2),), desc='3d')]


OPS = [
    OpInfo('quantile', None, quantile_samples, method='quantile', errors=quantile_errors),
    OpInfo('nanquantile', None, nanquantile_samples, method='nanquantile',
           errors=quantile_errors),
    OpInfo('cov', None, cov_samples, method='cov', errors=cov_errors),
    OpInfo('corrcoef', None, corrcoef_samples, method='corrcoef',
           errors=lambda rng: [ErrorSample((R(rng, 2, 2, 2),), desc='3d')]),
    OpInfo('diff', None, diff_samples, method='diff', errors=diff_errors),
    OpInfo('gradient', kw_fn('gradient'), gradient_samples, errors=gradient_errors),
    OpInfo('trapezoid', kw_fn('trapezoid'), trapezoid_samples, errors=trapezoid_errors,
           aliases=('trapz',)),
    OpInfo('cumulative_trapezoid', kw_fn('cumulative_trapezoid'), cumulative_samples,
           errors=trapezoid_errors),
    OpInfo('vander', kw_fn('vander'), vander_samples, errors=vander_errors),
    OpInfo('cartesian_prod', kw_fn('cartesian_prod'), cartesian_samples,
           errors=lambda rng: [ErrorSample((R(rng, 2, 2),), desc='2d')]),
    OpInfo('combinations', kw_fn('combinations'), combinations_samples,
           errors=combinations_errors),
    OpInfo('block_diag', kw_fn('block_diag'), block_diag_samples, errors=block_diag_errors),
]
