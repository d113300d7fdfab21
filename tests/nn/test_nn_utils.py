"""nn.utils (issue 16, C2) against torch with the same weights and inputs: parametrize,
parametrizations.weight_norm/spectral_norm, the legacy hook-based weight_norm and
spectral_norm, stateless.functional_call, fusion, skip_init, clip_grad_norm and the
memory-format converters."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.utils as tutils
from torch.nn.utils import parametrize as tP

import dynagrad
import dynagrad.nn as nn
import dynagrad.nn.utils as utils
from dynagrad.nn.utils import parametrize as P


def dg(t, requires_grad=False):
    return dynagrad.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def raises_like(d_call, t_call):
    with pytest.raises(Exception) as t_err:
        t_call()
    with pytest.raises(type(t_err.value)) as d_err:
        d_call()
    assert str(d_err.value).replace('dynagrad', 'torch') == str(t_err.value)


def linear_pair(n_in=3, n_out=4):
    t = tnn.Linear(n_in, n_out)
    d = nn.Linear(n_in, n_out)
    d.load_state_dict({k: dg(v) for k, v in t.state_dict().items()})
    return d, t


def state_into(d, t):
    d.load_state_dict({k: dg(v) for k, v in t.state_dict().items()})


# -- parametrize ---------------------------------------------------------------------------

class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class TSymmetric(tnn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class Double(nn.Module):
    def forward(self, X):
        return X * 2


class TDouble(tnn.Module):
    def forward(self, X):
        return X * 2


def test_register_parametrization_structure_and_values():
    d, t = linear_pair(4, 4)
    P.register_parametrization(d, 'weight', Symmetric())
    tP.register_parametrization(t, 'weight', TSymmetric())
    assert type(d).__name__ == type(t).__name__ == 'ParametrizedLinear'
    assert isinstance(d, nn.Linear)
    assert P.type_before_parametrizations(d) is nn.Linear
    assert list(d.state_dict()) == list(t.state_dict())
    assert [n for n, _ in d.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert P.is_parametrized(d) and P.is_parametrized(d, 'weight')
    assert not P.is_parametrized(d, 'bias')
    close(d.parametrizations.weight.original, t.parametrizations.weight.original)
    close(d.weight, t.weight)
    assert isinstance(d.parametrizations.weight.original, nn.Parameter)
    # a second parametrization is appended
    P.register_parametrization(d, 'weight', Double())
    tP.register_parametrization(t, 'weight', TDouble())
    assert len(d.parametrizations.weight) == 2
    x = torch.randn(2, 4)
    xd = dg(x, True)
    x.requires_grad_(True)
    d(xd).square().sum().backward()
    t(x).square().sum().backward()
    close(xd.grad, x.grad)
    close(d.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    close(d.bias.grad, t.bias.grad)


def test_assigning_a_parametrized_tensor_uses_right_inverse():
    d, t = linear_pair(3, 3)
    P.register_parametrization(d, 'weight', Symmetric())
    tP.register_parametrization(t, 'weight', TSymmetric())
    value = torch.randn(3, 3)
    value = value + value.T
    with torch.no_grad():
        t.weight = value
    d.weight = dg(value)
    close(d.parametrizations.weight.original, t.parametrizations.weight.original)
    close(d.weight, t.weight)
    original = d.parametrizations.weight.original
    d.weight = dg(value * 2)
    assert d.parametrizations.weight.original is original   # written in place


def test_remove_parametrizations_matches_torch():
    for leave in (True, False):
        d, t = linear_pair(3, 3)
        P.register_parametrization(d, 'weight', Double())
        tP.register_parametrization(t, 'weight', TDouble())
        original = d.parametrizations.weight.original
        P.remove_parametrizations(d, 'weight', leave_parametrized=leave)
        tP.remove_parametrizations(t, 'weight', leave_parametrized=leave)
        assert type(d) is nn.Linear and type(t) is tnn.Linear
        assert 'parametrizations' not in d._modules
        assert d.weight is original and isinstance(d.weight, nn.Parameter)
        close(d.weight, t.weight)
        assert list(d.state_dict()) == list(t.state_dict())
    raises_like(lambda: P.remove_parametrizations(d, 'weight'),
                lambda: tP.remove_parametrizations(t, 'weight'))
    raises_like(lambda: P.register_parametrization(d, 'foo', Double()),
                lambda: tP.register_parametrization(t, 'foo', TDouble()))


def test_parametrization_shape_and_dtype_checks_match_torch():
    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]

    class TShrink(tnn.Module):
        def forward(self, X):
            return X[:1]

    d, t = linear_pair()
    raises_like(lambda: P.register_parametrization(d, 'weight', Shrink()),
                lambda: tP.register_parametrization(t, 'weight', TShrink()))
    P.register_parametrization(d, 'weight', Shrink(), unsafe=True)
    tP.register_parametrization(t, 'weight', TShrink(), unsafe=True)
    assert tuple(d.weight.shape) == tuple(t.weight.shape) == (1, 3)


def test_parametrized_module_deepcopies():
    import copy
    d, t = linear_pair(3, 3)
    P.register_parametrization(d, 'weight', Symmetric())
    tP.register_parametrization(t, 'weight', TSymmetric())
    d2, t2 = copy.deepcopy(d), copy.deepcopy(t)
    assert type(d2) is type(d)
    assert d2.parametrizations.weight.original is not d.parametrizations.weight.original
    close(d2.weight, t2.weight)
    x = torch.randn(2, 3)
    close(d2(dg(x)), t2(x))


def test_cached_computes_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1

    d, _ = linear_pair()
    P.register_parametrization(d, 'weight', Counting())
    calls.clear()
    with P.cached():
        a = d.weight
        b = d.weight
    assert a is b and len(calls) == 1
    d.weight
    assert len(calls) == 2


def test_buffer_parametrization_and_pickling_refused():
    d = nn.BatchNorm1d(3)
    P.register_parametrization(d, 'running_mean', Double())
    assert list(d.state_dict()) == [
        'weight', 'bias', 'running_var', 'num_batches_tracked',
        'parametrizations.running_mean.original']
    import pickle
    with pytest.raises(RuntimeError, match='only supported through state_dict'):
        pickle.dumps(d)


# -- parametrizations.weight_norm / spectral_norm ------------------------------------------

@pytest.mark.parametrize('dim', [0, 1, None])
def test_parametrized_weight_norm_matches_torch(dim):
    t = tnn.Conv2d(3, 4, 2)
    d = nn.Conv2d(3, 4, 2)
    state_into(d, t)
    utils.parametrizations.weight_norm(d, dim=dim)
    tutils.parametrizations.weight_norm(t, dim=dim)
    assert list(d.state_dict()) == list(t.state_dict())
    for key in ('parametrizations.weight.original0', 'parametrizations.weight.original1'):
        close(d.state_dict()[key], t.state_dict()[key])
    close(d.weight, t.weight)
    x = torch.randn(2, 3, 4, 4)
    d(dg(x)).square().sum().backward()
    t(x).square().sum().backward()
    for key in ('original0', 'original1'):
        close(getattr(d.parametrizations.weight, key).grad,
              getattr(t.parametrizations.weight, key).grad, 1e-4)


@pytest.mark.parametrize('make', ['linear', 'conv_transpose', 'bias'])
def test_parametrized_spectral_norm_matches_torch(make):
    if make == 'conv_transpose':
        t, d = tnn.ConvTranspose2d(3, 4, 2), nn.ConvTranspose2d(3, 4, 2)
        x = torch.randn(2, 3, 3, 3)
    else:
        t, d = tnn.Linear(5, 4), nn.Linear(5, 4)
        x = torch.randn(2, 5)
    name = 'bias' if make == 'bias' else 'weight'
    state_into(d, t)
    utils.parametrizations.spectral_norm(d, name)
    tutils.parametrizations.spectral_norm(t, name)
    assert list(d.state_dict()) == list(t.state_dict())
    state_into(d, t)          # torch's random _u, _v
    for mode in ('train', 'eval', 'train'):
        getattr(d, mode)()
        getattr(t, mode)()
        x.grad = None
        xd = dg(x, True)
        x.requires_grad_(True)
        out_d, out_t = d(xd), t(x)
        close(out_d, out_t, 1e-4)
        out_d.square().sum().backward()
        out_t.square().sum().backward()
        close(xd.grad, x.grad, 1e-4)
        for key, value in t.state_dict().items():
            close(d.state_dict()[key], value, 1e-5)
    original_d = getattr(d.parametrizations, name).original
    original_t = getattr(t.parametrizations, name).original
    close(original_d.grad, original_t.grad, 1e-4)


def test_parametrized_spectral_norm_errors_match_torch():
    raises_like(lambda: utils.parametrizations.spectral_norm(nn.Linear(2, 2), 'foo'),
                lambda: tutils.parametrizations.spectral_norm(tnn.Linear(2, 2), 'foo'))
    raises_like(
        lambda: utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0),
        lambda: tutils.parametrizations.spectral_norm(tnn.Linear(2, 2), n_power_iterations=0))
    raises_like(lambda: utils.parametrizations.spectral_norm(nn.Linear(2, 2), dim=2),
                lambda: tutils.parametrizations.spectral_norm(tnn.Linear(2, 2), dim=2))


# -- legacy hook-based weight_norm / spectral_norm -------------------------------------------

@pytest.mark.parametrize('dim', [0, 1, None])
def test_legacy_weight_norm_matches_torch(dim):
    d, t = linear_pair()
    with pytest.warns(FutureWarning, match='weight_norm` is deprecated'):
        utils.weight_norm(d, dim=dim)
    with pytest.warns(FutureWarning):
        tutils.weight_norm(t, dim=dim)
    assert list(d.state_dict()) == list(t.state_dict())
    for key, value in t.state_dict().items():
        close(d.state_dict()[key], value)
    x = torch.randn(2, 3)
    d(dg(x)).square().sum().backward()
    t(x).square().sum().backward()
    close(d.weight_g.grad, t.weight_g.grad)
    close(d.weight_v.grad, t.weight_v.grad)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        raises_like(lambda: utils.weight_norm(d, dim=dim), lambda: tutils.weight_norm(t, dim=dim))
    utils.remove_weight_norm(d)
    tutils.remove_weight_norm(t)
    assert list(d.state_dict()) == list(t.state_dict())
    assert isinstance(d.weight, nn.Parameter)
    close(d.weight, t.weight)
    assert not d._forward_pre_hooks
    raises_like(lambda: utils.remove_weight_norm(d), lambda: tutils.remove_weight_norm(t))


def test_legacy_spectral_norm_matches_torch():
    t = tnn.Conv2d(3, 4, 2)
    d = nn.Conv2d(3, 4, 2)
    state_into(d, t)
    utils.spectral_norm(d)
    tutils.spectral_norm(t)
    assert list(d.state_dict()) == list(t.state_dict()) == [
        'bias', 'weight_orig', 'weight_u', 'weight_v']
    state_into(d, t)
    x = torch.randn(2, 3, 4, 4)
    for mode in ('train', 'train', 'eval'):
        getattr(d, mode)()
        getattr(t, mode)()
        out_d, out_t = d(dg(x)), t(x)
        close(out_d, out_t, 1e-4)
        out_d.sum().backward()
        out_t.sum().backward()
        for key, value in t.state_dict().items():
            close(d.state_dict()[key], value, 1e-5)
    close(d.weight_orig.grad, t.weight_orig.grad, 1e-4)
    raises_like(lambda: utils.spectral_norm(d), lambda: tutils.spectral_norm(t))
    utils.remove_spectral_norm(d)
    tutils.remove_spectral_norm(t)
    assert list(d.state_dict()) == list(t.state_dict())
    close(d.weight, t.weight, 1e-5)
    raises_like(lambda: utils.remove_spectral_norm(d), lambda: tutils.remove_spectral_norm(t))


# -- stateless.functional_call ---------------------------------------------------------------

def test_functional_call_matches_torch_and_restores():
    d, t = linear_pair(2, 2)
    w = torch.randn(2, 2, requires_grad=True)
    wd = dg(w, True)
    x = torch.randn(3, 2)
    with pytest.warns(FutureWarning, match='functional_call` is deprecated'):
        out_d = utils.stateless.functional_call(d, {'weight': wd}, (dg(x),))
    out_t = torch.func.functional_call(t, {'weight': w}, (x,))
    close(out_d, out_t)
    out_d.sum().backward()
    out_t.sum().backward()
    close(wd.grad, w.grad)
    assert d.weight.grad is None and isinstance(d.weight, nn.Parameter)
    close(d(dg(x)), t(x))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        call = utils.stateless.functional_call
        for values in ({'weight': dynagrad.ones(2, 2), 'foo': dynagrad.ones(1)}, {}):
            tvalues = {k: torch.ones(v.shape) for k, v in values.items()}
            raises_like(lambda: call(d, values, (dg(x),), strict=True),
                        lambda: torch.func.functional_call(t, tvalues, (x,), strict=True))
        raises_like(lambda: call(d, ({'weight': wd}, {'weight': wd}), dg(x)),
                    lambda: torch.func.functional_call(t, ({'weight': w}, {'weight': w}), x))
        assert isinstance(d.weight, nn.Parameter)


def test_functional_call_buffers_nested_and_tied():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    model.eval()
    x = dynagrad.randn(4, 2)
    mean = dynagrad.tensor([1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out = utils.stateless.functional_call(model, {'1.running_mean': mean}, x)
    ref = model[1].eval()
    expected = (model[0](x) - mean) / (ref.running_var + ref.eps).sqrt() * ref.weight \
        + ref.bias
    close(out, expected)
    assert float(model[1].running_mean.abs().sum()) == 0.0
    tied = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
    tied[1].weight = tied[0].weight
    w = dynagrad.eye(2)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        close(utils.stateless.functional_call(tied, {'0.weight': w}, x), x)
        untied = utils.stateless.functional_call(tied, {'0.weight': w}, x, tie_weights=False)
    close(untied, tied[1](x))


# -- fusion, skip_init, clip_grad_norm, memory format ---------------------------------------

@pytest.mark.parametrize('transpose', [False, True])
def test_fuse_conv_bn_matches_torch(transpose):
    if transpose:
        t_conv, d_conv = tnn.ConvTranspose2d(3, 4, 2), nn.ConvTranspose2d(3, 4, 2)
    else:
        t_conv, d_conv = tnn.Conv2d(3, 4, 2), nn.Conv2d(3, 4, 2)
    t_bn, d_bn = tnn.BatchNorm2d(4), nn.BatchNorm2d(4)
    t_bn.train()(t_conv(torch.randn(4, 3, 5, 5)))      # non-trivial running statistics
    with torch.no_grad():
        t_bn.weight.uniform_(0.5, 2)
        t_bn.bias.uniform_(-1, 1)
    state_into(d_conv, t_conv)
    state_into(d_bn, t_bn)
    for m in (t_conv, d_conv, t_bn, d_bn):
        m.eval()
    fused_t = tutils.fuse_conv_bn_eval(t_conv, t_bn, transpose)
    fused_d = utils.fuse_conv_bn_eval(d_conv, d_bn, transpose)
    assert fused_d is not d_conv and isinstance(fused_d.weight, nn.Parameter)
    close(fused_d.weight, fused_t.weight)
    close(fused_d.bias, fused_t.bias)
    x = torch.randn(2, 3, 4, 4)
    close(fused_d(dg(x)), d_bn(d_conv(dg(x))), 1e-5)
    raises_like(lambda: utils.fuse_conv_bn_eval(d_conv.train(), d_bn),
                lambda: tutils.fuse_conv_bn_eval(t_conv.train(), t_bn))


def test_fuse_linear_bn_matches_torch():
    d, t = linear_pair(3, 4)
    t_bn, d_bn = tnn.BatchNorm1d(4), nn.BatchNorm1d(4)
    t_bn(t(torch.randn(8, 3)))
    state_into(d_bn, t_bn)
    for m in (t, d, t_bn, d_bn):
        m.eval()
    fused_t = tutils.fuse_linear_bn_eval(t, t_bn)
    fused_d = utils.fuse_linear_bn_eval(d, d_bn)
    close(fused_d.weight, fused_t.weight)
    close(fused_d.bias, fused_t.bias)
    w, b = utils.fuse_linear_bn_weights(d.weight, None, d_bn.running_mean, d_bn.running_var,
                                        d_bn.eps, d_bn.weight, d_bn.bias)
    tw, tb = tutils.fuse_linear_bn_weights(t.weight, None, t_bn.running_mean,
                                           t_bn.running_var, t_bn.eps, t_bn.weight, t_bn.bias)
    close(w, tw)
    close(b, tb)
    # no defaults for the batch norm's weight and bias (PyTorch raises TypeError too)
    with pytest.raises(TypeError):
        tutils.fuse_linear_bn_weights(t.weight, None, t_bn.running_mean, t_bn.running_var,
                                      t_bn.eps, None, None)
    with pytest.raises(TypeError):
        utils.fuse_linear_bn_weights(d.weight, None, d_bn.running_mean, d_bn.running_var,
                                     d_bn.eps, None, None)
    raises_like(lambda: utils.fuse_linear_bn_eval(d, nn.BatchNorm1d(5).eval()),
                lambda: tutils.fuse_linear_bn_eval(t, tnn.BatchNorm1d(5).eval()))


def test_skip_init_and_clip_grad_norm_and_memory_format():
    m = utils.skip_init(nn.Linear, 2, 3)
    assert repr(m) == repr(tutils.skip_init(tnn.Linear, 2, 3))
    raises_like(lambda: utils.skip_init(nn.ReLU), lambda: tutils.skip_init(tnn.ReLU))
    d, t = linear_pair()
    x = torch.randn(5, 3)
    d(dg(x)).sum().backward()
    t(x).sum().backward()
    with pytest.warns(FutureWarning, match='clip_grad_norm` is now deprecated'):
        norm_d = utils.clip_grad_norm(d.parameters(), 0.5)
    with pytest.warns(FutureWarning):
        norm_t = tutils.clip_grad_norm(t.parameters(), 0.5)
    close(norm_d, norm_t)
    close(d.weight.grad, t.weight.grad)


def test_convert_conv_weight_memory_format_matches_torch_strides():
    import dynagrad
    nets = [lib_nn.Sequential(lib_nn.Conv2d(3, 4, 3), lib_nn.Sequential(
        lib_nn.Conv3d(2, 5, 3), lib_nn.ConvTranspose2d(4, 2, 3))) for lib_nn in (nn, tnn)]
    for net, lib in zip(nets, (dynagrad, torch)):
        weight = net[0].weight
        assert utils.convert_conv2d_weight_memory_format(net, lib.channels_last) is net \
            if lib is dynagrad else \
            tutils.convert_conv2d_weight_memory_format(net, lib.channels_last) is net
        assert net[0].weight is weight    # the same Parameter, its data laid out anew
        if lib is dynagrad:
            utils.convert_conv3d_weight_memory_format(net, lib.channels_last_3d)
        else:
            tutils.convert_conv3d_weight_memory_format(net, lib.channels_last_3d)
    d, t = nets
    for dm, tm in ((d[0], t[0]), (d[1][0], t[1][0]), (d[1][1], t[1][1])):
        assert dm.weight.stride() == tm.weight.stride()


def test_functional_call_on_a_parametrized_name_goes_through_right_inverse():
    d, t = linear_pair(2, 2)
    P.register_parametrization(d, 'weight', Double())
    tP.register_parametrization(t, 'weight', TDouble())
    x = torch.randn(1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(RuntimeError,
                           match='parametrization TDouble does not implement right_inverse'):
            torch.func.functional_call(t, {'weight': torch.eye(2)}, x)
        with pytest.raises(RuntimeError,
                           match='parametrization Double does not implement right_inverse'):
            utils.stateless.functional_call(d, {'weight': dynagrad.eye(2)}, dg(x))
    d2, t2 = linear_pair(3, 3)
    P.register_parametrization(d2, 'weight', Symmetric())
    tP.register_parametrization(t2, 'weight', TSymmetric())
    value = torch.randn(3, 3)
    value = value + value.T
    x = torch.randn(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out_d = utils.stateless.functional_call(d2, {'weight': dg(value)}, dg(x))
    out_t = torch.func.functional_call(t2, {'weight': value}, x)
    close(out_d, out_t)
    close(d2.weight, t2.weight)
