"""Batched products of small matrices on the BLAS's threads (``dynagrad.native.blas``): the
same GEMMs NumPy's loop calls, so the bits are ``np.matmul``'s on any thread count, for
every operand layout GEMM reads (transposed views, broadcast batches, negative batch
strides); NumPy keeps what the path does not take; through ``matmul`` the values and
gradients match torch."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import backend, native

from native_support import kernels_mode, needs_numba

pytestmark = needs_numba
RNG = np.random.default_rng(0)


def _randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture
def bmm(monkeypatch):
    from dynagrad.native import blas as bmm, chunks
    if chunks._blas_runner() is None or bmm._gemm_address(np.dtype(np.float32)) is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS's 64-bit-integer build: NumPy's matmul "
                    "runs every batched product")
    monkeypatch.setattr(bmm, 'MIN_WORK_PER_THREAD', 1)
    threads = dynagrad.get_num_threads()
    yield bmm
    dynagrad.set_num_threads(threads)


def _attention(dtype):
    qkv = _randn(3, 16, 96, dtype=dtype)
    q, k = (qkv[:, :, i * 32:(i + 1) * 32].reshape(3, 16, 4, 8).transpose(0, 2, 1, 3)
            for i in range(2))
    return q, k


def _cases(dtype):
    q, k = _attention(dtype)
    scores = _randn(3, 4, 16, 16, dtype=dtype)
    return [(q, k.transpose(0, 1, 3, 2)), (scores, k), (scores.transpose(0, 1, 3, 2), q),
            (q.transpose(0, 1, 3, 2), scores), (_randn(7, 3, 4, dtype=dtype),
                                                _randn(4, 6, dtype=dtype)),
            (_randn(3, 4, dtype=dtype), _randn(5, 4, 5, dtype=dtype)),
            (_randn(2, 1, 3, 4, dtype=dtype), _randn(1, 5, 4, 2, dtype=dtype)),
            (_randn(6, 4, 3, dtype=dtype)[:, ::2], _randn(6, 3, 5, dtype=dtype)[::-1]),
            (_randn(4, 2, 3, 3, 4, dtype=dtype), _randn(4, 2, dtype=dtype))]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('threads', [2, 3])
def test_the_bits_are_numpys(bmm, dtype, threads):
    dynagrad.set_num_threads(threads)
    for a, b in _cases(dtype):
        out = bmm.batched_matmul(a, b)
        assert out is not None, (a.shape, b.shape)
        assert out.dtype == dtype and np.array_equal(out, np.matmul(a, b)), (a.shape, b.shape)


def test_numpy_keeps_what_the_path_does_not_take(bmm):
    dynagrad.set_num_threads(2)
    a = _randn(8, 5, 6)
    assert bmm.batched_matmul(a, _randn(8, 6, 1)) is None          # GEMV in NumPy
    assert bmm.batched_matmul(_randn(8, 1, 6), _randn(8, 6, 5)) is None
    assert bmm.batched_matmul(a, a.transpose(0, 2, 1)) is None      # SYRK in NumPy
    assert bmm.batched_matmul(_randn(2, 2, 2, 2, 5, 6), _randn(6, 3)) is None  # 4 batch axes
    assert bmm.batched_matmul(_randn(3, 5, 6)[..., ::2], _randn(3, 3, 4)) is None  # strides
    assert bmm.batched_matmul(_randn(2, 70, 70), _randn(2, 70, 70)) is None   # big products
    assert bmm.batched_matmul(a.astype(np.float32), _randn(8, 6, 5)) is None
    dynagrad.set_num_threads(1)
    assert bmm.batched_matmul(a, _randn(8, 6, 5)) is None            # one chunk


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_matmul_through_the_kernel_matches_torch(bmm, dtype, monkeypatch):
    dynagrad.set_num_threads(2)
    calls = []
    original = bmm.batched_matmul
    monkeypatch.setattr(bmm, 'batched_matmul', lambda a, b: calls.append(1) or original(a, b))
    backend._kernels.loaded.pop('batched_matmul', None)
    q, k = _attention(dtype)
    g = _randn(3, 4, 16, 16, dtype=dtype)
    results = {}
    for mode in ('native', 'numpy'):
        with kernels_mode(mode):
            tq, tk = (dynagrad.tensor(np.ascontiguousarray(t), requires_grad=True)
                      for t in (q, k))
            out = tq @ tk.transpose(-2, -1)
            out.backward(dynagrad.tensor(g))
            results[mode] = [t.detach().numpy() for t in (out, tq.grad, tk.grad)]
    backend._kernels.loaded.pop('batched_matmul', None)
    assert len(calls) == 3          # the forward and both gradients
    for native_value, numpy_value in zip(*results.values()):
        assert np.array_equal(native_value, numpy_value)
    pq, pk = (torch.tensor(np.ascontiguousarray(t), requires_grad=True) for t in (q, k))
    expected = pq @ pk.transpose(-2, -1)
    expected.backward(torch.tensor(g))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for value, reference in zip(results['native'], (expected, pq.grad, pk.grad)):
        np.testing.assert_allclose(value, reference.detach().numpy(), **tol)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shape', [((300, 40), 250), ((3, 100, 64), 700), ((200, 600), 400)])
def test_linear_with_its_bias_folded_into_the_product(dtype, shape):
    """F.linear's bias added by the GEMM (beta = 1 over the bias) on outputs large enough:
    values and gradients against torch, a strided bias too, and the path taken."""
    from dynagrad.native import blas
    if blas._gemm_function(np.dtype(dtype)) is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS's 64-bit-integer build")
    x_shape, n_out = shape
    x, w = _randn(*x_shape, dtype=dtype), _randn(n_out, x_shape[-1], dtype=dtype)
    wide_bias = _randn(2 * n_out, dtype=dtype)
    g = _randn(*x_shape[:-1], n_out, dtype=dtype)
    threads = dynagrad.get_num_threads()
    dynagrad.set_num_threads(2)     # one thread takes the few-row kernel up to 1,024 rows
    try:
        assert blas.linear_bias(x.reshape(-1, x_shape[-1]), w, wide_bias[::2]) is not None
        with kernels_mode('native'):
            tx, tw, tb = (dynagrad.tensor(a, requires_grad=True) for a in (x, w, wide_bias))
            out = dynagrad.nn.functional.linear(tx, tw, tb[::2])
            out.backward(dynagrad.tensor(g))
    finally:
        dynagrad.set_num_threads(threads)
    px, pw, pb = (torch.tensor(a, requires_grad=True) for a in (x, w, wide_bias))
    expected = torch.nn.functional.linear(px, pw, pb[::2])
    expected.backward(torch.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    for value, reference in zip((out, tx.grad, tw.grad, tb.grad),
                                (expected, px.grad, pw.grad, pb.grad)):
        np.testing.assert_allclose(value.detach().numpy(), reference.detach().numpy(), **tol)
