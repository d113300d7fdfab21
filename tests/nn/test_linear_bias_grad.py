"""F.linear's bias gradient over many rows, taken as a matrix-vector product (ones @ g)
instead of a sum: the same values as torch's for 2-d and 3-d inputs, real and complex, and
the sum's path below the row threshold and for a bias that broadcasts otherwise."""
import importlib

import numpy as np
import pytest
import torch

import dynagrad as dg

linear_module = importlib.import_module('dynagrad.nn.functional.linear')


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'complex64'])
@pytest.mark.parametrize('shape', [(700, 20), (3, 50, 20), (linear_module._GEMV_ROWS - 1, 20),
                                   (linear_module._GEMV_ROWS, 20)])
def test_bias_gradient_matches_torch(dtype, shape):
    rng = np.random.default_rng(0)
    def sample(*s):
        a = rng.standard_normal(s)
        if dtype.startswith('complex'):
            a = a + 1j * rng.standard_normal(s)
        return a.astype(dtype)
    x, w, b = sample(*shape), sample(30, shape[-1]), sample(30)
    g = sample(*shape[:-1], 30)
    got = [dg.tensor(a, requires_grad=True) for a in (x, w, b)]
    want = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    dg.nn.functional.linear(*got).backward(dg.tensor(g))
    torch.nn.functional.linear(*want).backward(torch.tensor(g))
    tol = 1e-4 if dtype != 'float64' else 1e-10
    for d, t in zip(got, want):
        assert d.grad.dtype == dg.tensor(t.grad.numpy()).dtype
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol * 10)


def test_a_bias_broadcast_otherwise_is_summed_to_its_shape():
    x, w = np.ones((80, 4), np.float32), np.ones((3, 4), np.float32)
    b = np.zeros((80, 1), np.float32)       # broadcasts over the columns, not the rows
    bd, bt = dg.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    dg.nn.functional.linear(dg.tensor(x), dg.tensor(w), bd).sum().backward()
    torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), bt).sum().backward()
    assert bd.grad.shape == (80, 1)
    np.testing.assert_array_equal(bd.grad.numpy(), bt.grad.numpy())


def test_second_order_through_the_bias_gradient():
    x = dg.randn(70, 5, dtype=dg.float64)
    w = dg.randn(3, 5, dtype=dg.float64, requires_grad=True)
    b = dg.randn(3, dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradgradcheck(lambda w, b: dg.nn.functional.linear(x, w, b).tanh(),
                                     (w, b))
