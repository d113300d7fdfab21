"""nn.Parameter, nn.Module and the few layers dynagrad has, against torch.nn as the oracle."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import nn
from dynagrad.autograd import Variable


@pytest.fixture(autouse=True)
def _reset_printoptions():
    dynagrad.set_printoptions(profile='default')
    torch.set_printoptions(profile='default')
    yield
    dynagrad.set_printoptions(profile='default')
    torch.set_printoptions(profile='default')


def _torch_repr(obj):
    return repr(obj).replace('torch.', 'dynagrad.')


# -- Parameter ---------------------------------------------------------------------------

@pytest.mark.parametrize('values', [
    [[1.0, 2.0], [3.0, 4.0]], [0.5, -1.25, 3.0], [[1e-5, 2e3]], [3.25], [],
])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_parameter_repr_matches_torch(values, dtype):
    arr = np.array(values, dtype=dtype)
    p = nn.Parameter(dynagrad.from_numpy(arr.copy()))
    tp = torch.nn.Parameter(torch.from_numpy(arr.copy()))
    assert repr(p) == _torch_repr(tp)
    assert str(p) == _torch_repr(tp)


def test_parameter_repr_scalar_and_frozen_match_torch():
    assert repr(nn.Parameter(dynagrad.tensor(2.5))) == _torch_repr(
        torch.nn.Parameter(torch.tensor(2.5)))
    p = nn.Parameter(dynagrad.tensor([1.0, 2.0]), requires_grad=False)
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)
    assert repr(p) == _torch_repr(tp)


def test_parameter_legacy_repr():
    dynagrad.set_printoptions(legacy=True)
    p = nn.Parameter(dynagrad.FloatTensor([[1, 2], [3, 4]]))
    assert repr(p) == 'Parameter containing:\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n'


def test_parameter_defaults_and_sharing():
    t = dynagrad.FloatTensor([1, 2])
    p = nn.Parameter(t)
    assert isinstance(p, dynagrad.Tensor) and type(p) is nn.Parameter
    assert p.requires_grad and p.is_leaf and p.grad is None
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    t[0] = 5
    assert p.tolist() == [5, 2]
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


def test_parameter_ops_give_plain_tensors():
    p = nn.Parameter(dynagrad.ones(2))
    r = p * 2
    assert type(r) is dynagrad.Tensor and r.requires_grad and r.grad_fn is not None
    assert type(p.data) is dynagrad.Tensor


def test_variable_needs_flag_parameter_does_not():
    assert not Variable(dynagrad.ones(1)).requires_grad
    assert nn.Parameter(dynagrad.ones(1)).requires_grad
    assert not dynagrad.tensor([1.0]).requires_grad


# -- Module ------------------------------------------------------------------------------

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(dynagrad.ones(3))
        self.inner = nn.Linear(3, 2)
        self.scale = 2.0

    def forward(self, x):
        return self.inner(x * self.w) * self.scale


def test_attribute_registration():
    net = Net()
    assert list(net._parameters) == ['w']
    assert list(net._modules) == ['inner']
    assert net.scale == 2.0 and 'scale' in net.__dict__
    assert net.w is net._parameters['w']
    assert [n for n, _ in net.named_parameters()] == ['w', 'inner.weight', 'inner.bias']
    params = list(net.parameters())
    assert len(params) == 3 and params[0] is net.w
    assert [n for n, _ in net.named_modules()] == ['', 'inner']
    assert list(net.children()) == [net.inner]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ['w']


def test_parameters_is_a_generator_without_duplicates():
    net = Net()
    net.tied = net.w
    gen = net.parameters()
    assert iter(gen) is gen
    assert len(list(gen)) == 3


def test_reassign_and_delete():
    net = Net()
    net.w = None
    assert net.w is None and [n for n, _ in net.named_parameters()][0] == 'inner.weight'
    with pytest.raises(TypeError):
        net.w = dynagrad.ones(3)   # a plain tensor cannot replace a parameter slot
    net.w = nn.Parameter(dynagrad.zeros(3))
    del net.inner
    assert [n for n, _ in net.named_parameters()] == ['w']
    with pytest.raises(AttributeError):
        net.inner


def test_assign_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(dynagrad.ones(1))

    with pytest.raises(AttributeError, match='before Module.__init__'):
        Bad()


def test_call_runs_forward():
    net = Net()
    x = dynagrad.ones(4, 3)
    assert net(x).shape == (4, 2)
    with pytest.raises(NotImplementedError):
        nn.Module()(x)


def test_zero_grad_sets_to_none_by_default():
    net = Net()
    net(dynagrad.ones(1, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_zero_grad_set_to_none_false_zeroes_in_place():
    net = Net()
    net(dynagrad.ones(1, 3)).sum().backward()
    g = net.w.grad
    net.zero_grad(set_to_none=False)
    assert net.w.grad is g and g.tolist() == [0.0, 0.0, 0.0]
    assert all(p.grad.abs().sum().item() == 0 for p in net.parameters())


def test_train_eval_and_requires_grad_():
    net = Net()
    assert net.training and net.inner.training
    net.eval()
    assert not net.training and not net.inner.training
    net.train()
    assert net.inner.training
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


# -- Linear -------------------------------------------------------------------------------

def _copy_linear(tl, dtype=np.float32):
    lin = nn.Linear(tl.in_features, tl.out_features, bias=tl.bias is not None)
    lin.weight = nn.Parameter(dynagrad.from_numpy(tl.weight.detach().numpy().astype(dtype)))
    if tl.bias is not None:
        lin.bias = nn.Parameter(dynagrad.from_numpy(tl.bias.detach().numpy().astype(dtype)))
    return lin


@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('in_shape', [(5, 3), (3,), (2, 4, 3)])
def test_linear_matches_torch(bias, in_shape):
    torch.manual_seed(0)
    tl = torch.nn.Linear(3, 2, bias=bias).double()
    lin = _copy_linear(tl, np.float64)
    xn = np.random.default_rng(1).standard_normal(in_shape)
    tx = torch.tensor(xn, requires_grad=True)
    x = dynagrad.tensor(xn, requires_grad=True)
    tout, out = tl(tx), lin(x)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    gn = np.random.default_rng(2).standard_normal(tout.shape)
    tout.backward(torch.tensor(gn))
    out.backward(dynagrad.tensor(gn))
    np.testing.assert_allclose(lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    if bias:
        np.testing.assert_allclose(lin.bias.grad.numpy(), tl.bias.grad.numpy(), rtol=1e-12)
    else:
        assert lin.bias is None


def test_linear_init_and_shapes():
    dynagrad.manual_seed(0)
    lin = nn.Linear(4, 3)
    assert lin.weight.shape == (3, 4) and lin.bias.shape == (3,)
    assert lin.weight.dtype == dynagrad.float32
    bound = 1 / 2
    assert np.all(np.abs(lin.weight.detach().numpy()) <= bound)
    assert np.all(np.abs(lin.bias.detach().numpy()) <= bound)
    assert isinstance(lin.weight, nn.Parameter)
    assert nn.Linear(2, 2, dtype=dynagrad.float64).weight.dtype == dynagrad.float64


def test_linear_float32_matches_torch():
    torch.manual_seed(3)
    tl = torch.nn.Linear(3, 2)
    lin = _copy_linear(tl)
    xn = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(lin(dynagrad.from_numpy(xn)).detach().numpy(),
                               tl(torch.from_numpy(xn)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_linear_repr_matches_torch():
    assert repr(nn.Linear(3, 2)) == repr(torch.nn.Linear(3, 2))
    assert repr(nn.Linear(3, 2, bias=False)) == repr(torch.nn.Linear(3, 2, bias=False))


# -- nested repr, Sequential, activations, losses -----------------------------------------

def _build(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 4)
            self.act = lib.nn.ReLU()

    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), Block())
            self.head = lib.nn.Linear(4, 1, bias=False)
            self.scale = lib.nn.Parameter(lib.ones(1))
            self.empty = lib.nn.Sequential()

    return Model()


def test_nested_module_repr_matches_torch():
    assert repr(_build(dynagrad)) == repr(_build(torch))


@pytest.mark.parametrize('make', [
    lambda lib: lib.nn.ReLU(), lambda lib: lib.nn.ReLU(inplace=True),
    lambda lib: lib.nn.Sigmoid(), lambda lib: lib.nn.Tanh(), lambda lib: lib.nn.Identity(),
    lambda lib: lib.nn.MSELoss(), lambda lib: lib.nn.Sequential(),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1)),
])
def test_simple_module_reprs_match_torch(make):
    assert repr(make(dynagrad)) == repr(make(torch))


def test_sequential_forward_and_indexing_match_torch():
    torch.manual_seed(0)
    ts = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2),
                             torch.nn.Sigmoid()).double()
    s = nn.Sequential(_copy_linear(ts[0], np.float64), nn.ReLU(),
                      _copy_linear(ts[2], np.float64), nn.Sigmoid())
    assert len(s) == 4 and isinstance(s[1], nn.ReLU) and s[-1] is s[3]
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in ts.named_parameters()]
    xn = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_allclose(s(dynagrad.tensor(xn)).detach().numpy(),
                               ts(torch.tensor(xn)).detach().numpy(), rtol=1e-12)
    assert isinstance(s[:2], nn.Sequential) and len(s[:2]) == 2


@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_mse_loss_matches_torch(reduction):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ta = torch.tensor(a, requires_grad=True)
    da = dynagrad.tensor(a, requires_grad=True)
    tl = torch.nn.MSELoss(reduction=reduction)(ta, torch.tensor(b))
    dl = nn.MSELoss(reduction=reduction)(da, dynagrad.tensor(b))
    np.testing.assert_allclose(dl.detach().numpy(), tl.detach().numpy(), rtol=1e-12)
    tl.sum().backward()
    dl.sum().backward()
    np.testing.assert_allclose(da.grad.numpy(), ta.grad.numpy(), rtol=1e-12)


def test_functional_matches_torch():
    F = nn.functional
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    np.testing.assert_allclose(
        F.linear(dynagrad.tensor(x), dynagrad.tensor(w), dynagrad.tensor(b)).numpy(),
        torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy(),
        rtol=1e-12)
    for name in ('relu', 'tanh', 'sigmoid'):
        np.testing.assert_allclose(getattr(F, name)(dynagrad.tensor(x)).numpy(),
                                   getattr(torch.nn.functional, name)(torch.tensor(x)).numpy(),
                                   rtol=1e-12)


def test_whole_model_loads_weights_only_once_its_classes_are_allowed(tmp_path):
    import dynagrad as dg
    model = dg.nn.Sequential(dg.nn.Embedding(5, 4), dg.nn.LSTM(4, 4), dg.nn.Linear(4, 2))
    dg.save(model, tmp_path / 'model.pt')
    import pickle
    with pytest.raises(pickle.UnpicklingError, match='Sequential'):
        dg.load(tmp_path / 'model.pt')
    allowed = [dg.nn.Sequential, dg.nn.Embedding, dg.nn.LSTM, dg.nn.Linear]
    with dg.serialization.safe_globals(allowed):
        loaded = dg.load(tmp_path / 'model.pt')
    seen = []
    loaded[2].register_forward_hook(lambda m, i, o: seen.append(o.shape))
    loaded[2](dg.ones(1, 4))
    assert seen == [dg.Size([1, 2])]
    assert all(dg.equal(a, b) for a, b in zip(model.parameters(), loaded.parameters()))
