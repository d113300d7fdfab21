"""Tensor hooks, grad modes, detach and requires_grad rules."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad import autograd


def test_hook_on_leaf_replaces_gradient_and_handle_removes_it():
    v = dg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)
    v.backward(dg.Tensor([1, 1, 1]))
    np.testing.assert_allclose(v.grad.numpy(), [2, 2, 2])
    h.remove()
    h.remove()  # idempotent
    v.grad = None
    v.backward(dg.Tensor([1, 1, 1]))
    np.testing.assert_allclose(v.grad.numpy(), [1, 1, 1])


def test_hook_on_non_leaf_sees_total_gradient_and_replaces_it_downstream():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g * 10
    y.register_hook(hook)
    (y * y + y).sum().backward()
    np.testing.assert_allclose(seen[0], [5.0, 9.0])  # 2y + 1, summed over both uses
    np.testing.assert_allclose(x.grad.numpy(), [100.0, 180.0])


def test_hooks_run_in_registration_order_and_see_each_other():
    x = dg.tensor([1.0], requires_grad=True)
    y = x * 1
    order = []
    y.register_hook(lambda g: order.append('a') or g + 1)
    y.register_hook(lambda g: order.append('b') or g * 3)
    y.retain_grad()
    y.sum().backward()
    assert order == ['a', 'b']
    np.testing.assert_allclose(y.grad.numpy(), [6.0])  # retain_grad observes the hooks
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_register_hook_on_tensor_not_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        dg.ones(2).register_hook(lambda g: g)


def test_hook_runs_under_autograd_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    called = []
    x.register_hook(lambda g: called.append(1))
    autograd.grad((x * 2).sum(), x)
    assert called == [1]


def test_no_grad_records_nothing_and_restores():
    x = dg.ones(2, requires_grad=True)
    with dg.no_grad():
        assert not dg.is_grad_enabled()
        y = x * 2
        with dg.enable_grad():
            z = x * 2
    assert dg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_no_grad_and_enable_grad_as_decorators():
    @dg.no_grad()
    def f(x):
        return x * 2

    @dg.no_grad
    def g(x):
        return x * 2

    @dg.enable_grad()
    def h(x):
        return x * 2
    x = dg.ones(1, requires_grad=True)
    assert not f(x).requires_grad and not g(x).requires_grad
    with dg.no_grad():
        assert h(x).requires_grad


def test_set_grad_enabled_as_call_context_and_decorator():
    x = dg.ones(1, requires_grad=True)
    dg.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    dg.set_grad_enabled(True)
    with dg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert dg.is_grad_enabled()

    @dg.set_grad_enabled(False)
    def f():
        return (x * 2).requires_grad
    assert dg.is_grad_enabled() and f() is False and dg.is_grad_enabled()


def test_no_grad_on_generator_function():
    @dg.no_grad()
    def gen():
        yield dg.is_grad_enabled()
        yield dg.is_grad_enabled()
    assert list(gen()) == [False, False]
    assert dg.is_grad_enabled()


def test_inference_mode():
    x = dg.ones(1, requires_grad=True)
    with dg.inference_mode():
        assert dg.is_inference_mode_enabled()
        assert not (x * 2).requires_grad
    with dg.inference_mode(False):
        assert (x * 2).requires_grad
    assert not dg.is_inference_mode_enabled()


def test_no_grad_inplace_still_bumps_version():
    x = dg.ones(2)
    with dg.no_grad():
        x.mul_(2)
    assert x._version == 1


def test_requires_grad_propagates():
    a = dg.ones(2, requires_grad=True)
    b = dg.ones(2)
    assert (a + b).requires_grad and not (b + b).requires_grad
    assert (b + b).grad_fn is None and (b + b).is_leaf


def test_requires_grad_rules():
    y = dg.ones(2, requires_grad=True) * 2
    assert y.requires_grad_() is y
    with pytest.raises(RuntimeError, match='you can only change requires_grad flags of leaf '
                                           'variables. If you want to use a computed variable '
                                           'in a subgraph'):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match='only Tensors of floating point dtype can require '
                                           'gradients'):
        dg.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match='Only Tensors of floating point and complex dtype '
                                           'can require gradients'):
        dg.tensor([1, 2], requires_grad=True)
    x = dg.ones(2)
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf


def test_detach_shares_data_and_version_and_detach_inplace():
    x = dg.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0
    np.testing.assert_allclose(y.detach().numpy(), [5.0, 2.0])
    assert y._version == 1
    y.detach_()
    assert y.is_leaf and not y.requires_grad
    v = (x * 2)[0:1]
    with pytest.raises(RuntimeError, match='view'):
        v.detach_()


def test_numpy_refuses_tensor_requiring_grad():
    x = dg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                           r"grad. Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert x.detach().numpy().shape == (2,)
