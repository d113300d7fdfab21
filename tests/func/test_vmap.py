"""dynagrad.func.vmap against torch.func.vmap: in_dims/out_dims as ints, None and pytrees,
nesting, composition with grad/jacrev/jacfwd (per-sample gradients through
functional_call, model ensembling), chunk_size, randomness modes, and torch's errors."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.func import vmap, grad, jacrev, jacfwd, functional_call, stack_module_state

R = np.random.default_rng(5)
W_SHARED = dynagrad.ones(3, requires_grad=True)


def both(*arrays):
    return ([dynagrad.tensor(a.copy()) for a in arrays],
            [torch.from_numpy(a.copy()) for a in arrays])


def close(a, b, tol=1e-6):
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    if isinstance(b, dict):
        assert set(a) == set(b)
        for k in b:
            close(a[k], b[k], tol)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


CASES = [
    ('dot', lambda L: lambda a, b: (a * b).sum(), dict(), (R.standard_normal((5, 3)),
                                                          R.standard_normal((5, 3)))),
    ('in_dims None', lambda L: lambda a, w: L.matmul(w, a), dict(in_dims=(0, None)),
     (R.standard_normal((5, 3)), R.standard_normal((4, 3)))),
    ('in_dims 1, out_dims 1', lambda L: lambda a: L.softmax(a, 0) * 2,
     dict(in_dims=1, out_dims=1), (R.standard_normal((3, 6)),)),
    ('negative dims', lambda L: lambda a: a.sum(-1), dict(in_dims=-1, out_dims=-1),
     (R.standard_normal((2, 3, 4)),)),
    ('tuple of outputs', lambda L: lambda a: (a.max(0).values, a.mean()), dict(),
     (R.standard_normal((4, 3, 2)),)),
    ('pytree in and out', lambda L: lambda d: {'s': d['x'] + d['y'][0], 't': [d['x'] * 3]},
     dict(in_dims=({'x': 0, 'y': [1]},)), None),
    ('matrix products', lambda L: lambda a, b: (a @ b, L.einsum('ij,jk->ik', a, b),
                                               L.mm(a, b).t()),
     dict(), (R.standard_normal((3, 2, 4)), R.standard_normal((3, 4, 5)))),
    ('shapes', lambda L: lambda a: (a.view(6).unsqueeze(0).expand(2, 6).reshape(3, 4),
                                    a.transpose(0, 1)[1:, ::2], L.cat([a, a], 1),
                                    L.stack([a, a + 1]), a.permute(1, 0).flip(0)),
     dict(), (R.standard_normal((4, 2, 3)),)),
    ('nn layers', lambda L: lambda x, w, b: L.nn.functional.layer_norm(
        L.nn.functional.gelu(L.nn.functional.linear(x, w, b)), (4,)),
     dict(in_dims=(0, None, None)), (R.standard_normal((5, 2, 3)), R.standard_normal((4, 3)),
                                     R.standard_normal(4))),
    ('conv2d with per-sample weights', lambda L: lambda x, w: L.nn.functional.conv2d(
        x, w, padding=1), dict(), (R.standard_normal((3, 2, 2, 5, 5)),
                                   R.standard_normal((3, 4, 2, 3, 3)))),
    ('losses', lambda L: lambda x, t: (L.nn.functional.cross_entropy(x, t),
                                       L.nn.functional.mse_loss(x, x * 0.5)),
     dict(), (R.standard_normal((4, 6, 5)), R.integers(0, 5, (4, 6)))),
]


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_torch(case):
    _, make, kw, arrays = case
    if arrays is None:
        x, y = R.standard_normal((4, 3)), R.standard_normal((3, 4))
        d = {'x': dynagrad.tensor(x), 'y': [dynagrad.tensor(y)]}
        t = {'x': torch.from_numpy(x), 'y': [torch.from_numpy(y)]}
        close(vmap(make(dynagrad), **kw)(d), torch.func.vmap(make(torch), **kw)(t))
        return
    d, t = both(*arrays)
    close(vmap(make(dynagrad), **kw)(*d), torch.func.vmap(make(torch), **kw)(*t))


def test_nested_vmap_and_chunks():
    a, b = R.standard_normal((3, 4, 5)), R.standard_normal((4, 5))
    (da, db), (ta, tb) = both(a, b)
    f = lambda L: lambda x, y: (x * y).sum(-1)  # noqa: E731
    close(vmap(vmap(f(dynagrad), in_dims=(0, 0)), in_dims=(0, None))(da, db),
          torch.func.vmap(torch.func.vmap(f(torch)), in_dims=(0, None))(ta, tb))
    close(vmap(f(dynagrad), in_dims=(1, None), chunk_size=3)(da, db[0]),
          torch.func.vmap(f(torch), in_dims=(1, None), chunk_size=3)(ta, tb[0]))


def _mlp_pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    dm = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    dm.load_state_dict({k: dynagrad.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    return dm, tm


def test_per_sample_gradients_through_functional_call():
    dm, tm = _mlp_pair()
    x, y = R.standard_normal((7, 6)).astype(np.float32), R.integers(0, 3, 7)
    (dx, dy), (tx, ty) = both(x, y)

    def loss(lib, model, fc):
        def f(p, xi, yi):
            out = fc(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))
        return f
    dp = {k: v.detach() for k, v in dm.named_parameters()}
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    got = vmap(grad(loss(dynagrad, dm, functional_call)), in_dims=(None, 0, 0))(dp, dx, dy)
    want = torch.func.vmap(torch.func.grad(loss(torch, tm, torch.func.functional_call)),
                           in_dims=(None, 0, 0))(tp, tx, ty)
    close(got, want, 1e-5)
    # and each sample's gradient is the gradient of that sample alone
    dm.zero_grad()
    F.cross_entropy(dm(dx[2:3]), dy[2:3]).backward()
    np.testing.assert_allclose(got['0.weight'][2].numpy(), dm[0].weight.grad.numpy(), 1e-5, 1e-6)


def test_model_ensembling_with_stacked_state():
    models = [_mlp_pair()[0] for _ in range(3)]
    for k, m in enumerate(models):
        with dynagrad.no_grad():
            for p in m.parameters():
                p.mul_(1 + k)
    params, buffers = stack_module_state(models)
    x = dynagrad.tensor(R.standard_normal((5, 6)).astype(np.float32))

    def run(p, b, xx):
        return functional_call(models[0], (p, b), (xx,))
    out = vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].detach().numpy(), m(x).detach().numpy(), 1e-5, 1e-6)


def test_vmap_composes_with_jacobians_and_backward():
    a = R.standard_normal((4, 3))
    (da,), (ta,) = both(a)
    f = lambda L: lambda x: L.sin(x) * x.sum()  # noqa: E731
    close(vmap(jacrev(f(dynagrad)))(da), torch.func.vmap(torch.func.jacrev(f(torch)))(ta))
    close(vmap(jacfwd(f(dynagrad)))(da), torch.func.vmap(torch.func.jacfwd(f(torch)))(ta))
    # ordinary autograd through a vmapped computation
    da.requires_grad_()
    ta.requires_grad_()
    vmap(f(dynagrad))(da).pow(2).sum().backward()
    torch.func.vmap(f(torch))(ta).pow(2).sum().backward()
    close(da.grad, ta.grad)
    # grad of a function that vmaps inside
    close(grad(lambda x: vmap(f(dynagrad))(x).sum())(da.detach()),
          torch.func.grad(lambda x: torch.func.vmap(f(torch))(x).sum())(ta.detach()))


def test_randomness_modes():
    x = dynagrad.ones(4, 3)
    with pytest.raises(RuntimeError, match='called random operation while in randomness error'):
        vmap(lambda t: t + dynagrad.rand(3))(x)
    with pytest.raises(RuntimeError, match='randomness error mode'):
        vmap(lambda t: F.dropout(t, 0.5))(x)
    same = vmap(lambda t: F.dropout(t, 0.5), randomness='same')(dynagrad.ones(8, 50))
    assert all((same[i] == same[0]).all() for i in range(8))
    diff = vmap(lambda t: F.dropout(t, 0.5), randomness='different')(dynagrad.ones(8, 50))
    assert not all((diff[i] == diff[0]).all() for i in range(8))
    filled = vmap(lambda t: t.clone().uniform_(), randomness='same')(x)
    assert all((filled[i] == filled[0]).all() for i in range(4))
    filled = vmap(lambda t: t.clone().uniform_(), randomness='different')(x)
    assert not (filled[1] == filled[0]).all()
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda t: t, randomness='sometimes')
    # factories and samplers: one draw per sample, or one shared draw
    for draw in (lambda t: t + dynagrad.randn(3), lambda t: dynagrad.rand_like(t),
                 lambda t: t + dynagrad.randint(0, 1000, (3,)),
                 lambda t: dynagrad.bernoulli(t * 0.5)):
        diff = vmap(draw, randomness='different')(x)
        assert diff.shape == (4, 3) and not all((diff[i] == diff[0]).all() for i in range(4))
        same = vmap(draw, randomness='same')(x)
        assert all((same[i] == same[0]).all() for i in range(4))
        with pytest.raises(RuntimeError, match='randomness error mode'):
            vmap(draw)(x)
    p = dynagrad.tensor([[0.0] * 8, [1.0] * 8])     # 'same': one uniform draw, each p
    shared = vmap(dynagrad.bernoulli, randomness='same')(p)
    assert not shared[0].any() and shared[1].all()


@pytest.mark.parametrize('call,exc,match', [
    (lambda: vmap(lambda t: t)(dynagrad.ones(2), dynagrad.ones(2)), TypeError, ''),
    (lambda: vmap(lambda t, u: t + u)(dynagrad.ones(2), dynagrad.ones(3)), ValueError,
     'Expected all tensors to have the same size in the mapped dimension'),
    (lambda: vmap(lambda t: t, in_dims=2)(dynagrad.ones(2, 2)), ValueError,
     'expected in_dim to satisfy'),
    (lambda: vmap(lambda t, n: t, in_dims=(0, 0))(dynagrad.ones(2), 3), ValueError,
     'We cannot vmap over non-Tensor arguments'),
    (lambda: vmap(lambda t: t, in_dims=None)(dynagrad.ones(2)), ValueError,
     'There are no Tensors that are being vmapped over'),
    (lambda: vmap(lambda t: 3)(dynagrad.ones(2)), ValueError, 'must only return Tensors'),
    (lambda: vmap(lambda t: t.item())(dynagrad.ones(2)), RuntimeError,
     "calling .item\\(\\) on a Tensor"),
    (lambda: vmap(lambda t: 1 if t > 0 else 0)(dynagrad.ones(2)), RuntimeError,
     'data-dependent control flow'),
    (lambda: vmap(lambda t, u: u.add_(t), in_dims=(0, None))(dynagrad.ones(2, 3),
                                                             dynagrad.ones(3)),
     RuntimeError, 'vmapped over but `self` not being vmapped'),
    (lambda: vmap(lambda t: t, chunk_size=0), ValueError, 'chunk_size should be None or '
     'greater than 0'),
    (lambda: vmap(lambda t: dynagrad.autograd.grad((W_SHARED * t).sum(), W_SHARED))(
        dynagrad.ones(2, 3)), RuntimeError, 'does not require grad and does not have a '
     'grad_fn'),
])
def test_errors_as_torch(call, exc, match):
    # (torch.func.vmap refuses each of these the same way)
    with pytest.raises(exc, match=match):
        call()


def test_in_place_on_a_batched_tensor_writes_through():
    x = dynagrad.zeros(3, 4)
    vmap(lambda t, v: t.add_(v))(x, dynagrad.arange(3.).unsqueeze(1).expand(3, 4))
    np.testing.assert_array_equal(x.numpy(), np.arange(3.)[:, None] * np.ones((3, 4)))


def test_grads_batched():
    x = dynagrad.tensor(R.standard_normal(3), requires_grad=True)
    tx = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    v = np.eye(3)
    got = dynagrad.autograd.grad(x.sin(), x, dynagrad.tensor(v), is_grads_batched=True)
    want = torch.autograd.grad(tx.sin(), tx, torch.from_numpy(v), is_grads_batched=True)
    close(got, want)


def test_hessian_per_sample_and_chunked_jacrev():
    a = R.standard_normal((3, 4))
    (da,), (ta,) = both(a)
    f = lambda L: lambda x: (L.tanh(x) * x).sum() ** 2  # noqa: E731
    close(vmap(dynagrad.func.hessian(f(dynagrad)))(da),
          torch.func.vmap(torch.func.hessian(f(torch)))(ta))
    g = lambda L: lambda x: L.sin(x) * x  # noqa: E731
    close(jacrev(g(dynagrad), chunk_size=3)(da[0]), torch.func.jacrev(g(torch))(ta[0]))
    with pytest.raises(ValueError, match='chunk_size'):
        jacrev(g(dynagrad), chunk_size=0)(da[0])


def test_jacrev_while_a_device_backend_is_registered():
    # a live meta tensor registers the meta backend, which turns the vmap flag on without
    # any vmap level: jacrev still checks chunk_size and takes its one-batch path
    a = R.standard_normal(4)
    (da,), (ta,) = both(a)
    alive = dynagrad.empty(2, device='meta')
    g = lambda L: lambda x: L.sin(x) * x  # noqa: E731
    close(jacrev(g(dynagrad), chunk_size=3)(da), torch.func.jacrev(g(torch))(ta))
    with pytest.raises(ValueError, match='chunk_size'):
        jacrev(g(dynagrad), chunk_size=0)(da)
    del alive
