"""Indexing checks the op table cannot express, still compared with torch."""

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck


def _pair(array, requires_grad=True):
    a = np.asarray(array)
    d = dynagrad.tensor(a.copy(), requires_grad=requires_grad)
    t = torch.tensor(a.copy(), requires_grad=requires_grad)
    return d, t


def _close(d, t, **kw):
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), **kw)


RNG = np.random.default_rng(0)


# -- scatter with src larger than index: torch's own backward fails on it --------------------

@pytest.mark.parametrize('name,extra', [('scatter', ()), ('scatter_add', ()),
                                        ('scatter_reduce', ('sum',)),
                                        ('scatter_reduce', ('amax',)),
                                        ('scatter_reduce', ('mean',)),
                                        ('scatter_reduce', ('prod',))])
def test_scatter_src_larger_than_index_gradient(name, extra):
    """The gradient of src is torch's gradient of src[:index's shape], zero elsewhere."""
    x = RNG.uniform(0.5, 2, (3, 4))
    src = RNG.uniform(0.5, 2, (3, 5))
    index = np.array([[0, 2, 1], [1, 0, 2]])
    dx, tx = _pair(x)
    ds, ts = _pair(src)
    ts_part = ts[:2, :3]                  # what torch can differentiate
    g = RNG.standard_normal((3, 4))
    out_d = getattr(dynagrad, name)(dx, 0, dynagrad.tensor(index), ds, *extra)
    out_t = getattr(torch, name)(tx, 0, torch.tensor(index), ts_part, *extra)
    _close(out_d, out_t)
    out_d.backward(dynagrad.tensor(g))
    out_t.backward(torch.tensor(g))
    _close(dx.grad, tx.grad)
    _close(ds.grad, ts.grad)
    assert np.all(ds.grad.numpy()[2:] == 0) and np.all(ds.grad.numpy()[:, 3:] == 0)
    assert gradcheck(lambda a, b: getattr(dynagrad, name)(a, 0, dynagrad.tensor(index), b,
                                                           *extra), (dx, ds))


