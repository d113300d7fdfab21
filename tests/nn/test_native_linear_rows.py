"""F.linear's few-rows kernel (dynagrad.native.linalg): the packed kernel (x^T packed, rows
vectorised, whole 64-byte vectors of rows per tile) and the dot-product kernel (the rows left
over), against torch around the tiles' edges, and which of them runs where."""
import sys

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import backend
import dynagrad.nn.functional as F
from native_support import kernels_counted, kernels_mode, needs_numba

# around the packed kernel's edges (16 float32 or 8 float64 rows a vector, 7/8 of one a
# padded block) and the dot products' (4 rows a tile)
ROWS = [1, 3, 4, 5, 7, 8, 11, 13, 14, 15, 16, 17, 29, 30, 31, 32, 33, 47, 48, 63, 64]
# (in, out): odd sizes on both sides (8 weight rows a packed tile, 4 a dot-product tile),
# and a GPT's 128 -> 384
SIZES = [(65, 7), (7, 65), (130, 130), (128, 384)]


def _linear_module():
    return sys.modules[F.linear.__module__]


def _tol(dtype, n_in):
    # sums of n_in products of standard normals, in another order than torch's
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=2e-6 * n_in ** 0.5 * 4)
    return dict(rtol=1e-12, atol=1e-12 * n_in ** 0.5 * 4)


def _arrays(rows, n_in, n_out, dtype, seed=0):
    rng = np.random.default_rng(seed + rows * 1000 + n_in + n_out)
    x = rng.standard_normal((rows, n_in)).astype(dtype)
    w = rng.standard_normal((n_out, n_in)).astype(dtype)
    b = rng.standard_normal(n_out).astype(dtype)
    return x, w, b


def _torch_linear(x, w, b):
    return torch.nn.functional.linear(torch.tensor(x), torch.tensor(w),
                                      None if b is None else torch.tensor(b)).numpy()


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('n_in,n_out', SIZES)
@pytest.mark.parametrize('rows', ROWS)
def test_values_match_torch_and_the_kernel_runs(rows, n_in, n_out, bias, dtype):
    x, w, b = _arrays(rows, n_in, n_out, dtype)
    b = b if bias else None
    ref = _torch_linear(x, w, b)
    with kernels_counted('native', ['linear']) as calls:
        out = F.linear(dynagrad.tensor(x), dynagrad.tensor(w),
                       None if b is None else dynagrad.tensor(b))
    assert calls == {'linear': 1}
    assert out.dtype == dynagrad.tensor(x).dtype and out.shape == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, **_tol(dtype, n_in))
    with kernels_mode('numpy'):
        blas = F.linear(dynagrad.tensor(x), dynagrad.tensor(w),
                        None if b is None else dynagrad.tensor(b))
    np.testing.assert_allclose(out.numpy(), blas.numpy(), **_tol(dtype, n_in))


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('rows', [1, 5, 15, 16, 17, 33, 64])
@pytest.mark.parametrize('n_in,n_out', [(65, 7), (7, 65), (130, 9), (512, 130)])
def test_each_kernel_on_its_own(rows, n_in, n_out, dtype):
    """Both kernels on any rows, dtypes and sizes, whichever the dispatch would pick,
    writing into the rows of a larger array (as the split hands them out) and no further."""
    from dynagrad.native import linalg
    x, w, b = _arrays(rows, n_in, n_out, dtype, seed=1)
    ref = _torch_linear(x, w, b)
    for kernel in (linalg._linear_packed, linalg._linear_dots):
        for bias in (b, np.empty(0, dtype)):
            want = ref if bias.size else ref - b
            out = np.full((rows + 2, n_out), 7.0, dtype)
            kernel(x, w, bias, out[1:-1], 0, n_out)
            np.testing.assert_allclose(out[1:-1], want, **_tol(dtype, n_in))
            assert (out[0] == 7).all() and (out[-1] == 7).all()
            # a range of whole tiles of weight rows (what a thread computes): those columns
            # bit for bit as in the whole product, no others written
            for j_lo, j_hi in ((0, min(8, n_out)), (8, n_out)):
                part = np.full((rows, n_out), 7.0, dtype)
                kernel(x, w, bias, part, j_lo, j_hi)
                assert np.array_equal(part[:, j_lo:j_hi], out[1:-1, j_lo:j_hi])
                assert (part[:, :j_lo] == 7).all() and (part[:, j_hi:] == 7).all()


