"""nn.init distributions, nn.utils clipping and vector conversion, containers: vs torch."""
import math

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad.nn import init
from dynagrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from dynagrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters


@pytest.mark.parametrize('nl,param', [('linear', None), ('conv2d', None), ('sigmoid', None),
                                      ('tanh', None), ('relu', None), ('leaky_relu', None),
                                      ('leaky_relu', 0.2), ('selu', None)])
def test_calculate_gain(nl, param):
    assert init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl,
                                                                                        param))


def _stats(fn_name, shape, **kw):
    dg.manual_seed(0)
    t = dg.empty(*shape)
    getattr(init, fn_name)(t, **kw)
    tt = torch.empty(*shape)
    getattr(torch.nn.init, fn_name)(tt, **kw)
    return t.numpy(), tt.numpy()


@pytest.mark.parametrize('fn,kw', [
    ('uniform_', dict(a=-0.5, b=2.0)), ('normal_', dict(mean=1.0, std=0.3)),
    ('xavier_uniform_', dict(gain=2.0)), ('xavier_normal_', {}),
    ('kaiming_uniform_', dict(a=math.sqrt(5))), ('kaiming_normal_', dict(mode='fan_out')),
    ('kaiming_uniform_', dict(nonlinearity='relu')),
    ('trunc_normal_', dict(mean=0.5, std=1.0, a=-1.0, b=1.5))])
def test_init_distributions_match_torch_statistically(fn, kw):
    d, t = _stats(fn, (400, 300), **kw)
    assert d.mean() == pytest.approx(t.mean(), abs=0.01 * max(1, t.std()))
    assert d.std() == pytest.approx(t.std(), rel=0.02)
    if 'uniform' in fn or 'trunc' in fn:  # bounded: the same support
        assert d.min() >= t.min() - 0.01 * t.std() and d.max() <= t.max() + 0.01 * t.std()
        assert d.min() <= t.min() + 0.01 * t.std() and d.max() >= t.max() - 0.01 * t.std()


def test_deterministic_inits_match_torch_exactly():
    for fn, shape, kw in [('constant_', (3, 4), dict(val=0.7)), ('ones_', (2, 3), {}),
                          ('zeros_', (2, 3), {}), ('eye_', (3, 5), {}),
                          ('dirac_', (4, 2, 3, 3), {}), ('dirac_', (4, 2, 3), dict(groups=2))]:
        d, t = _stats(fn, shape, **kw)
        np.testing.assert_array_equal(d, t)


def test_orthogonal_is_orthogonal_with_gain():
    for shape in [(5, 3), (3, 5), (4, 2, 3)]:
        w = dg.empty(*shape)
        init.orthogonal_(w, gain=2.0)
        flat = w.numpy().reshape(shape[0], -1)
        small = min(flat.shape)
        gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)


def test_init_on_parameter_keeps_it_a_leaf_and_bumps_version():
    p = dg.nn.Parameter(dg.zeros(3, 4))
    v = p._version
    init.kaiming_uniform_(p)
    assert p.is_leaf and p.requires_grad and p._version > v
    with pytest.raises(ValueError, match='Fan in and fan out'):
        init.xavier_uniform_(dg.nn.Parameter(dg.zeros(3)))


def _grads_pair(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in [(3, 4), (4,), (2, 2)]]
    d = [dg.nn.Parameter(dg.tensor(a)) for a in arrays]
    t = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    for p, q, a in zip(d, t, arrays):
        g = rng.standard_normal(a.shape) * 3
        p.grad = dg.tensor(g)
        q.grad = torch.tensor(g)
    return d, t