@pytest.mark.parametrize('reduce', ['sum', 'prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_scatter_reduce_double_backward_matches_torch(reduce, include_self):
    x = RNG.uniform(0.5, 2, (3, 3))
    src = RNG.uniform(0.5, 2, (2, 3))
    index = np.array([[0, 1, 0], [2, 0, 0]])
    results = []
    for k, lib in enumerate((dynagrad, torch)):
        a, b = _pair(x)[k], _pair(src)[k]
        out = lib.scatter_reduce(a, 0, lib.tensor(index), b, reduce,
                                 include_self=include_self)
        g = lib.tensor(np.linspace(-1, 1, 9).reshape(3, 3), requires_grad=True)
        ga, gb = lib.autograd.grad(out, (a, b), g, create_graph=True)
        total = (ga * ga).sum() + (gb * gb.exp()).sum()
        results.append(lib.autograd.grad(total, (a, b, g), allow_unused=True))
    for d, t in zip(*results):
        if t is None:
            assert d is None or not np.any(d.numpy())
        else:
            _close(d, t, rtol=1e-9, atol=1e-12)


# -- setitem / index_put with autograd ----------------------------------------------------------

def test_setitem_gradients_to_history_and_value_with_broadcast():
    x0 = RNG.standard_normal((3, 4, 2))
    v0 = RNG.standard_normal((4, 1))
    grads = []
    for lib in (dynagrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        v = lib.tensor(v0, requires_grad=True)
        y = x * 2
        y[lib.tensor([0, 2])] = v            # v broadcast to (2, 4, 2)
        (y * y).sum().backward()
        grads.append((x.grad, v.grad, y.grad_fn.name()))
    _close(grads[0][0], grads[1][0])
    _close(grads[0][1], grads[1][1])
    assert grads[0][2] == grads[1][2] == 'IndexPutBackward0'


def test_index_add_repeated_indices_accumulate_and_augmented_assignment():
    x0 = RNG.standard_normal((4, 3))
    out = []
    for lib in (dynagrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = x.clone()
        idx = lib.tensor([1, 1, 3, 1])
        y[idx] += 1.0                         # read, add, write: repeated rows are written once
        z = y[idx]                            # read: repeated rows accumulate in backward
        (z * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
        out.append((y, x.grad))
    _close(out[0][0], out[1][0])
    _close(out[0][1], out[1][1])


@pytest.mark.parametrize('key', [
    (1, slice(None), [0, 3]),                 # an int separated from the array: torch selects
    (slice(None), 0, [1, 0]),
    ([0, 1], 2, slice(1, 3)),
    (None, [1], Ellipsis, [0, 3]),
])
def test_mixed_keys_gradgradcheck(key):
    x = dynagrad.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t[key], (x,))
    assert gradgradcheck(lambda t: t[key] ** 2, (x,))
    t = torch.tensor(x.detach().numpy())
    _close(x[key], t[key])


@pytest.mark.parametrize('key', [
    (1, slice(None), [0, 3]),
    (slice(None, None, 2), [1, 2]),
    ([0, 1], slice(None), [1, 2]),
    (Ellipsis, [0]),
])
def test_setitem_double_backward_and_history_name(key):
    x0 = RNG.standard_normal((2, 3, 4))
    names = []
    for lib in (dynagrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = x * 1
        region = y[key]
        v = lib.tensor(np.ones(tuple(region.shape)), requires_grad=True)
        y[key] = v * 3
        names.append(y.grad_fn.name().replace('torch::autograd::', ''))
    assert names[0] == names[1]

    def f(a, b):
        y = a * a
        y[key] = b ** 2
        return y
    x = dynagrad.tensor(x0, requires_grad=True)
    v = dynagrad.tensor(RNG.standard_normal(tuple(x[key].shape)), requires_grad=True)
    assert gradgradcheck(f, (x, v))


def test_list_as_tuple_warns_like_torch():
    x = dynagrad.zeros(2, 3)
    with pytest.warns(UserWarning, match='non-tuple sequence'):
        y = x[[[0, 1], [1, 0]]]
    assert tuple(y.shape) == (2,)


def test_large_indices_are_vectorised():
    """A sanity check of scale: 10^6 gathers and scatters run in one NumPy call each."""
    n = 1000
    x = dynagrad.randn(n, n, requires_grad=True)
    idx = dynagrad.randint(0, n, (n, n))
    y = x.gather(1, idx).sum() + x.scatter_add(0, idx, x).sum() + x[idx[:, 0]].sum()
    y.backward()
    assert x.grad.shape == (n, n)


# -- nonzero / argwhere -----------------------------------------------------------------------

@pytest.mark.parametrize('value', [0.0, 2.0])
def test_nonzero_0dim_as_tuple(value):
    d = dynagrad.nonzero(dynagrad.tensor(value), as_tuple=True)
    t = torch.nonzero(torch.tensor(value), as_tuple=True)
    assert len(d) == len(t)
    for a, b in zip(d, t):
        assert a.tolist() == b.tolist() and a.dtype == dynagrad.int64


# -- bugs found outside this family -----------------------------------------------------------

def test_inplace_on_view_of_view_leaf_raises():
    x = dynagrad.arange(6.0).reshape(2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
        x[0] = 1.0


@pytest.mark.parametrize('key', [range(2), range(0), range(1, 4, 2)], ids=['r2', 'empty', 'step'])
def test_range_index_reads_and_writes_as_torch(key):
    t = torch.arange(12.).reshape(4, 3)
    d = dynagrad.arange(12.).reshape(4, 3)
    assert d[key].tolist() == t[key].tolist()
    assert d[:, range(1, 3)].tolist() == t[:, range(1, 3)].tolist()
    d[key] = -1.0
    t[key] = -1.0
    assert d.tolist() == t.tolist()
