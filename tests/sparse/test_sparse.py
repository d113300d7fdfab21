"""Sparse COO tensors against PyTorch: construction and printing, conversion, coalescing,
products, elementwise ops, sums, softmax, their gradients (values, dense operands, sparse
leaves) and gradcheck, refusals, and the sparse embedding gradient with SparseAdam and
SGD."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad

warnings.filterwarnings('ignore', message='Sparse invariant checks')

I = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]          # (0, 2) twice: uncoalesced
V = [1., 2., 3., 4., -5.]


def both(fn):
    return fn(torch), fn(dynagrad)


def dense(x):
    x = x.detach()
    if x.is_sparse:
        x = x.to_dense()
    return np.asarray(x.numpy())


def same(t, d, atol=1e-6, pattern=True):
    assert t.is_sparse == d.is_sparse
    assert str(t.dtype).split('.')[-1] == str(d.dtype).split('.')[-1]
    assert tuple(t.shape) == tuple(d.shape)
    np.testing.assert_allclose(dense(d), dense(t), rtol=1e-5, atol=atol)
    if t.is_sparse and pattern:
        assert t.is_coalesced() == d.is_coalesced()
        assert t._nnz() == d._nnz()
        if t.is_coalesced():
            np.testing.assert_array_equal(d._indices().numpy(), t._indices().numpy())


def sp(lib, requires_grad=False, dtype=None):
    values = lib.tensor(V, dtype=dtype or lib.float32, requires_grad=requires_grad)
    return lib.sparse_coo_tensor(I, values, (3, 3)), values


def test_construction_properties_and_repr():
    t, d = both(lambda lib: sp(lib)[0])
    same(t, d)
    assert d.layout is dynagrad.sparse_coo and d.is_sparse and not d.is_coalesced()
    assert (d.sparse_dim(), d.dense_dim(), d._nnz()) == (2, 0, 5)
    assert d.numel() == t.numel() and d.dim() == 2
    for make in (lambda lib: sp(lib)[0],
                 lambda lib: sp(lib)[0].coalesce(),
                 lambda lib: sp(lib, dtype=lib.float64)[0],
                 lambda lib: lib.sparse_coo_tensor([[0, 1]], lib.tensor([[1.5, 2.], [3, 4]]),
                                                   (3, 2)),
                 lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long),
                                                   lib.zeros(0), (2, 3)),
                 lambda lib: sp(lib, requires_grad=True)[0],
                 lambda lib: lib.sparse.softmax(sp(lib, requires_grad=True)[0], 1),
                 lambda lib: lib.tensor([[0, 2], [3, 0]]).to_sparse()):
        t, d = both(make)
        assert repr(d) == repr(t).replace('torch.', 'dynagrad.')


def test_size_inference_dtype_and_numpy_indices():
    idx = np.array([[0, 1, 1], [2, 0, 2]], dtype=np.int32)
    t, d = both(lambda lib: lib.sparse_coo_tensor(idx, lib.ones(3), (2, 3), dtype=lib.int64))
    same(t, d)
    t, d = both(lambda lib: lib.sparse_coo_tensor(idx, [1, 2, 3]))
    same(t, d)
    assert d.dtype is dynagrad.int64


@pytest.mark.parametrize('call,exc,message', [
    (lambda lib: lib.sparse_coo_tensor([[0, 5]], [1., 2.], (3,), check_invariants=True),
     RuntimeError,
     'size is inconsistent with indices: for dim 0, size is 3 but found index 5'),
    (lambda lib: sp(lib)[0].indices(), RuntimeError,
     'Cannot get indices on an uncoalesced tensor, please call .coalesce() first'),
    (lambda lib: sp(lib)[0].values(), RuntimeError,
     'Cannot get values on an uncoalesced tensor, please call .coalesce() first'),
    (lambda lib: sp(lib)[0] + lib.ones(3, 3), RuntimeError,
     r'add\(sparse, dense\) is not supported. Use add\(dense, sparse\) instead.'),
    (lambda lib: sp(lib)[0].exp(), NotImplementedError,
     "Could not run 'aten::exp' with arguments from the 'SparseCPU' backend"),
    (lambda lib: sp(lib)[0].numpy(), TypeError,
     "can't convert Sparse layout tensor to numpy. Use Tensor.to_dense\\(\\) first."),
    (lambda lib: lib.zeros(2).is_coalesced(), RuntimeError,
     'is_coalesced expected sparse coordinate tensor layout but got Strided'),
])
def test_refusals_as_torch(call, exc, message):
    for lib in (torch, dynagrad):
        with pytest.raises(exc, match=message if '\\' in message or '(' not in message
                           else message.replace('(', r'\(').replace(')', r'\)')):
            call(lib)


def test_to_sparse_to_dense_coalesce():
    a = np.array([[0., 1.5, 0.], [0., 0., 0.], [2., 0., -3.]], np.float32)
    t, d = both(lambda lib: lib.tensor(a).to_sparse())
    same(t, d)
    t, d = both(lambda lib: lib.tensor(a).to_sparse(1))
    same(t, d)
    t, d = both(lambda lib: sp(lib)[0].coalesce())
    same(t, d)
    np.testing.assert_array_equal(d.values().numpy(), t.values().numpy())
    t, d = both(lambda lib: sp(lib)[0].to_dense())
    same(t, d)
    t, d = both(lambda lib: lib.tensor(a).sparse_mask(sp(lib)[0]))
    same(t, d)


def _grads(lib, fn, *make):
    inputs = [m(lib) for m in make]
    out = fn(lib, *inputs)
    leaves = [x for x in inputs if x.requires_grad]
    target = out.to_dense() if out.is_sparse else out
    w = lib.tensor(np.linspace(-1, 1, target.numel()).reshape(tuple(target.shape)),
                   dtype=target.dtype)
    grads = lib.autograd.grad((target * w).sum(), leaves)
    return out, grads


DMAT = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
DSQ = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)


def _values(lib):
    return lib.tensor(V, requires_grad=True)


def _dmat(lib):
    return lib.tensor(DMAT, requires_grad=True)


def _dsq(lib):
    return lib.tensor(DSQ, requires_grad=True)


def _s(lib, v):
    return lib.sparse_coo_tensor(I, v, (3, 3))


@pytest.mark.parametrize('name,fn,make', [
    ('sparse.mm', lambda lib, v, d: lib.sparse.mm(_s(lib, v), d), (_values, _dmat)),
    ('mm', lambda lib, v, d: lib.mm(_s(lib, v), d), (_values, _dmat)),
    ('spmm', lambda lib, v, d: lib.spmm(_s(lib, v), d), (_values, _dmat)),
    ('matmul', lambda lib, v, d: _s(lib, v) @ d, (_values, _dmat)),
    ('mv', lambda lib, v, d: _s(lib, v) @ d[:, 0], (_values, _dmat)),
    ('dense@sparse', lambda lib, v, d: d.t() @ _s(lib, v), (_values, _dmat)),
    ('addmm', lambda lib, v, d, m: lib.sparse.addmm(m, _s(lib, v), d, beta=0.5, alpha=2.),
     (_values, _dmat, lambda lib: lib.ones(3, 4, requires_grad=True))),
    ('to_dense', lambda lib, v: _s(lib, v).to_dense(), (_values,)),
    ('coalesce', lambda lib, v: _s(lib, v).coalesce().values(), (_values,)),
    ('mul dense', lambda lib, v, d: _s(lib, v) * d, (_values, _dsq)),
    ('dense mul', lambda lib, v, d: d * _s(lib, v), (_values, _dsq)),
    ('mul scalar', lambda lib, v: _s(lib, v) * 2.5, (_values,)),
    ('div scalar', lambda lib, v: _s(lib, v) / 4, (_values,)),
    ('neg', lambda lib, v: -_s(lib, v), (_values,)),
    ('mul sparse', lambda lib, v: _s(lib, v) * _s(lib, v * 2).coalesce(), (_values,)),
    ('add', lambda lib, v, d: d + _s(lib, v), (_values, _dsq)),
    ('add sparse', lambda lib, v: _s(lib, v) + _s(lib, v * 3), (_values,)),
    ('sub', lambda lib, v, d: d - _s(lib, v), (_values, _dsq)),
    ('sum', lambda lib, v: lib.sum(_s(lib, v)), (_values,)),
    ('sparse.sum', lambda lib, v: lib.sparse.sum(_s(lib, v)), (_values,)),
    ('sparse.sum dim', lambda lib, v: lib.sparse.sum(_s(lib, v), dim=1), (_values,)),
    ('softmax', lambda lib, v: lib.sparse.softmax(_s(lib, v), 1), (_values,)),
    ('softmax 0', lambda lib, v: lib.sparse.softmax(_s(lib, v), 0), (_values,)),
    ('log_softmax', lambda lib, v: lib.sparse.log_softmax(_s(lib, v), 1), (_values,)),
    ('t', lambda lib, v: _s(lib, v).t(), (_values,)),
    ('double', lambda lib, v: _s(lib, v).double(), (_values,)),
    ('to_sparse', lambda lib, d: lib.sparse.mm(d.t().to_sparse(), d), (_dmat,)),
])
def test_values_and_gradients_as_torch(name, fn, make):
    (t_out, t_grads), (d_out, d_grads) = both(lambda lib: _grads(lib, fn, *make))
    # two uncoalesced operands: PyTorch's result pattern depends on its kernels' paths
    # (sometimes merging equal index lists); dynagrad's is the plain one. Values agree.
    same(t_out, d_out, atol=1e-5, pattern=name not in ('mul sparse', 'add sparse'))
    assert d_out.grad_fn.name() == t_out.grad_fn.name()
    for tg, dg in zip(t_grads, d_grads):
        assert tg.is_sparse == dg.is_sparse
        np.testing.assert_allclose(dense(dg), dense(tg), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('fn', [lambda lib, s: s.sin(), lambda lib, s: lib.sum(s, 0),
                                lambda lib, s: s.abs().sqrt(), lambda lib, s: s.relu()])
def test_forward_only_as_torch(fn):
    """Ops whose backward PyTorch itself cannot run on a sparse tensor (sin's needs cos,
    sum over a dim needs expand): values compared; dynagrad's gradients go to gradcheck."""
    t, d = both(lambda lib: fn(lib, sp(lib)[0]))
    same(t, d)


