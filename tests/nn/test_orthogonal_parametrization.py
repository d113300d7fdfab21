"""nn.utils.parametrizations.orthogonal against torch: every map, with and without the
trivialization, square, tall and wide weights, batches, complex weights: the constrained
weight, the gradient reaching the unconstrained original, assignment, and the errors."""
import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')

MAPS = [None, 'matrix_exp', 'cayley', 'householder']


def _build(lib, shape, omap, trivialization):
    lib.manual_seed(0)
    m = lib.nn.Linear(shape[1], shape[0], bias=False)
    lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                             use_trivialization=trivialization)
    return m


def _weight_and_gradient(lib, shape, omap, trivialization):
    m = _build(lib, shape, omap, trivialization)
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, shape[1])), dtype=lib.float32)
    (m(x) ** 3).sum().backward()
    return m.weight.detach().numpy(), m.parametrizations.weight.original.grad.numpy()


@pytest.mark.parametrize('trivialization', [True, False])
@pytest.mark.parametrize('omap', MAPS, ids=[str(m) for m in MAPS])
@pytest.mark.parametrize('shape', [(4, 4), (5, 3), (3, 5)], ids=['square', 'tall', 'wide'])
def test_weight_and_gradient_match_torch(shape, omap, trivialization):
    W, g = _weight_and_gradient(dynagrad, shape, omap, trivialization)
    tW, tg = _weight_and_gradient(torch, shape, omap, trivialization)
    np.testing.assert_allclose(W, tW, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g, tg, rtol=1e-4, atol=1e-4)
    n, k = W.shape
    gram = W.T @ W if n >= k else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(n, k)), atol=1e-5)


@pytest.mark.parametrize('omap', ['matrix_exp', 'cayley'])
def test_batched_and_complex_weights(omap):
    values = (np.random.default_rng(2).standard_normal((2, 3, 3))
              + 1j * np.random.default_rng(3).standard_normal((2, 3, 3)))
    results = []
    for lib in (dynagrad, torch):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(values, dtype=lib.complex128))
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap)
        W = m.weight
        W.abs().sum().backward()
        results.append((W.detach().numpy(), m.parametrizations.weight.original.grad.numpy()))
    (W, g), (tW, tg) = results
    np.testing.assert_allclose(W, tW, atol=1e-10)
    np.testing.assert_allclose(g, tg, atol=1e-9)
    np.testing.assert_allclose(W.conj().transpose(0, 2, 1) @ W, np.broadcast_to(np.eye(3), W.shape),
                               atol=1e-10)


def test_assigning_an_orthogonal_matrix_sets_the_weight():
    Q = np.linalg.qr(np.random.default_rng(4).standard_normal((4, 4)))[0].astype(np.float32)
    for lib in (dynagrad, torch):
        m = _build(lib, (4, 4), None, True)
        with lib.no_grad():
            m.weight = lib.tensor(Q)
        np.testing.assert_allclose(m.weight.detach().numpy(), Q, atol=1e-5)


def test_errors_match_torch():
    for lib in (dynagrad, torch):
        with pytest.raises(ValueError, match='Expected a matrix or batch of matrices. Got a '
                                             'tensor of 1 dimensions'):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name='bias')
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                             '"cayley", "householder". Got: qr'):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map='qr')
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name='w')
        m = _build(lib, (3, 3), 'matrix_exp', False)
        with pytest.raises(NotImplementedError, match='It is not possible to assign to the '
                                                      'matrix exponential'):
            with lib.no_grad():
                m.weight = lib.eye(3)
