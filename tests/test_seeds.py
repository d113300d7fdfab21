"""Every example of the five seed articles, reproduced with dynagrad, asserting their numbers.

Where a seed prints a tensor the 0.3 way, the printed string is asserted too (with
``dynagrad.`` in place of ``torch.``). Where a seed's claim is wrong or its code does not run
as written, the test says so and asserts what really happens.
"""
import numpy as np
import pytest

import dynagrad as torch   # the seeds' code, unchanged but for this line
from dynagrad.autograd import Variable


@pytest.fixture(autouse=True)
def _reset_printoptions():
    torch.set_printoptions(profile='default')
    yield
    torch.set_printoptions(profile='default')


def printed(capsys, *objs):
    """What ``print(*objs)`` writes."""
    capsys.readouterr()
    print(*objs)
    return capsys.readouterr().out


# ======================================================================================
# Seed 000: Variable, v_out = mean(variable*variable), .data, .data.numpy()
# ======================================================================================

def _seed000():
    tensor = torch.FloatTensor([[1, 2], [3, 4]])
    variable = Variable(tensor, requires_grad=True)
    return tensor, variable


def test_seed000_print_tensor_and_variable(capsys):
    tensor, variable = _seed000()
    torch.set_printoptions(legacy=True)
    assert printed(capsys, tensor) == '\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n\n'
    assert printed(capsys, variable) == ('Variable containing:\n 1  2\n 3  4\n'
                                         '[dynagrad.FloatTensor of size 2x2]\n\n')
    assert repr(Variable(torch.FloatTensor([[1, 2], [3, 4]]))) == (
        'Variable containing:\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n')


def test_seed000_gradient_of_mean_of_square():
    tensor, variable = _seed000()
    v_out = torch.mean(variable * variable)
    assert v_out.item() == 7.5
    v_out.backward()
    assert variable.grad.tolist() == [[0.5, 1.0], [1.5, 2.0]]
    assert repr(variable.grad.data) == (
        'tensor([[0.5000, 1.0000],\n        [1.5000, 2.0000]])')
    torch.set_printoptions(legacy=True)
    assert repr(variable.grad.data) == (
        '\n 0.5000  1.0000\n 1.5000  2.0000\n[dynagrad.FloatTensor of size 2x2]\n')
    assert repr(variable.grad) == ('Variable containing:\n 0.5000  1.0000\n 1.5000  2.0000\n'
                                   '[dynagrad.FloatTensor of size 2x2]\n')
    # the 0.3 print of v_out itself (a size-1 Variable in 0.3)
    assert repr(v_out) == 'Variable containing:\n 7.5000\n[dynagrad.FloatTensor of size 1]\n'


def test_seed000_data_and_numpy(capsys):
    tensor, variable = _seed000()
    torch.set_printoptions(legacy=True)
    assert printed(capsys, variable.data) == (
        '\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n\n')
    assert type(variable.data) is torch.Tensor
    arr = variable.data.numpy()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    assert arr.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    # the seed shows '[[ 1.  2.]\n [ 3.  4.]]', NumPy < 1.14's spacing; NumPy today:
    assert str(arr) == '[[1. 2.]\n [3. 4.]]'
    assert np.shares_memory(arr, tensor.numpy())


def test_seed000_extension_requires_grad_propagation():
    a = Variable(torch.ones(2), requires_grad=True)
    b = Variable(torch.ones(2))
    assert b.requires_grad is False               # default False
    assert (a + b).requires_grad and ((a + b) * b).requires_grad
    assert not (b * b).requires_grad


def test_seed000_extension_volatile_propagation_and_priority():
    a = Variable(torch.ones(2), requires_grad=True)
    c = Variable(torch.ones(2), volatile=True)
    assert Variable(torch.ones(2)).volatile is False      # default False
    w = a + c
    assert w.volatile and (w * a).volatile and (w.sum() + 1).volatile
    assert not w.requires_grad and w.grad_fn is None       # volatile outranks requires_grad


def test_seed000_extension_retain_graph_and_accumulation():
    x = Variable(torch.FloatTensor([3]), requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [12.0]                       # gradients accumulate
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        y.backward()                                       # buffers freed after the 2nd


# ======================================================================================
# Seed 001: creation, attributes, x**2, the volatile example
# ======================================================================================

def test_seed001_two_ways_to_create():
    x = torch.Tensor([1, 2, 3])
    x_var = Variable(x, requires_grad=True)
    x_var2 = Variable(torch.Tensor([1, 2, 3]), requires_grad=True)
    for v in (x_var, x_var2):
        assert type(v) is Variable and v.requires_grad
        assert v.data.tolist() == [1.0, 2.0, 3.0] and v.type() == 'dynagrad.FloatTensor'


def test_seed001_attributes():
    v = Variable(torch.Tensor([1, 2, 3]), requires_grad=True)
    assert type(v.data) is torch.Tensor
    assert v.grad is None and v.requires_grad is True and v.volatile is False
    (v * 2).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0]
    # grad only has a value when requires_grad=True
    u = Variable(torch.Tensor([1, 2, 3]))
    (u * 2 + v).sum().backward()
    assert u.grad is None


