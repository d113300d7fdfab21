"""``differentiable=True``: every optimizer's steps stay in the autograd graph, so a loss
after a few steps backpropagates into the initial parameters, the gradients fed to the
steps and a tensor learning rate where PyTorch allows one; compared with torch.optim doing
the same, refusals and failures at backward included."""
import re

import numpy as np
import pytest
import torch

import dynagrad

CASES = [
    ('SGD', dict(lr=0.1)),
    ('SGD', dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ('SGD', dict(lr=0.1, momentum=0.9, dampening=0.2, maximize=True)),
    ('SGD', dict(lr=0.1, momentum=0.9, nesterov=True)),
    ('Adam', dict(lr=0.1)),
    ('Adam', dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ('Adam', dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ('AdamW', dict(lr=0.1)),
]
STEPS = 3


def _unrolled(lib, name, kwargs, tensor_lr, steps=STEPS):
    """Gradients of a loss after STEPS differentiable steps w.r.t. w0 (and lr)."""
    rng = np.random.default_rng(0)
    w0 = lib.tensor(rng.standard_normal(6), requires_grad=True)
    scale = lib.tensor(rng.standard_normal(6))
    kwargs = dict(kwargs)
    lr = None
    if tensor_lr:
        lr = kwargs['lr'] = lib.tensor(kwargs['lr'], requires_grad=True)
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **kwargs)
    for _ in range(steps):
        q = p.clone()          # the step writes p in place; the gradient keeps its own copy
        p.grad = (q * q * scale).tanh()
        with lib.no_grad():    # a differentiable step records even here, as in torch
            opt.step()
    loss = (p * p * p).sum()
    loss.backward()
    if not tensor_lr:
        return [w0.grad.numpy()]
    return [w0.grad.numpy(), None if lr.grad is None else lr.grad.numpy()]


# (case, tensor lr); PyTorch's foreach SGD refuses a tensor lr there (a TypeError of its
# _foreach_add_), which dynagrad, looping per tensor, accepts: that pair is left out
RUNS = ([(c, False) for c in CASES] + [(c, True) for c in CASES]
        + [(('SGD', dict(lr=0.1, foreach=True)), False)])
# With momentum (no Nesterov) and a tensor lr, ``buf * lr`` saves the momentum buffer,
# which the next step changes in place: backward refuses, in torch as here
INPLACE_ERROR = {1, 2}


@pytest.mark.parametrize('case,tensor_lr', RUNS, ids=str)
def test_backprop_through_steps_matches_torch(case, tensor_lr):
    name, kwargs = case
    if tensor_lr and CASES.index(case) in INPLACE_ERROR:
        for lib in (torch, dynagrad):
            with pytest.raises(RuntimeError, match='modified by an inplace operation'):
                _unrolled(lib, name, kwargs, tensor_lr)
        return
    theirs = _unrolled(torch, name, kwargs, tensor_lr)
    ours = _unrolled(dynagrad, name, kwargs, tensor_lr)
    assert np.abs(theirs[0]).max() > 0.1
    # PyTorch computes Adam's bias corrections in float32 from its step tensor; so does
    # dynagrad, with float32 powers that may differ in the last bit
    rtol = 1e-12 if name == 'SGD' else 1e-6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)


def test_steps_record_and_plain_steps_do_not():
    w = dynagrad.tensor([1.0, 2.0], requires_grad=True)
    p = w.clone()
    opt = dynagrad.optim.SGD([p], lr=0.5, differentiable=True)
    p.grad = dynagrad.tensor([1.0, 1.0])
    with dynagrad.no_grad():
        opt.step()
    assert p.grad_fn is not None and p.tolist() == [0.5, 1.5]
    leaf = dynagrad.nn.Parameter(dynagrad.tensor([1.0, 2.0]))
    opt = dynagrad.optim.Adam([leaf])
    leaf.grad = dynagrad.tensor([1.0, 1.0])
    with dynagrad.enable_grad():
        opt.step()
    assert leaf.grad_fn is None and leaf.is_leaf


def test_leaf_parameter_with_differentiable_raises_like_torch():
    msgs = []
    for lib in (torch, dynagrad):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], differentiable=True)
        p.grad = lib.ones(2)
        with pytest.raises(RuntimeError) as err:
            opt.step()
        msgs.append(str(err.value))
    assert 'a leaf Variable that requires grad is being used in an in-place operation' \
        in msgs[1], msgs


def test_non_leaf_needs_differentiable_like_torch():
    for lib in (torch, dynagrad):
        q = lib.ones(2, requires_grad=True).clone()
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([q])
        lib.optim.SGD([q], differentiable=True)


