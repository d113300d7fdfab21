"""Counts, histograms, sorted search and the other issue-16 functions the op table cannot
express (integer results, several result shapes, warnings PyTorch gives once), compared with
torch: values, dtypes, shapes, error types and message substrings."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(16)


def both(array, requires_grad=False):
    a = np.array(array)
    return (dynagrad.tensor(a.copy(), requires_grad=requires_grad),
            torch.tensor(a.copy(), requires_grad=requires_grad))


def dname(t):
    return str(t.dtype).split('.')[-1]


def same(d, t, rtol=1e-6, atol=1e-6):
    if isinstance(t, (tuple, list)):
        assert isinstance(d, (tuple, list)) and len(d) == len(t)
        if hasattr(t, '_fields'):
            assert d._fields == t._fields
        for x, y in zip(d, t):
            same(x, y, rtol, atol)
        return
    assert tuple(d.shape) == tuple(t.shape), (d.shape, t.shape)
    assert dname(d) == dname(t), (d.dtype, t.dtype)
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


def raises_like(fn_d, fn_t, substring=None):
    """Both raise the same exception type; torch's message contains ``substring`` and so
    does dynagrad's."""
    with pytest.raises(Exception) as t_err:
        fn_t()
    with pytest.raises(type(t_err.value)) as d_err:
        fn_d()
    if substring is not None:
        assert substring in str(t_err.value), str(t_err.value)
        assert substring in str(d_err.value), str(d_err.value)


def ints(*shape, low=0, high=6):
    return RNG.integers(low, high, shape)


# -- bincount ----------------------------------------------------------------------------------

BINCOUNT = [
    (ints(10), None, 0),
    (ints(10), None, 9),
    (np.array([], np.int64), None, 0),
    (np.array([], np.int64), None, 3),
    (ints(8).astype(np.int32), None, 0),
    (ints(8).astype(np.uint8), None, 0),
    (ints(8), RNG.random(8).astype(np.float32), 0),
    (ints(8), RNG.random(8), 10),
    (ints(8), RNG.integers(0, 5, 8).astype(np.int32), 0),
]


@pytest.mark.parametrize('values,weights,minlength', BINCOUNT)
def test_bincount(values, weights, minlength):
    d, t = both(values)
    dw, tw = (None, None) if weights is None else both(weights)
    same(dynagrad.bincount(d, dw, minlength), torch.bincount(t, tw, minlength))
    same(d.bincount(dw, minlength=minlength), t.bincount(tw, minlength=minlength))