def test_seed001_ops_return_variables():
    a = Variable(torch.Tensor([1, 2, 3]), requires_grad=True)
    for r in (a + 1, a * a, a @ a, a > 1, a.exp(), a.view(3, 1)):
        assert type(r) is Variable


def test_seed001_square():
    x = Variable(torch.Tensor([2]), requires_grad=True)
    y = x ** 2
    y.backward()
    assert x.grad.item() == 4.0


def test_seed001_only_scalars_backward_implicitly():
    x = Variable(torch.Tensor([1, 2]), requires_grad=True)
    with pytest.raises(RuntimeError, match='grad can be implicitly created only for scalar'):
        (x * 2).backward()


def test_seed001_volatile_example_raises_not_6():
    """The seed claims x.grad == 6 after z.backward(). Under 0.3 semantics z = x*y with
    volatile y is volatile (no grad, no grad_fn), so backward raises. 6 is z's value."""
    x = Variable(torch.Tensor([2]), requires_grad=True)
    y = Variable(torch.Tensor([3]), volatile=True)
    z = x * y
    assert z.item() == 6.0
    assert z.volatile and not z.requires_grad and z.grad_fn is None
    with pytest.raises(RuntimeError, match='element 0 of variables tuple is volatile'):
        z.backward()
    assert x.grad is None
    # without volatile, the gradient is y = 3 (not 6 either)
    z = x * Variable(torch.Tensor([3]))
    z.backward()
    assert x.grad.item() == 3.0


# ======================================================================================
# Seed 002: Tensor(3, 4), attributes, w*x+b, gradient vectors, sum(dim=1)
# ======================================================================================

def test_seed002_uninitialised_tensor_and_variable(capsys):
    x_tensor = torch.Tensor(3, 4)
    assert x_tensor.size() == (3, 4) and x_tensor.type() == 'dynagrad.FloatTensor'
    x_variable = Variable(x_tensor)
    assert x_variable.shape == (3, 4)
    # values are whatever the memory held; the print layout is what the seed shows
    x_tensor.copy_(torch.FloatTensor([[-12170.8672, 0, -12170.8672, 0], [0, 0, 0, 0],
                                      [-12170.9453, 0, -12170.9453, 0]]))
    torch.set_printoptions(legacy=True)
    text = repr(x_variable.data)
    assert text.endswith('[dynagrad.FloatTensor of size 3x4]\n')
    assert '-1.2171e+04' in text or '-12170.8672' in text
    assert np.array_equal(x_variable.data.numpy(), x_tensor.numpy())
    assert printed(capsys, x_variable.grad) == 'None\n'
    assert x_variable.requires_grad is False
    x_variable = Variable(x_tensor, requires_grad=True)
    assert x_variable.requires_grad is True
    y = x_variable * 2
    # 0.3 printed <MulBackward object at 0x...>; 2.x names the node MulBackward0
    assert type(y.grad_fn).__name__ == 'MulBackward0' or y.grad_fn.name() == 'MulBackward0'
    assert repr(y.grad_fn).startswith('<MulBackward0 object at 0x')


def test_seed002_graph_w_x_b():
    w = Variable(torch.Tensor([1]), requires_grad=True)
    x = Variable(torch.Tensor([2]), requires_grad=True)
    b = Variable(torch.Tensor([3]), requires_grad=True)
    y = w * x + b  # y=1*x +2
    y.backward()
    assert (w.grad.item(), x.grad.item(), b.grad.item()) == (2, 1, 1)


def test_seed002_graph_x_without_grad():
    w = Variable(torch.Tensor([1]), requires_grad=True)
    x = Variable(torch.Tensor([2]), requires_grad=False)
    b = Variable(torch.Tensor([3]), requires_grad=True)
    y = w * x + b
    y.backward()
    assert x.grad is None
    assert (w.grad.item(), b.grad.item()) == (2, 1)


