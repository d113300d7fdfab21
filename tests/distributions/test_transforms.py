"""Transforms (forward, inverse, log|det J|, shapes, reprs), biject_to / transform_to and
the constraints' checks, against torch."""
import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.distributions as D
import torch.distributions as TD
from dist_cases import to_np

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((3, 4))
TRANSFORMS = {
    'Exp': (lambda T, L: T.ExpTransform(), X2),
    'Affine': (lambda T, L: T.AffineTransform(0.5, -2.0), X2),
    'Affine_tensor': (lambda T, L: T.AffineTransform(L.tensor([0.5, 1.0, 0.0, -1.0],
                                                              dtype=L.float64),
                                                     L.tensor([2.0, -1.0, 3.0, 0.5],
                                                              dtype=L.float64),
                                                     event_dim=1), X2),
    'Sigmoid': (lambda T, L: T.SigmoidTransform(), X2),
    'Tanh': (lambda T, L: T.TanhTransform(), X2 / 2),
    'Softplus': (lambda T, L: T.SoftplusTransform(), X2),
    'Power': (lambda T, L: T.PowerTransform(L.tensor(1.7, dtype=L.float64)), np.abs(X2) + 0.1),
    'StickBreaking': (lambda T, L: T.StickBreakingTransform(), X2),
    'Compose': (lambda T, L: T.ComposeTransform([T.AffineTransform(1.0, 2.0),
                                                  T.ExpTransform()]), X2),
    'Independent': (lambda T, L: T.IndependentTransform(T.ExpTransform(), 1), X2),
    'Reshape': (lambda T, L: T.ReshapeTransform((4,), (2, 2)), X2),
    'CorrCholesky': (lambda T, L: T.CorrCholeskyTransform(), X2[:, :3]),
    'Inverse_exp': (lambda T, L: T.ExpTransform().inv, np.abs(X2) + 0.1),
    'Cat': (lambda T, L: T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], -1,
                                        [2, 2]), X2),
    'Stack': (lambda T, L: T.StackTransform([T.ExpTransform(), T.TanhTransform(),
                                             T.SigmoidTransform(),
                                             T.AffineTransform(1.0, 2.0)], -1), X2),
}
NOT_BIJECTIVE = {
    'Abs': (lambda T, L: T.AbsTransform(), X2),
    'Softmax': (lambda T, L: T.SoftmaxTransform(), X2),
    'LowerCholesky': (lambda T, L: T.LowerCholeskyTransform(), RNG.standard_normal((2, 3, 3))),
    'PositiveDefinite': (lambda T, L: T.PositiveDefiniteTransform(),
                         RNG.standard_normal((2, 3, 3))),
}


def _both(make, x):
    t = make(TD.transforms, torch)
    d = make(D.transforms, dg)
    tx = torch.tensor(x, requires_grad=True)
    dx = dg.tensor(x, requires_grad=True)
    return t, d, tx, dx