@pytest.mark.parametrize('values,kw,substring', [
    (np.array([1, -2]), {}, 'bincount only supports 1-d non-negative integral inputs'),
    (np.array([[1, 2]]), {}, 'bincount only supports 1-d non-negative integral inputs'),
    (np.array([1.0, 2.0], np.float32), {}, 'not implemented for'),
    (np.array([1, 2]), dict(minlength=-1), 'minlength should be >= 0'),
    (np.array([1, 2]), dict(weights=np.ones(3)), 'weights should be 1-d and have the same length'),
])
def test_bincount_errors(values, kw, substring):
    d, t = both(values)
    dk = {k: dynagrad.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    raises_like(lambda: dynagrad.bincount(d, **dk), lambda: torch.bincount(t, **tk), substring)


# -- histc, histogram, histogramdd ---------------------------------------------------------------

HISTC = [
    (RNG.standard_normal(50).astype(np.float32), dict()),
    (RNG.standard_normal(50).astype(np.float32), dict(bins=7)),
    (RNG.standard_normal((5, 6)), dict(bins=4, min=-1, max=1)),
    (np.array([0., 1., 2., 3., 4.], np.float32), dict(bins=4, min=0, max=4)),   # edges
    (np.full(5, 2.0, np.float32), dict(bins=3)),                                 # all equal
    (np.array([], np.float32), dict(bins=3)),
    (np.array([1., np.inf, -np.inf, 2.], np.float32), dict(bins=2, min=0, max=3)),
]


@pytest.mark.parametrize('values,kw', HISTC)
def test_histc(values, kw):
    d, t = both(values)
    same(dynagrad.histc(d, **kw), torch.histc(t, **kw))
    same(d.histc(**kw), t.histc(**kw))


def test_histc_errors():
    d, t = both(np.arange(3))
    raises_like(lambda: dynagrad.histc(d), lambda: torch.histc(t), 'not implemented for')
    d, t = both(RNG.random(3).astype(np.float32))
    raises_like(lambda: dynagrad.histc(d, bins=0), lambda: torch.histc(t, bins=0),
                'bins must be > 0')
    raises_like(lambda: dynagrad.histc(d, min=2, max=1), lambda: torch.histc(t, min=2, max=1),
                'max must be larger than min')
    d, t = both(np.array([1., np.inf, 2.], np.float32))
    raises_like(lambda: dynagrad.histc(d), lambda: torch.histc(t), 'is not finite')
    raises_like(lambda: dynagrad.histogram(d, 2), lambda: torch.histogram(t, 2), 'is not finite')


HISTOGRAM = [
    (RNG.standard_normal(40).astype(np.float32), (5,), {}),
    (RNG.standard_normal(40).astype(np.float32), (), {}),
    (RNG.standard_normal((4, 5)), (6,), dict(range=(-1.0, 1.0))),
    (RNG.standard_normal(30).astype(np.float32), (4,), dict(density=True)),
    (RNG.standard_normal(30), (3,), dict(weight=RNG.random(30))),
    (RNG.standard_normal(30), (3,), dict(weight=RNG.random(30), density=True)),
    (RNG.standard_normal(30).astype(np.float32), (np.array([-1., 0., 0.5, 2.], np.float32),),
     {}),
    (np.array([0., 1., 2., 3.], np.float32), (3,), {}),
    (np.full(4, 1.5), (2,), {}),
    (np.array([], np.float32), (2,), {}),
]


def _args(lib, extra, kw):
    conv = lambda v: torch.tensor(v) if lib is torch else dynagrad.tensor(v)  # noqa: E731
    args = tuple(conv(a) if isinstance(a, np.ndarray) else a for a in extra)
    kws = {k: conv(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    return args, kws


@pytest.mark.parametrize('values,extra,kw', HISTOGRAM)
def test_histogram(values, extra, kw):
    d, t = both(values)
    da, dk = _args(dynagrad, extra, kw)
    ta, tk = _args(torch, extra, kw)
    rd, rt = dynagrad.histogram(d, *da, **dk), torch.histogram(t, *ta, **tk)
    assert type(rd).__name__ == 'histogram'
    same(rd, rt, rtol=1e-5)
    same(d.histogram(*da, **dk), t.histogram(*ta, **tk), rtol=1e-5)


def test_histogram_errors():
    d, t = both(np.arange(3))
    raises_like(lambda: dynagrad.histogram(d, 3), lambda: torch.histogram(t, 3),
                'not implemented for')
    d, t = both(RNG.random(3).astype(np.float32))
    raises_like(lambda: dynagrad.histogram(d, -1), lambda: torch.histogram(t, -1),
                'bins must be > 0')


HISTOGRAMDD = [
    (RNG.standard_normal((20, 2)).astype(np.float32), ([3, 4],), {}),
    (RNG.standard_normal((20, 3)), (2,), dict(range=[-1., 1., -2., 2., 0., 1.])),
    (RNG.standard_normal((4, 5, 2)).astype(np.float32), ([2, 3],), dict(density=True)),
    (RNG.standard_normal((10, 2)), ([3, 2],), dict(weight=RNG.random(10))),
    (RNG.standard_normal((15, 2)).astype(np.float32),
     ([np.array([-2., 0., 2.], np.float32), np.array([-1., 0., 0.5, 1.], np.float32)],), {}),
]


@pytest.mark.parametrize('values,extra,kw', HISTOGRAMDD)
def test_histogramdd(values, extra, kw):
    def conv(lib, extra):
        mk = (lambda v: torch.tensor(v)) if lib is torch else dynagrad.tensor
        return tuple([mk(b) if isinstance(b, np.ndarray) else b for b in e]
                     if isinstance(e, list) else e for e in extra)
    d, t = both(values)
    dk = {k: dynagrad.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    rd = dynagrad.histogramdd(d, *conv(dynagrad, extra), **dk)
    rt = torch.histogramdd(t, *conv(torch, extra), **tk)
    assert type(rd).__name__ == type(rt).__name__ == 'histogramdd'
    same(rd.hist, rt.hist, rtol=1e-5)
    same(list(rd.bin_edges), list(rt.bin_edges))


# -- bucketize, searchsorted, isin -----------------------------------------------------------------

BOUNDS = np.array([1., 3., 5., 7., 9.], np.float32)
VALUES = np.array([[3., 6., 9.], [3., 6., 9.], [0., 10., 5.]], np.float32)


@pytest.mark.parametrize('right', [False, True])
@pytest.mark.parametrize('out_int32', [False, True])
def test_bucketize(right, out_int32):
    (dv, tv), (db, tb) = both(VALUES), both(BOUNDS)
    kw = dict(right=right, out_int32=out_int32)
    same(dynagrad.bucketize(dv, db, **kw), torch.bucketize(tv, tb, **kw))
    same(dynagrad.bucketize(5, db, **kw), torch.bucketize(5, tb, **kw))


def test_bucketize_errors():
    (dv, tv), (db, tb) = both(VALUES), both(VALUES)
    raises_like(lambda: dynagrad.bucketize(dv, db), lambda: torch.bucketize(tv, tb),
                'boundaries tensor must be 1 dimension')


SEARCH = [
    (BOUNDS, VALUES, {}),
    (BOUNDS, VALUES, dict(right=True)),
    (BOUNDS, VALUES, dict(side='right')),
    (BOUNDS, VALUES, dict(side='left', out_int32=True)),
    (np.sort(RNG.standard_normal((2, 3, 5)), -1), RNG.standard_normal((2, 3, 4)), {}),
    (np.sort(RNG.standard_normal((3, 6)), -1), RNG.standard_normal((3, 2)), dict(right=True)),
    (np.array([1, 3, 3, 5]), np.array([3, 0, 6]), {}),
    (np.array([1, 3, 3, 5]), np.array([3, 0, 6]), dict(side='right')),
    (np.array([5., 1., 3., 7.], np.float32), VALUES,
     dict(sorter=np.array([1, 2, 0, 3]))),
    (BOUNDS, np.zeros((0,), np.float32), {}),
]


@pytest.mark.parametrize('seq,values,kw', SEARCH)
def test_searchsorted(seq, values, kw):
    (ds, ts), (dv, tv) = both(seq), both(values)
    dk = {k: dynagrad.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    same(dynagrad.searchsorted(ds, dv, **dk), torch.searchsorted(ts, tv, **tk))


def test_searchsorted_scalar_value():
    ds, ts = both(BOUNDS)
    same(dynagrad.searchsorted(ds, 4.0), torch.searchsorted(ts, 4.0))
    same(dynagrad.searchsorted(ds, 5, right=True), torch.searchsorted(ts, 5, right=True))


@pytest.mark.parametrize('seq,values,kw,substring', [
    (RNG.random((2, 3)), RNG.random((3, 2)), {}, 'boundaries tensor should be 1 dimension or '
                                                 'the first N-1 dimensions'),
    (BOUNDS, VALUES, dict(side='left', right=True), "side and right can't be set to opposites"),
    (BOUNDS, VALUES, dict(side='middle'), "side can only be 'left' or 'right'"),
    (BOUNDS, VALUES, dict(sorter=np.array([0, 1, 2])), 'boundary and sorter must have the '
                                                        'same size'),
])
def test_searchsorted_errors(seq, values, kw, substring):
    (ds, ts), (dv, tv) = both(seq), both(values)
    dk = {k: dynagrad.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    raises_like(lambda: dynagrad.searchsorted(ds, dv, **dk),
                lambda: torch.searchsorted(ts, tv, **tk), substring)


@pytest.mark.parametrize('kw', [{}, dict(invert=True), dict(assume_unique=True)])
def test_isin(kw):
    (de, te), (dt, tt) = both(ints(3, 4, high=8)), both(np.array([1, 3, 5, 6]))
    same(dynagrad.isin(de, dt, **kw), torch.isin(te, tt, **kw))
    same(dynagrad.isin(de, 3, **kw), torch.isin(te, 3, **kw))
    same(dynagrad.isin(3, dt, **kw), torch.isin(3, tt, **kw))
    (df, tf) = both(np.array([0.5, 1.0, 2.0], np.float32))
    same(dynagrad.isin(df, dt, **kw), torch.isin(tf, tt, **kw))


def test_isin_two_numbers_is_a_type_error():
    raises_like(lambda: dynagrad.isin(1, 2), lambda: torch.isin(1, 2))


# -- unique_consecutive, frobenius_norm, aminmax -----------------------------------------------

UNIQUE = [np.array([1, 1, 2, 2, 3, 1, 1, 2]),
          np.array([[1, 1, 2], [1, 1, 2], [3, 3, 3]]),
          np.array([1.5, 1.5, np.nan, 2.0], np.float32),
          np.array([], np.int64)]


@pytest.mark.parametrize('values', UNIQUE, ids=['1d', '2d', 'float', 'empty'])
@pytest.mark.parametrize('kw', [{}, dict(return_inverse=True), dict(return_counts=True),
                                dict(return_inverse=True, return_counts=True)])
def test_unique_consecutive(values, kw):
    d, t = both(values)
    same(dynagrad.unique_consecutive(d, **kw), torch.unique_consecutive(t, **kw))
    same(d.unique_consecutive(**kw), t.unique_consecutive(**kw))


@pytest.mark.parametrize('dim', [0, 1, -1])
def test_unique_consecutive_dim(dim):
    d, t = both(np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 3, 3]]))
    kw = dict(return_inverse=True, return_counts=True, dim=dim)
    same(dynagrad.unique_consecutive(d, **kw), torch.unique_consecutive(t, **kw))


@pytest.mark.parametrize('dim,keepdim', [((0, 1), False), ([1], True), (0, False)])
def test_frobenius_norm_deprecated_form(dim, keepdim):
    d, t = both(RNG.standard_normal((3, 4)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        rt = torch.frobenius_norm(t, dim, keepdim)
    with pytest.warns(UserWarning, match='frobenius_norm is deprecated'):
        rd = dynagrad.frobenius_norm(d, dim, keepdim)
    same(rd, rt)
    rd.sum().backward()
    rt.sum().backward()
    same(d.grad, t.grad)


def test_frobenius_norm_needs_dim():
    d, t = both(RNG.standard_normal((3, 4)))
    raises_like(lambda: dynagrad.frobenius_norm(d), lambda: torch.frobenius_norm(t))


def test_aminmax_named_tuple():
    d, t = both(RNG.standard_normal((3, 4)).astype(np.float32))
    rd, rt = dynagrad.aminmax(d, dim=1), torch.aminmax(t, dim=1)
    assert type(rd).__name__ == 'aminmax' and rd._fields == ('min', 'max')
    same(rd, rt)
    assert repr(rd) == repr(rt).replace('torch.return_types', 'dynagrad.return_types')


def test_aminmax_error_message():
    d, t = both(np.zeros((0, 3), np.float32))
    raises_like(lambda: dynagrad.aminmax(d), lambda: torch.aminmax(t),
                'cannot compute aminmax over an empty dimension')


# -- messages of the differentiable statistics -------------------------------------------------

@pytest.mark.parametrize('call,substring', [
    (lambda L, x: L.quantile(x, 1.5), 'q must be in the range [0, 1] but got 1.5'),
    (lambda L, x: L.quantile(x, L.tensor([0.5, 1.2])), 'q values must be in the range [0, 1]'),
    (lambda L, x: L.quantile(x.long(), 0.5), 'input tensor must be either float or double'),
    (lambda L, x: L.quantile(x, L.tensor([0.5], dtype=L.float64)), 'q tensor must be same '
                                                                   'dtype as the input'),
    (lambda L, x: L.quantile(x[:0], 0.5), 'input tensor must be non-empty'),
    (lambda L, x: L.quantile(x, 0.5, interpolation='cubic'), 'interpolation must be one of'),
    (lambda L, x: L.nanquantile(x, L.ones(2, 2) / 2), 'q must be a scalar or 1D tensor'),
    (lambda L, x: L.diff(x[0]), 'diff expects input to be at least one-dimensional'),
    (lambda L, x: L.diff(x, -1), 'order must be non-negative but got -1'),
    (lambda L, x: L.renorm(x.reshape(2, 2), -1, 0, 1), 'non-positive-norm not supported'),
    (lambda L, x: L.renorm(x.reshape(2, 2), 2, 0, -1), 'expected maxnorm to be >= 0'),
    (lambda L, x: L.renorm(x, 2, 0, 1), 'input needs at least 2 dimensions'),
    (lambda L, x: L.cov(x.reshape(1, 2, 2)), 'expected input to have two or fewer dimensions'),
    (lambda L, x: L.corrcoef(x.reshape(1, 2, 2)), 'expected input to have two or fewer'),
    (lambda L, x: L.gradient(x[:1]), 'expected each dimension size to be at least edge_order+1'),
    (lambda L, x: L.gradient(x, edge_order=3), 'only supports edge_order=1 and edge_order=2'),
    (lambda L, x: L.trapezoid(x, x[:2]), 'There must be one `x` value for each sample point'),
    (lambda L, x: L.logcumsumexp(x.long(), 0), 'not implemented for'),
])
def test_error_messages(call, substring):
    x = np.array([0.5, 1.5, -1.0, 2.0], np.float32)
    d, t = both(x)
    raises_like(lambda: call(dynagrad, d), lambda: call(torch, t), substring)


def test_cov_warns_without_degrees_of_freedom():
    d, t = both(RNG.standard_normal((2, 1)).astype(np.float32))
    with pytest.warns(UserWarning, match='degrees of freedom is <= 0'):
        rt = torch.cov(t)
    with pytest.warns(UserWarning, match='degrees of freedom is <= 0'):
        rd = dynagrad.cov(d)
    same(rd, rt)


def test_gradient_returns_a_tuple_per_dim():
    d, t = both(RNG.standard_normal((3, 4, 5)))
    rd, rt = dynagrad.gradient(d, dim=(0, 2)), torch.gradient(t, dim=(0, 2))
    assert isinstance(rd, tuple) and len(rd) == 2
    same(rd, rt)


# -- gradients torch cannot give (its vander backward fails) -----------------------------------

@pytest.mark.parametrize('N,increasing', [(None, False), (4, True), (2, False)])
def test_vander_gradients_by_finite_differences(N, increasing):
    x = dynagrad.tensor(np.array([0.5, -1.2, 2.0]), requires_grad=True)
    f = lambda v: dynagrad.vander(v, N, increasing)  # noqa: E731
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_logcumsumexp_double_backward():
    x = dynagrad.tensor(RNG.standard_normal((2, 4)), requires_grad=True)
    assert gradgradcheck(lambda v: dynagrad.logcumsumexp(v, 1), (x,))


def test_renorm_in_place_on_a_leaf_raises_like_torch():
    d, t = both(RNG.standard_normal((3, 3)), requires_grad=True)
    raises_like(lambda: d.renorm_(2, 0, 1.0), lambda: t.renorm_(2, 0, 1.0),
                'leaf Variable that requires grad')
