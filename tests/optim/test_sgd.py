"""optim.SGD against torch.optim.SGD: parameter trajectories over 20 steps in float64."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import nn, optim

STEPS = 20

OPTIONS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.5),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.05, momentum=0.8, weight_decay=0.01, nesterov=True),
    dict(lr=0.05, maximize=True),
    dict(lr=0.02, momentum=0.5, dampening=0.1, weight_decay=0.05, maximize=True),
]


def _problem(lib, w0, b0, data):
    """A small least-squares-plus-quartic problem with two parameters of different shapes."""
    x, y = (lib.tensor(a) for a in data)
    w = lib.nn.Parameter(lib.tensor(w0.copy()))
    b = lib.nn.Parameter(lib.tensor(b0.copy()))

    def loss_fn():
        pred = x @ w + b
        return ((pred - y) ** 2).mean() + 0.01 * (w ** 4).sum()

    return w, b, loss_fn


def _trajectory(lib, options, sign=1.0):
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((3, 2)), rng.standard_normal(2)
    data = (rng.standard_normal((8, 3)), rng.standard_normal((8, 2)))
    w, b, loss_fn = _problem(lib, w0, b0, data)
    opt = lib.optim.SGD([w, b], **options)
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn()
        (sign * loss).backward()
        opt.step()
        out.append((w.detach().numpy().copy(), b.detach().numpy().copy(), loss.item()))
    return out


@pytest.mark.parametrize('options', OPTIONS, ids=lambda o: ','.join(f'{k}={v}' for k, v in o.items()))
def test_sgd_follows_torch_trajectory(options):
    # with maximize, climb the negated loss so the trajectory stays bounded
    sign = -1.0 if options.get('maximize') else 1.0
    ours = _trajectory(dynagrad, options, sign)
    theirs = _trajectory(torch, options, sign)
    for (w, b, l), (tw, tb, tl) in zip(ours, theirs):
        np.testing.assert_allclose(w, tw, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(b, tb, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(l, tl, rtol=1e-6)
    assert not np.allclose(ours[0][0], ours[-1][0])   # it moved


def test_sgd_with_module_parameters_and_zero_grad():
    torch.manual_seed(0)
    tl = torch.nn.Linear(3, 1).double()
    lin = nn.Linear(3, 1, dtype=dynagrad.float64)
    lin.weight.data = dynagrad.tensor(tl.weight.detach().numpy().copy())
    lin.bias.data = dynagrad.tensor(tl.bias.detach().numpy().copy())
    rng = np.random.default_rng(1)
    xn, yn = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    topt = torch.optim.SGD(tl.parameters(), lr=0.1, momentum=0.9)
    opt = optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    for _ in range(STEPS):
        for o, m, X, Y in ((topt, tl, torch.tensor(xn), torch.tensor(yn)),
                           (opt, lin, dynagrad.tensor(xn), dynagrad.tensor(yn))):
            o.zero_grad()
            ((m(X) - Y) ** 2).mean().backward()
            o.step()
    np.testing.assert_allclose(lin.weight.detach().numpy(), tl.weight.detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(lin.bias.detach().numpy(), tl.bias.detach().numpy(), rtol=1e-6)


def test_param_groups_and_skipping_params_without_grad():
    a = nn.Parameter(dynagrad.tensor([1.0, 2.0]))
    b = nn.Parameter(dynagrad.tensor([3.0]))
    c = nn.Parameter(dynagrad.tensor([5.0]))
    opt = optim.SGD([{'params': [a]}, {'params': b, 'lr': 0.5}, {'params': [c]}], lr=0.1)
    assert [g['lr'] for g in opt.param_groups] == [0.1, 0.5, 0.1]
    (a.sum() + b.sum() * 2).backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 1.9])
    assert b.tolist() == pytest.approx([2.0])
    assert c.tolist() == [5.0] and c.grad is None


def test_step_is_not_recorded_and_keeps_leaves():
    p = nn.Parameter(dynagrad.tensor([1.0]))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    (p * 3).sum().backward()
    v = p._version
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._version > v
    assert p.tolist() == pytest.approx([0.7])


def test_closure_is_called_and_returned():
    p = nn.Parameter(dynagrad.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 4.0 and p.tolist() == [1.0]


def test_zero_grad_variants():
    p = nn.Parameter(dynagrad.tensor([2.0]))
    opt = optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0]
    opt.zero_grad()
    assert p.grad is None


@pytest.mark.parametrize('kwargs,match', [
    (dict(lr=-1), 'Invalid learning rate'),
    (dict(lr=0.1, momentum=-0.5), 'Invalid momentum'),
    (dict(lr=0.1, weight_decay=-1), 'Invalid weight_decay'),
    (dict(lr=0.1, nesterov=True), 'Nesterov momentum requires a momentum and zero dampening'),
    (dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), 'Nesterov'),
])
def test_invalid_arguments_raise_like_torch(kwargs, match):
    with pytest.raises(ValueError, match=match):
        optim.SGD([nn.Parameter(dynagrad.ones(1))], **kwargs)
    with pytest.raises(ValueError, match=match):
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], **kwargs)


def test_invalid_params_raise():
    with pytest.raises(ValueError, match='empty parameter list'):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match='iterable'):
        optim.SGD(nn.Parameter(dynagrad.ones(1)), lr=0.1)
    x = dynagrad.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([x * 2], lr=0.1)


def test_default_lr_is_torchs():
    opt = optim.SGD([nn.Parameter(dynagrad.ones(1))])
    topt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
    assert opt.defaults['lr'] == topt.defaults['lr']
