"""dynagrad.compile: compiled programs give eager's values and gradients (training
trajectories equal step by step), guards recapture when what a program assumed changes,
graph breaks fall back to eager (or raise with fullgraph=True) and say why, and the
module wrapper behaves as the module."""
import re
import warnings

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.compiler import GraphBreak


def _mlp(seed=0, dropout=False):
    dg.manual_seed(seed)
    layers = [dg.nn.Linear(10, 32), dg.nn.Tanh(), dg.nn.Linear(32, 32), dg.nn.ReLU()]
    if dropout:
        layers.append(dg.nn.Dropout(0.3))
    return dg.nn.Sequential(*layers, dg.nn.Linear(32, 4))


def _train(model, steps=20, compiled=False, optimizer='sgd'):
    run = dg.compile(model) if compiled else model
    params = list(model.parameters())
    opt = (dg.optim.SGD(params, lr=0.1, momentum=0.9) if optimizer == 'sgd'
           else dg.optim.Adam(params, lr=0.01))
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = dg.tensor(rng.standard_normal((16, 10)), dtype=dg.float32)
        y = dg.tensor(rng.integers(0, 4, 16))
        opt.zero_grad()
        loss = dg.nn.functional.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in params], run


@pytest.mark.parametrize('optimizer', ['sgd', 'adam'])
def test_training_trajectory_equals_eager(optimizer):
    eager, eager_params, _ = _train(_mlp(), optimizer=optimizer)
    compiled, compiled_params, run = _train(_mlp(), compiled=True, optimizer=optimizer)
    assert compiled == eager                     # bit for bit: the same kernels, same order
    for a, b in zip(compiled_params, eager_params):
        np.testing.assert_array_equal(a, b)
    assert len(run.__dict__['_compiled'].programs()) == 1   # one program, replayed 18 times


def test_a_function_with_several_outputs_and_gradients():
    def f(x, w, scale=2.0):
        h = (x @ w).tanh()
        return {'out': h * scale, 'norm': (h * h).sum()}, h.mean(0)
    cf = dg.compile(f)
    rng = np.random.default_rng(1)
    w = dg.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    for step in range(4):
        x = dg.tensor(rng.standard_normal((4, 5)))
        (a, b), expected = cf(x, w, scale=3.0), f(x, w, scale=3.0)
        np.testing.assert_allclose(a['out'].detach().numpy(), expected[0]['out'].detach().numpy())
        g, = dg.autograd.grad(a['norm'] + b.sum(), w)
        e, = dg.autograd.grad(expected[0]['norm'] + expected[1].sum(), w)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)
    assert len(cf.programs()) == 1


def test_decorator_forms_and_backend_eager():
    @dg.compile
    def f(x):
        return x * 2

    @dg.compile(fullgraph=True, mode='max-autotune')
    def g(x):
        return x.exp()

    eager_backend = dg.compile(lambda x: x + 1, backend='eager')
    x = dg.ones(3)
    for _ in range(3):
        assert f(x).tolist() == [2.0] * 3 and eager_backend(x).tolist() == [2.0] * 3
        np.testing.assert_allclose(g(x).numpy(), np.e)
    with pytest.raises(RuntimeError, match='Invalid backend'):
        dg.compile(f, backend='tvm')
    assert dg.compile(f, disable=True) is f


def test_guards_recapture_on_new_shapes_grad_mode_and_training_flag():
    model = _mlp(dropout=False)
    run = dg.compile(model)
    compiled = run.__dict__['_compiled']
    for shape in ((8, 10), (3, 10)):
        for _ in range(3):
            out = run(dg.randn(*shape))
            assert tuple(out.shape) == (shape[0], 4)
    assert len(compiled.programs()) == 2
    with dg.no_grad():
        for _ in range(3):
            out = run(dg.randn(8, 10))
    assert out.grad_fn is None and len(compiled.programs()) == 3
    run.eval()
    for _ in range(3):
        run(dg.randn(8, 10))
    assert len(compiled.programs()) == 4


def test_new_parameters_are_seen():
    model = dg.nn.Linear(3, 2)
    run = dg.compile(model)
    x = dg.ones(1, 3)
    for _ in range(3):
        run(x)
    model.weight = dg.nn.Parameter(dg.zeros(2, 3))
    model.bias = dg.nn.Parameter(dg.ones(2))
    assert run(x).tolist() == [[1.0, 1.0]]


