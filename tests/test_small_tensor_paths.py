"""Paths taken by small tensors (batch-1 inference: a GPT sampling token by token): each
checked against torch, against the NumPy path, and shown to be the path that ran.

F.linear on up to 64 rows runs the native kernel ``linear`` (dynagrad.native.linalg)
instead of BLAS's transposed-operand product."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad import backend, native

NUMBA_MISSING = native.available()
needs_numba = pytest.mark.skipif(NUMBA_MISSING is not None,
                                 reason=f'numba does not load: {NUMBA_MISSING}')


@pytest.fixture
def native_calls():
    """Native kernels on; counts the calls of each."""
    calls = {}
    previous = backend.set_kernels('native')
    saved = dict(backend._kernels.loaded)
    for name in native.FAMILIES:
        kernel = native.load(name)

        def counted(*args, _name=name, _kernel=kernel):
            calls[_name] = calls.get(_name, 0) + 1
            return _kernel(*args)
        backend._kernels.loaded[name] = counted
    try:
        yield calls
    finally:
        backend.set_kernels(previous)
        backend._kernels.loaded.clear()
        backend._kernels.loaded.update(saved)


def _numpy_path(fn):
    previous = backend.set_kernels('numpy')
    try:
        return fn()
    finally:
        backend.set_kernels(previous)


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