@pytest.mark.parametrize('fn', [
    lambda v, d: dynagrad.sparse.mm(_s(dynagrad, v), d),
    lambda v, d: dynagrad.mm(_s(dynagrad, v), d),
    lambda v, d: d.t() @ _s(dynagrad, v),
    lambda v, d: dynagrad.sparse.addmm(d, _s(dynagrad, v), d),
    lambda v, d: (_s(dynagrad, v) * d[:, :3]).to_dense(),
    lambda v, d: dynagrad.sparse.softmax(_s(dynagrad, v), 1).to_dense(),
    lambda v, d: dynagrad.sparse.log_softmax(_s(dynagrad, v), 0).to_dense(),
    lambda v, d: dynagrad.sparse.sum(_s(dynagrad, v), 0).to_dense(),
    lambda v, d: (d[:, :3] + _s(dynagrad, v)).sin().sum() + _s(dynagrad, v).sin().to_dense(),
    lambda v, d: dynagrad.sum(_s(dynagrad, v), 1).to_dense() * d[0],
])
def test_gradcheck(fn):
    v = dynagrad.tensor(V, dtype=dynagrad.float64, requires_grad=True)
    d = dynagrad.tensor(np.random.default_rng(2).standard_normal((3, 3)), requires_grad=True)
    assert dynagrad.autograd.gradcheck(fn, (v, d))


