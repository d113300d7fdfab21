"""The backward engine: accumulation, retain_graph, create_graph, grad(), errors, scale."""
import gc
import sys
import weakref

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import autograd


def test_gradients_accumulate_across_backward_calls():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    assert x.grad is first  # updated in place, as PyTorch does without create_graph
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_non_leaf_grad_stays_none_and_warns():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match='not a leaf Tensor'):
        assert y.grad is None


def test_retain_grad_accumulates_and_is_idempotent():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward(retain_graph=True)
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 8.0])
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [8.0, 16.0])


def test_retain_grad_holds_no_strong_reference():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    ref = weakref.ref(y)
    z = y.sum()
    del y
    gc.collect()
    z.backward()  # the retained tensor is gone: nothing to fill, no error
    assert ref() is None


def test_implicit_gradient_only_for_scalars():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match='grad can be implicitly created only for scalar '
                                           'outputs'):
        (x * 2).backward()
    (x * 2)[0:1].backward()  # one element, any shape
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.0])


def test_gradient_of_wrong_shape_is_a_clear_error():
    x = dg.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r'Mismatch in shape: grad_output\[0\] has a shape of '
                                           r'dynagrad.Size\(\[2\]\) and output\[0\] has a '
                                           r'shape of dynagrad.Size\(\[2, 2\]\)'):
        (x * 2).backward(dg.ones(2))


def test_backward_twice_through_freed_buffers_raises():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match='Specify retain_graph=True') as info:
        y.backward()
    assert 'MulBackward0' in str(info.value)
    assert 'detach()' in str(info.value)


def test_retain_graph_allows_second_backward():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_graph_that_saved_nothing_runs_twice():
    # Seed 002: z = 2 * x backpropagated again and again with different gradients.
    x = dg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    z = 2 * x
    z.backward(dg.FloatTensor([1, 0, 0, 0]))
    z.backward(dg.FloatTensor([0, 1, 0, 0]))
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 0, 0])
    c = x + 1
    c.sum().backward()
    c.sum().backward()


def test_root_that_does_not_require_grad_says_why():
    x = dg.tensor([1.0])
    with pytest.raises(RuntimeError, match='element 0 of tensors does not require grad and '
                                           'does not have a grad_fn'):
        (x * 2).backward()
    w = dg.tensor([1.0], requires_grad=True)
    with dg.no_grad():
        y = w * 2
    with pytest.raises(RuntimeError, match='grad mode was off|no_grad'):
        y.backward()


def test_create_graph_second_derivative_of_cube_is_6x():
    x = dg.tensor([1.0, 2.0, -3.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([1.0, 4.0, 9.0]))
    assert g.requires_grad and g.grad_fn is not None
    (gg,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * np.array([1.0, 2.0, -3.0]))


def test_third_derivative_through_tanh_matches_torch():
    xs = [0.3, -1.2, 2.0]
    x = dg.tensor(xs, dtype=dg.float64, requires_grad=True)
    tx = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    g = x.tanh().exp()
    tg = tx.tanh().exp()
    for _ in range(3):
        (g,) = autograd.grad(g.sum(), x, create_graph=True)
        (tg,) = torch.autograd.grad(tg.sum(), tx, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-10)


def test_backward_create_graph_then_hessian_vector_product():
    x = dg.tensor([1.0, 2.0], dtype=dg.float64, requires_grad=True)
    y = (x[0] ** 2) * x[1] + x[1] ** 3
    y.backward(create_graph=True)
    g = x.grad
    x.grad = None
    (g * dg.tensor([1.0, 0.0], dtype=dg.float64)).sum().backward()
    # d/dx of dy/dx0 = (2*x1, 2*x0)
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 2.0])


def test_grad_does_not_touch_dot_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    w = dg.tensor([3.0, 4.0], requires_grad=True)
    (gx,) = autograd.grad((x * w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    assert x.grad is None and w.grad is None


def test_grad_of_non_leaf_input():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    (gy,) = autograd.grad(z, y)
    np.testing.assert_allclose(gy.numpy(), [4.0, 8.0])


def test_grad_unused_input():
    x = dg.tensor([1.0], requires_grad=True)
    u = dg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match='Set allow_unused=True'):
        autograd.grad((x * 2).sum(), [x, u])
    gx, gu = autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None
    gx, gu = autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    np.testing.assert_allclose(gu.numpy(), [0.0])


def test_multiple_roots_and_duplicate_root():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    a = (x * 2).sum()
    b = (x * x).sum()
    autograd.backward([a, b])
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 6.0])
    x.grad = None
    c = (x * 2).sum()
    autograd.backward([c, c])
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_dependent_roots():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y.sum()
    autograd.backward([y, z], [dg.ones(2), None])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_backward_inputs_restricts_accumulation():
    x = dg.tensor([1.0], requires_grad=True)
    w = dg.tensor([2.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0])


def test_leaves_never_share_a_gradient_buffer():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = dg.tensor([1.0, 2.0], requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(1)
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])


def test_broadcast_gradients_have_the_input_shape():
    a = dg.ones(3, 1, requires_grad=True)
    b = dg.ones(4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(b.grad.numpy(), [3.0] * 4)


def test_chain_of_100000_ops_backpropagates_without_recursion():
    assert sys.getrecursionlimit() < 100000
    x = dg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_graph_is_freed_when_the_user_drops_it():
    x = dg.ones(3, requires_grad=True)
    y = x.exp()
    z = y.tanh().sum()
    refs = [weakref.ref(y), weakref.ref(z), weakref.ref(z.grad_fn)]
    z.backward()
    del y, z
    assert all(r() is None for r in refs)  # no reference cycle: freed without gc


def test_saved_output_makes_no_cycle():
    x = dg.ones(3, requires_grad=True)
    y = x.exp()  # Exp saves its output
    fn = weakref.ref(y.grad_fn)
    del y
    assert fn() is None


def test_next_functions_and_accumulate_grad_variable():
    x = dg.tensor([1.0], requires_grad=True)
    c = dg.tensor([2.0])
    y = x * c
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert acc.name() == 'AccumulateGrad' and acc.variable is x and nr == 0
    assert none is None
    assert y.grad_fn.name() == 'MulBackward0'
    z = y.exp()
    assert z.grad_fn.next_functions[0][0] is y.grad_fn


def test_node_can_be_called_directly():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    ga, gb = y.grad_fn(dg.ones(2))
    np.testing.assert_allclose(ga.numpy(), [3.0, 3.0])


def test_mixed_dtype_gradients_come_back_in_each_input_dtype():
    a = dg.ones(2, dtype=dg.float32, requires_grad=True)
    b = dg.ones(2, dtype=dg.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == dg.float32 and b.grad.dtype == dg.float64
    ta = torch.ones(2, requires_grad=True)
    tb = torch.ones(2, dtype=torch.float64, requires_grad=True)
    assert str((ta * tb).dtype) == 'torch.float64' and (a * b).dtype == dg.float64
