"""Reductions the op table cannot express, checked against torch.

Named-tuple result types and their repr, ``unique`` (several result shapes), the binary
form of ``max``/``min``, double backward of ``prod``/``cumprod`` through zeros compared
value by value with torch, and selection gradients under ``create_graph``.
"""
import numpy as np
import pytest
import torch

import dynagrad

RNG = np.random.default_rng(0)


def both(array, requires_grad=False):
    a = np.array(array)
    d = dynagrad.tensor(a.copy(), requires_grad=requires_grad)
    t = torch.tensor(a.copy(), requires_grad=requires_grad)
    return d, t


def same(d, t, **tol):
    assert tuple(d.shape) == tuple(t.shape)
    assert str(d.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), equal_nan=True, **tol)


# -- named tuples ------------------------------------------------------------------------------

NAMED = [('max', lambda x: x.max(1)), ('min', lambda x: x.min(1)),
         ('sort', lambda x: x.sort()), ('topk', lambda x: x.topk(2)),
         ('kthvalue', lambda x: x.kthvalue(2)), ('median', lambda x: x.median(0)),
         ('nanmedian', lambda x: x.nanmedian(0)), ('mode', lambda x: x.mode()),
         ('cummax', lambda x: x.cummax(1)), ('cummin', lambda x: x.cummin(0))]


@pytest.mark.parametrize('name,fn', NAMED, ids=[n for n, _ in NAMED])
def test_named_tuple_results(name, fn):
    d, t = both(RNG.standard_normal((3, 4)).astype(np.float32))
    rd, rt = fn(d), fn(t)
    assert isinstance(rd, tuple) and type(rd).__name__ == type(rt).__name__ == name
    assert rd._fields == ('values', 'indices')
    same(rd.values, rt.values)
    same(rd.indices, rt.indices)
    v, i = rd                               # unpacks like a tuple
    assert v is rd.values and i is rd[1]
    assert repr(rd) == repr(rt).replace('torch.return_types', 'dynagrad.return_types')
    assert type(rd) is getattr(dynagrad.return_types, name)


def test_named_tuple_repr_with_grad():
    d, t = both(np.array([[1.0, 3.0], [2.0, 0.5]], np.float32), requires_grad=True)
    assert repr(d.max(1)) == repr(t.max(1)).replace('torch.return_types',
                                                    'dynagrad.return_types')


# -- unique -----------------------------------------------------------------------------------

UNIQUE_INPUTS = [
    np.array([3., 1., 2., 3., 1., 5.], np.float32),
    np.array([[1, 2, 1], [2, 2, 0]], np.int64),
    np.array([[True, False], [True, True]]),
    np.array(2.5, np.float32),
    np.zeros((0, 3), np.float32),
]


@pytest.mark.parametrize('inv', [False, True])
@pytest.mark.parametrize('counts', [False, True])
@pytest.mark.parametrize('k', range(len(UNIQUE_INPUTS)))
def test_unique_matches_torch(k, inv, counts):
    d, t = both(UNIQUE_INPUTS[k])
    rd = dynagrad.unique(d, return_inverse=inv, return_counts=counts)
    rt = torch.unique(t, return_inverse=inv, return_counts=counts)
    rd, rt = (rd, rt) if isinstance(rt, tuple) else ((rd,), (rt,))
    assert len(rd) == len(rt)
    for a, b in zip(rd, rt):
        same(a, b)
    same(d.unique(return_inverse=inv, return_counts=counts) if not (inv or counts)
         else d.unique(return_inverse=inv, return_counts=counts)[0], rt[0])


@pytest.mark.parametrize('dim', [0, 1, -1])
def test_unique_dim(dim):
    a = np.array([[1, 2, 1, 2], [3, 4, 3, 4], [1, 2, 1, 2]], np.int64)
    d, t = both(a)
    rd = dynagrad.unique(d, return_inverse=True, return_counts=True, dim=dim)
    rt = torch.unique(t, return_inverse=True, return_counts=True, dim=dim)
    for a, b in zip(rd, rt):
        same(a, b)


def test_unique_does_not_record():
    d = dynagrad.tensor([1.0, 1.0, 2.0], requires_grad=True)
    u = d.unique()
    assert not u.requires_grad and u.grad_fn is None


# -- binary max / min --------------------------------------------------------------------------

@pytest.mark.parametrize('name', ['max', 'min'])
def test_binary_max_min(name):
    if not hasattr(dynagrad, 'maximum'):
        pytest.skip('maximum/minimum (pointwise family) not available yet')
    a = RNG.standard_normal((3, 1)).astype(np.float32)
    b = RNG.standard_normal((4,)).astype(np.float32)
    da, ta = both(a, True)
    db, tb = both(b, True)
    rd, rt = getattr(dynagrad, name)(da, db), getattr(torch, name)(ta, tb)
    same(rd, rt)
    assert rd.grad_fn.name() == rt.grad_fn.name()
    g = RNG.standard_normal((3, 4)).astype(np.float32)
    rd.backward(dynagrad.tensor(g))
    rt.backward(torch.tensor(g))
    same(da.grad, ta.grad)
    same(db.grad, tb.grad)
    same(getattr(da, name)(db), getattr(ta, name)(tb))


