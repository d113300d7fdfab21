"""float16 and bfloat16 in linear algebra: torch refuses them, with a RuntimeError where the
op checks first ("Low precision dtypes not supported") and a NotImplementedError naming the
LAPACK kernel where its dtype dispatch refuses; dynagrad raises the same type, and the same
text for the ops listed in _LAPACK_KERNEL. matrix_exp computes."""
import warnings

import pytest
import torch

import dynagrad as dg

OPS = {
    'solve': lambda L, a: L.linalg.solve(a, a), 'inv': lambda L, a: L.linalg.inv(a),
    'det': lambda L, a: L.linalg.det(a), 'cholesky': lambda L, a: L.linalg.cholesky(a),
    'qr': lambda L, a: L.linalg.qr(a), 'eigh': lambda L, a: L.linalg.eigh(a),
    'svd': lambda L, a: L.linalg.svd(a), 'svdvals': lambda L, a: L.linalg.svdvals(a),
    'eig': lambda L, a: L.linalg.eig(a), 'lstsq': lambda L, a: L.linalg.lstsq(a, a),
    'slogdet': lambda L, a: L.linalg.slogdet(a), 'lu': lambda L, a: L.linalg.lu(a),
    'lu_factor': lambda L, a: L.linalg.lu_factor(a), 'matrix_rank': lambda L, a:
    L.linalg.matrix_rank(a), 'cond': lambda L, a: L.linalg.cond(a),
    'matrix_power': lambda L, a: L.linalg.matrix_power(a, -1),
    'eigvalsh': lambda L, a: L.linalg.eigvalsh(a),
    'householder_product': lambda L, a: L.linalg.householder_product(a, a[0]),
    'solve_triangular': lambda L, a: L.linalg.solve_triangular(a, a, upper=True),
    'cholesky_ex': lambda L, a: L.linalg.cholesky_ex(a), 'inv_ex': lambda L, a: L.linalg.inv_ex(a),
    'ldl_factor': lambda L, a: L.linalg.ldl_factor(a), 'logdet': lambda L, a: L.logdet(a),
    'triangular_solve': lambda L, a: L.triangular_solve(a, a),
    'cholesky_solve': lambda L, a: L.cholesky_solve(a, a),
    'geqrf': lambda L, a: L.geqrf(a), 'tensorsolve': lambda L, a: L.linalg.tensorsolve(a, a[0]),
}
SAME_TEXT = {'solve', 'det', 'cholesky', 'qr', 'eigh', 'svd', 'svdvals', 'eig', 'lu',
             'lu_factor', 'eigvalsh', 'householder_product', 'solve_triangular', 'cholesky_ex',
             'inv', 'inv_ex', 'slogdet', 'ldl_factor', 'geqrf', 'tensorsolve', 'cond',
             'matrix_power'}


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
@pytest.mark.parametrize('name', list(OPS))
def test_low_precision_refusal_matches_torch(name, dtype):
    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                OPS[name](L, L.eye(3).to(getattr(L, dtype)))
            except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
                return type(e), str(e)
        return 'ok', None
    t, d = run(torch), run(dg)
    assert d[0] is t[0], (t, d)
    if name in SAME_TEXT:
        assert d[1] == t[1]


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_low_precision_matrix_exp_computes(dtype):
    # torch 2.13 computes it too (its half-precision result overflows to inf here, a loss of
    # accuracy dynagrad does not copy: it rounds the float32 result once)
    a = [[0.5, 0.25], [0.0, -1.0]]
    t = torch.linalg.matrix_exp(torch.tensor(a))
    d = dg.linalg.matrix_exp(dg.tensor(a).to(getattr(dg, dtype)))
    assert d.dtype == getattr(dg, dtype)
    assert d.float().flatten().tolist() == pytest.approx(t.flatten().tolist(), rel=1e-2,
                                                         abs=1e-2)