def test_a_value_read_by_python_breaks_the_graph_and_runs_eagerly():
    def f(x):
        y = x * 2
        if y.sum().item() > 0:       # data-dependent control flow
            return y + 1
        return y - 1
    cf = dg.compile(f)
    for values in ([1.0, 2.0], [-5.0, 1.0], [3.0, 3.0]):
        assert cf(dg.tensor(values)).tolist() == f(dg.tensor(values)).tolist()
    report = dg.compiler.explain(f, dg.tensor([1.0, 2.0]))
    assert report.graph_count == 0 and report.graph_break_count >= 1
    assert 'Tensor.item() hands a value to Python' in report.break_reasons[0]
    assert 'test_compile.py' in report.break_reasons[0]
    with pytest.raises(GraphBreak, match=r'fullgraph=True.*Tensor.item\(\)'):
        dg.compile(f, fullgraph=True)(dg.tensor([1.0, 2.0]))


def test_in_place_ops_replay_and_unsafe_ones_fall_back_with_eagers_error():
    def inplace(x, w):
        h = x @ w
        h.add_(1)
        h.relu_()
        return (h * h).sum()

    def overwrites_saved(x, w):     # relu_ saves its result, mul_ then overwrites it
        h = x @ w
        h.relu_()
        h.mul_(2)
        return h.sum()
    w = dg.randn(3, 4, requires_grad=True)
    ci, co = dg.compile(inplace), dg.compile(overwrites_saved)
    for _ in range(4):
        x = dg.randn(2, 3)
        g_compiled, = dg.autograd.grad(ci(x, w), w)
        g_eager, = dg.autograd.grad(inplace(x, w), w)
        np.testing.assert_array_equal(g_compiled.numpy(), g_eager.numpy())
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            co(x, w).backward()
    assert len(ci.programs()) == 1
    assert 'an earlier op saved for backward' in co.events[0][1]


def test_batch_norm_running_statistics_and_detach():
    def run(compiled):
        dg.manual_seed(0)
        model = dg.nn.Sequential(dg.nn.Linear(5, 6), dg.nn.BatchNorm1d(6),
                                 dg.nn.ReLU(inplace=True), dg.nn.Linear(6, 2))
        call = dg.compile(model) if compiled else model
        rng = np.random.default_rng(0)
        outs = []
        for _ in range(5):
            out = call(dg.tensor(rng.standard_normal((8, 5)), dtype=dg.float32))
            out.sum().backward()
            outs.append(out.detach().numpy())
        return outs, model[1].running_mean.numpy(), model[0].weight.grad.numpy()
    compiled, eager = run(True), run(False)
    for a, b in zip(compiled[0], eager[0]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(compiled[1], eager[1])
    np.testing.assert_array_equal(compiled[2], eager[2])

    def detached(x, w):
        return (x * w).detach() * w
    w = dg.ones(2, requires_grad=True)
    cd = dg.compile(detached)
    for k in range(3):
        x = dg.tensor([float(k), 1.0])
        assert cd(x, w).tolist() == detached(x, w).tolist()
    assert 'without one' in cd.events[0][1]


def test_values_made_outside_the_ops_that_change_send_the_call_to_eager():
    rng = np.random.default_rng(0)

    def noisy(x):           # a mask drawn by NumPy, outside dynagrad's ops
        return x * dg.tensor(rng.random(x.shape) > 0.5, dtype=x.dtype)
    cf = dg.compile(noisy)
    x = dg.ones(50)
    outs = [cf(x) for _ in range(4)]
    assert len({tuple(o.tolist()) for o in outs}) == 4       # a new mask every call
    assert not cf.programs() and 'changed between two calls' in cf.events[-1][1]


def test_random_ops_replay_the_generator_as_eager():
    def f(x):
        return x + dg.nn.functional.dropout(x, 0.5, training=True)
    cf = dg.compile(f)
    x = dg.ones(40)
    dg.manual_seed(3)
    compiled = [cf(x).tolist() for _ in range(4)]
    dg.manual_seed(3)
    eager = [f(x).tolist() for _ in range(4)]
    assert compiled == eager


def test_hooks_retain_graph_and_accumulation():
    model = dg.nn.Linear(4, 2)
    seen = []
    model.weight.register_hook(lambda g: seen.append(g.shape))
    run = dg.compile(model)
    x = dg.randn(3, 4)
    for _ in range(3):
        model.zero_grad()
        loss = run(x).pow(2).sum()
        loss.backward(retain_graph=True)
        loss.backward()
    expected = model.weight.grad.numpy().copy()
    model.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    np.testing.assert_allclose(expected, 2 * model.weight.grad.numpy(), rtol=1e-6)
    assert len(seen) == 6 + 1


def test_the_wrapper_behaves_as_the_module():
    model = _mlp()
    run = dg.compile(model)
    assert isinstance(run, dg.nn.Module) and run._orig_mod is model
    assert list(run.state_dict()) == ['_orig_mod.' + k for k in model.state_dict()]
    assert [id(p) for p in run.parameters()] == [id(p) for p in model.parameters()]
    model.note = 'kept'
    assert run.note == 'kept'           # attributes reach the module
    run.eval()
    assert not model.training


def test_module_compile_in_place():
    model = _mlp()
    eager, _, _ = _train(_mlp(), steps=5)
    model.compile()
    compiled, _, _ = _train(model, steps=5)
    assert compiled == eager and model.forward.programs()


def test_show_code_and_cache_limit():
    cf = dg.compile(lambda x: (x * 3).sin())
    for _ in range(3):
        cf(dg.ones(2, requires_grad=True)).sum().backward()
    text = dg.compiler.show_code(cf)
    assert 'def forward' in text and 'def backward' in text and 'Sin' in text
    cf = dg.compile(lambda x: (x * 3).sin(), dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for n in range(1, 12):
            cf(dg.ones(n))
    assert any('cache size limit' in str(w.message) for w in caught)


def test_parameters_read_through_a_closure_are_inputs_not_constants():
    dg.manual_seed(0)
    layers = [dg.nn.Linear(6, 8), dg.nn.Linear(8, 3)]
    params = [p for layer in layers for p in layer.parameters()]
    opt = dg.optim.SGD(params, lr=0.5)

    @dg.compile
    def loss_fn(x, y):
        return dg.nn.functional.cross_entropy(layers[1](layers[0](x).relu()), y)
    x, y = dg.randn(10, 6), dg.randint(0, 3, (10,))
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert len(loss_fn.programs()) == 1 and losses == sorted(losses, reverse=True)
    dg.manual_seed(0)
    layers = [dg.nn.Linear(6, 8), dg.nn.Linear(8, 3)]
    opt = dg.optim.SGD([p for layer in layers for p in layer.parameters()], lr=0.5)
    eager = []
    for _ in range(6):
        opt.zero_grad()
        loss = dg.nn.functional.cross_entropy(layers[1](layers[0](x).relu()), y)
        loss.backward()
        opt.step()
        eager.append(loss.item())
    assert losses == eager


def test_inlined_elementwise_ops_equal_eager_bit_for_bit_with_broadcasting():
    # the NumPy code generator (its tanh is NumPy's; the native one's is within ulps of it:
    # test_native_codegen.py)
    previous = dg.backends.cpu.set_kernels('numpy')
    try:
        _inlined_elementwise_ops_equal_eager_bit_for_bit_with_broadcasting()
    finally:
        dg.backends.cpu.set_kernels(previous)


def _inlined_elementwise_ops_equal_eager_bit_for_bit_with_broadcasting():
    def f(x, w, b):
        h = x
        for _ in range(5):
            h = (h * w + b).tanh() - h * 0.5
            h = -h.relu() + h
        return h.sum()
    cf = dg.compile(f)
    rng = np.random.default_rng(2)
    w = dg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = dg.tensor(rng.standard_normal(4), requires_grad=True)      # broadcast: summed back
    for _ in range(4):
        x = dg.tensor(rng.standard_normal((3, 4)))
        got = dg.autograd.grad(cf(x, w, b), (w, b))
        want = dg.autograd.grad(f(x, w, b), (w, b))
        for a, e in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), e.numpy())
    code = cf.programs()[0].code()
    assert '_tanh(' in code and '_fit(' in code      # written out, with the broadcast fit