def test_seed002_gradient_vectors(capsys):
    """The seed's code as written: no retain_graph. z = 2*x saved only the constant 2, and
    dynagrad, like 0.3, lets such a node run again (PyTorch 2.x raises on the 2nd call)."""
    x = Variable(torch.FloatTensor([1, 2, 3, 4]), requires_grad=True)
    z = 2 * x
    assert z.tolist() == [2, 4, 6, 8] and z.size() == torch.Size([4])
    assert repr(z.data) == 'tensor([2., 4., 6., 8.])'
    assert repr(z.size()) == 'dynagrad.Size([4])'
    z.backward(torch.FloatTensor([1, 0, 0, 0]))
    assert printed(capsys, x.grad.data) == 'tensor([2., 0., 0., 0.])\n'
    x.grad.data.zero_()
    z.backward(torch.FloatTensor([0, 1, 0, 0]))
    assert printed(capsys, x.grad.data) == 'tensor([0., 2., 0., 0.])\n'
    x.grad.data.zero_()
    z.backward(torch.FloatTensor([1, 1, 1, 1]))
    assert printed(capsys, x.grad.data) == 'tensor([2., 2., 2., 2.])\n'
    x.grad.data.zero_()
    z.backward(torch.FloatTensor([1, 0.1, 0.01, 0.001]))
    assert printed(capsys, x.grad.data) == 'tensor([2.0000, 0.2000, 0.0200, 0.0020])\n'


def test_seed002_second_backward_needs_retain_graph_when_tensors_were_saved():
    x = Variable(torch.FloatTensor([1, 2, 3, 4]), requires_grad=True)
    z = x * x                      # saves x, unlike 2 * x
    z.backward(torch.FloatTensor([1, 0, 0, 0]))
    with pytest.raises(RuntimeError, match='second time'):
        z.backward(torch.FloatTensor([0, 1, 0, 0]))


def test_seed002_zero_grad_without_it_accumulates():
    x = Variable(torch.FloatTensor([1, 2, 3, 4]), requires_grad=True)
    z = 2 * x
    z.backward(torch.FloatTensor([1, 0, 0, 0]))
    z.backward(torch.FloatTensor([0, 1, 0, 0]))
    assert x.grad.data.tolist() == [2, 2, 0, 0]


def test_seed002_loss_sum_dim1(capsys):
    x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
    z = 2 * x
    loss = z.sum(dim=1)
    assert loss.size() == (1,) and loss.tolist() == [20.0]
    z.backward(torch.FloatTensor([[1, 0, 0, 0]]))
    assert x.grad.data.tolist() == [[2, 0, 0, 0]]
    x.grad.data.zero_()
    z.backward(torch.FloatTensor([[0, 1, 0, 0]]))
    assert x.grad.data.tolist() == [[0, 2, 0, 0]]
    x.grad.data.zero_()
    z.backward(torch.FloatTensor([[1, 1, 1, 1]]))
    assert x.grad.data.tolist() == [[2, 2, 2, 2]]
    x.grad.data.zero_()
    loss.backward()  # equivalent to loss.backward(torch.FloatTensor([1.0]))
    torch.set_printoptions(legacy=True)
    assert printed(capsys, x.grad.data) == (
        '\n 2  2  2  2\n[dynagrad.FloatTensor of size 1x4]\n\n')


def test_seed002_loss_backward_equals_explicit_gradient():
    x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
    loss = (2 * x).sum(dim=1)
    loss.backward(torch.FloatTensor([1.0]))
    assert x.grad.tolist() == [[2, 2, 2, 2]]


# ======================================================================================
# Seed 003: Variable vs Parameter
# ======================================================================================

def test_seed003_z_x_plus_y():
    """z is 10x5, so z.backward(retain_graph=True) as written raises; with a gradient of
    ones x.grad is a 10x5 tensor of ones (the seed says 10x1)."""
    torch.manual_seed(0)
    a = torch.randn(10, 5)
    b = torch.randn(10, 5)
    x = Variable(a, requires_grad=True)
    y = Variable(b, requires_grad=True)
    z = x + y
    with pytest.raises(RuntimeError, match='grad can be implicitly created only for scalar'):
        z.backward(retain_graph=True)
    z.backward(torch.ones(10, 5), retain_graph=True)
    assert x.grad.shape == (10, 5) and x.grad.tolist() == [[1.0] * 5] * 10
    assert y.grad.tolist() == [[1.0] * 5] * 10
    assert z.grad_fn.name() == 'AddBackward0'
    z.backward(torch.ones(10, 5))                  # allowed thanks to retain_graph
    assert x.grad.tolist() == [[2.0] * 5] * 10


def test_seed003_scalar_version_runs_as_written():
    x = Variable(torch.randn(10, 5), requires_grad=True)
    y = Variable(torch.randn(10, 5), requires_grad=True)
    z = (x + y).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert x.grad.tolist() == [[2.0] * 5] * 10