@needs_numba
def test_which_kernel_runs_where():
    """Whole 64-byte vectors of rows (16 float32, 8 float64) go to the packed kernel, and a
    last partial one from 7/8 of its rows on; the rest to the dot products."""
    from dynagrad.native import linalg
    packed = linalg._packed_rows
    rows = [1, 4, 11, 12, 13, 14, 15, 16, 17, 29, 30, 31, 32, 45, 46, 64]
    assert [packed(r, 4) for r in rows] == [0, 0, 0, 0, 0, 14, 15, 16, 16, 16, 30, 31, 32,
                                            32, 46, 64]
    assert [packed(r, 8) for r in (1, 6, 7, 8, 9, 14, 15, 64)] == [0, 0, 7, 8, 8, 8, 15, 64]


@needs_numba
def test_the_split_between_kernels_is_what_runs():
    """linalg.linear hands its rows to the two kernels as _packed_rows says: its result is
    bit for bit each kernel's on its own rows (their sums run in different orders)."""
    from dynagrad.native import linalg
    x, w, b = _arrays(21, 128, 40, np.float32)
    out = linalg.linear(x, w, b)
    np.testing.assert_allclose(out, _torch_linear(x, w, b), **_tol(np.float32, 128))
    split = linalg._packed_rows(21, 4)
    assert split == 16
    alone = np.full((21, 40), np.nan, np.float32)
    linalg._linear_dots(x[split:], w, b, alone[split:], 0, w.shape[0])
    np.testing.assert_array_equal(out[split:], alone[split:])
    linalg._linear_packed(x[:split], w, b, alone[:split], 0, w.shape[0])
    np.testing.assert_array_equal(out, alone)


@needs_numba
@pytest.mark.parametrize('rows', [16, 13, 33])
def test_non_contiguous_and_batched_inputs(rows):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((130, rows)).astype(np.float32)
    w = rng.standard_normal((65, 130)).astype(np.float32)
    b = rng.standard_normal(65).astype(np.float32)
    xt = dynagrad.tensor(x).t()                     # (rows, 130), not contiguous
    assert not xt.is_contiguous()
    ref = _torch_linear(np.ascontiguousarray(x.T), w, b)
    with kernels_counted('native', ['linear']) as calls:
        out = F.linear(xt, dynagrad.tensor(w), dynagrad.tensor(b))
        batched = F.linear(xt.unsqueeze(0), dynagrad.tensor(w), dynagrad.tensor(b))
    assert calls == {'linear': 2}
    np.testing.assert_allclose(out.numpy(), ref, **_tol(np.float32, 130))
    assert batched.shape == (1, rows, 65)
    np.testing.assert_allclose(batched.numpy()[0], ref, **_tol(np.float32, 130))


@needs_numba
def test_strided_bias_and_rows_given_to_the_kernels():
    """A bias read every other element (a view) and rows with a stride reach the packed
    kernel's vector loads as unit-stride copies."""
    from dynagrad.native import linalg
    x, w, b = _arrays(32, 40, 24, np.float32)
    wide_b = np.repeat(b, 2)
    ref = _torch_linear(x, w, b)
    with kernels_counted('native', ['linear']) as calls:
        out = F.linear(dynagrad.tensor(x), dynagrad.tensor(w), dynagrad.tensor(wide_b)[::2])
    assert calls == {'linear': 1}
    np.testing.assert_allclose(out.numpy(), ref, **_tol(np.float32, 40))
    wide_x = np.repeat(x, 2, axis=1)
    direct = np.empty((32, 24), np.float32)
    linalg._linear_packed(wide_x[:, ::2], w, wide_b[::2], direct, 0, 24)
    np.testing.assert_allclose(direct, ref, **_tol(np.float32, 40))


@needs_numba
def test_non_finite_values_in_a_packed_block():
    x, w, b = _arrays(16, 9, 11, np.float32)
    x[0, 0], x[3, 4], x[15, 8] = np.inf, np.nan, -np.inf
    w[2, 0] = 0.0                                   # inf * 0: NaN, as in torch
    b[5] = np.inf
    ref = _torch_linear(x, w, b)
    from dynagrad.native import linalg
    assert linalg._packed_rows(16, 4) == 16
    with kernels_counted('native', ['linear']) as calls:
        out = F.linear(dynagrad.tensor(x), dynagrad.tensor(w), dynagrad.tensor(b)).numpy()
    assert calls == {'linear': 1}
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(out[finite], ref[finite], **_tol(np.float32, 9))