def test_jit_entry_points():
    model = _mlp()
    x = dg.randn(4, 10)
    traced = dg.jit.trace(model, x)
    assert len(traced.__dict__['_compiled'].programs()) == 1      # made by the trace
    np.testing.assert_array_equal(traced(x).detach().numpy(), model(x).detach().numpy())
    assert dg.jit.script(model) is model        # run eagerly, as torch under PYTORCH_JIT=0
    assert dg.jit.ignore(len) is len and not dg.jit.is_scripting()


def test_a_tensor_passed_twice():
    lin = dg.nn.Linear(3, 3)
    run = dg.compile(lambda a, b: lin(a) * b)
    x = dg.randn(2, 3)
    for _ in range(4):
        np.testing.assert_array_equal(run(x, x).detach().numpy(), (lin(x) * x).detach().numpy())
    assert len(run.programs()) == 1


def test_dead_code_is_dropped_but_random_draws_stay():
    def f(x):
        unused = (x * 3).exp()          # nothing reads it
        del unused
        noise = dg.rand(x.shape)        # a draw: kept, so the generator moves as in eager
        return x.tanh() + 0 * noise.sum()
    cf = dg.compile(f)
    x = dg.randn(3)
    dg.manual_seed(5)
    got = [cf(x).tolist() for _ in range(3)] + [dg.rand(1).item()]
    dg.manual_seed(5)
    want = [f(x).tolist() for _ in range(3)] + [dg.rand(1).item()]
    assert got == want
    program = cf.programs()[0]
    assert program.dropped == 2 and 'Exp' not in program.code()