@pytest.mark.parametrize('norm_type', [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize('max_norm', [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    d, t = _grads_pair()
    total_d = clip_grad_norm_(d, max_norm, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type)
    assert total_d.item() == pytest.approx(total_t.item(), rel=1e-12)
    for p, q in zip(d, t):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_nonfinite_error():
    d, _ = _grads_pair()
    d[0].grad._data[0, 0] = np.nan
    with pytest.raises(RuntimeError, match='non-finite'):
        clip_grad_norm_(d, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_matches_torch():
    d, t = _grads_pair(1)
    clip_grad_value_(d, 0.5)
    torch.nn.utils.clip_grad_value_(t, 0.5)
    for p, q in zip(d, t):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_parameters_to_vector_and_back():
    d, t = _grads_pair()
    v = parameters_to_vector(d)
    np.testing.assert_array_equal(v.detach().numpy(),
                                  torch.nn.utils.parameters_to_vector(t).detach().numpy())
    v.sum().backward()
    assert all(np.all(p.grad.numpy() != 0) for p in d)
    new = dg.arange(v.numel(), dtype=dg.float64)
    vector_to_parameters(new, d)
    np.testing.assert_array_equal(d[1].detach().numpy(), [12, 13, 14, 15])
    assert isinstance(d[0], dg.nn.Parameter) and d[0].shape == (3, 4)


def test_container_reprs_match_torch():
    for build in [
        lambda nn: nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 3)]),
        lambda nn: nn.ModuleDict({'a': nn.Linear(1, 1), 'b': nn.ReLU()}),
        lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Flatten(0, -1)),
        lambda nn: nn.ParameterDict({'w': nn.Parameter(dg.ones(2) if nn is dg.nn
                                                       else torch.ones(2))}),
    ]:
        assert repr(build(dg.nn)).replace('dynagrad', 'torch') == repr(build(torch.nn))


def test_containers_register_parameters():
    ml = dg.nn.ModuleList([dg.nn.Linear(2, 2) for _ in range(3)])
    assert len(list(ml.parameters())) == 6 and len(ml) == 3
    del ml[0]
    assert [n for n, _ in ml.named_parameters()] == ['0.weight', '0.bias', '1.weight',
                                                     '1.bias']
    md = dg.nn.ModuleDict({'enc': dg.nn.Linear(2, 2)})
    md['dec'] = dg.nn.Linear(2, 1)
    assert list(md.keys()) == ['enc', 'dec'] and len(list(md.parameters())) == 4
    pl = dg.nn.ParameterList([dg.ones(2), dg.zeros(3)])
    assert all(isinstance(p, dg.nn.Parameter) for p in pl) and len(list(pl.parameters())) == 2
    pd = dg.nn.ParameterDict({'a': dg.ones(1)})
    assert isinstance(pd['a'], dg.nn.Parameter) and 'a' in pd


DEPRECATED = {'uniform': lambda lib: (lib.empty(3, 4),), 'normal': lambda lib: (lib.empty(3, 4),),
              'constant': lambda lib: (lib.empty(3, 4), 0.5), 'eye': lambda lib: (lib.empty(3, 4),),
              'dirac': lambda lib: (lib.empty(4, 2, 3),),
              'xavier_uniform': lambda lib: (lib.empty(3, 4),),
              'xavier_normal': lambda lib: (lib.empty(3, 4),),
              'kaiming_uniform': lambda lib: (lib.empty(3, 4),),
              'kaiming_normal': lambda lib: (lib.empty(3, 4),),
              'orthogonal': lambda lib: (lib.empty(3, 4, dtype=lib.float64),),
              'sparse': lambda lib: (lib.empty(5, 4), 0.4)}


@pytest.mark.parametrize('name', sorted(DEPRECATED))
def test_deprecated_aliases_warn_and_fill_like_torch(name):
    import warnings
    results = []
    for lib in (torch, dg):
        lib.manual_seed(4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            out = getattr(lib.nn.init, name)(*DEPRECATED[name](lib))
        assert [(w.category, str(w.message)) for w in caught] == [
            (FutureWarning, f'`nn.init.{name}` is now deprecated in favor of '
                            f'`nn.init.{name}_`.')]
        results.append(np.asarray(out.detach().numpy()))
    if name == 'orthogonal':   # LAPACK's QR: equal to rounding
        np.testing.assert_allclose(results[1], results[0], rtol=0, atol=1e-12)
    else:
        assert np.array_equal(results[0], results[1])
    assert getattr(init, name).__name__ == name
    assert name in init.__all__ and name in torch.nn.init.__all__
