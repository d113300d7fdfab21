"""foreach / fused / differentiable / capturable on every optimizer, against torch.optim on
CPU: accepted or refused as PyTorch does (same exception type and message, at construction
or at step), and a step with an accepted flag updates as the plain step does."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import optim

NAMES = ['SGD', 'Adam', 'AdamW', 'Adamax', 'NAdam', 'RAdam', 'RMSprop', 'Adagrad', 'Adadelta',
         'LBFGS', 'ASGD', 'Rprop', 'Adafactor', 'Muon']
COMBOS = [dict(foreach=True), dict(foreach=False), dict(fused=True), dict(fused=False),
          dict(differentiable=True), dict(capturable=True), dict(fused=True, foreach=True),
          dict(fused=True, differentiable=True), dict(fused=True, capturable=True),
          dict(foreach=True, differentiable=True), dict(capturable=True, differentiable=True),
          dict(foreach=True, capturable=True), dict(foreach=True, capturable=True,
                                                     differentiable=True)]


def _outcome(lib, name, kwargs):
    """('ok', parameter values) or (stage, exception type name, message)."""
    differentiable = kwargs.get('differentiable', False)
    w = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    # PyTorch takes only leaves unless differentiable, and then steps need a non-leaf
    p = w.clone() if differentiable else lib.nn.Parameter(w.detach().clone())
    try:
        opt = getattr(lib.optim, name)([p], **kwargs)
    except Exception as e:      # noqa: BLE001 - compared with torch's
        return ('init', type(e).__name__, str(e))
    p.grad = lib.tensor([[0.5, 0.25], [-1.0, 2.0]])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            if name == 'LBFGS':
                opt.step(lambda: (p ** 2).sum())
            else:
                opt.step()
    except Exception as e:      # noqa: BLE001
        return ('step', type(e).__name__, str(e))
    return ('ok', p.detach().numpy().tolist())


@pytest.mark.parametrize('kwargs', COMBOS, ids=str)
@pytest.mark.parametrize('name', NAMES)
def test_flags_accepted_or_refused_like_torch(name, kwargs):
    theirs = _outcome(torch, name, kwargs)
    ours = _outcome(dynagrad, name, kwargs)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == 'ok':
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    else:
        assert ours[1:] == theirs[1:]


def test_refusal_at_step_changes_nothing():
    p = dynagrad.nn.Parameter(dynagrad.ones(2))
    opt = optim.Adam([p], capturable=True)
    p.grad = dynagrad.ones(2)
    with pytest.raises(AssertionError, match='If capturable=True'):
        opt.step()
    assert p.tolist() == [1.0, 1.0] and not opt.state
    q = dynagrad.ones(2, requires_grad=True).clone()
    opt = optim.Adadelta([q], lr=dynagrad.tensor(1.0, requires_grad=True),
                         differentiable=True)
    q.grad = dynagrad.ones(2)
    with pytest.raises(TypeError, match=r"add_\(\): argument 'alpha' must be Number"):
        opt.step()
    assert q.tolist() == [1.0, 1.0] and not any(opt.state.values())


@pytest.mark.parametrize('name,kwargs', [
    ('SGD', dict(lr=0.1, momentum=0.9, fused=True)), ('Adam', dict(lr=0.1, fused=True)),
    ('AdamW', dict(lr=0.1, foreach=True)), ('Adagrad', dict(lr=0.1, fused=True)),
    ('RMSprop', dict(foreach=True)), ('ASGD', dict(foreach=True)),
    ('Rprop', dict(foreach=True)), ('Adafactor', dict(foreach=True))])
def test_flagged_steps_match_torch_over_steps(name, kwargs):
    rng = np.random.default_rng(3)
    w, grads = rng.standard_normal((3, 4)), rng.standard_normal((5, 3, 4))
    out = []
    for lib in (dynagrad, torch):
        p = lib.nn.Parameter(lib.tensor(w))
        opt = getattr(lib.optim, name)([p], **kwargs)
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        out.append(p.detach().numpy())
    # dynagrad runs its single-tensor update for foreach/fused; PyTorch's grouped kernels
    # round some scalars (ASGD's 1 - lambd * eta) in float32, hence not bitwise
    np.testing.assert_allclose(out[0], out[1], rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize('name', NAMES)
def test_signature_flags_are_torchs(name):
    import inspect
    ours = inspect.signature(getattr(optim, name)).parameters
    theirs = inspect.signature(getattr(torch.optim, name)).parameters
    for flag in ('foreach', 'fused', 'differentiable', 'capturable'):
        assert (flag in ours) == (flag in theirs), flag
        if flag in ours:
            assert ours[flag].default == theirs[flag].default
            assert ours[flag].kind == theirs[flag].kind, flag


def test_profile_hook_step_runs_step_hooks_as_torch():
    import dynagrad
    seen = {}
    for lib in (torch, dynagrad):
        calls = []

        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {'lr': 0.1})

            @lib.optim.Optimizer.profile_hook_step
            def step(self, closure=None):
                calls.append('step')

        opt = Plain([lib.zeros(2, requires_grad=True)])
        opt.register_step_pre_hook(lambda o, a, k: calls.append('pre'))
        opt.register_step_post_hook(lambda o, a, k: calls.append('post'))
        opt.step()
        seen[lib.__name__] = calls
        assert callable(lib.optim.Optimizer.OptimizerPreHook.__origin__)
    # torch wraps an already-wrapped step a second time (its patch does not see the
    # decorator's mark), so its hooks run twice; dynagrad wraps once
    assert seen['torch'] == ['pre', 'pre', 'step', 'post', 'post']
    assert seen['dynagrad'] == ['pre', 'step', 'post']
