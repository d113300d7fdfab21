"""ASGD, Rprop, Adafactor and Muon against torch.optim: parameter trajectories from the
same gradients (float64 and float32, every option), the state-dict layout, loading a torch
state dict converted to dynagrad tensors, closures, defaults and argument errors."""
import copy
import inspect

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import nn, optim

SHAPES = [(5, 3), (4,), (3, 6), (2, 3, 4), ()]
MATRICES = [(5, 3), (3, 6), (4, 4)]          # Muon takes 2-D parameters only

CASES = [
    ('ASGD', {}),
    ('ASGD', dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ('ASGD', dict(lr=0.02, maximize=True, t0=0)),
    ('Rprop', {}),
    ('Rprop', dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2))),
    ('Rprop', dict(maximize=True)),
    ('Adafactor', {}),
    ('Adafactor', dict(lr=0.1, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1)),
    ('Adafactor', dict(maximize=True, weight_decay=0.05)),
    ('Muon', {}),
    ('Muon', dict(lr=0.02, nesterov=False, momentum=0.9, adjust_lr_fn='match_rms_adamw',
                  weight_decay=0.0)),
    ('Muon', dict(lr=0.05, adjust_lr_fn='original', ns_steps=3, eps=1e-5,
                  ns_coefficients=(2.0, -1.5, 0.5))),
]


def _id(case):
    name, kw = case
    return name + '(' + ','.join(f'{k}={v}' for k, v in kw.items()) + ')'


def _shapes(name):
    return MATRICES if name == 'Muon' else SHAPES


def _setup(lib, name, kwargs, dtype='float64', seed=0, steps=8):
    rng = np.random.default_rng(seed)
    shapes = _shapes(name)
    weights = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    dt = getattr(lib, dtype)
    params = [lib.nn.Parameter(lib.tensor(w, dtype=dt)) for w in weights]
    opt = getattr(lib.optim, name)(params, **kwargs)
    return params, opt, [[lib.tensor(g, dtype=dt) for g in step] for step in grads]


def _run(params, opt, grads):
    out = []
    for step in grads:
        for p, g in zip(params, step):
            p.grad = g
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


@pytest.mark.parametrize('dtype,rtol', [('float64', 1e-12), ('float32', 1e-5)])
@pytest.mark.parametrize('case', CASES, ids=_id)
def test_trajectory_matches_torch(case, dtype, rtol):
    name, kwargs = case
    ours = _run(*_setup(dynagrad, name, kwargs, dtype))
    theirs = _run(*_setup(torch, name, kwargs, dtype))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        for i, (x, y) in enumerate(zip(a, b)):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * 1e-2,
                                       err_msg=f'step {k + 1}, parameter {i}')
    assert not np.allclose(ours[0][0], ours[-1][0])      # it moved


def test_muon_orthogonalizes_in_bfloat16_like_torch_on_a_larger_matrix():
    """PyTorch's Newton-Schulz runs in bfloat16; on larger matrices its blocked kernels
    round partial sums differently, so the update agrees to bfloat16 precision there."""
    out = []
    rng = np.random.default_rng(4)
    w, g = rng.standard_normal((64, 40)), rng.standard_normal((64, 40))
    for lib in (dynagrad, torch):
        p = lib.nn.Parameter(lib.tensor(w))
        opt = lib.optim.Muon([p], lr=1.0, weight_decay=0.0)
        p.grad = lib.tensor(g)
        opt.step()
        out.append(w - p.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], atol=2 ** -7 * np.abs(out[1]).max())
    # and the update is (nearly) orthogonal: singular values close to 1 after scaling
    s = np.linalg.svd(out[0] / np.sqrt(64 / 40), compute_uv=False)
    assert 0.5 < s.min() and s.max() < 1.3


@pytest.mark.parametrize('case', CASES, ids=_id)
def test_state_dict_layout_is_torchs(case):
    name, kwargs = case
    sds = []
    for lib in (dynagrad, torch):
        params, opt, grads = _setup(lib, name, kwargs, steps=2)
        _run(params, opt, grads)
        sds.append(opt.state_dict())
    ours, theirs = sds
    assert ours['param_groups'] == theirs['param_groups']
    assert list(ours['state']) == list(theirs['state'])
    for k in theirs['state']:
        assert list(ours['state'][k]) == list(theirs['state'][k])
        for key, tv in theirs['state'][k].items():
            ov = ours['state'][k][key]
            assert isinstance(ov, dynagrad.Tensor), key
            assert ov.dtype.name == str(tv.dtype).split('.')[-1], key
            assert tuple(ov.shape) == tuple(tv.shape), key
            np.testing.assert_allclose(ov.numpy(), tv.numpy(), rtol=1e-6, atol=1e-12)


def _to_dynagrad(value):
    if isinstance(value, torch.Tensor):
        return dynagrad.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: _to_dynagrad(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_dynagrad(v) for v in value]
    return value


