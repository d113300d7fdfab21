"""Custom autograd.Function in PyTorch 2's form (forward without ctx, setup_context) with
forward mode (jvp staticmethod) and vmap (vmap staticmethod, generate_vmap_rule), against
torch."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import forward_ad as dfw
import torch.autograd.forward_ad as tfw


def make(lib, rule):
    base = lib.autograd.Function

    class Cube(base):
        generate_vmap_rule = rule == 'generate'

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            ctx.x = x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

        @staticmethod
        def jvp(ctx, t):
            return 3 * ctx.x ** 2 * t

    if rule == 'staticmethod':
        @staticmethod
        def vmap(info, in_dims, x):
            return Cube.apply(x), in_dims[0]
        Cube.vmap = vmap
    return Cube


X = np.random.default_rng(2).standard_normal((4, 3))


@pytest.mark.parametrize('rule', ['generate', 'staticmethod'])
def test_setup_context_backward_jvp_and_vmap(rule):
    D, T = make(dynagrad, rule), make(torch, rule)
    d = dynagrad.tensor(X.copy(), requires_grad=True)
    t = torch.tensor(X.copy(), requires_grad=True)
    D.apply(d).sum().backward()
    T.apply(t).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), 1e-12)
    v = np.ones_like(X) * 0.5
    with dfw.dual_level():
        dt = dfw.unpack_dual(D.apply(dfw.make_dual(dynagrad.tensor(X.copy()),
                                                   dynagrad.tensor(v)))).tangent
    with tfw.dual_level():
        tt = tfw.unpack_dual(T.apply(tfw.make_dual(torch.tensor(X.copy()),
                                                   torch.tensor(v)))).tangent
    np.testing.assert_allclose(dt.numpy(), tt.numpy(), 1e-12)
    dv = dynagrad.func.vmap(D.apply)(dynagrad.tensor(X.copy()))
    tv = torch.func.vmap(T.apply)(torch.tensor(X.copy()))
    np.testing.assert_allclose(dv.numpy(), tv.numpy(), 1e-12)
    dg = dynagrad.func.vmap(dynagrad.func.grad(lambda x: D.apply(x).sum()))(
        dynagrad.tensor(X.copy()))
    tg = torch.func.vmap(torch.func.grad(lambda x: T.apply(x).sum()))(torch.tensor(X.copy()))
    np.testing.assert_allclose(dg.numpy(), tg.numpy(), 1e-12)


def test_errors_without_the_rules():
    for lib in (torch, dynagrad):
        class Old(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        with pytest.raises(RuntimeError, match='it must override the setup_context'):
            lib.func.vmap(Old.apply)(lib.ones(2, 2))
        fw = dfw if lib is dynagrad else tfw
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match='You must implement the jvp function'):
                Old.apply(x)


def test_generated_rule_runs_once_and_sums_shared_gradients():
    class Scale(dynagrad.autograd.Function):
        generate_vmap_rule = True
        calls = 0

        @staticmethod
        def forward(x, w):
            Scale.calls += 1
            return x * w

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, (g * x).sum(0)

    x = np.random.default_rng(0).standard_normal((5, 4, 3))
    w = np.random.default_rng(1).standard_normal(3)
    dx, dw = dynagrad.tensor(x.copy(), requires_grad=True), dynagrad.tensor(w.copy(),
                                                                          requires_grad=True)
    out = dynagrad.func.vmap(Scale.apply, in_dims=(0, None))(dx, dw)
    assert Scale.calls == 1     # one forward for the whole batch, not one per sample
    out.pow(2).sum().backward()
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tx * tw).pow(2).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), (tx * tw).detach().numpy(), 1e-12)
    np.testing.assert_allclose(dx.grad.numpy(), tx.grad.numpy(), 1e-12)
    np.testing.assert_allclose(dw.grad.numpy(), tw.grad.numpy(), 1e-12)
