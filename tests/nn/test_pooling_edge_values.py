"""Max pooling's window rules at the edge values, against torch, in both kernel modes.

PyTorch's scan over a window starts from -inf at the first in-range tap's index and takes a
later tap when it is larger or NaN. Hence two rules the NumPy path (whole-array passes over
a -inf padded grid, and ``argmax``) once broke:

* a window whose in-range values are all -inf (all the dtype's lowest, for integers) next
  to padding points at its first in-range tap (not at the padding: index -1 and a lost
  gradient), and max_unpool puts the value back there;
* a window holding several NaNs gives the index of the LAST one (``argmax`` stops at the
  first), for max_pool1d/2d/3d, adaptive and fractional max pooling alike.

Ties of finite values keep the first tap. Inputs are drawn from {-inf, NaN, -1, 0, 1} so
most windows hit one of the rules; values, indices and the input's gradient are compared
exactly with torch. The NumPy kernels run every case; the native kernel only sees its own
geometry (the unpadded 2x2 window at stride 2), where a call counter proves it ran.
"""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from native_support import MODES, kernels_counted, needs_numba

TF = torch.nn.functional
INF, NAN = np.inf, np.nan

# probabilities of (-inf, nan, -1, 0, 1) per kind of input
KINDS = {
    'minus_inf': (0.85, 0.0, 0.05, 0.05, 0.05),
    'all_minus_inf': (1.0, 0.0, 0.0, 0.0, 0.0),
    'nan': (0.1, 0.35, 0.2, 0.2, 0.15),
    'mixed': (0.4, 0.2, 0.15, 0.15, 0.1),
    'ties': (0.0, 0.0, 0.3, 0.4, 0.3),
}
SHAPES = {1: (2, 3, 11), 2: (2, 3, 7, 8), 3: (1, 2, 5, 6, 5)}

# (d, kernel_size, stride, padding, dilation, ceil_mode)
GEOMETRIES = [
    (1, 3, 2, 1, 1, False), (1, 2, 2, 1, 1, True), (1, 3, 2, 1, 2, False),
    (1, 4, 3, 2, 1, True), (1, 3, 1, 1, 1, False),
    (2, 3, 2, 1, 1, False), (2, 2, 2, 1, 1, True), (2, 3, 1, 1, 1, False),
    (2, (3, 2), (2, 1), (1, 1), (2, 1), True), (2, 5, 3, 2, 1, True),
    (3, 3, 2, 1, 1, False), (3, 2, 2, 1, 1, True), (3, 3, 2, 1, 2, False),
    (2, 2, 2, 0, 1, False), (2, 2, 2, 0, 1, True), (2, 3, 2, 0, 1, True),
]
NATIVE_GEOMETRIES = [(2, 2, 2, 0, 1, False)]   # the geometry the native kernel serves


def kernels_mode(mode):
    """``mode``'s kernels; counts the native max_pool kernels' calls under 'native'."""
    return kernels_counted(mode, ('max_pool', 'max_pool_backward'))


def edge_input(shape, kind, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-INF, NAN, -1.0, 0.0, 1.0]), size=shape,
                      p=KINDS[kind]).astype(dtype)


def through_dynagrad(fn, x, g, mode):
    """``fn(x)``'s (values, indices, input gradient for upstream ``g``) and the calls."""
    with kernels_mode(mode) as calls:
        a = dynagrad.tensor(x, requires_grad=True)
        y, idx = fn(a)
        y.backward(dynagrad.tensor(g))
    return y.detach().numpy(), idx.numpy(), a.grad.numpy(), calls


def through_torch(fn, x, g):
    t = torch.tensor(x, requires_grad=True)
    y, idx = fn(t)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), idx.numpy(), t.grad.numpy()


def assert_as_torch(fn_dynagrad, fn_torch, x, mode, seed=0):
    g = _upstream(fn_torch, x, seed)
    ty, tidx, tgx = through_torch(fn_torch, x, g)
    y, idx, gx, calls = through_dynagrad(fn_dynagrad, x, g, mode)
    np.testing.assert_array_equal(y, ty)        # NaN where torch has NaN
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, tidx)
    # each input gathers the gradients of the windows pointing at it: sums in any order,
    # with cancellation (upstream values are N(0, 1))
    np.testing.assert_allclose(gx, tgx, rtol=1e-6, atol=16 * np.finfo(x.dtype).eps)
    return calls


