"""The native embedding backward (``dynagrad/native/indexing.py``): the weight's gradient
against torch and against the NumPy path, with repeated indices, padding_idx and
scale_grad_by_freq, in float32 and float64.

The kernel adds the rows in their order, as PyTorch's CPU backward does: without a factor
its sums are PyTorch's bit for bit, and the NumPy path's where that path adds in the same
order (``np.add.at``, for a table larger than the batch); the NumPy path's sorted
segment sums (a small table) round apart, within a few ulps of the sum. With
scale_grad_by_freq PyTorch (and the kernel, where the CPU has fused multiply-add) adds
each scaled row with one rounding, the NumPy path with two.
"""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad.autograd import gradcheck, gradgradcheck
from native_support import kernels_counted, needs_numba

pytestmark = needs_numba


def kernels(mode):
    """Run with ``mode``'s kernels; yields the native embedding backward's calls."""
    return kernels_counted(mode, ('embedding_backward',))


def _grad(lib, idx, w, g, **kw):
    weight = lib.tensor(w, requires_grad=True)
    lib.nn.functional.embedding(lib.tensor(idx), weight, **kw).backward(lib.tensor(g))
    return weight.grad.numpy()


def _case(num, shape, dim, dtype, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, num, size=shape)
    idx.reshape(-1)[:3] = 3         # a repeated index, and the padding index below
    return (idx, rng.standard_normal((num, dim)).astype(dtype),
            rng.standard_normal(shape + (dim,)).astype(dtype))


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('num,shape', [(65, (12, 64)), (10, (3, 50)), (5000, (12, 64)),
                                       (7, (2,))])
@pytest.mark.parametrize('padding_idx', [None, 3, -1])
@pytest.mark.parametrize('scale_grad_by_freq', [False, True])
def test_weight_gradient(dtype, num, shape, padding_idx, scale_grad_by_freq):
    idx, w, g = _case(num, shape, 20, dtype)
    kw = dict(padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)
    with kernels('native') as calls:
        got = _grad(dynagrad, idx, w, g, **kw)
    assert calls == {'embedding_backward': 1}
    with kernels('numpy'):
        ref = _grad(dynagrad, idx, w, g, **kw)
    expect = _grad(torch, idx, w, g, **kw)
    assert got.dtype == dtype
    if padding_idx is not None:
        assert not got[padding_idx].any()
    eps = np.finfo(dtype).eps
    if scale_grad_by_freq:
        # one rounding or two per scaled row: within a few ulps of the largest entry
        np.testing.assert_allclose(got, expect, rtol=0, atol=8 * eps * np.abs(expect).max())
    else:
        assert got.tobytes() == expect.tobytes()
    if num > idx.size and not scale_grad_by_freq:
        assert got.tobytes() == ref.tobytes()      # np.add.at adds in the same order
    else:
        np.testing.assert_allclose(got, ref, rtol=0, atol=8 * eps * np.abs(ref).max())


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_int32_indices_and_expanded_gradient(dtype):
    """int32 indices; ``sum().backward()`` sends an expanded (stride 0) gradient."""
    idx = np.array([[1, 4, 1], [0, 1, 4]], np.int32)
    w = np.random.default_rng(1).standard_normal((6, 5)).astype(dtype)
    with kernels('native') as calls:
        weight = dynagrad.tensor(w, requires_grad=True)
        F.embedding(dynagrad.tensor(idx), weight).sum().backward()
    assert calls == {'embedding_backward': 1}
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), tw).sum().backward()
    assert weight.grad.numpy().tobytes() == tw.grad.numpy().tobytes()


def test_padding_row_ignores_non_finite_gradients():
    """As in PyTorch, the padding row's gradient is 0 even where the rows sent there hold
    inf or NaN (the kernel skips them)."""
    idx = np.array([0, 2, 2, 1])
    g = np.ones((4, 3), np.float32)
    g[1] = np.inf
    g[2, 0] = np.nan
    w = np.zeros((3, 3), np.float32)
    with kernels('native'):
        got = _grad(dynagrad, idx, w, g, padding_idx=2)
    expect = _grad(torch, idx, w, g, padding_idx=2)
    assert got.tobytes() == expect.tobytes()
    assert not got[2].any()


def test_gradcheck_and_double_backward():
    """float64 gradcheck through the kernel; the double backward (a Tensor gradient)
    takes the NumPy path and still checks."""
    idx = dynagrad.tensor(np.array([[0, 2], [2, 1]]))
    w = dynagrad.tensor(np.random.default_rng(2).standard_normal((4, 3)),
                        requires_grad=True)
    with kernels('native') as calls:
        assert gradcheck(lambda t: F.embedding(idx, t), (w,))
        assert gradgradcheck(lambda t: F.embedding(idx, t) ** 2, (w,))
    assert calls