@pytest.mark.parametrize('fn', [
    lambda lib, s, d: lib.sparse.mm(s, d),
    lambda lib, s, d: lib.mm(s, d),
    lambda lib, s, d: s.to_dense() * 2,
    lambda lib, s, d: lib.sparse.sum(s, dim=0).to_dense(),
    lambda lib, s, d: lib.sum(s),
])
def test_sparse_leaf_gradients(fn):
    def run(lib):
        s = lib.sparse_coo_tensor(I, lib.tensor(V), (3, 3)).requires_grad_()
        d = lib.tensor(DSQ)
        fn(lib, s, d).sum().backward()
        fn(lib, s, d).sum().backward()        # accumulated
        return s.grad
    t, d = both(run)
    assert t.is_sparse == d.is_sparse
    np.testing.assert_allclose(dense(d), dense(t), rtol=1e-5, atol=1e-5)


def test_gcn_loader_pipeline():
    """What pytorch/examples' gcn does to Cora: int64 sparse adjacency, eye + sparse, degree
    normalisation through sparse diagonals, sparse @ dense products."""
    rng = np.random.default_rng(3)
    edges = rng.integers(0, 20, size=(40, 2)).astype(np.int32)
    feats = (rng.random((20, 12)) < 0.3).astype(np.float32)

    def run(lib):
        features = lib.FloatTensor(feats)
        scale = 1 / lib.sum(features, dim=1)
        scale[scale == float('inf')] = 0
        features = lib.diag(scale).to_sparse() @ features
        adj = lib.sparse_coo_tensor(edges.T, lib.ones(40), (20, 20), dtype=lib.int64)
        adj = lib.eye(20) + adj
        deg = lib.sqrt(1 / lib.sum(adj, dim=1))
        deg = lib.diag(deg).to_sparse()
        adj = deg @ adj @ deg
        return features.to_sparse(), adj.to_sparse()
    (tf, ta), (df, da) = both(run)
    same(tf, df)
    same(ta, da)