def test_effects_a_replay_would_not_repeat_end_the_capture():
    """Backward passes, optimizer steps, attribute writes and hooks inside a compiled
    function happen outside the ops a program replays: each sends the call to eager (and
    fullgraph=True names it), so nothing is silently skipped at a replay."""
    model = dg.nn.Linear(4, 3)
    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    x = dg.randn(5, 4)

    def backward_inside(x):
        loss = model(x).sum()
        loss.backward()
        return loss

    def hook_inside(x):
        h = model(x)
        h.register_hook(lambda g: g * 2)
        return h.sum()

    cases = [(backward_inside, (x,), 'a backward pass inside the function'),
             (opt.step, (), 'an optimizer step'),
             (lambda: setattr(model.weight, 'grad', None), (), 'Tensor.grad is assigned'),
             (hook_inside, (x,), 'Tensor.register_hook() has an effect')]
    for fn, args, reason in cases:
        compiled = dg.compile(fn)
        for _ in range(4):
            model.zero_grad()
            model(x).sum().backward()
            before = [p.detach().numpy().copy() for p in model.parameters()]
            out = compiled(*args)
            if fn is backward_inside:          # the gradients were accumulated again
                np.testing.assert_allclose(model.bias.grad.numpy(), np.full(3, 10.0))
            if fn is opt.step:                 # the parameters moved at every call
                assert all((p.detach().numpy() != b).any()
                           for p, b in zip(model.parameters(), before))
            if fn is hook_inside:
                (g,) = dg.autograd.grad(out, model.bias)
                np.testing.assert_allclose(g.numpy(), np.full(3, 10.0))
        assert [what for _, what in compiled.events][0].startswith('graph break: ' + reason)
        with pytest.raises(GraphBreak, match=re.escape(reason)):
            dg.compile(fn, fullgraph=True)(*args)


def test_a_function_without_ops_compiles_to_an_empty_program():
    cf = dg.compile(lambda x, n: n * 2)
    for _ in range(3):
        assert cf(dg.ones(2), 4) == 8


SCALE = 2.0


def test_plain_attributes_globals_and_closures_are_guarded():
    """A number the trace baked in (a module attribute, a global, a closure variable) that
    changes makes a new program, as torch.compile's guards do: never a stale constant."""
    class Scaled(dg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.scale = dg.nn.Linear(3, 2), 2.0

        def forward(self, x):
            return self.lin(x) * self.scale

    model = Scaled()
    run = dg.compile(model)
    x = dg.randn(4, 3)
    for scale in (2.0, 2.0, 2.0, 5.0, 5.0, 5.0):
        model.scale = scale
        np.testing.assert_array_equal(run(x).detach().numpy(), model(x).detach().numpy())

    def uses_global(x):
        return x * SCALE
    offset = 1.0

    def uses_closure(x):
        return x + offset
    g, c = dg.compile(uses_global), dg.compile(uses_closure)
    for value in (1.0, 1.0, 1.0, 3.0, 3.0, 3.0):
        globals()['SCALE'] = value
        offset = value
        np.testing.assert_array_equal(g(x).numpy(), (x * value).numpy())
        np.testing.assert_array_equal(c(x).numpy(), (x + value).numpy())
    globals()['SCALE'] = 2.0


def test_a_plain_tensor_attribute_written_or_replaced_is_read_again():
    class Masked(dg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = dg.nn.Linear(3, 3)
            self.mask = dg.ones(3)          # a plain tensor attribute, not a buffer

        def forward(self, x):
            return self.lin(x) * self.mask

    model = Masked()
    run = dg.compile(model)
    x = dg.randn(2, 3)
    for step in range(9):
        if step == 3:
            model.mask[1] = 0.0            # written in place
        if step == 6:
            model.mask = dg.full((3,), 2.0)   # replaced
        np.testing.assert_array_equal(run(x).detach().numpy(), model(x).detach().numpy())


def test_module_hooks_run_at_every_call():
    """A forward hook recording features (a common pattern) must see every call: a module
    tree with hooks runs eagerly, and a hook added after compiling is seen too."""
    model = _mlp()
    run = dg.compile(model)
    x = dg.randn(5, 10)
    for _ in range(3):
        run(x)
    features = []
    model[0].register_forward_hook(lambda m, i, o: features.append(o.detach()))
    for k in range(4):
        xk = x * (k + 1)
        run(xk)
        np.testing.assert_array_equal(features[-1].numpy(), model[0](xk).detach().numpy())
    assert len(features) == 4 + 4      # each run, and each direct call above
    events = [what for _, what in run.__dict__['_compiled'].events]
    assert events[-1] == 'graph break: module hooks (their Python effects would not be replayed)'
    with pytest.raises(GraphBreak, match='module hooks'):
        dg.compile(model, fullgraph=True)(x)
