"""linalg.eig and linalg.eigvals against torch: complex results, gradients of losses that do
not depend on the eigenvectors' phases (real and complex inputs, batched), gradcheck, and
PyTorch's errors."""
import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')


def _matrices(dtype, shape=(2, 4, 4), seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(shape)
    if np.dtype(dtype).kind == 'c':
        A = A + 1j * rng.standard_normal(shape)
    return A.astype(dtype)


LOSSES = {
    'eigenvalues': lambda L, A: (L.linalg.eigvals(A) ** 2).real.sum(),
    'eigenvalue_moduli': lambda L, A: L.linalg.eig(A).eigenvalues.abs().sum(),
    'eigenvector_moduli': lambda L, A: (L.linalg.eig(A).eigenvectors.abs() ** 3).sum(),
    'projector': lambda L, A: _projector(L, A),
}


def _projector(L, A):
    # v v^H / (v^H v) of the first eigenvector: independent of its phase and length
    v = L.linalg.eig(A).eigenvectors[..., :, :1]
    return (v @ v.mH).abs().sum()


@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.complex64, np.complex128])
def test_values_match_torch(dtype):
    A = _matrices(dtype)
    w, V = dynagrad.linalg.eig(dynagrad.tensor(A))
    tw, tV = torch.linalg.eig(torch.tensor(A))
    assert str(w.dtype).split('.')[-1] == str(tw.dtype).split('.')[-1]
    assert str(V.dtype).split('.')[-1] == str(tV.dtype).split('.')[-1]
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.abs(V.numpy()), np.abs(tV.numpy()), rtol=tol, atol=tol)
    # A V = V diag(w)
    np.testing.assert_allclose(A @ V.numpy(), V.numpy() * w.numpy()[..., None, :],
                               rtol=10 * tol, atol=10 * tol)
    np.testing.assert_allclose(dynagrad.linalg.eigvals(dynagrad.tensor(A)).numpy(), tw.numpy(),
                               rtol=tol, atol=tol)
    assert type(dynagrad.linalg.eig(dynagrad.tensor(A)))._fields == ('eigenvalues',
                                                                     'eigenvectors')


@pytest.mark.parametrize('dtype', [np.float64, np.complex128])
@pytest.mark.parametrize('loss', sorted(LOSSES))
def test_gradients_match_torch(loss, dtype):
    A = _matrices(dtype)
    ours = dynagrad.tensor(A, requires_grad=True)
    theirs = torch.tensor(A, requires_grad=True)
    g, = dynagrad.autograd.grad(LOSSES[loss](dynagrad, ours), ours)
    e, = torch.autograd.grad(LOSSES[loss](torch, theirs), theirs)
    assert str(g.dtype).split('.')[-1] == str(e.dtype).split('.')[-1]
    np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize('dtype', [np.float64, np.complex128])
@pytest.mark.parametrize('loss', sorted(LOSSES))
def test_gradcheck(loss, dtype):
    A = dynagrad.tensor(_matrices(dtype, (3, 3), seed=1), requires_grad=True)
    assert dynagrad.autograd.gradcheck(lambda a: LOSSES[loss](dynagrad, a), (A,))


def test_node_names():
    A = dynagrad.tensor(_matrices(np.float64), requires_grad=True)
    assert type(dynagrad.linalg.eigvals(A).grad_fn).__name__ == 'LinalgEigBackward0'
    assert type(dynagrad.linalg.eig(A)[1].grad_fn).__name__ == 'LinalgEigBackward0'


def test_a_loss_depending_on_the_phase_is_refused_as_in_torch():
    A = _matrices(np.complex128, (3, 3))
    for lib in (torch, dynagrad):
        a = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match='The eigenvectors in the complex case are '
                                               r'specified up to multiplication by e\^\{i phi\}'):
            lib.linalg.eig(a).eigenvectors.real.sum().backward()


@pytest.mark.filterwarnings('ignore:ComplexHalf support is experimental')
@pytest.mark.parametrize('make', [
    lambda L: L.ones(2, 3), lambda L: L.ones(3, dtype=L.int64),
    lambda L: L.ones(2, 2, dtype=L.int64), lambda L: L.ones(2, 2, dtype=L.float16),
    lambda L: L.ones(3),
], ids=['not_square', 'int_vector', 'int_matrix', 'half', 'vector'])
def test_errors_match_torch(make):
    with pytest.raises(Exception) as theirs:
        torch.linalg.eig(make(torch))
    with pytest.raises(type(theirs.value)) as ours:
        dynagrad.linalg.eig(make(dynagrad))
    assert str(theirs.value).split(' (Triggered')[0] in str(ours.value)