@pytest.mark.parametrize('case', CASES, ids=_id)
def test_load_torch_state_dict_and_continue_like_torch(case):
    name, kwargs = case
    tparams, topt, tgrads = _setup(torch, name, kwargs, steps=8)
    theirs = _run(tparams, topt, tgrads[:4])
    tsd = copy.deepcopy(topt.state_dict())
    sd = _to_dynagrad(tsd)
    # torch resumed from the same checkpoint (loading casts ASGD's float32 eta and mu to
    # the parameters' float64, in torch as here, which changes their rounding afterwards)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    topt.load_state_dict(tsd)
    theirs += _run(tparams, topt, tgrads[4:])
    params, opt, grads = _setup(dynagrad, name, kwargs, steps=8)
    with dynagrad.no_grad():
        for p, a in zip(params, theirs[3]):
            p.copy_(dynagrad.tensor(a))
    opt.load_state_dict(sd)
    ours = _run(params, opt, grads[4:])
    for a, b in zip(ours, theirs[4:]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize('name', ['ASGD', 'Rprop', 'Adafactor', 'Muon'])
def test_closure_and_defaults_match_torch(name):
    p = nn.Parameter(dynagrad.tensor([[2.0, -1.0], [0.5, 1.0]]))
    opt = getattr(optim, name)([p])

    def closure():
        opt.zero_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss

    with dynagrad.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 6.25 and p.grad is not None
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))])
    assert opt.defaults == theirs.defaults
    assert list(opt.param_groups[0]) == list(theirs.param_groups[0])
    ours_sig = inspect.signature(getattr(optim, name)).parameters
    theirs_sig = inspect.signature(getattr(torch.optim, name)).parameters
    assert list(ours_sig) == list(theirs_sig)
    for k in theirs_sig:
        assert ours_sig[k].default == theirs_sig[k].default, k
        assert ours_sig[k].kind == theirs_sig[k].kind, k


def test_repr_matches_torch():
    for name in ['ASGD', 'Rprop', 'Adafactor', 'Muon']:
        ours = getattr(optim, name)([nn.Parameter(dynagrad.ones(1, 1))])
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1, 1))])
        assert repr(ours) == repr(theirs)


INVALID = [
    ('ASGD', dict(lr=-1.0)), ('ASGD', dict(weight_decay=-1.0)),
    ('Rprop', dict(lr=-1.0)), ('Rprop', dict(etas=(1.5, 1.2))), ('Rprop', dict(etas=(0.5, 0.9))),
    ('Rprop', dict(etas=(0, 1.2))), ('Rprop', dict(etas=(0.5, 1.0))),
    ('Adafactor', dict(lr=-1.0)), ('Adafactor', dict(beta2_decay=0.5)),
    ('Adafactor', dict(eps=(-1.0, 1e-3))), ('Adafactor', dict(eps=(None, -1.0))),
    ('Adafactor', dict(d=0.5)), ('Adafactor', dict(weight_decay=-1.0)),
    ('Muon', dict(lr=-1.0)), ('Muon', dict(weight_decay=-1.0)), ('Muon', dict(momentum=-1.0)),
    ('Muon', dict(adjust_lr_fn='foo')),
]


@pytest.mark.parametrize('name,kwargs', INVALID, ids=lambda v: str(v))
def test_invalid_arguments_raise_like_torch(name, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))], **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(optim, name)([nn.Parameter(dynagrad.ones(2, 2))], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_tensor_lr_must_have_one_element_like_torch():
    for name in ['ASGD', 'Rprop', 'Adafactor']:
        with pytest.raises(ValueError, match='Tensor lr must be 1-element'):
            getattr(optim, name)([nn.Parameter(dynagrad.ones(2, 2))],
                                 lr=dynagrad.tensor([0.1, 0.2]))


@pytest.mark.parametrize('kwargs', [dict(ns_steps=100), dict(ns_steps=1.5),
                                    dict(ns_coefficients=(1.0, 2.0))], ids=str)
def test_muon_step_time_errors_like_torch_and_nothing_changes(kwargs):
    with pytest.raises(Exception) as theirs:
        p = torch.nn.Parameter(torch.ones(2, 3))
        opt = torch.optim.Muon([p], **kwargs)
        p.grad = torch.ones(2, 3)
        opt.step()
    p = nn.Parameter(dynagrad.ones(2, 3))
    opt = optim.Muon([p], **kwargs)
    p.grad = dynagrad.ones(2, 3)
    with pytest.raises(type(theirs.value)) as ours:
        opt.step()
    assert str(ours.value) == str(theirs.value)
    assert p.tolist() == [[1.0] * 3] * 2 and not opt.state


def test_muon_takes_2d_parameters_only_like_torch():
    for shape in [(2,), (2, 2, 2)]:
        with pytest.raises(ValueError) as theirs:
            torch.optim.Muon([torch.nn.Parameter(torch.ones(shape))])
        with pytest.raises(ValueError) as ours:
            optim.Muon([nn.Parameter(dynagrad.ones(shape))])
        assert str(ours.value).replace('dynagrad', 'torch') == str(theirs.value)
