"""The rest of torch.autograd: post-accumulate-grad hooks, multi-grad hooks, gradient
edges, increment_version, allow_mutation_on_saved_tensors, NestedIOFunction and the engine
switches, each compared with torch."""
import pytest
import torch

import dynagrad as dg


def _both(fn):
    out = []
    for lib in (torch, dg):
        try:
            out.append(('ok', fn(lib)))
        except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
            out.append((type(e).__name__, str(e)))
    return out


# -- register_post_accumulate_grad_hook ----------------------------------------------------

def test_post_accumulate_hook_runs_after_accumulation_in_order():
    def run(lib):
        v = lib.tensor([0., 0., 0.], requires_grad=True)
        calls = []
        v.register_hook(lambda g: calls.append(('pre', g.tolist())))
        h = v.register_post_accumulate_grad_hook(
            lambda p: calls.append(('post', p.grad.tolist())))
        v.backward(lib.tensor([1., 2., 3.]))
        (v * 2).sum().backward()
        lib.autograd.grad((v * 3).sum(), v)           # no accumulation: no post hook
        h.remove()
        (v * 4).sum().backward()
        return calls, v.grad.tolist()
    t, d = _both(run)
    assert t == d


def test_post_accumulate_hook_can_update_the_parameter():
    def run(lib):
        v = lib.tensor([0., 0., 0.], requires_grad=True)
        def sgd(p):
            p.data.add_(p.grad, alpha=-0.5)
        v.register_post_accumulate_grad_hook(sgd)
        v.backward(lib.tensor([1., 2., 3.]))
        return v.tolist()
    t, d = _both(run)
    assert t == d

    def returns_tensor(lib):
        v = lib.ones(2, requires_grad=True)
        v.register_post_accumulate_grad_hook(lambda p: p.data.add_(1))
        v.sum().backward()
    (kt, mt), (kd, md) = _both(returns_tensor)
    assert kt == kd == 'RuntimeError' and mt == md


def test_post_accumulate_hook_errors_as_torch():
    for fn in (lambda lib: (lib.ones(2, requires_grad=True) * 2)
               .register_post_accumulate_grad_hook(print),
               lambda lib: lib.ones(2).register_post_accumulate_grad_hook(print)):
        (kt, mt), (kd, md) = _both(fn)
        assert kt == kd == 'RuntimeError' and mt == md

    def returns_value(lib):
        v = lib.ones(2, requires_grad=True)
        v.register_post_accumulate_grad_hook(lambda p: 3)
        v.sum().backward()
    (kt, mt), (kd, md) = _both(returns_value)
    assert kt == kd == 'TypeError'
    assert "expected Variable, but hook returned 'int'" in mt and \
        "expected Variable, but hook returned 'int'" in md


# -- autograd.graph ---------------------------------------------------------------------

def test_graph_namespace_has_torchs_names():
    wanted = ['saved_tensors_hooks', 'save_on_cpu', 'disable_saved_tensors_hooks',
              'register_multi_grad_hook', 'allow_mutation_on_saved_tensors', 'Node',
              'GradientEdge', 'get_gradient_edge', 'increment_version']
    assert set(wanted) <= set(torch.autograd.graph.__all__)
    assert set(wanted) <= set(dg.autograd.graph.__all__)
    for name in wanted:
        assert hasattr(dg.autograd.graph, name)


def test_multi_grad_hook_all_and_any():
    def run(lib):
        hook = lib.autograd.graph.register_multi_grad_hook
        a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
        calls = []
        h = hook((a, b, c), lambda gs: calls.append([None if g is None else g.tolist()
                                                     for g in gs]))
        (a * 2 + b * 3).sum().backward()
        (a * 2).sum().backward()
        h.remove()
        (a * 2).sum().backward()
        h = hook((a, b), lambda g: calls.append(('any', g.tolist())), mode='any')
        (a * 2 + b * 2).sum().backward()
        h.remove()
        return calls
    t, d = _both(run)
    assert t == d


def test_multi_grad_hook_mode_error():
    (kt, mt), (kd, md) = _both(lambda lib: lib.autograd.graph.register_multi_grad_hook(
        (lib.ones(1, requires_grad=True),), print, mode='x'))
    assert kt == kd == 'ValueError' and mt == md


