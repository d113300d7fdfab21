"""``differentiable=True``: SGD, Adam and AdamW steps stay in the autograd graph, so a loss
after a few steps backpropagates into the initial parameters, the gradients fed to the
steps and a tensor learning rate; compared with torch.optim doing the same."""
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


def _unrolled(lib, name, kwargs, tensor_lr):
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
    for _ in range(STEPS):
        q = p.clone()          # the step writes p in place; the gradient keeps its own copy
        p.grad = (q * q * scale).tanh()
        with lib.no_grad():    # a differentiable step records even here, as in torch
            opt.step()
    loss = (p * p * p).sum()
    loss.backward()
    return [w0.grad.numpy()] + ([lr.grad.numpy()] if tensor_lr else [])


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
