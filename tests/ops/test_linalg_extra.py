"""Linear algebra beyond the op table: raw decomposition outputs (named tuples, gauge),
LinAlgError, deliberate differences from torch, double backward through decompositions,
and bugs found outside the family (strict xfails)."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck


def pair(array, requires_grad=True):
    array = np.asarray(array)
    d = dynagrad.tensor(array.copy(), requires_grad=requires_grad)
    t = torch.tensor(array.copy(), requires_grad=requires_grad)
    return d, t


def close(d, t, **kw):
    kw.setdefault('rtol', 1e-9)
    kw.setdefault('atol', 1e-10)
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), **kw)


RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape)


# -- named tuples and raw outputs -----------------------------------------------------------

@pytest.mark.parametrize('name,args,fields', [
    ('svd', (rand(3, 2),), ('U', 'S', 'Vh')),
    ('eigh', (rand(3, 3),), ('eigenvalues', 'eigenvectors')),
    ('qr', (rand(3, 2),), ('Q', 'R')),
    ('slogdet', (rand(3, 3),), ('sign', 'logabsdet')),
    ('lstsq', (rand(4, 2), rand(4, 1)), ('solution', 'residuals', 'rank', 'singular_values')),
])
def test_named_tuple_fields(name, args, fields):
    d = getattr(dynagrad.linalg, name)(*[dynagrad.tensor(a) for a in args])
    t = getattr(torch.linalg, name)(*[torch.tensor(a) for a in args])
    assert d._fields == fields                     # torch's structseq: fields by attribute
    for f in fields:
        getattr(t, f)
    assert type(d).__name__ == type(t).__name__


def test_torch_slogdet_tuple_name():
    a = rand(2, 2)
    assert type(dynagrad.slogdet(dynagrad.tensor(a))).__name__ == \
        type(torch.slogdet(torch.tensor(a))).__name__


@pytest.mark.parametrize('shape,full', [((4, 2), True), ((2, 4), True), ((3, 3), False),
                                        ((2, 4, 3), False)])
def test_svd_reconstructs_and_gauge_invariant_grads(shape, full):
    a = rand(*shape)
    (da, ta) = pair(a)
    dU, dS, dVh = dynagrad.linalg.svd(da, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(ta, full_matrices=full)
    assert tuple(dU.shape) == tuple(tU.shape) and tuple(dVh.shape) == tuple(tVh.shape)
    k = dS.shape[-1]
    close(dS, tS)
    # |U| and the rank-one pieces u_i v_i^T do not depend on the sign choice
    close(dU[..., :k].abs(), tU[..., :k].abs())
    dP = dU[..., :, :k].unsqueeze(-1) * dVh[..., :k, :].unsqueeze(-3)
    tP = tU[..., :, :k].unsqueeze(-1) * tVh[..., :k, :].unsqueeze(-3)
    close(dP, tP)
    w = rand(*dP.shape)
    ((dP * dynagrad.tensor(w)).sum() + dS.pow(3).sum()).backward()
    ((tP * torch.tensor(w)).sum() + tS.pow(3).sum()).backward()
    close(da.grad, ta.grad, rtol=1e-7, atol=1e-9)


def test_eigh_raw_grad_matches_torch():
    """A non-symmetric input: both read the lower triangle; torch's gradient is symmetric."""
    a = rand(3, 3)
    da, ta = pair(a)
    dL, dV = dynagrad.linalg.eigh(da)
    tL, tV = torch.linalg.eigh(ta)
    close(dL, tL)
    close(dV.abs(), tV.abs())
    w = rand(3, 3)
    ((dV * dV[..., :1, :].sign() * dynagrad.tensor(w)).sum() + dL.sum()).backward()
    ((tV * tV[..., :1, :].sign() * torch.tensor(w)).sum() + tL.sum()).backward()
    close(da.grad, ta.grad, rtol=1e-7, atol=1e-9)


# -- double backward through decompositions (gauge-invariant scalars) ----------------------

