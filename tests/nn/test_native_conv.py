"""The native convolution and max-pooling kernels (``dynagrad.native.conv``, ``.pooling``):
im2col/col2im under conv1d/2d/3d, conv_transpose, unfold and fold, and max pooling's forward
(values and PyTorch's flat argmax indices) and backward, each checked with the kernels on and
off, against torch and against the NumPy path.

The conformance table's rows of those ops run in both kernel modes first; then a grid of
geometries (stride, padding, dilation, groups, ceil_mode, odd sizes, float32 and float64)
compares values and every gradient three ways; then the kernel at the edge values (a window
of -inf beside padding, several NaNs in one window: PyTorch's rules, which the NumPy path
follows too) and the 2x2 pooling kernel against the generic one.
"""
import itertools

import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad.autograd import gradcheck

from native_support import table_columns, kernels_mode, needs_numba
from ops import test_conformance as conformance

CONV_KERNELS = ('im2col', 'col2im', 'conv_forward', 'conv_backward', 'max_pool',
                'max_pool_backward')
# (the table's conv rows need the weight's gradient: conv2d_direct is tested below)

# the table's rows whose ops reach these kernels
KERNEL_OPS = ('conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
              'conv_transpose3d', 'toplevel.conv1d', 'toplevel.conv2d', 'toplevel.conv3d',
              'toplevel.conv_transpose1d', 'toplevel.conv_transpose2d',
              'toplevel.conv_transpose3d', 'toplevel.convolution', 'toplevel.conv_tbc',
              'unfold', 'fold', 'nn.functional.max_pool1d', 'nn.functional.max_pool2d',
              'nn.functional.max_pool3d', 'nn.functional.max_pool1d_with_indices',
              'nn.functional.max_pool2d_with_indices', 'nn.functional.max_pool3d_with_indices',
              'toplevel.max_pool1d', 'toplevel.max_pool1d_with_indices', 'toplevel.max_pool2d')
ROWS, GRADCHECK_ROWS, test_row, test_row_gradcheck = table_columns(KERNEL_OPS)


def test_rows_exist():
    assert {p.values[0].name for p in ROWS} == set(KERNEL_OPS)
    assert len(GRADCHECK_ROWS) > 10




@needs_numba
@pytest.mark.filterwarnings('ignore::UserWarning')
@pytest.mark.filterwarnings('ignore::FutureWarning')
@pytest.mark.parametrize('kernels', ['native'], indirect=True)
def test_the_native_column_runs_the_kernels(kernels):
    """The rows above really reach the kernels (forward and backward of each)."""
    for op, sample, i in (p.values for p in ROWS):
        if sample.has_float_input and not sample.has_empty:
            conformance.check_row(op, sample, i)
    assert set(CONV_KERNELS) <= set(kernels), sorted(kernels)


# -- a grid of geometries: native against the NumPy path and torch ------------------------