def _upstream(fn_torch, x, seed):
    with torch.no_grad():
        shape = fn_torch(torch.tensor(x))[0].shape
    return np.random.default_rng(seed + 100).standard_normal(tuple(shape)).astype(x.dtype)


def _pool_fns(d, k, s, p, dil, ceil):
    name = f'max_pool{d}d'
    return (lambda a: getattr(F, name)(a, k, s, p, dil, ceil, True),
            lambda t: getattr(TF, name)(t, k, s, p, dil, ceil, True))


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('kind', sorted(KINDS))
@pytest.mark.parametrize('geometry', GEOMETRIES)
def test_max_pool_edge_values_numpy_kernels(geometry, kind, dtype):
    d = geometry[0]
    x = edge_input(SHAPES[d], kind, seed=len(kind) * 7 + d, dtype=dtype)
    assert_as_torch(*_pool_fns(*geometry), x, 'numpy', seed=d)


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('kind', sorted(KINDS))
@pytest.mark.parametrize('geometry', NATIVE_GEOMETRIES)
def test_max_pool_edge_values_native_kernels(geometry, kind, dtype):
    x = edge_input((2, 3, 8, 10), kind, seed=len(kind), dtype=dtype)
    calls = assert_as_torch(*_pool_fns(*geometry), x, 'native')
    assert calls == {'max_pool': 1, 'max_pool_backward': 1}


@needs_numba
def test_the_two_paths_agree_on_the_native_geometry():
    """The NumPy path and the kernel give the same values and indices where both run."""
    x = edge_input((3, 4, 10, 12), 'mixed', seed=5, dtype=np.float32)
    with kernels_mode('numpy'):
        ref = [r.numpy() for r in F.max_pool2d(dynagrad.tensor(x), 2, return_indices=True)]
    with kernels_mode('native') as calls:
        got = [r.numpy() for r in F.max_pool2d(dynagrad.tensor(x), 2, return_indices=True)]
    assert calls == {'max_pool': 1}
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


def test_minus_inf_window_beside_padding_written_out():
    """The reported case, spelled out: index 0 (the first in-range tap), not -1, and the
    window's gradient lands on it."""
    x = np.array([[[-INF, -INF, 1.0, 2.0, -INF]]])
    with kernels_mode('numpy'):
        a = dynagrad.tensor(x, requires_grad=True)
        y, idx = F.max_pool1d(a, 3, 2, 1, return_indices=True)
        y.sum().backward()
    np.testing.assert_array_equal(idx.numpy(), [[[0, 3, 3]]])
    np.testing.assert_array_equal(a.grad.numpy(), [[[1.0, 0.0, 0.0, 2.0, 0.0]]])


def test_several_nans_written_out():
    x = np.array([[[NAN, 1.0, NAN, NAN, 3.0, NAN]]])
    with kernels_mode('numpy'):
        idx = F.max_pool1d(dynagrad.tensor(x), 3, 3, return_indices=True)[1]
    np.testing.assert_array_equal(idx.numpy(), [[[2, 5]]])


@pytest.mark.parametrize('geometry', [(1, 3, 2, 1, 1, False), (2, 3, 2, 1, 1, True),
                                      (3, 3, 2, 1, 2, False), (2, 2, 2, 0, 1, True)])
def test_integer_lowest_value_windows(geometry):
    """Integers: the dtype's lowest value plays -inf's part (no gradient)."""
    d = geometry[0]
    low = np.iinfo(np.int64).min
    x = np.where(edge_input(SHAPES[d], 'minus_inf', seed=d) == -INF, low,
                 np.arange(np.prod(SHAPES[d])).reshape(SHAPES[d]) % 5).astype(np.int64)
    fd, ft = _pool_fns(*geometry)
    with kernels_mode('numpy'):
        y, idx = fd(dynagrad.tensor(x))
    ty, tidx = ft(torch.tensor(x))
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