# -- double backward through zeros, value by value ---------------------------------------------

ZERO_INPUTS = [
    [[0.5, 0.0, 0.7, 2.0], [1.5, -1.2, 0.0, 0.0]],
    [[0.0, 0.0, 0.0, 0.0], [0.3, 0.0, 2.0, -1.0]],
    [[0.0, 1.5, -0.5, 2.0], [1.0, 2.0, 3.0, 4.0]],
]
ZERO_OPS = [('prod_all', lambda x: x.prod()), ('prod_dim1', lambda x: x.prod(1)),
            ('prod_dim0', lambda x: x.prod(0, keepdim=True)),
            ('cumprod_dim1', lambda x: x.cumprod(1)), ('cumprod_dim0', lambda x: x.cumprod(0))]


@pytest.mark.parametrize('k', range(len(ZERO_INPUTS)))
@pytest.mark.parametrize('name,fn', ZERO_OPS, ids=[n for n, _ in ZERO_OPS])
def test_double_backward_with_zeros(name, fn, k):
    d, t = both(np.array(ZERO_INPUTS[k], np.float64), requires_grad=True)
    out_d, out_t = fn(d), fn(t)
    g = RNG.standard_normal(tuple(out_t.shape))
    gd, = dynagrad.autograd.grad(out_d, [d], dynagrad.tensor(g), create_graph=True)
    gt, = torch.autograd.grad(out_t, [t], torch.tensor(g), create_graph=True)
    same(gd, gt, rtol=1e-12, atol=1e-12)
    v = RNG.standard_normal(tuple(t.shape))
    ggd, = dynagrad.autograd.grad((gd * dynagrad.tensor(v)).sum(), [d])
    ggt, = torch.autograd.grad((gt * torch.tensor(v)).sum(), [t])
    same(ggd, ggt, rtol=1e-12, atol=1e-12)


SELECT_OPS = [('max_dim', lambda x: x.max(1)[0]), ('sort', lambda x: x.sort(0)[0]),
              ('topk', lambda x: x.topk(2)[0]), ('cummax', lambda x: x.cummax(1)[0]),
              ('median', lambda x: x.median(1)[0]), ('amax', lambda x: x.amax(1)),
              ('norm', lambda x: x.norm(dim=1)), ('std', lambda x: x.std(1)),
              ('logsumexp', lambda x: x.logsumexp(1))]


@pytest.mark.parametrize('name,fn', SELECT_OPS, ids=[n for n, _ in SELECT_OPS])
def test_second_derivative_matches_torch(name, fn):
    a = RNG.standard_normal((3, 4))
    d, t = both(a, requires_grad=True)
    out_d, out_t = fn(d), fn(t)
    gd, = dynagrad.autograd.grad((out_d ** 2).sum(), [d], create_graph=True)
    gt, = torch.autograd.grad((out_t ** 2).sum(), [t], create_graph=True)
    same(gd, gt, rtol=1e-10)
    ggd, = dynagrad.autograd.grad((gd ** 2).sum(), [d])
    ggt, = torch.autograd.grad((gt ** 2).sum(), [t])
    same(ggd, ggt, rtol=1e-10)


# -- odds and ends -----------------------------------------------------------------------------

def test_topk_unsorted_selects_the_same_elements():
    a = RNG.standard_normal((3, 6)).astype(np.float32)
    d, t = both(a)
    vd, _ = d.topk(3, sorted=False)
    vt, _ = t.topk(3, sorted=False)
    np.testing.assert_allclose(np.sort(vd.numpy(), 1), np.sort(vt.numpy(), 1))


def test_stable_sort_many_ties():
    a = RNG.integers(0, 3, (4, 50)).astype(np.float32)
    d, t = both(a)
    for desc in (False, True):
        rd = d.sort(dim=1, descending=desc, stable=True)
        rt = t.sort(dim=1, descending=desc, stable=True)
        same(rd.values, rt.values)
        same(rd.indices, rt.indices)
        same(dynagrad.argsort(d, 1, desc, stable=True),
             torch.argsort(t, dim=1, descending=desc, stable=True))


def test_var_warns_like_torch_when_dof_is_not_positive():
    with pytest.warns(UserWarning, match='degrees of freedom is <= 0'):
        dynagrad.ones(3).var(correction=3)


def test_nuclear_norm_is_the_sum_of_singular_values():
    x = np.random.default_rng(4).standard_normal((3, 5))
    np.testing.assert_allclose(dynagrad.tensor(x).norm('nuc').item(),
                               np.linalg.svd(x, compute_uv=False).sum(), rtol=1e-12)


def test_max_min_return_types_importable():
    assert dynagrad.return_types.max._fields == ('values', 'indices')


def test_cumsum_inplace_dtype_mismatch():
    x = dynagrad.ones(2, 3)
    with pytest.raises(RuntimeError, match='Bad in-place call'):
        x.cumsum_(1, dtype=dynagrad.float64)
    assert x._version == 0


def test_selection_backward_accumulates_repeated_indices():
    """cummax sends several output gradients to one input element."""
    d, t = both([[3.0, 1.0, 2.0, 5.0, 4.0]], requires_grad=True)
    d.cummax(1).values.sum().backward()
    t.cummax(1).values.sum().backward()
    same(d.grad, t.grad)