# The other optimizers: (name, options, steps, outcome in PyTorch 2.13 on CPU with a number
# lr, the same with a tensor lr that requires grad). 'ok' runs and backpropagates; 'inplace'
# fails at backward because the step saved a state buffer that a later step changes in place
# (PyTorch's differentiable Adamax, centered RMSprop, Rprop and NAdam with a tensor lr do);
# anything else is the TypeError PyTorch raises at step for a tensor lr that requires grad.
ADDCDIV = "addcdiv_(): argument 'value' must be Number, not Tensor"
ADD = "add_(): argument 'alpha' must be Number, not Tensor"
FULL_LIKE = "full_like(): argument 'fill_value' (position 2) must be Number, not Tensor"
MORE = [
    ('Adamax', dict(lr=0.1), 1, 'ok', ADDCDIV),
    ('Adamax', dict(lr=0.1, weight_decay=0.1, maximize=True), 1, 'ok', ADDCDIV),
    ('Adamax', dict(lr=0.1), 3, 'inplace', ADDCDIV),
    ('NAdam', dict(lr=0.1), 1, 'ok', 'ok'),
    ('NAdam', dict(lr=0.1, weight_decay=0.1), 3, 'ok', 'inplace'),
    ('NAdam', dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True), 8, 'ok', 'inplace'),
    ('RAdam', dict(lr=0.1), 8, 'ok', 'ok'),     # rectified from the 6th step on
    ('RAdam', dict(lr=0.1, betas=(0.8, 0.5)), 3, 'ok', 'ok'),    # never rectified
    ('RAdam', dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True), 8, 'ok', 'ok'),
    ('RMSprop', dict(lr=0.1), 3, 'ok', ADDCDIV),
    ('RMSprop', dict(lr=0.1, momentum=0.9, weight_decay=0.1), 3, 'ok', ADD),
    ('RMSprop', dict(lr=0.1, centered=True, maximize=True), 1, 'ok', ADDCDIV),
    ('RMSprop', dict(lr=0.1, centered=True, momentum=0.5), 3, 'inplace', ADD),
    ('Adagrad', dict(lr=0.1), 3, 'ok', ADDCDIV),
    ('Adagrad', dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5, weight_decay=0.1),
     3, 'ok', ADDCDIV),
    ('Adadelta', dict(lr=1.0), 3, 'ok', ADD),
    ('Adadelta', dict(lr=0.5, rho=0.5, weight_decay=0.1, maximize=True), 3, 'ok', ADD),
    ('ASGD', dict(lr=0.1), 3, 'ok', 'ok'),
    ('ASGD', dict(lr=0.1, t0=1, lambd=0.1, weight_decay=0.1), 6, 'ok', 'ok'),
    ('Rprop', dict(lr=0.1), 1, 'ok', FULL_LIKE),
    ('Rprop', dict(lr=0.1, maximize=True, etas=(0.3, 1.5)), 1, 'ok', FULL_LIKE),
    ('Rprop', dict(lr=0.1), 3, 'inplace', FULL_LIKE),
]


@pytest.mark.parametrize('tensor_lr', [False, True], ids=['lr', 'tensor_lr'])
@pytest.mark.parametrize('name,kwargs,steps,number_outcome,tensor_outcome', MORE, ids=str)
def test_other_optimizers_backprop_like_torch(name, kwargs, steps, number_outcome,
                                              tensor_outcome, tensor_lr):
    outcome = tensor_outcome if tensor_lr else number_outcome
    if outcome != 'ok':
        error, match = ((RuntimeError, 'modified by an inplace operation')
                        if outcome == 'inplace' else (TypeError, re.escape(outcome)))
        for lib in (torch, dynagrad):
            with pytest.raises(error, match=match):
                _unrolled(lib, name, kwargs, tensor_lr, steps)
        return
    theirs = _unrolled(torch, name, kwargs, tensor_lr, steps)
    ours = _unrolled(dynagrad, name, kwargs, tensor_lr, steps)
    assert np.abs(theirs[0]).max() > 0.1
    if tensor_lr:
        # ASGD reads its step size from its eta state as a number: no gradient reaches lr
        assert (ours[1] is None) == (theirs[1] is None) == (name == 'ASGD')
    # a tensor lr is float32: the step sizes made from it round in float32
    rtol = 1e-6 if tensor_lr else 1e-12
    for a, b in zip(ours, theirs):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)


def test_tensor_lr_refused_before_anything_changes():
    p = dynagrad.ones(2, requires_grad=True).clone()
    lr = dynagrad.tensor(0.1, requires_grad=True)
    opt = dynagrad.optim.Adamax([p], lr=lr, differentiable=True)
    p.grad = dynagrad.ones(2)
    with pytest.raises(TypeError, match=re.escape(ADDCDIV)):
        opt.step()
    assert not any(opt.state.values()) and p.tolist() == [1.0, 1.0]
    # a tensor lr that does not require grad is a number to these steps, as in torch
    out = []
    for lib in (torch, dynagrad):
        q = lib.ones(2, requires_grad=True).clone()
        opt = lib.optim.RMSprop([q], lr=lib.tensor(0.1), momentum=0.5, differentiable=True)
        for _ in range(2):
            q.grad = lib.tensor([0.5, -2.0])
            opt.step()
        out.append(q.detach().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6)


def test_other_steps_record_under_no_grad():
    for name in ('Adamax', 'NAdam', 'RAdam', 'RMSprop', 'Adagrad', 'Adadelta', 'ASGD',
                 'Rprop'):
        p = dynagrad.tensor([1.0, 2.0], requires_grad=True).clone()
        opt = getattr(dynagrad.optim, name)([p], differentiable=True)
        p.grad = dynagrad.tensor([1.0, -1.0])
        with dynagrad.no_grad():
            opt.step()
        assert p.grad_fn is not None, name
