"""dynagrad.compile with a callable backend (PyTorch's CompileCounter, a user's compiler
function): the backend is handed each program made, with its ops as graph nodes, and the
compiled callable keeps eager's values; and one program for every value of an int or float
argument that decides nothing the ops see (an optimizer's step count, a schedule weight),
each value still checked."""
import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad._dynamo.testing import CompileCounter


def _stepper(lib):
    def step(params, grads, group):
        """An optimizer-style foreach update in place; the dict of hyperparameters has an
        int (the step count) and a float (a weight) no op reads."""
        lib._foreach_mul_(params, 1 - group['lr'] * group['wd'])
        lib._foreach_add_(params, lib._foreach_mul(grads, group['lr']), alpha=-1)
    return step


def _run(lib, steps, compiled_with=None):
    fn = _stepper(lib)
    gen = np.random.default_rng(0)
    params = [lib.tensor(gen.standard_normal((3, 2)), dtype=lib.float32),
              lib.tensor(gen.standard_normal(4), dtype=lib.float32)]
    run = lib.compile(fn, backend=compiled_with) if compiled_with is not None else fn
    for k in range(steps):
        grads = [lib.tensor(gen.standard_normal(p.shape), dtype=lib.float32) for p in params]
        run(params, grads, {'lr': lib.tensor(0.1), 'wd': 0.01, 'step': k + 1,
                            'weight': 1 / (k + 1)})
    return [p.numpy() for p in params]


def test_counter_sees_one_program_across_number_values_and_values_match_torch():
    counter = CompileCounter()
    expected = _run(torch, 6)
    got = _run(dg, 6, compiled_with=counter)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)
    # 'step' and 'weight' change every call but no op reads them: one program, made from
    # two agreeing captures and reused (checked) for the later values
    assert counter.frame_count == 1
    assert counter.op_count > 0


def test_a_user_backend_gets_the_program_as_a_graph_and_its_forward_replays_it():
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.op for n in gm.graph.nodes], example_inputs, gm))
        return gm.forward

    f = dg.compile(lambda x, y: (x * y).sin() + y, backend=backend)
    x, y = dg.tensor([1., 2.]), dg.tensor([3., 4.])
    for _ in range(3):
        out = f(x, y)
    np.testing.assert_allclose(out.numpy(), np.sin([3., 8.]) + [3., 4.], rtol=1e-6)
    (ops, inputs, gm), = seen
    assert ops[:2] == ['placeholder', 'placeholder'] and ops[-1] == 'output'
    assert ops.count('call_function') == 3
    assert [t is u for t, u in zip(inputs, (x, y))] == [True, True]
    replayed = gm.forward(dg.tensor([0., 1.]), dg.tensor([1., 1.]))
    np.testing.assert_allclose(replayed[0].numpy(), np.sin([0., 1.]) + 1, rtol=1e-6)


def test_dynamo_optimize_hands_the_callable_backend_on():
    counter = CompileCounter()
    f = dg._dynamo.optimize(counter)(lambda x: x * 2 + 1)
    for _ in range(3):
        out = f(dg.ones(2))
    assert out.tolist() == [3., 3.] and counter.frame_count == 1


def test_an_int_that_changes_the_ops_keeps_its_own_program():
    counter = CompileCounter()

    def f(x, n):
        return x * n if n % 2 else x + n     # the int picks the op and is its constant

    compiled = dg.compile(f, backend=counter)
    x = dg.tensor([1., 2.])
    for n in (1, 2, 3, 4, 3, 2, 1, 4):
        np.testing.assert_allclose(compiled(x, n).numpy(), f(x, n).numpy())
    assert counter.frame_count == 4     # each value's tape is its own: its own program


def test_an_int_used_for_python_branching_is_checked_per_value():
    def f(x, step):
        if step > 3:                         # a branch the tape of step <= 3 cannot see
            return x * 10
        return x * 2

    compiled = dg.compile(f)
    x = dg.tensor([1., 2.])
    for step in range(1, 8):
        np.testing.assert_allclose(compiled(x, step).numpy(), f(x, step).numpy())


def test_dynamic_false_keeps_int_values_apart():
    counter = CompileCounter()
    compiled = dg.compile(lambda x, n: x + 1, backend=counter, dynamic=False)
    x = dg.ones(2)
    for n in range(4):
        for _ in range(2):
            compiled(x, n)
    assert counter.frame_count == 4


def test_a_string_backend_that_is_not_known_is_still_refused():
    with pytest.raises(RuntimeError, match='Invalid backend'):
        dg.compile(lambda x: x, backend='tvm')


def test_a_float_that_reaches_an_op_keeps_values_right():
    counter = CompileCounter()
    compiled = dg.compile(lambda x, w: x * w + 1, backend=counter)
    x = dg.tensor([1., 2.])
    for w in (0.5, 0.25, 0.5, 2.0, 0.25):
        np.testing.assert_allclose(compiled(x, w).numpy(), x.numpy() * w + 1)
    # the weight is each program's constant: 0.5 and 0.25, seen twice, got programs; 2.0,
    # seen once, only its capture
    assert counter.frame_count == 2


def test_a_number_changing_every_call_does_not_grow_the_cache_without_end():
    compiled = dg.compile(lambda x, step: x + 1)
    x = dg.ones(2)
    for step in range(300):
        assert compiled(x, step).tolist() == [2., 2.]
    assert len(compiled.cache) < 100
