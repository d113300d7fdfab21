"""Paths taken by small tensors (batch-1 inference: a GPT sampling token by token): each
checked against torch, against the NumPy path, and shown to be the path that ran.

F.linear on up to 64 rows runs the native kernel ``linear`` (dynagrad.native.linalg)
instead of BLAS's transposed-operand product."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad import native
from native_support import kernels_counted, kernels_mode, needs_numba



@pytest.fixture
def native_calls():
    """Native kernels on; counts the calls of each."""
    with kernels_counted('native') as calls:
        yield calls


def _numpy_path(fn):
    with kernels_mode('numpy'):
        return fn()


TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _linear_both(x, w, b):
    out = F.linear(dynagrad.tensor(x), dynagrad.tensor(w),
                   None if b is None else dynagrad.tensor(b))
    ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w),
                                     None if b is None else torch.tensor(b))
    return out, ref


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('lead', [(), (1,), (3,), (1, 5), (2, 8), (1, 64), (16, 4)])
@pytest.mark.parametrize('n_out', [1, 3, 4, 7, 65])
@pytest.mark.parametrize('bias', [True, False])
def test_linear_few_rows_matches_torch(native_calls, dtype, lead, n_out, bias):
    rng = np.random.default_rng(len(lead) * 100 + n_out)
    n_in = 37
    x = rng.standard_normal(lead + (n_in,)).astype(dtype)
    w = rng.standard_normal((n_out, n_in)).astype(dtype)
    b = rng.standard_normal(n_out).astype(dtype) if bias else None
    out, ref = _linear_both(x, w, b)
    assert native_calls.get('linear') == 1
    assert out.shape == ref.shape
    assert out.dtype == (dynagrad.float32 if dtype is np.float32 else dynagrad.float64)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), **TOL[dtype])
    blas = _numpy_path(lambda: _linear_both(x, w, b)[0])
    np.testing.assert_allclose(out.numpy(), blas.numpy(), **TOL[dtype])


@needs_numba
def test_linear_many_rows_keep_blas(native_calls):
    x = np.ones((65, 8), np.float32)
    out, ref = _linear_both(x, np.ones((4, 8), np.float32), None)
    assert 'linear' not in native_calls
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


@needs_numba
def test_linear_layouts_and_broadcast_bias(native_calls):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3, 9)).astype(np.float32)
    w = rng.standard_normal((5, 9)).astype(np.float32)
    x_t = dynagrad.tensor(x).transpose(0, 1)            # not contiguous: copied for the kernel
    ref = torch.nn.functional.linear(torch.tensor(x).transpose(0, 1), torch.tensor(w))
    out = F.linear(x_t, dynagrad.tensor(w))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), **TOL[np.float32])
    assert native_calls.pop('linear') == 1
    # a transposed weight is already BLAS's fast layout: no kernel
    w_t = dynagrad.tensor(np.ascontiguousarray(w.T)).t()
    out = F.linear(dynagrad.tensor(x), w_t)
    ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), **TOL[np.float32])
    assert 'linear' not in native_calls
    # a bias of one value broadcasts after the kernel's product
    b1 = np.array([0.25], np.float32)
    out, ref = _linear_both(x, w, b1)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), **TOL[np.float32])
    assert native_calls.pop('linear') == 1


@needs_numba
def test_linear_few_rows_non_finite(native_calls):
    x = np.array([[np.inf, 1.0, 2.0], [np.nan, 0.0, 1.0], [1.0, 2.0, 3.0]], np.float32)
    w = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [2.0, 2.0, 2.0],
                  [1e38, 1e38, 0.0]], np.float32)
    b = np.array([1.0, -np.inf, 0.0, np.inf, 0.0], np.float32)
    out, ref = _linear_both(x, w, b)
    assert native_calls.get('linear') == 1
    np.testing.assert_array_equal(np.isnan(out.numpy()), np.isnan(ref.numpy()))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)


@needs_numba
@pytest.mark.parametrize('bias', [True, False])
def test_linear_few_rows_gradients(native_calls, bias):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 5, 12))
    w = rng.standard_normal((10, 12))
    b = rng.standard_normal(10)
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ds = [dynagrad.tensor(a, requires_grad=True) for a in (x, w, b)]
    g = rng.standard_normal((1, 5, 10))
    torch.nn.functional.linear(ts[0], ts[1], ts[2] if bias else None).backward(torch.tensor(g))
    F.linear(ds[0], ds[1], ds[2] if bias else None).backward(dynagrad.tensor(g))
    assert native_calls.get('linear') == 1
    for d, t in zip(ds if bias else ds[:2], ts):
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert dynagrad.autograd.gradcheck(
        lambda a, c, e: F.linear(a, c, e if bias else None),
        [dynagrad.tensor(a, requires_grad=True) for a in (x, w, b)])


@needs_numba
def test_linear_module_under_no_grad_half_widened(native_calls):
    """float16 is computed in float32 (the kernel's dtype) and rounded once."""
    dynagrad.manual_seed(0)
    lin = dynagrad.nn.Linear(16, 6)
    x = dynagrad.randn(2, 16)
    with dynagrad.no_grad():
        out16 = F.linear(x.half(), lin.weight.half(), lin.bias.half())
    ref = torch.nn.functional.linear(torch.tensor(x.numpy()).half(),
                                     torch.tensor(lin.weight.detach().numpy()).half(),
                                     torch.tensor(lin.bias.detach().numpy()).half())
    assert out16.dtype == dynagrad.float16
    np.testing.assert_allclose(out16.float().numpy(), ref.float().numpy(), rtol=2e-3, atol=2e-3)
    assert native_calls.get('linear') == 1


# -- x[key] with a plain key (Python ints, slices of ints, None, Ellipsis) skips the key's
#    normalising; results, views, node names and refusals stay torch's. torch skips a slice
#    only as written (start 0 or None, stop reaching the end, step 1): x[:, -64:] of 4 columns
#    records SliceBackward0 (it was AliasBackward0 here before)

PLAIN_KEYS = [(slice(None), slice(-64, None)), (slice(None), slice(-4, None)), (slice(None), -1, slice(None)), (0,), -1,
              slice(1, None, 2), (slice(None), slice(None, 1), slice(None, 1)),
              (None, 1), (Ellipsis, -1), (1, Ellipsis, None, slice(0, 2)), (slice(5, 1),),
              (slice(-100, 100),), (slice(0, 100),), (), (slice(None), None, -2), Ellipsis, (2, 1, 0)]


@pytest.mark.parametrize('key', PLAIN_KEYS, ids=repr)
def test_plain_getitem_matches_torch(key):
    a = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    x = dynagrad.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    out, ref = x[key], t[key]
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    assert out._base is x or out._base is x._base   # a view of x
    g = np.arange(ref.numel(), dtype=np.float32).reshape(tuple(ref.shape))
    out.backward(dynagrad.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize('key', [3, -4, (0, 4), (0, 0, -6), (0, 0, 0, 0), (Ellipsis, 5),
                                 (None, 0, 0, 0, 0), (slice(None), 9)], ids=repr)
def test_plain_getitem_refusals_match_torch(key):
    a = np.zeros((3, 4, 5), np.float32)
    with pytest.raises(IndexError) as expected:
        torch.tensor(a)[key]
    with pytest.raises(IndexError) as got:
        dynagrad.tensor(a)[key]
    assert str(got.value).split(' for ')[0] == str(expected.value).split(' for ')[0]


@pytest.mark.parametrize('key', [(slice(None, None, -1),), (slice(None, None, 0),)], ids=repr)
def test_getitem_bad_steps_still_refused(key):
    with pytest.raises(ValueError):
        dynagrad.zeros(4)[key]


def test_getitem_non_plain_keys_keep_their_reading():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, t = dynagrad.tensor(a), torch.tensor(a)
    for key in [(True,), (np.int64(1),), (slice(np.int64(1), None),), (dynagrad.tensor(1),),
                (slice(None), [0, 2])]:
        tkey = tuple(torch.tensor(1) if isinstance(k, dynagrad.Tensor) else k for k in key)
        np.testing.assert_array_equal(x[key].numpy(), t[tkey].numpy())


# -- matmul on equal batch shapes skips the broadcast check; unequal ones still broadcast
#    or are refused with torch's message

def test_matmul_batch_shapes():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 4, 5, 6))
    np.testing.assert_allclose((dynagrad.tensor(q) @ dynagrad.tensor(k)).numpy(),
                               (torch.tensor(q) @ torch.tensor(k)).numpy(), rtol=1e-12)
    b = rng.standard_normal((1, 4, 5, 6))
    np.testing.assert_allclose((dynagrad.tensor(q) @ dynagrad.tensor(b)).numpy(),
                               (torch.tensor(q) @ torch.tensor(b)).numpy(), rtol=1e-12)
    bad = rng.standard_normal((3, 4, 5, 6))
    with pytest.raises(RuntimeError, match='do not broadcast'):
        dynagrad.tensor(q) @ dynagrad.tensor(bad)
    with pytest.raises(RuntimeError):
        torch.tensor(q) @ torch.tensor(bad)
    with pytest.raises(TypeError, match='must be a Tensor'):
        dynagrad.matmul(dynagrad.tensor(q), q)