@pytest.mark.parametrize('fn', [
    lambda x: dynagrad.linalg.svdvals(x).sum(),
    lambda x: (dynagrad.linalg.svd(x, full_matrices=False).U[..., :, :1]
               * dynagrad.linalg.svd(x, full_matrices=False).Vh[..., :1, :]).sum(),
    lambda x: dynagrad.linalg.eigvalsh(x + x.mT).pow(2).sum(),
    lambda x: dynagrad.linalg.det(x),
    lambda x: dynagrad.linalg.slogdet(x).logabsdet,
    lambda x: dynagrad.linalg.inv(x).sum(),
    lambda x: dynagrad.linalg.qr(x).R.abs().sum(),
    lambda x: dynagrad.linalg.pinv(x).sum(),
], ids=['svdvals', 'svd_uv', 'eigvalsh', 'det', 'slogdet', 'inv', 'qr', 'pinv'])
def test_hessian_vector_matches_finite_differences(fn):
    a = rand(3, 3) + 3 * np.eye(3)
    v = rand(3, 3)
    da, ta = pair(a)
    g_d, = dynagrad.autograd.grad(fn(da), [da], create_graph=True)
    hv_d, = dynagrad.autograd.grad((g_d * dynagrad.tensor(v)).sum(), [da])
    # finite differences of the first gradient give the Hessian-vector product
    eps = 1e-6

    def grad_at(x):
        xd = dynagrad.tensor(x, requires_grad=True)
        g, = dynagrad.autograd.grad(fn(xd), [xd])
        return g.numpy()
    num = (grad_at(a + eps * v) - grad_at(a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv_d.numpy(), num, rtol=1e-5, atol=1e-6)


# -- errors ---------------------------------------------------------------------------------

def test_linalg_error_is_runtime_error_naming_batch_element():
    assert issubclass(dynagrad.linalg.LinAlgError, RuntimeError)
    a = np.stack([np.eye(2), np.zeros((2, 2))])
    with pytest.raises(dynagrad.linalg.LinAlgError, match=r'linalg.inv: \(Batch element 1\)'):
        dynagrad.linalg.inv(dynagrad.tensor(a))
    with pytest.raises(torch.linalg.LinAlgError, match=r'Batch element 1'):
        torch.linalg.inv(torch.tensor(a))


def test_cholesky_error_names_leading_minor():
    a = np.array([[4., 2., 0.], [2., 1., 0.], [0., 0., 1.]])
    a[1, 1] = 0.5
    with pytest.raises(torch.linalg.LinAlgError, match='order 2'):
        torch.linalg.cholesky(torch.tensor(a))
    with pytest.raises(dynagrad.linalg.LinAlgError, match='order 2'):
        dynagrad.linalg.cholesky(dynagrad.tensor(a))


def test_solve_singular_raises_linalg_error():
    with pytest.raises(dynagrad.linalg.LinAlgError, match='singular'):
        dynagrad.linalg.solve(dynagrad.zeros(3, 3), dynagrad.ones(3))


def test_qr_mode_r_and_complete_backward_errors_match_torch():
    for mode, shape, msg in (('r', (3, 2), "mode='r'"), ('complete', (4, 2), 'nrows > ncols')):
        a = rand(*shape)
        d, t = pair(a)
        with pytest.raises(RuntimeError, match=msg):
            torch.linalg.qr(t, mode=mode).R.sum().backward()
        with pytest.raises(RuntimeError, match=msg):
            dynagrad.linalg.qr(d, mode=mode).R.sum().backward()


def test_einsum_sublist_format_is_a_clear_type_error():
    with pytest.raises(TypeError, match='sublist'):
        dynagrad.einsum(dynagrad.ones(2, 2), [0, 1])


# -- deliberate differences -------------------------------------------------------------------

def test_det_gradient_at_singular_matrix_is_the_adjugate():
    """torch returns 0 at an exactly singular matrix (its LU path multiplies by det = 0);
    the derivative of det is the adjugate, which dynagrad returns (through the SVD)."""
    a = np.array([[1., 2.], [2., 4.]])
    x = dynagrad.tensor(a, requires_grad=True)
    dynagrad.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4., -2.], [-2., 1.]], atol=1e-12)
    assert gradcheck(dynagrad.linalg.det, (dynagrad.tensor(np.array([[1., 0.], [0., 0.]]),
                                                           requires_grad=True),))


def test_everything_in_dynagrad_linalg_exists_in_torch_linalg():
    for name in dynagrad.linalg.__all__:
        assert hasattr(torch.linalg, name), name


# -- bugs outside the family ------------------------------------------------------------------

def test_gradcheck_skips_outputs_without_grad():
    a = dynagrad.tensor(rand(3, 2), requires_grad=True)
    b = dynagrad.tensor(rand(3, 1), requires_grad=True)
    assert gradcheck(lambda a, b: dynagrad.linalg.lstsq(a, b, driver='gelss'), (a, b))


def test_gradgradcheck_svd_uv_batched():
    x = dynagrad.tensor(rand(2, 3, 2), requires_grad=True)

    def f(x):
        U, S, Vh = dynagrad.linalg.svd(x, full_matrices=False)
        return (U.unsqueeze(-1) * Vh.unsqueeze(-3)).sum(-2) * S.unsqueeze(-2)
    assert gradgradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
