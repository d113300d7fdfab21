"""In-place ops with sparse COO operands and the sparse factories (``new``, ``new_zeros``,
``zeros_like``, ``resize_as_``), against PyTorch: results (layout, dtype, values, pattern,
coalesced flag), the storage a sparse target keeps, gradients through them, and the errors
PyTorch raises for what it refuses."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad

warnings.filterwarnings('ignore', message='Sparse invariant checks')


def operands(lib):
    """A coalesced sparse S, another S2, an uncoalesced U (all 2x3) and a dense D."""
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([3., -4., 5.]),
                              (2, 3)).coalesce()
    s2 = lib.sparse_coo_tensor(lib.tensor([[0, 1], [2, 1]]), lib.tensor([1., 2.]),
                               (2, 3)).coalesce()
    u = lib.sparse_coo_tensor(lib.tensor([[1, 0, 1], [0, 2, 0]]), lib.tensor([1., 2., 7.]),
                              (2, 3))
    d = lib.arange(6.).reshape(2, 3) + 1
    return dict(S=s, S2=s2, U=u, D=d, lib=lib)


def run(code, lib):
    env = operands(lib)
    return eval(code, env), env


def same(t, d):
    assert t.is_sparse == d.is_sparse
    assert str(t.dtype).split('.')[-1] == str(d.dtype).split('.')[-1]
    assert tuple(t.shape) == tuple(d.shape)
    td = t.detach().to_dense() if t.is_sparse else t.detach()
    dd = d.detach().to_dense() if d.is_sparse else d.detach()
    np.testing.assert_allclose(dd.numpy(), td.numpy(), rtol=1e-6)
    if t.is_sparse:
        assert d.is_coalesced() == t.is_coalesced()
        assert (d.sparse_dim(), d.dense_dim()) == (t.sparse_dim(), t.dense_dim())
        if t.is_coalesced():
            np.testing.assert_array_equal(d._indices().numpy(), t._indices().numpy())


IN_PLACE = [
    'S.add_(S2)', 'S.add_(S2, alpha=2)', 'S.add_(U)', 'U.add_(S)', 'S.sub_(S2)',
    'S.sub_(S, alpha=2)', 'S.add_(S.double())', 'D.add_(S)', 'D.add_(S, alpha=-1.5)',
    'D.add_(U)', 'D.sub_(S, alpha=2)', 'D.double().add_(S)', 'D.add_(S.double())',
    'S.mul_(2)', 'S.mul_(lib.tensor(2.))', 'U.mul_(2)', 'S.mul_(S2)', 'S.mul_(S)',
    'S.mul_(D)', 'S.mul_(lib.tensor([2., 3., 4.]))', 'D.mul_(S)', 'S.div_(2)',
    'S.div_(lib.tensor(4.))', 'S.neg_()', 'U.neg_()', 'S.sqrt_()', 'S.abs_()', 'S.sign_()',
    'S.sin_()', 'S.tanh_()', 'S.floor_()', 'S.zero_()', 'U.zero_()', 'S.copy_(S2)',
    'S.copy_(U)', 'S.copy_(S2.double())',
]


@pytest.mark.parametrize('code', IN_PLACE)
def test_in_place_results_match_torch(code):
    t, (d, denv) = run(code, torch)[0], run(code, dynagrad)
    target, call = code.split('.')[:2]
    if call.split('(')[0].endswith('_'):
        assert d is denv[target]      # written into the target, which is returned
    same(t, d)


@pytest.mark.parametrize('code', [
    'S.add_(D)', 'S.add_(1)', 'S.sub_(D)', 'S.div_(D)', 'S.div_(S2)', 'D.long().add_(S)',
    'S.long().add_(S)', 'S.long().div_(2)', 'S.add_(lib.ones(3, 3).to_sparse())',
    'S.mul_(lib.ones(4))', 'U.sqrt_()', 'U.abs_()', 'U.sin_()', 'S.copy_(D)', 'D.copy_(S)',
])
def test_in_place_errors_match_torch_and_write_nothing(code):
    with pytest.raises(Exception) as te:
        run(code, torch)
    env = operands(dynagrad)
    before = {k: (v.to_dense() if v.is_sparse else v).clone() for k, v in env.items()
              if k != 'lib'}
    with pytest.raises(type(te.value)) as de:
        eval(code, env)
    words = str(te.value).split('.')[0].replace('torch.', 'dynagrad.')
    assert words.split(' (')[0][:40] in str(de.value)
    for k, v in before.items():
        now = env[k].to_dense() if env[k].is_sparse else env[k]
        np.testing.assert_array_equal(now.numpy(), v.numpy())


@pytest.mark.parametrize('code, aten', [
    ('S.addcmul_(S, S)', 'addcmul_'), ('D.addcmul_(S, S)', 'addcmul_'),
    ('S.exp_()', 'exp_'), ('S.log_()', 'log_'), ('S.rsqrt_()', 'rsqrt_'),
    ('S.pow_(2)', 'pow_.Scalar'), ('S.fill_(1)', 'fill_'), ('S.clamp_(min=0)', 'clamp'),
    ('S.lerp_(S2, 0.5)', 'lerp_'),
])
def test_refused_in_place_ops_raise_torchs_not_implemented(code, aten):
    with pytest.raises(NotImplementedError, match=f"aten::{aten}"):
        run(code, torch)
    with pytest.raises(NotImplementedError, match=f"aten::{aten}.*SparseCPU"):
        run(code, dynagrad)


@pytest.mark.parametrize('code', ['S.sqrt_()', 'S.div_(2)', 'S.neg_()', 'S.add_(S2)',
                                  'S.mul_(2)', 'S.mul_(D)', 'S.copy_(S2)', 'S.zero_()'])
def test_values_taken_before_a_write_share_storage_as_in_torch(code):
    # unary ops and div_ write into the values PyTorch hands out with _values(); the others
    # give the tensor new storage, and the values taken before keep the old numbers
    def f(lib):
        env = operands(lib)
        values = env['S']._values()
        eval(code, env)
        values.add_(100)
        return env['S'], values
    (ts, tv), (ds, dv) = f(torch), f(dynagrad)
    same(ts, ds)
    np.testing.assert_allclose(dv.numpy(), tv.numpy())


def test_madgrad_style_sparse_update_matches_torch():
    def step(lib):
        p = lib.arange(1., 7.).reshape(3, 2)
        state = lib.zeros(3, 2)
        grad = lib.tensor([[0., 1.], [0., 0.], [2., -1.]]).to_sparse().coalesce()
        masked = state.sparse_mask(grad)
        sq = grad * grad
        state.add_(sq, alpha=0.3)
        masked.add_(sq, alpha=0.3)
        p_masked = p.sparse_mask(grad)
        p_masked._values().add_(masked._values().sqrt(), alpha=-1)
        p.add_(p_masked, alpha=-1)
        return p, state, masked
    for t, d in zip(step(torch), step(dynagrad)):
        same(t, d)


def test_gradient_through_in_place_ops_on_dense_and_sparse_targets():
    def f(lib):
        x = lib.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        v = lib.tensor([3., -4., 5.], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), v, (2, 3)).coalesce()
        y = x * 2
        y.add_(s, alpha=3)
        y.mul_(s)                   # dense target, sparse operand: a dense result
        z = s * 1
        z.mul_(x)                   # sparse target, dense operand
        (y.sum() + z.to_dense().pow(2).sum()).backward()
        return x.grad, v.grad
    for t, d in zip(f(torch), f(dynagrad)):    # (x.grad is sparse in PyTorch, dense here)
        np.testing.assert_allclose(d.to_dense().numpy(), t.to_dense().numpy(), rtol=1e-6)


def test_in_place_on_a_leaf_requiring_grad_is_refused():
    for lib in (torch, dynagrad):
        s = operands(lib)['S'].requires_grad_()
        with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
            s.mul_(2)


def test_version_counter_counts_sparse_writes():
    s = operands(dynagrad)['S']
    before = s._version
    s.div_(2)
    s.sqrt_()
    assert s._version == before + 2


FACTORIES = [
    'S.new()', 'S.new(2, 3)', 'S.new(S.size())', 'S.long().new()',
    'S.new(S._indices(), S._values(), S.size())', 'S.new(S._indices(), S._values())',
    'S.new(S._indices(), S._values().double(), (2, 3))', 'S.new_zeros(2, 3)',
    'S.new_zeros((4, 3), dtype=lib.float64)', 'S.new_empty(2, 3)', 'lib.zeros_like(S)',
    'lib.zeros_like(S, dtype=lib.float64)', 'lib.empty_like(S)', 'lib.zeros_like(U)',
    'lib.zeros_like(S, requires_grad=True)', 'S.new().resize_as_(S)',
    'lib.sparse_coo_tensor(lib.tensor([[1]]), lib.ones(1, 2), (3, 2)).new().resize_as_(S)',
    'lib.sparse_coo_tensor((2, 3))', 'lib.sparse_coo_tensor(size=(4, 1), dtype=lib.float64)',
    'lib.sparse_coo_tensor(size=[2, 3], requires_grad=True)',
    'S * lib.tensor([2., 3., 4.])', 'S * lib.tensor([[2.], [3.]])', 'S ** 2', 'S.pow(0.5)',
    'S.square()',
]


@pytest.mark.parametrize('code', FACTORIES)
def test_sparse_factories_and_ops_match_torch(code):
    t, d = run(code, torch)[0], run(code, dynagrad)[0]
    same(t, d)
    assert d.requires_grad == t.requires_grad


@pytest.mark.parametrize('code', [
    'lib.ones_like(S)', 'S.new_ones(2, 3)', 'S.new((2, 3))', 'S.new([1., 2.])',
    'S.clone().resize_as_(lib.ones(4, 4))', 'S.pow(0)', 'S * lib.ones(4)',
    'lib.sparse_coo_tensor()',
])
def test_sparse_factory_errors_match_torch(code):
    with pytest.raises(Exception) as te:
        run(code, torch)
    with pytest.raises(type(te.value)):
        run(code, dynagrad)


def test_sparse_type_name():
    s = operands(dynagrad)['S']
    assert s.type() == 'dynagrad.sparse.FloatTensor'
    assert s.to_dense().type() == 'dynagrad.FloatTensor'