# -- layer_norm and linear read array shapes directly: the refusals are unchanged

def test_layer_norm_and_linear_refusals():
    x = dynagrad.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r'expected input with shape \[\*, 5\]'):
        F.layer_norm(x, (5,))
    with pytest.raises(RuntimeError, match='Expected weight to be of same shape'):
        F.layer_norm(x, (4,), weight=dynagrad.ones(3))
    with pytest.raises(TypeError, match='must be tuple of ints'):
        F.layer_norm(x, 4)
    out = F.layer_norm(x, [np.int64(4)])           # list of NumPy ints: the general reading
    assert tuple(out.shape) == (2, 3, 4)
    with pytest.raises(RuntimeError, match=r'shapes cannot be multiplied \(2x3x4 and 3x5\)'):
        F.linear(x, dynagrad.ones(5, 3))
    with pytest.raises(RuntimeError, match='both arguments to linear need to be at least 1D'):
        F.linear(dynagrad.tensor(1.0), dynagrad.ones(5, 3))
    with pytest.raises(RuntimeError, match='same dtype'):
        F.linear(x, dynagrad.ones(5, 4, dtype=dynagrad.float64))


def test_dropout_eval_returns_input():
    x = dynagrad.randn(2, 3)
    assert F.dropout(x, 0.5, training=False) is x
    with pytest.raises(ValueError, match='between 0 and 1'):
        F.dropout(x, 1.5, training=False)


@needs_numba
def test_linear_large_products_keep_blas(native_calls):
    """Few rows, but a product past MAX_WORK multiply-adds: BLAS (which may thread) runs."""
    from dynagrad.native.linalg import MAX_WORK
    from dynagrad.nn.functional import linear as linear_module
    linear_mod = __import__('sys').modules[linear_module.__module__]
    assert linear_mod._SMALL_WORK == MAX_WORK and linear_mod._SMALL_ROWS == native.linalg.MAX_ROWS
    x = np.ones((2, 2048), np.float32)
    w = np.full((MAX_WORK // 4096 + 1, 2048), 0.5, np.float32)
    out, ref = _linear_both(x, w, None)
    assert 'linear' not in native_calls
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