def _run(fn, arrays, g, mode):
    """``fn``'s output and its inputs' gradients for upstream ``g``, with ``mode`` kernels."""
    with kernels_mode(mode):
        leaves = [dynagrad.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        out.backward(dynagrad.tensor(g))
        return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


def _torch(fn, arrays, g):
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    out.backward(torch.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)


def _three_ways(fn_of_lib, arrays, out_shape_of, dtype, seed):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(out_shape_of).astype(dtype)
    nat = _run(fn_of_lib(dynagrad), arrays, g, 'native')
    ref = _run(fn_of_lib(dynagrad), arrays, g, 'numpy')
    tor = _torch(fn_of_lib(torch), arrays, g)
    for k, (a, b, c) in enumerate(zip(nat, ref, tor)):
        assert a.dtype == b.dtype == dtype
        assert a.shape == c.shape
        np.testing.assert_allclose(a, c, err_msg=f'output {k} vs torch', **_tol(dtype))
        np.testing.assert_allclose(a, b, err_msg=f'output {k} vs NumPy path', **_tol(dtype))


CONV_GRID = [  # d, (N, C, O, groups), size, kernel, stride, padding, dilation
    (d, ncog, size, k, s, p, dil)
    for d, ncog, size, k, s, p, dil in itertools.product(
        (1, 2, 3), ((2, 4, 6, 1), (3, 6, 4, 2), (1, 3, 3, 3)), (5, 8), (1, 2, 3), (1, 2),
        (0, 1, 2), (1, 2))
    if size + 2 * p >= dil * (k - 1) + 1 and (d < 3 or (size == 5 and dil == 1))]


def _conv(d, s, p, dil, groups):
    def make(lib):
        f = F if lib is dynagrad else torch.nn.functional
        conv = getattr(f, f'conv{d}d')
        return lambda x, w, b: conv(x, w, b, stride=s, padding=p, dilation=dil, groups=groups)
    return make


def _conv_out(size, k, s, p, dil):
    return (size + 2 * p - dil * (k - 1) - 1) // s + 1


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('d,ncog,size,k,s,p,dil', CONV_GRID)
def test_conv_against_numpy_path_and_torch(d, ncog, size, k, s, p, dil, dtype):
    """Output and input, weight and bias gradients of conv{1,2,3}d."""
    N, C, O, groups = ncog
    rng = np.random.default_rng(size * 7 + k)
    # an odd shape on the last axis: size + 1
    spatial = (size,) * (d - 1) + (size + 1,)
    x = rng.standard_normal((N, C) + spatial).astype(dtype)
    w = rng.standard_normal((O, C // groups) + (k,) * d).astype(dtype)
    b = rng.standard_normal(O).astype(dtype)
    out = (N, O) + tuple(_conv_out(n, k, s, p, dil) for n in spatial)
    _three_ways(_conv(d, s, p, dil, groups), [x, w, b], out, dtype, seed=k)


# the direct convolution (native/conv_direct.py): 2-d, stride 1, one group, where the
# weight needs no gradient; output channels around its tile of 8, odd widths (the flat
# positions past the output's width), padding on one side, dilation, 1x1 to 5x5 windows
DIRECT_GRID = [  # (N, C, O), (H, W), kernel, padding, dilation
    ((2, 3, 5), (7, 9), (3, 3), (1, 1), (1, 1)),
    ((1, 1, 8), (5, 5), (1, 1), (0, 0), (1, 1)),
    ((3, 4, 17), (10, 13), (5, 3), (2, 0), (1, 2)),
    ((2, 16, 32), (13, 13), (3, 3), (0, 0), (1, 1)),
    ((1, 2, 9), (4, 30), (2, 4), (1, 3), (2, 1)),
    ((2, 5, 1), (6, 6), (3, 3), (0, 0), (2, 2)),
]


def _direct_calls(monkeypatch):
    """Counts the direct kernel's calls (through the one dispatch point)."""
    from dynagrad import backend
    calls = []
    load = backend.native_kernel

    def counting(name, array):
        kernel = load(name, array)
        if name == 'conv2d_direct' and kernel is not None:
            def counted(*args):
                calls.append(args[0].shape)
                return kernel(*args)
            return counted
        return kernel
    monkeypatch.setattr('dynagrad.nn.functional.conv.native_kernel', counting)
    return calls


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('sizes,spatial,k,p,dil', DIRECT_GRID)
def test_direct_convolution_against_numpy_path_and_torch(sizes, spatial, k, p, dil, dtype,
                                                         monkeypatch):
    """Under no_grad, and with only the input needing a gradient (a frozen layer): the
    output (and the input's gradient, by the transposed convolution) as torch's and as
    the NumPy path's; the direct kernel ran in both."""
    N, C, O = sizes
    rng = np.random.default_rng(O * 7 + C)
    x = rng.standard_normal((N, C) + spatial).astype(dtype)
    w = rng.standard_normal((O, C) + k).astype(dtype)
    b = rng.standard_normal(O).astype(dtype)
    calls = _direct_calls(monkeypatch)

    def frozen(lib):
        f = F if lib is dynagrad else torch.nn.functional
        weight, bias = lib.tensor(w), lib.tensor(b)
        return lambda a: f.conv2d(a, weight, bias, padding=p, dilation=dil)
    out_shape = tuple(tuple(frozen(torch)(torch.tensor(x)).shape))
    g = rng.standard_normal(out_shape).astype(dtype)
    nat = _run(frozen(dynagrad), [x], g, 'native')
    ref = _run(frozen(dynagrad), [x], g, 'numpy')
    tor = _torch(frozen(torch), [x], g)
    for k_, (a, r, c) in enumerate(zip(nat, ref, tor)):
        assert a.dtype == dtype and a.shape == c.shape
        np.testing.assert_allclose(a, c, err_msg=f'output {k_} vs torch', **_tol(dtype))
        np.testing.assert_allclose(a, r, err_msg=f'output {k_} vs NumPy path', **_tol(dtype))
    with kernels_mode('native'), dynagrad.no_grad():
        y = frozen(dynagrad)(dynagrad.tensor(x))
    np.testing.assert_allclose(y.numpy(), tor[0], **_tol(dtype))
    assert y.is_contiguous()
    assert len(calls) == 2


@needs_numba
def test_direct_convolution_only_where_it_applies(monkeypatch):
    """A weight needing its gradient keeps im2col (its columns feed the weight gradient);
    stride 2, groups, 1-d and 3-d do too."""
    calls = _direct_calls(monkeypatch)
    x = dynagrad.randn(2, 4, 8, 8)
    w = dynagrad.randn(6, 4, 3, 3)
    with kernels_mode('native'):
        F.conv2d(x, w.requires_grad_()).sum().backward()
        w = w.detach()
        with dynagrad.no_grad():
            F.conv2d(x, w, stride=2)
            F.conv2d(x, dynagrad.randn(6, 2, 3, 3), groups=2)
            F.conv1d(dynagrad.randn(2, 4, 8), dynagrad.randn(6, 4, 3))
            F.conv3d(dynagrad.randn(1, 4, 5, 5, 5), dynagrad.randn(6, 4, 3, 3, 3))
        assert calls == []
        with dynagrad.no_grad():
            F.conv2d(x, w, dynagrad.randn(6))
        assert calls == [(2, 4, 8, 8)]


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('s,p,op,dil,groups', [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1),
                                                (2, 0, 1, 2, 2), (3, 2, 0, 1, 1)])
def test_conv_transpose2d_against_numpy_path_and_torch(s, p, op, dil, groups, dtype):
    """The transposed convolution: col2im in its forward, im2col in its input gradient."""
    rng = np.random.default_rng(s + p)
    x = rng.standard_normal((2, 4, 5, 6)).astype(dtype)
    w = rng.standard_normal((4, 6 // groups, 3, 3)).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)

    def make(lib):
        f = F if lib is dynagrad else torch.nn.functional
        return lambda x, w, b: f.conv_transpose2d(x, w, b, s, p, op, groups, dil)
    out = tuple(torch.nn.functional.conv_transpose2d(
        *(torch.tensor(a) for a in (x, w, b)), s, p, op, groups, dil).shape)
    _three_ways(make, [x, w, b], out, dtype, seed=3)


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('k,dil,p,s', [((2, 3), 1, 0, 1), ((3, 3), (2, 1), 1, 2), (1, 1, 0, 1)])
def test_unfold_fold_against_numpy_path_and_torch(k, dil, p, s, dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 7, 8)).astype(dtype)

    def unfold(lib):
        f = F if lib is dynagrad else torch.nn.functional
        return lambda x: f.unfold(x, k, dil, p, s)
    cols = torch.nn.functional.unfold(torch.tensor(x), k, dil, p, s)
    _three_ways(unfold, [x], tuple(cols.shape), dtype, seed=6)

    def fold(lib):
        f = F if lib is dynagrad else torch.nn.functional
        return lambda c: f.fold(c, (7, 8), k, dil, p, s)
    c = rng.standard_normal(tuple(cols.shape)).astype(dtype)
    _three_ways(fold, [c], (2, 3, 7, 8), dtype, seed=7)


@needs_numba
def test_conv_double_backward_as_torch():
    """Gradients of gradients (create_graph) run through the same kernels."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 6, 7))
    w = rng.standard_normal((4, 3, 3, 3))
    results = []
    for lib in (dynagrad, torch):
        f = F if lib is dynagrad else torch.nn.functional
        xt, wt = (lib.tensor(a, requires_grad=True) for a in (x, w))
        with kernels_mode('native'):
            y = f.conv2d(xt, wt, stride=2, padding=1)
            gx, gw = lib.autograd.grad((y * y).sum(), (xt, wt), create_graph=True)
            (gx.square().sum() + gw.square().sum()).backward()
        results.append([a.detach().numpy() for a in (gx, gw, xt.grad, wt.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@needs_numba
@pytest.mark.parametrize('fn', ['conv2d', 'conv1d'])
def test_conv_gradcheck_native(fn):
    rng = np.random.default_rng(9)
    d = 2 if fn == 'conv2d' else 1
    x = dynagrad.tensor(rng.standard_normal((2, 4) + (5,) * d), requires_grad=True)
    w = dynagrad.tensor(rng.standard_normal((4, 2) + (3,) * d), requires_grad=True)
    b = dynagrad.tensor(rng.standard_normal(4), requires_grad=True)
    conv = getattr(F, fn)
    with kernels_mode('native'):
        assert gradcheck(lambda x, w, b: conv(x, w, b, stride=2, padding=1, dilation=1,
                                              groups=2), (x, w, b))


# -- max pooling ------------------------------------------------------------------------

POOL_GRID = [
    (d, size, k, s, p, dil, ceil)
    for d, size, k, s, p, dil, ceil in itertools.product(
        (1, 2, 3), (5, 8), (1, 2, 3), (None, 1, 2), (0, 1), (1, 2), (False, True))
    if 2 * p <= dil * (k - 1) + 1 and size + 2 * p >= dil * (k - 1) + 1
    and (d < 3 or size == 5)]


def _pool(d, k, s, p, dil, ceil):
    def make(lib):
        f = F if lib is dynagrad else torch.nn.functional
        pool = getattr(f, f'max_pool{d}d')
        return lambda x: pool(x, k, s, p, dil, ceil)
    return make


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('d,size,k,s,p,dil,ceil', POOL_GRID)
def test_max_pool_against_numpy_path_and_torch(d, size, k, s, p, dil, ceil, dtype):
    """Values, indices (exactly torch's) and the input gradient; overlapping windows
    (stride < kernel) add up where they share a winner."""
    rng = np.random.default_rng(size + k)
    x = rng.standard_normal((2, 3) + (size,) * (d - 1) + (size + 1,)).astype(dtype)
    out = tuple(torch.nn.functional.__dict__[f'max_pool{d}d'](
        torch.tensor(x), k, s, p, dil, ceil).shape)
    _three_ways(_pool(d, k, s, p, dil, ceil), [x], out, dtype, seed=size)
    with kernels_mode('native'):
        y, idx = getattr(F, f'max_pool{d}d')(dynagrad.tensor(x), k, s, p, dil, ceil, True)
    t = torch.tensor(x, requires_grad=True)
    ty, tidx = getattr(torch.nn.functional, f'max_pool{d}d')(t, k, s, p, dil, ceil, True)
    assert idx.dtype == dynagrad.int64
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    # the kernel itself, whatever geometry the op sends it (only 2x2 at stride 2 now)
    got_y, got_idx, got_gx, _ = _native_pool(x, d, k, s, p, dil, out, ty.shape)
    g = np.random.default_rng(size).standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    got_gx = _native_pool(x, d, k, s, p, dil, out, ty.shape, g)[2]
    np.testing.assert_array_equal(got_y, ty.detach().numpy())
    np.testing.assert_array_equal(got_idx, tidx.numpy())
    np.testing.assert_allclose(got_gx, t.grad.numpy(), **_tol(dtype))


def _native_pool(x, d, k, s, p, dil, out, out_shape, g=None):
    """``dynagrad.native.pooling``'s max_pool and its backward called directly (the op
    sends only the 2x2 stride-2 geometry to them): values, indices, the input gradient
    for ``g`` (ones when None)."""
    from dynagrad.native import pooling
    one = lambda v, default: (default,) * d if v is None else (v,) * d   # noqa: E731
    y, idx = pooling.max_pool(x, (k,) * d, one(s, k), (p,) * d, (dil,) * d,
                              tuple(out_shape)[-d:])
    g = np.ones(y.shape, x.dtype) if g is None else g
    gx = pooling.max_pool_backward(g, idx, x.shape, d)
    return y, idx, gx, g


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shape', [(2, 3, 8, 10), (3, 9, 7), (1, 1, 2, 2), (4, 2, 26, 26)])
def test_max_pool2d_2x2_kernel_against_the_generic_one(shape, dtype):
    """The constant-size 2x2 kernel (stride 2, no padding) gives the generic kernel's values
    and indices, odd sizes (a dropped last row or column), ties, NaN and -inf included."""
    from dynagrad.native import pooling
    rng = np.random.default_rng(10)
    x = rng.integers(-3, 3, shape).astype(dtype)     # many ties
    x.reshape(-1)[::11] = np.nan
    x.reshape(-1)[3::7] = -np.inf
    out = tuple(n // 2 for n in shape[-2:])
    fast = pooling.max_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), out)
    rows = int(np.prod(shape[:-2]))
    y, idx = np.empty(fast[0].shape, x.dtype), np.empty(fast[1].shape, np.int64)
    pooling._max_pool(x.reshape(-1), y.reshape(-1), idx.reshape(-1), (rows, 1) + shape[-2:],
                      (1, 2, 2), (1,) + out, (1, 2, 2), (0, 0, 0), (1, 1, 1))
    np.testing.assert_array_equal(fast[0], y)
    np.testing.assert_array_equal(fast[1], idx)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(fast[0], ty.numpy())
    np.testing.assert_array_equal(fast[1], ti.numpy())


@needs_numba
@pytest.mark.parametrize('d', [1, 2, 3])
def test_max_pool_nan_and_minus_inf_windows_as_torch(d):
    """A window holding NaN gives NaN at its last NaN's index, a window of -inf beside
    padding keeps its first in-range tap, and the gradient goes where the index says
    (the NumPy path's side: tests/nn/test_pooling_edge_values.py)."""
    x = np.random.default_rng(11).standard_normal((2, 2) + (6,) * d).astype(np.float32)
    flat = x.reshape(4, -1)
    flat[0, 1] = flat[0, 2] = np.nan
    flat[1, :4] = -np.inf
    flat[2, -3:] = -np.inf
    flat[3, ::2] = np.nan
    k, s, p = 3, 2, 1
    t = torch.tensor(x, requires_grad=True)
    ty, tidx = getattr(torch.nn.functional, f'max_pool{d}d')(t, k, s, p, return_indices=True)
    g = np.random.default_rng(12).standard_normal(ty.shape).astype(np.float32)
    ty.backward(torch.tensor(g))
    y, idx, gx, _ = _native_pool(x, d, k, s, p, 1, ty.shape, ty.shape, g)
    np.testing.assert_array_equal(y, ty.detach().numpy())
    np.testing.assert_array_equal(idx, tidx.numpy())
    np.testing.assert_array_equal(gx, t.grad.numpy())


@needs_numba
def test_max_pool2d_op_with_nan_windows_as_torch():
    """Through the op (2x2, stride 2: the native geometry), several NaNs in one window:
    the last one's index, as torch."""
    x = np.random.default_rng(16).standard_normal((2, 3, 6, 7)).astype(np.float32)
    x[0, 0, 0, :2] = np.nan
    x[1, 2, 2:4, 4] = np.nan
    with kernels_mode('native'):
        a = dynagrad.tensor(x, requires_grad=True)
        y, idx = F.max_pool2d(a, 2, return_indices=True)
        y.backward(dynagrad.ones(y.shape))
    t = torch.tensor(x, requires_grad=True)
    ty, tidx = torch.nn.functional.max_pool2d(t, 2, return_indices=True)
    ty.backward(torch.ones(ty.shape))
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())


@needs_numba
def test_max_pool_gradcheck_and_double_backward_native():
    """Backward of the kernel's backward (a gather at the indices), and gradcheck."""
    rng = np.random.default_rng(13)
    x = dynagrad.tensor(rng.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 7.0,
                        requires_grad=True)
    with kernels_mode('native'):
        assert gradcheck(lambda x: F.max_pool2d(x, 2), (x,))
        y = F.max_pool2d(x, 2)
        g = dynagrad.ones(y.shape, dtype=y.dtype, requires_grad=True)
        gx, = dynagrad.autograd.grad(y, x, g, create_graph=True)
        gg, = dynagrad.autograd.grad((gx * x).sum(), g)
    np.testing.assert_array_equal(gg.numpy(), y.detach().numpy())


@needs_numba
def test_integer_and_low_precision_inputs_keep_the_numpy_path():
    """Only float32/float64 NumPy arrays reach a kernel: integer pooling and bfloat16
    convolution give what they gave before."""
    x = np.arange(2 * 3 * 6 * 6).reshape(2, 3, 6, 6)
    with kernels_mode('native'):
        y = F.max_pool2d(dynagrad.tensor(x), 2)
    np.testing.assert_array_equal(y.numpy(),
                                  torch.nn.functional.max_pool2d(torch.tensor(x), 2).numpy())
    xb = np.random.default_rng(14).standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = np.random.default_rng(15).standard_normal((3, 2, 3, 3)).astype(np.float32)
    with kernels_mode('native'):
        got = F.conv2d(dynagrad.tensor(xb).bfloat16(), dynagrad.tensor(w).bfloat16()).float()
    with kernels_mode('numpy'):
        ref = F.conv2d(dynagrad.tensor(xb).bfloat16(), dynagrad.tensor(w).bfloat16()).float()
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