@needs_numba
def test_not_used_beyond_the_thresholds():
    from dynagrad.native import linalg
    module = _linear_module()
    assert module._SMALL_ROWS == linalg.MAX_ROWS == 64
    assert module._SMALL_WORK == linalg.MAX_WORK
    # 65 rows, or 2 x 33: BLAS; 2 x 32: the kernel
    x, w, b = _arrays(66, 128, 130, np.float32)
    with kernels_counted('native', ['linear']) as calls:
        out = F.linear(dynagrad.tensor(x[:65]), dynagrad.tensor(w), dynagrad.tensor(b))
        batched = F.linear(dynagrad.tensor(x.reshape(2, 33, 128)), dynagrad.tensor(w))
    assert 'linear' not in calls
    np.testing.assert_allclose(out.numpy(), _torch_linear(x[:65], w, b), **_tol(np.float32, 128))
    np.testing.assert_allclose(batched.numpy().reshape(66, 130),
                               _torch_linear(x, w, None), **_tol(np.float32, 128))
    with kernels_counted('native', ['linear']) as calls:
        batched = F.linear(dynagrad.tensor(x[:64].reshape(2, 32, 128)), dynagrad.tensor(w))
    assert calls == {'linear': 1}
    np.testing.assert_allclose(batched.numpy().reshape(64, 130),
                               _torch_linear(x[:64], w, None), **_tol(np.float32, 128))
    # 64 rows, one output past MAX_WORK multiply-adds: BLAS; at MAX_WORK: the kernel
    n_in = 256
    n_out = linalg.MAX_WORK // (64 * n_in)
    x, w, b = _arrays(64, n_in, n_out + 1, np.float32)
    with kernels_counted('native', ['linear']) as calls:
        over = F.linear(dynagrad.tensor(x), dynagrad.tensor(w), dynagrad.tensor(b))
    assert 'linear' not in calls
    with kernels_counted('native', ['linear']) as calls:
        at = F.linear(dynagrad.tensor(x), dynagrad.tensor(w[:n_out]), dynagrad.tensor(b[:n_out]))
    assert calls == {'linear': 1}
    ref = _torch_linear(x, w, b)
    np.testing.assert_allclose(over.numpy(), ref, **_tol(np.float32, n_in))
    np.testing.assert_allclose(at.numpy(), ref[:, :n_out], **_tol(np.float32, n_in))


@needs_numba
def test_gradients_through_the_packed_forward():
    """The kernel is the forward only: gradients are the op's, checked against torch."""
    x, w, b = _arrays(16, 20, 24, np.float32)
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    g = np.random.default_rng(3).standard_normal((16, 24)).astype(np.float32)
    torch.nn.functional.linear(*ts).backward(torch.tensor(g))
    with kernels_counted('native', ['linear']) as calls:
        ds = [dynagrad.tensor(a, requires_grad=True) for a in (x, w, b)]
        F.linear(*ds).backward(dynagrad.tensor(g))
    assert calls == {'linear': 1}
    for d, t in zip(ds, ts):
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


@needs_numba
@pytest.mark.parametrize('rows', [65, 300, 768, 1024, 1025])
def test_one_blas_thread_takes_batches_up_to_the_serial_bound(rows):
    """While BLAS has one thread, the kernel takes any batch up to MAX_SERIAL_ROWS rows
    (and products past MAX_WORK); with more threads, BLAS does (the tests above)."""
    from threadpoolctl import threadpool_limits
    from dynagrad.native import linalg
    assert _linear_module()._SERIAL_ROWS == linalg.MAX_SERIAL_ROWS
    x, w, b = _arrays(rows, 128, 130, np.float32)
    for limit in (1, 2):
        with threadpool_limits(limit), kernels_counted('native', ['linear']) as calls:
            threads = backend.blas_thread_count()   # (1 where the machine has one core)
            assert threads == 1 or limit == 2
            used = rows <= linalg.MAX_SERIAL_ROWS and threads == 1
            out = F.linear(dynagrad.tensor(x.reshape(1, rows, 128)), dynagrad.tensor(w),
                           dynagrad.tensor(b))
        assert calls == ({'linear': 1} if used else {}), limit
        np.testing.assert_allclose(out.numpy().reshape(rows, 130), _torch_linear(x, w, b),
                                   **_tol(np.float32, 128))