def test_seed003_parameter_requires_grad_by_default():
    assert Variable(torch.ones(2)).requires_grad is False
    assert torch.nn.Parameter(torch.ones(2)).requires_grad is True
    assert torch.tensor([1.0]).requires_grad is False
    assert torch.tensor([1.0], requires_grad=True).requires_grad is True
    for obj in (Variable(torch.ones(2), requires_grad=True), torch.nn.Parameter(torch.ones(2)),
                torch.tensor([1.0, 1.0], requires_grad=True)):
        assert hasattr(obj, 'data') and obj.grad is None and obj.grad_fn is None
        (obj * 3).sum().backward()
        assert obj.grad.tolist() == [3.0, 3.0]


def test_seed003_net_parameters_and_sgd():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.FloatTensor([1.0, -1.0]))
            self.b = torch.nn.Parameter(torch.FloatTensor([0.5]))
            self.not_a_param = Variable(torch.ones(1), requires_grad=True)

        def forward(self, x):
            return (x * self.w).sum() + self.b

    net = Net()
    assert [p is q for p, q in zip(net.parameters(), (net.w, net.b))] == [True, True]
    assert len(list(net.parameters())) == 2
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-1)
    optimizer.zero_grad()
    net(torch.FloatTensor([2.0, 3.0])).backward()
    assert net.w.grad.tolist() == [2.0, 3.0] and net.b.grad.tolist() == [1.0]
    optimizer.step()
    np.testing.assert_allclose(net.w.data.numpy(), [0.8, -1.3], rtol=1e-6)
    np.testing.assert_allclose(net.b.data.numpy(), [0.4], rtol=1e-6)


# ======================================================================================
# Seed 004: the 0.3 Variable source: backward, register_hook, reinforce, detach, retain_grad
# ======================================================================================

def test_seed004_register_hook_doc_example():
    v = Variable(torch.Tensor([0, 0, 0]), requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(torch.Tensor([1, 1, 1]))
    torch.set_printoptions(legacy=True)
    assert repr(v.grad.data) == '\n 2\n 2\n 2\n[dynagrad.FloatTensor of size 3]\n'
    h.remove()  # removes the hook
    v.backward(torch.Tensor([1, 1, 1]))
    assert v.grad.data.tolist() == [3, 3, 3]


def test_seed004_hook_errors():
    with pytest.raises(RuntimeError, match='cannot register a hook on a volatile variable'):
        Variable(torch.ones(1), volatile=True).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="cannot register a hook on a .* doesn't require"):
        Variable(torch.ones(1)).register_hook(lambda g: g)


def test_seed004_hook_returning_none_keeps_grad():
    v = Variable(torch.Tensor([1, 2]), requires_grad=True)
    seen = []
    v.register_hook(lambda g: seen.append(g.tolist()))
    (v * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and v.grad.tolist() == [3.0, 3.0]


def test_seed004_leaf_and_grad_fn():
    v = Variable(torch.ones(2), requires_grad=True)
    assert v.is_leaf and v.grad_fn is None
    r = v * 2
    assert not r.is_leaf and r.grad_fn is not None


def test_seed004_backward_accumulates_and_gradient_matches_shape():
    v = Variable(torch.Tensor([1, 2, 3]), requires_grad=True)
    y = v * v
    y.backward(torch.Tensor([1, 1, 1]), retain_graph=True)
    y.backward(torch.Tensor([1, 0, 1]))
    assert v.grad.tolist() == [4.0, 4.0, 12.0]
    with pytest.raises(RuntimeError, match='shape'):
        (v * 2).backward(torch.Tensor([1, 1]))


def test_seed004_reinforce_removed():
    with pytest.raises(RuntimeError, match=r'reinforce\(\) was removed'):
        Variable(torch.ones(2), requires_grad=True).reinforce(torch.ones(2))


def test_seed004_detach():
    x = Variable(torch.Tensor([1, 2]), requires_grad=True)
    y = x * 2
    d = y.detach()
    assert type(d) is Variable and not d.requires_grad and d.grad_fn is None
    d[0] = 10
    assert y.tolist() == [10.0, 4.0]                         # same data
    assert Variable(torch.ones(1), volatile=True).detach().volatile  # volatility kept


def test_seed004_detach_():
    x = Variable(torch.Tensor([1, 2]), requires_grad=True)
    y = x * 2
    y.detach_()
    assert y.grad_fn is None and y.requires_grad is False and y.is_leaf


def test_seed004_retain_grad():
    x = Variable(torch.Tensor([1, 2]), requires_grad=True)
    x.retain_grad()                                          # no-op for leaves
    y = x * 3
    y.retain_grad()
    y.retain_grad()                                          # idempotent
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]
    with pytest.raises(RuntimeError, match="can't retain_grad on .* requires_grad=False"):
        Variable(torch.ones(1)).retain_grad()


def test_seed004_requires_grad_only_changeable_on_leaves():
    x = Variable(torch.ones(1), requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match='you can only change requires_grad flags of leaf'):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match='volatile can only be set on leaf variables'):
        y.volatile = True
