"""Shape ops and value maps on sparse COO tensors (unsqueeze, cat, stack, index_select,
nan_to_num, div with a rounding mode) against PyTorch: results (layout, pattern, coalesced
flag, values), gradients into the values, and PyTorch's errors."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad

warnings.filterwarnings('ignore', message='Sparse invariant checks')


def operands(lib, requires_grad=False):
    v = lib.tensor([3., -4., 5.], requires_grad=requires_grad)
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), v, (2, 3)).coalesce()
    u = lib.sparse_coo_tensor(lib.tensor([[1, 0, 1], [0, 2, 0]]),
                              lib.tensor([1., float('nan'), 7.]), (2, 3))
    hv = lib.arange(6.).reshape(2, 3).requires_grad_(requires_grad)
    h = lib.sparse_coo_tensor(lib.tensor([[0, 2]]), hv, (3, 3))      # hybrid: 1 sparse dim
    h2 = lib.sparse_coo_tensor(lib.tensor([[1]]), lib.full((1, 2), 2.), (3, 2))
    return dict(S=s, U=u, H=h, H2=h2, D=lib.ones(2, 3), lib=lib, v=v, hv=hv)


def same(t, d):
    assert t.is_sparse == d.is_sparse
    assert tuple(t.shape) == tuple(d.shape)
    assert str(t.dtype).split('.')[-1] == str(d.dtype).split('.')[-1]
    td = t.detach().to_dense() if t.is_sparse else t.detach()
    dd = d.detach().to_dense() if d.is_sparse else d.detach()
    np.testing.assert_allclose(dd.numpy(), td.numpy(), rtol=1e-6)
    if t.is_sparse:
        assert (d.sparse_dim(), d.dense_dim(), d.is_coalesced()) == \
            (t.sparse_dim(), t.dense_dim(), t.is_coalesced())
        assert d._nnz() == t._nnz()


CASES = [
    'S.unsqueeze(0)', 'S.unsqueeze(1)', 'S.unsqueeze(2)', 'S.unsqueeze(-1)', 'H.unsqueeze(2)',
    'H.unsqueeze(1)', 'lib.cat([S, S])', 'lib.cat([S, U], 1)', 'lib.cat([S, S, U])',
    'lib.cat([H, H2], 1)', 'lib.stack([S, U])', 'lib.stack([S, S], 2)',
    'S.index_select(1, lib.tensor([2, 0, 2]))', 'U.index_select(0, lib.tensor([1, 1]))',
    'S.index_select(0, lib.tensor([], dtype=lib.long))',
    'H.index_select(1, lib.tensor([2, 2, 0]))', 'S.nan_to_num()', 'U.nan_to_num(nan=1.5)',
    'U.coalesce().nan_to_num_()', "S.div(2, rounding_mode='trunc')",
    "S.div(-2, rounding_mode='floor')", "S.div_(lib.tensor(2.), rounding_mode='floor')",
]


@pytest.mark.parametrize('code', CASES)
def test_results_match_torch(code):
    same(eval(code, operands(torch)), eval(code, operands(dynagrad)))


@pytest.mark.parametrize('code, leaf', [
    ('lib.cat([S * 2, S]).to_dense().pow(2).sum()', 'v'),
    ('lib.stack([S, S * 3], 1).to_dense().pow(2).sum()', 'v'),
    ('S.unsqueeze(1).to_dense().pow(2).sum()', 'v'),
    ('S.index_select(1, lib.tensor([2, 0, 2])).to_dense().pow(2).sum()', 'v'),
    ('H.index_select(1, lib.tensor([2, 2, 0])).to_dense().pow(2).sum()', 'hv'),
    ('lib.cat([H, H * 2], 1).to_dense().pow(3).sum()', 'hv'),
    ('H.unsqueeze(2).to_dense().sum()', 'hv'),
])
def test_gradients_into_the_values_match_the_dense_ops_in_torch(code, leaf):
    # PyTorch's own backward of most of these fails on a sparse gradient (as_strided,
    # index_add_ have no sparse kernel); the same ops on the dense forms are the oracle
    env = operands(torch, requires_grad=True)
    env.update(S=env['S'].to_dense(), H=env['H'].to_dense())
    eval(code, env).backward()
    mine = operands(dynagrad, requires_grad=True)
    eval(code, mine).backward()
    np.testing.assert_allclose(mine[leaf].grad.numpy(), env[leaf].grad.numpy(), rtol=1e-6)
    if 'stack' in code:     # the one PyTorch differentiates sparse itself
        env = operands(torch, requires_grad=True)
        eval(code, env).backward()
        np.testing.assert_allclose(mine[leaf].grad.numpy(), env[leaf].grad.numpy())


@pytest.mark.parametrize('code', [
    'lib.cat([S, D])', 'lib.stack([S, D])', 'U.nan_to_num_()',
    "S.div(D, rounding_mode='floor')", 'lib.cat([S, H])', 'D._nnz()', 'D._values()',
    'D._indices()', 'D.values()', 'D.indices()',
])
def test_errors_match_torch(code):
    with pytest.raises(Exception) as te:
        eval(code, operands(torch))
    with pytest.raises(type(te.value)) as de:
        eval(code, operands(dynagrad))
    head = str(te.value).split(' This')[0].split('(')[0][:45]
    assert head in str(de.value)