@pytest.mark.parametrize('name', sorted(TRANSFORMS))
def test_bijective_transform_against_torch(name):
    make, x = TRANSFORMS[name]
    t, d, tx, dx = _both(make, x)
    ty, dy = t(tx), d(dx)
    np.testing.assert_allclose(to_np(dy), to_np(ty), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(to_np(d.inv(dy.detach())), x, rtol=1e-6, atol=1e-9)
    tl, dl = t.log_abs_det_jacobian(tx, ty), d.log_abs_det_jacobian(dx, dy)
    assert tuple(dl.shape) == tuple(tl.shape)
    np.testing.assert_allclose(to_np(dl), to_np(tl), rtol=1e-7, atol=1e-10)
    (ty.sum() + tl.sum()).backward()
    (dy.sum() + dl.sum()).backward()
    np.testing.assert_allclose(to_np(dx.grad), to_np(tx.grad), rtol=1e-6, atol=1e-9)
    assert d.bijective == t.bijective
    assert repr(d) == repr(t)
    assert repr(d.domain) == repr(t.domain) and repr(d.codomain) == repr(t.codomain)
    shape = tuple(x.shape)
    assert tuple(d.forward_shape(shape)) == tuple(t.forward_shape(shape))
    out = tuple(t.forward_shape(shape))
    assert tuple(d.inverse_shape(out)) == tuple(t.inverse_shape(out))


@pytest.mark.parametrize('name', sorted(NOT_BIJECTIVE))
def test_other_transforms_against_torch(name):
    make, x = NOT_BIJECTIVE[name]
    t, d, tx, dx = _both(make, x)
    ty, dy = t(tx), d(dx)
    np.testing.assert_allclose(to_np(dy), to_np(ty), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(to_np(d.inv(dy.detach())), to_np(t.inv(ty.detach())),
                               rtol=1e-6, atol=1e-9)
    assert repr(d) == repr(t) and d.bijective == t.bijective


def test_cache_returns_the_same_objects():
    t = D.transforms.ExpTransform(cache_size=1)
    x = dg.randn(3)
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert t.inv.inv is t
    with pytest.raises(ValueError, match='cache_size must be 0 or 1'):
        D.transforms.ExpTransform(cache_size=2)
    assert D.transforms.ExpTransform() == D.transforms.ExpTransform()
    assert D.transforms.AffineTransform(1., 2.) == D.transforms.AffineTransform(1., 2.)
    assert D.transforms.AffineTransform(1., 2.) != D.transforms.AffineTransform(1., 3.)
    assert D.transforms.AffineTransform(1., -2.).sign == -1
    with pytest.raises(ValueError, match='different numbers of elements'):
        D.transforms.ReshapeTransform((4,), (3,))


def _constraints(C, L):
    return [C.positive, C.nonnegative, C.greater_than(1.0), C.greater_than_eq(1.0),
            C.less_than(2.0), C.unit_interval, C.interval(1, 3), C.half_open_interval(0, 1),
            C.simplex, C.real, C.real_vector, C.lower_cholesky, C.positive_definite,
            C.corr_cholesky, C.boolean, C.independent(C.positive, 1),
            C.cat([C.positive, C.real], -1, [1, 1]), C.stack([C.positive, C.real], -1)]


@pytest.mark.parametrize('registry', ['biject_to', 'transform_to'])
def test_biject_to_and_transform_to_against_torch(registry):
    tr, dr = getattr(TD, registry), getattr(D, registry)
    for tc, dc in zip(_constraints(TD.constraints, torch), _constraints(D.constraints, dg)):
        try:
            tt = tr(tc)
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError, match=str(e)):
                dr(dc)
            continue
        dt = dr(dc)
        assert repr(dt) == repr(tt), repr(dc)
        shape = (5, 2) if 'Cat' in repr(dc) or 'Stack' in repr(dc) else (5, 3)
        if 'Cholesky' in repr(dc) or 'Definite' in repr(dc):
            shape = (5, 3) if 'Corr' in repr(dc) else (5, 3, 3)
        x = RNG.standard_normal(shape)
        y = dt(dg.tensor(x))
        assert bool(dc.check(y).all()), repr(dc)
        np.testing.assert_allclose(to_np(y), to_np(tt(torch.tensor(x))), rtol=1e-6,
                                   atol=1e-10)


def test_constraint_checks_against_torch():
    values = [np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]),
              np.array([[0.2, 0.8], [0.5, 0.6], [1.0, 0.0]]),
              np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.3, 1.0]],
                        [[1.0, 0.0], [0.6, 0.8]], [[2.0, 0.0], [0.0, -1.0]]])]
    for tc, dc in zip(_constraints(TD.constraints, torch), _constraints(D.constraints, dg)):
        assert repr(dc) == repr(tc)
        assert dc.event_dim == tc.event_dim and dc.is_discrete == tc.is_discrete
        for v in values:
            if v.ndim < tc.event_dim or ('Cat' in repr(tc) and v.shape[-1] != 2):
                continue
            if 'Stack' in repr(tc) and v.shape[-1] != 2:
                continue
            np.testing.assert_array_equal(to_np(dc.check(dg.tensor(v))),
                                          tc.check(torch.tensor(v)).numpy(), err_msg=repr(tc))
    for name in ['one_hot', 'nonnegative_integer', 'positive_integer']:
        v = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
        np.testing.assert_array_equal(
            to_np(getattr(D.constraints, name).check(dg.tensor(v))),
            getattr(TD.constraints, name).check(torch.tensor(v)).numpy())
    assert D.constraints.is_dependent(D.constraints.dependent)
    with pytest.raises(ValueError, match='Cannot determine validity of dependent constraint'):
        D.constraints.dependent.check(dg.zeros(1))
    assert D.constraints.integer_interval(0, 3).check(dg.tensor([1.0, 1.5, 4.0])).tolist() == \
        TD.constraints.integer_interval(0, 3).check(torch.tensor([1.0, 1.5, 4.0])).tolist()