def test_embedding_sparse_gradient_and_sparse_adam_as_torch():
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((10, 3)).astype(np.float32)
    batches = [rng.integers(0, 10, size=(2, 4)) for _ in range(4)]

    def run(lib):
        emb = lib.nn.Embedding(10, 3, sparse=True, padding_idx=0)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        grads = []
        for b in batches:
            opt.zero_grad()
            emb(lib.tensor(b)).pow(2).sum().backward()
            grads.append(emb.weight.grad)
            opt.step()
        return emb.weight.detach(), grads, opt.state[emb.weight]
    (tw, tg, ts), (dw, dg, ds) = both(run)
    for a, b in zip(tg, dg):
        assert b.is_sparse and not b.is_coalesced()
        same(a, b)
    np.testing.assert_allclose(dw.numpy(), tw.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ds['exp_avg_sq'].numpy(), ts['exp_avg_sq'].numpy(), rtol=1e-5)
    assert ds['step'] == ts['step'] == 4


def _train_sparse_embedding(lib, optimizer, kwargs, seed, steps, loss):
    """An Embedding(sparse=True) trained with ``optimizer``: its weight and the optimizer."""
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((8, 2)).astype(np.float32)
    emb = lib.nn.Embedding(8, 2, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(w0))
    opt = getattr(lib.optim, optimizer)(emb.parameters(), lr=0.1, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss(emb(lib.tensor(rng.integers(0, 8, size=5)))).backward()
        opt.step()
    return emb.weight.detach(), opt.state[emb.weight]


@pytest.mark.parametrize('kwargs', [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True),
                                    dict(maximize=True)])
def test_sgd_with_sparse_gradients_as_torch(kwargs):
    t, d = both(lambda lib: _train_sparse_embedding(lib, 'SGD', kwargs, 5, 3,
                                                     lambda out: out.sum())[0])
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('opt,message', [
    ('Adam', 'Adam does not support sparse gradients, please consider SparseAdam instead'),
    ('RMSprop', 'RMSprop does not support sparse gradients')])
