"""What replay does to a tape beyond running it: common subexpressions computed once,
elementwise chains run in one buffer (NumPy's out=) where nothing else can see it, dead code
dropped; values and gradients stay eager's (bit for bit where no sum is reordered).

These are the NumPy code generator's passes: the tests run it (``set_kernels('numpy')``);
the native generator, which fuses the same chains into numba kernels, has its own tests
(test_native_codegen.py)."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad import backend


@pytest.fixture(autouse=True)
def numpy_code_generator():
    previous = backend.set_kernels('numpy')
    yield
    backend.set_kernels(previous)


def _compiled(fn, *args, calls=3):
    cf = dg.compile(fn)
    for _ in range(calls):
        out = cf(*args)
    return cf, out


def _program(cf):
    (program,) = cf.programs()
    return program


def _grads(fn, *inputs):
    out = fn(*inputs)
    return dg.autograd.grad(out.sum(), inputs)


def test_common_subexpressions_are_computed_once():
    def f(x, w):
        a = (x * w).exp() * 2
        b = (x * w).exp() * 2        # the same three ops again
        return (a + b).sum()

    x, w = dg.randn(5, requires_grad=True), dg.randn(5, requires_grad=True)
    cf, out = _compiled(f, x, w)
    assert _program(cf).shared == 3
    np.testing.assert_allclose(out.item(), f(x, w).item(), rtol=1e-6)
    for got, want in zip(_grads(cf, x, w), _grads(f, x, w)):
        # one backward of the summed gradients instead of two summed: rounding may differ
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_results_returned_twice_are_not_shared():
    cf, (a, b) = _compiled(lambda x: (x.sin(), x.sin()), dg.randn(4))
    assert _program(cf).shared == 0
    assert not np.shares_memory(a.numpy(), b.numpy())


def test_elementwise_chains_run_in_one_buffer_and_keep_eagers_bits():
    def f(x, w):
        h = (x * 1.5 + 0.25).tanh()      # mul, add, tanh: one buffer
        return (h * w - 1).relu().sum()

    x = dg.randn(3, 6, requires_grad=True)
    w = dg.randn(6, requires_grad=True)
    x_before, w_before = x.detach().numpy().copy(), w.detach().numpy().copy()
    cf, out = _compiled(f, x, w)
    program = _program(cf)
    assert program.donated >= 3, program.code()
    assert "'s buffer" in program.code()
    np.testing.assert_array_equal(out.detach().numpy(), f(x, w).detach().numpy())
    for got, want in zip(_grads(cf, x, w), _grads(f, x, w)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # arguments and parameters never lend their buffers
    np.testing.assert_array_equal(x.detach().numpy(), x_before)
    np.testing.assert_array_equal(w.detach().numpy(), w_before)


def test_a_buffer_something_else_reads_is_not_reused():
    def f(x):
        h = x * 2
        v = h.view(2, 3)      # a view of h outlives h's last elementwise use
        g = (h + 1).tanh()
        return v.sum(0), g

    x = dg.randn(6, requires_grad=True)
    cf, (v, g) = _compiled(f, x)
    ev, eg = f(x)
    np.testing.assert_array_equal(v.detach().numpy(), ev.detach().numpy())
    np.testing.assert_array_equal(g.detach().numpy(), eg.detach().numpy())
    code = _program(cf).code()
    assert "v2's buffer" not in code          # h (slot 2) is viewed: never lent


def test_an_mlp_relu_runs_in_the_linear_layers_buffer_with_eagers_gradients():
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Linear(8, 16), dg.nn.ReLU(), dg.nn.Linear(16, 3))
    run = dg.compile(model)
    x = dg.randn(5, 8)
    for _ in range(3):
        model.zero_grad()
        run(x).square().sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model(x).square().sum().backward()
    for g, p in zip(got, model.parameters()):
        np.testing.assert_array_equal(g, p.grad.numpy())
    assert run.__dict__['_compiled'].programs()[0].donated == 1