def test_gradient_edge_and_increment_version():
    def run(lib):
        g = lib.autograd.graph
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        ey, ex = g.get_gradient_edge(y), g.get_gradient_edge(x)
        z = lib.ones(3)
        v0 = z._version
        g.increment_version(z)
        g.increment_version([z, z])
        return [ey.node is y.grad_fn, ey.output_nr, 'AccumulateGrad' in ex.node.name(),
                ex.output_nr,
                ey.ownership_token, type(ey).__name__, z._version - v0,
                ex.node is x.grad_fn]
    t, d = _both(run)
    assert t == d
    (kt, mt), (kd, md) = _both(lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(1)))
    assert kt == kd == 'RuntimeError' and mt == md


def test_increment_version_makes_backward_refuse_a_saved_tensor():
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2)
        loss = (x * w).sum()
        lib.autograd.graph.increment_version(w)
        loss.backward()
    (kt, mt), (kd, md) = _both(run)
    assert kt == kd == 'RuntimeError'
    assert 'modified by an inplace operation' in mt and 'modified by an inplace operation' in md


def test_allow_mutation_on_saved_tensors():
    def run(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
            y = x.clone()
            out = (y ** 2).sum()
            y.sin_()
            out.backward()
        return x.grad.tolist()
    t, d = _both(run)
    assert t == d

    def outside(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            y = x.clone()
            out = (y ** 2).sum()
            y.sin_()
        out.backward()
    (kt, mt), (kd, md) = _both(outside)
    assert kt == kd == 'AssertionError'
    assert "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context" in \
        mt and "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context" \
        in md


# -- torch.autograd names -----------------------------------------------------------------

def test_engine_switches_as_torch():
    def run(lib):
        a = lib.autograd
        seen = [a.is_multithreading_enabled()]
        with a.set_multithreading_enabled(False):
            seen.append(a.is_multithreading_enabled())
        seen.append(a.is_multithreading_enabled())
        a.set_multithreading_enabled(False)
        seen.append(a.is_multithreading_enabled())
        a.set_multithreading_enabled(True)

        @a.set_multithreading_enabled(False)
        def inside():
            return a.is_multithreading_enabled()
        seen += [a.is_multithreading_enabled(), inside(), a.is_multithreading_enabled()]
        with a.enforce_grad_layout_policy(False):
            p = lib.ones(2, 3).t().requires_grad_()
            (p * 2).sum().backward()
            seen.append(p.grad.tolist())
        seen += [a.is_view_replay_enabled(), a.is_tensor_like(lib.ones(1)),
                 a.is_tensor_like(1), a.kineto_available() if lib is dg else False]
        return seen
    t, d = _both(run)
    assert t == d


def test_nested_io_function_computes_gradients():
    # torch 2.13 keeps the class but calling an instance fails (AttributeError inside);
    # dynagrad runs it. The gradient is compared with the same formula as a torch Function.
    class Nested(dg.autograd.NestedIOFunction):
        def forward_extended(self, a, b):
            self.save_for_backward(a, b)
            return a * b, (a + b,)

        def backward_extended(self, g_prod, g_sum):
            a, b = self.saved_tensors
            return g_prod * b + g_sum[0], g_prod * a + g_sum[0]

    class Plain(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, b = ctx.saved_tensors
            return g_prod * b + g_sum, g_prod * a + g_sum

    xd, yd = dg.tensor([1., 2.], requires_grad=True), dg.tensor([3., 5.], requires_grad=True)
    prod, (total,) = Nested()(xd, yd)
    (prod * 2 + total * 3).sum().backward()
    xt, yt = torch.tensor([1., 2.], requires_grad=True), torch.tensor([3., 5.],
                                                                       requires_grad=True)
    prod_t, total_t = Plain.apply(xt, yt)
    (prod_t * 2 + total_t * 3).sum().backward()
    assert prod.tolist() == prod_t.tolist() and total.tolist() == total_t.tolist()
    assert xd.grad.tolist() == xt.grad.tolist() and yd.grad.tolist() == yt.grad.tolist()
    with pytest.raises(AttributeError):     # torch's: the class exists, a call fails
        type('N', (torch.autograd.NestedIOFunction,), {})()(xt, yt)


def test_autograd_all_lists_torchs_names():
    assert {'NestedIOFunction', 'set_multithreading_enabled',
            'enforce_grad_layout_policy'} <= set(dg.autograd.__all__)