def test_optimizers_refuse_sparse_gradients_as_torch(opt, message):
    for lib in (torch, dynagrad):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        o = getattr(lib.optim, opt)(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError, match=message):
            o.step()


@pytest.mark.parametrize('mode', ['sum', 'mean'])
def test_embedding_bag_sparse_gradient_as_torch(mode):
    rng = np.random.default_rng(6)
    w0 = rng.standard_normal((7, 3)).astype(np.float32)
    idx, offsets = rng.integers(0, 7, size=9), np.array([0, 3, 3, 5])

    def run(lib):
        bag = lib.nn.EmbeddingBag(7, 3, mode=mode, sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(w0))
        out = bag(lib.tensor(idx), lib.tensor(offsets))
        (out * lib.arange(12.).reshape(4, 3)).sum().backward()
        return bag.weight.grad
    t, d = both(run)
    assert t.is_sparse and d.is_sparse
    np.testing.assert_allclose(dense(d), dense(t), rtol=1e-5, atol=1e-6)


def test_embedding_bag_max_refuses_sparse_as_torch():
    for lib in (torch, dynagrad):
        bag = lib.nn.EmbeddingBag(5, 2, mode='max', sparse=True)
        with pytest.raises(ValueError, match='max mode does not support sparse weights'):
            bag(lib.tensor([1, 2, 3]), lib.tensor([0, 2]))


def test_a_second_derivative_through_a_sparse_op_is_refused_not_wrong():
    i = dynagrad.tensor([[0, 1, 1], [2, 0, 2]])
    v = dynagrad.tensor([3.0, 4.0, 5.0], requires_grad=True)
    dense = dynagrad.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2), requires_grad=True)
    loss = dynagrad.sparse.mm(dynagrad.sparse_coo_tensor(i, v, (2, 3)), dense).pow(2).sum()
    g, = dynagrad.autograd.grad(loss, dense, create_graph=True)
    with pytest.raises(RuntimeError, match='differentiates sparse ops once only'):
        g.sum().backward()


@pytest.mark.parametrize('kwargs', [dict(), dict(lr_decay=0.1, initial_accumulator_value=0.5),
                                    dict(maximize=True)])
def test_adagrad_with_sparse_gradients_as_torch(kwargs):
    (tw, ts), (dw, ds) = both(lambda lib: _train_sparse_embedding(
        lib, 'Adagrad', kwargs, 7, 4, lambda out: out.pow(2).sum()))
    np.testing.assert_allclose(dw.numpy(), tw.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ds['sum'].numpy(), ts['sum'].numpy(), rtol=1e-5, atol=1e-6)


def test_adagrad_weight_decay_with_sparse_gradients_is_refused_as_torch():
    for lib in (torch, dynagrad):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = lib.optim.Adagrad(emb.parameters(), weight_decay=0.1)
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError, match='weight_decay option is not compatible with '
                                               'sparse gradients'):
            opt.step()


def test_norm_of_a_sparse_tensor():
    """pytorch_optimizer takes grad.norm() of sparse gradients (torch's sparse norm kernel)."""
    dense = np.array([[0.0, -3.0, 0.0], [4.0, 0.0, 0.5]], np.float32)
    for p in (2, 1, float('inf'), 'fro', 3):
        ours = dynagrad.tensor(dense).to_sparse().norm(p)
        theirs = torch.tensor(dense).to_sparse().norm(p)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_dense_add_in_place_of_a_sparse_operand():
    """pytorch_optimizer's D-Adaptation accumulates sparse gradients with dense.add_(sparse)."""
    dense = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    sp = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, -1.0]], np.float32)
    ours, theirs = dynagrad.tensor(dense), torch.tensor(dense)
    assert ours.add_(dynagrad.tensor(sp).to_sparse(), alpha=0.5) is ours
    theirs.add_(torch.tensor(sp).to_sparse(), alpha=0.5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not ours.is_sparse
