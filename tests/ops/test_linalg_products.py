"""ops/linalg_products.py: einsum's float32 accuracy on long sums, against torch in
float64 (the exact answer to float32 rounding) and torch in float32."""
import numpy as np
import pytest
import torch

import dynagrad


@pytest.mark.parametrize('eq,shapes', [('abc,abcd->d', [(40, 41, 42), (40, 41, 42, 4)]),
                                       ('i,i->', [(100000,), (100000,)]),
                                       ('ij,ij->j', [(30000, 3), (30000, 3)])])
def test_long_float32_contractions_keep_float32_precision(eq, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.random(s, dtype=np.float32) for s in shapes]
    exact = torch.einsum(eq, *[torch.from_numpy(a).double() for a in arrays]).numpy()
    theirs = torch.einsum(eq, *[torch.from_numpy(a) for a in arrays]).numpy()
    mine = dynagrad.einsum(eq, *[dynagrad.tensor(a) for a in arrays])
    assert mine.dtype is dynagrad.float32 and mine.shape == tuple(exact.shape)
    # no worse than torch's float32, and within a few float32 roundings of the exact sum
    assert np.abs(mine.numpy() - exact).max() <= np.abs(theirs - exact).max() + 1e-6
    np.testing.assert_allclose(mine.numpy(), exact, rtol=4e-7)


def test_long_contraction_on_a_broadcast_operand_and_its_gradient_as_torch():
    rng = np.random.default_rng(1)
    x = rng.random((30, 30, 30), dtype=np.float32)
    grads = []
    for lib in (dynagrad, torch):
        t = lib.tensor(x, requires_grad=True)
        wide = t[..., None].expand(30, 30, 30, 4)
        out = lib.einsum('abc,abcd->d', t, wide)
        out.sum().backward()
        grads.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=2e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5)
