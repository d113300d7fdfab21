"""Custom autograd.Function, once_differentiable, and gradcheck/gradgradcheck themselves."""
import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import autograd
from dynagrad.autograd import Function, gradcheck, gradgradcheck
from dynagrad.autograd.custom_function import once_differentiable


class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.scale, None


def test_custom_function_forward_backward_and_node_name():
    x = dg.tensor([1.0, 2.0], dtype=dg.float64, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == 'CubeBackward'
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 24.0])
    assert gradcheck(lambda t: Cube.apply(t, 2.0), (x,))


def test_custom_function_double_backward_when_backward_is_differentiable():
    x = dg.tensor([1.5], dtype=dg.float64, requires_grad=True)
    (g,) = autograd.grad(Cube.apply(x, 1.0).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6 * 1.5])
    assert gradgradcheck(lambda t: Cube.apply(t, 1.0), (x,))


def test_needs_input_grad_and_no_graph_when_nothing_requires_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen['needs'] = tuple(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g
    a = dg.ones(2, requires_grad=True)
    b = dg.ones(2)
    Probe.apply(a, b)
    assert seen['needs'] == (True, False)
    out = Probe.apply(dg.ones(2), b)
    assert out.grad_fn is None and not out.requires_grad


def test_forward_runs_without_recording():
    class Inner(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            assert y.grad_fn is None
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2
    Inner.apply(dg.ones(1, requires_grad=True))


def test_mark_dirty_inplace_function():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    a = dg.ones(2, requires_grad=True)
    b = a * 1
    c = AddOneInplace.apply(b)
    assert c is b and c.grad_fn.name() == 'AddOneInplaceBackward'
    (c * 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
        AddOneInplace.apply(dg.ones(1, requires_grad=True))


def test_mark_non_differentiable():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = dg.from_numpy(np.argsort(x.numpy()))
            vals = dg.from_numpy(np.sort(x.numpy()))
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return vals, idx

        @staticmethod
        def backward(ctx, gv, gi):
            idx, = ctx.saved_tensors
            out = dg.zeros(gv.shape[0], dtype=gv.dtype)
            out[idx] = gv
            return out
    x = dg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    vals, idx = SortWithIndex.apply(x)
    assert vals.requires_grad and not idx.requires_grad
    (vals * dg.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 1.0, 2.0])


def test_exception_in_backward_propagates_unchanged():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError('boom from backward')
    with pytest.raises(ValueError, match='boom from backward'):
        Boom.apply(dg.ones(1, requires_grad=True)).sum().backward()


def test_wrong_gradient_shape_is_reported():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return dg.ones(5)
    with pytest.raises(RuntimeError, match='expected shape'):
        Bad.apply(dg.ones(2, requires_grad=True)).sum().backward()


def test_returning_none_leaves_grad_none():
    class NoGrad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return None, g
    x = dg.ones(1, requires_grad=True)
    y = dg.ones(1, requires_grad=True)
    NoGrad.apply(x, y).sum().backward()
    assert x.grad is None and y.grad is not None


def test_saved_tensors_after_free_raise():
    x = dg.ones(1, requires_grad=True)
    y = Cube.apply(x, 1.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match='Specify retain_graph=True'):
        y.grad_fn.saved_tensors


def test_once_differentiable_blocks_double_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    x = dg.tensor([3.0], requires_grad=True)
    # As in PyTorch, the guard node is attached when the incoming gradient requires grad.
    v = dg.ones(1, requires_grad=True)
    (g,) = autograd.grad(Square.apply(x), x, grad_outputs=v, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [6.0])
    with pytest.raises(RuntimeError, match='trying to differentiate twice a function that was '
                                           'marked with @once_differentiable'):
        g.sum().backward()


def test_missing_forward_raises():
    class Empty(Function):
        pass
    with pytest.raises(NotImplementedError, match='must implement the forward'):
        Empty.apply(dg.ones(1))


def test_gradcheck_catches_a_wrong_gradient():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0
    x = dg.tensor([1.0, 2.0], dtype=dg.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match='Jacobian mismatch for output 0 with respect to '
                                           'input 0'):
        gradcheck(Wrong.apply, (x,))
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False


def test_gradcheck_and_gradgradcheck_agree_with_torch_on_a_composite():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))

    def f(x, y):
        return ((x @ y).tanh() * x.sum(1)).sigmoid()
    x = dg.tensor(a, requires_grad=True)
    y = dg.tensor(b, requires_grad=True)
    assert gradcheck(f, (x, y)) and gradgradcheck(f, (x, y))
    tx = torch.tensor(a, requires_grad=True)
    ty = torch.tensor(b, requires_grad=True)
    assert torch.autograd.gradcheck(f, (tx, ty))
    np.testing.assert_allclose(f(x, y).detach().numpy(), f(tx, ty).detach().numpy())