@pytest.mark.parametrize('kind', ['nan', 'mixed', 'all_minus_inf', 'ties'])
@pytest.mark.parametrize('d,out', [(1, 4), (1, 3), (2, (3, 5)), (2, 2), (3, (2, 4, 3))])
def test_adaptive_max_pool_edge_values(d, out, kind):
    name = f'adaptive_max_pool{d}d'
    x = edge_input(SHAPES[d], kind, seed=d + len(kind))
    assert_as_torch(lambda a: getattr(F, name)(a, out, True),
                    lambda t: getattr(TF, name)(t, out, True), x, 'numpy')


@pytest.mark.parametrize('kind', ['nan', 'mixed', 'all_minus_inf', 'ties'])
@pytest.mark.parametrize('d,k,out', [(2, 2, (4, 5)), (2, (3, 2), 3), (3, 2, (3, 3, 2))])
def test_fractional_max_pool_edge_values(d, k, out, kind):
    name = f'fractional_max_pool{d}d'
    shape = {2: (2, 3, 9, 10), 3: (1, 2, 6, 6, 5)}[d]
    x = edge_input(shape, kind, seed=d * 3 + len(kind))
    samples = np.random.default_rng(d).random(shape[:2] + (d,))
    assert_as_torch(
        lambda a: getattr(F, name)(a, k, out, return_indices=True,
                                   _random_samples=dynagrad.tensor(samples)),
        lambda t: getattr(TF, name)(t, k, out, return_indices=True,
                                    _random_samples=torch.tensor(samples)), x, 'numpy')


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('d,k,s,p', [(1, 3, 2, 1), (2, 3, 2, 1), (3, 2, 2, 1), (2, 2, 2, 0)])
def test_max_unpool_puts_edge_windows_back_as_torch(d, k, s, p, mode):
    """max_unpool of max_pool's output: a -inf window's value goes back to its first
    in-range tap (an index of -1 wrote it at the end of the plane), a NaN window's to its
    last NaN; the gradient is the gather at those indices."""
    x = edge_input(SHAPES[d], 'mixed', seed=20 + d)
    size = x.shape[-d:]

    def run(pool, unpool, leaf):
        y, idx = pool(leaf, k, s, p, return_indices=True)
        return unpool(y, idx, k, s, p, output_size=size)

    with kernels_mode(mode):
        a = dynagrad.tensor(x, requires_grad=True)
        u = run(getattr(F, f'max_pool{d}d'), getattr(F, f'max_unpool{d}d'), a)
        g = np.random.default_rng(d).standard_normal(u.shape)
        u.backward(dynagrad.tensor(g))
    t = torch.tensor(x, requires_grad=True)
    tu = run(getattr(TF, f'max_pool{d}d'), getattr(TF, f'max_unpool{d}d'), t)
    tu.backward(torch.tensor(g))
    np.testing.assert_array_equal(u.detach().numpy(), tu.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize('return_indices', [False, True])
@pytest.mark.parametrize('d', [1, 2, 3])
@pytest.mark.parametrize('k,p,dil', [(2, 2, 3), (3, 2, 2), (4, 2, 3), (3, 2, 1), (5, 3, 1),
                                     (2, 1, 1), (3, 1, 2), ('last', 2, 1), ('last', 2, 3),
                                     ('first', 2, 3)])
def test_max_pool_padding_bound_as_torch(k, p, dil, d, return_indices):
    """PyTorch refuses padding over half the dilated window first, then (max pooling only)
    over half the kernel itself: padding the dilation would allow is an error too (those
    windows can miss the input). max_pool1d without indices has its own check and words."""
    if k == 'last':    # only the last axis over the bound
        k, p = (2,) * (d - 1) + (3,), (1,) * (d - 1) + (p,)
    elif k == 'first':
        k, p = (3,) + (2,) * (d - 1), (p,) + (1,) * (d - 1)
    shape = (1, 2) + (9,) * d

    def outcome(lib, x):
        try:
            getattr(lib, f'max_pool{d}d')(x, k, 1, p, dil, return_indices=return_indices)
        except RuntimeError as e:
            return str(e)
        return None
    expected = outcome(TF, torch.zeros(shape))
    got = outcome(F, dynagrad.zeros(shape))
    if expected is None:
        assert got is None
    else:
        assert got is not None and expected in got, (expected, got)
