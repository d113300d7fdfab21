"""dynagrad.func against torch.func: values, composition to higher orders, pytrees,
has_aux, argnums, errors, and modules called as functions."""
import numpy as np
import pytest
import torch

import dynagrad

R = np.random.default_rng(11)
X, W, V = R.standard_normal(4), R.standard_normal((3, 4)), R.standard_normal(4)


def _np(tree):
    if isinstance(tree, (tuple, list)):
        return [_np(t) for t in tree]
    if isinstance(tree, dict):
        return {k: _np(v) for k, v in tree.items()}
    return tree.detach().numpy()


def _assert_close(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y)
    elif isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            _assert_close(a[k], b[k])
    else:
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def loss(lib):
    return lambda x, w: (lib.tanh(w @ x) ** 2).sum() + (x.sin() * x).sum()


def layer(lib):
    return lambda x, w: lib.nn.functional.gelu(w @ x).softmax(0)


CASES = {
    'grad': lambda F, lib, x, w, v: F.grad(loss(lib))(x, w),
    'grad_argnums': lambda F, lib, x, w, v: F.grad(loss(lib), argnums=(0, 1))(x, w),
    'grad_and_value': lambda F, lib, x, w, v: F.grad_and_value(loss(lib), argnums=1)(x, w),
    'grad_of_grad': lambda F, lib, x, w, v: F.grad(
        lambda a: F.grad(loss(lib))(a, w).sum())(x),
    'grad_pytree': lambda F, lib, x, w, v: F.grad(
        lambda p: loss(lib)(p['x'], p['ws'][0]) * p['ws'][1].sum())(
        {'x': x, 'ws': (w, x * 2)}),
    'grad_has_aux': lambda F, lib, x, w, v: F.grad(
        lambda a: (loss(lib)(a, w), a.cos()), has_aux=True)(x),
    'vjp': lambda F, lib, x, w, v: F.vjp(layer(lib), x, w)[1](lib.ones(3, dtype=lib.float64)),
    'jvp': lambda F, lib, x, w, v: F.jvp(lambda a: layer(lib)(a, w), (x,), (v,)),
    'jvp_of_grad': lambda F, lib, x, w, v: F.jvp(lambda a: F.grad(loss(lib))(a, w), (x,),
                                                 (v,)),
    'linearize': lambda F, lib, x, w, v: F.linearize(lambda a: layer(lib)(a, w), x)[1](v),
    'jacrev': lambda F, lib, x, w, v: F.jacrev(layer(lib), argnums=(0, 1))(x, w),
    'jacfwd': lambda F, lib, x, w, v: F.jacfwd(layer(lib), argnums=(0, 1))(x, w),
    'jacfwd_of_jacrev': lambda F, lib, x, w, v: F.jacfwd(F.jacrev(layer(lib)))(x, w),
    'hessian': lambda F, lib, x, w, v: F.hessian(loss(lib))(x, w),
    'hessian_of_matrix': lambda F, lib, x, w, v: F.hessian(loss(lib), argnums=1)(x, w),
    'jacrev_tuple_output': lambda F, lib, x, w, v: F.jacrev(
        lambda a: (a.exp(), (w @ a).sum()))(x),
}


@pytest.mark.parametrize('case', CASES)
def test_transform_matches_torch_func(case):
    results = []
    for lib in (dynagrad, torch):
        args = (lib.tensor(X), lib.tensor(W), lib.tensor(V))
        results.append(_np(CASES[case](lib.func, lib, *args)))
    _assert_close(*results)


def test_grad_composes_with_ordinary_autograd():
    # the gradient a transform returns is differentiable with respect to outer leaves
    outs = []
    for lib in (dynagrad, torch):
        w = lib.tensor(W, requires_grad=True)
        g = lib.func.grad(loss(lib))(lib.tensor(X), w)
        g.pow(2).sum().backward()
        outs.append(w.grad.numpy())
    _assert_close(*outs)


def test_results_carry_no_graph_at_the_top_level():
    g = dynagrad.func.grad(loss(dynagrad))(dynagrad.tensor(X), dynagrad.tensor(W))
    assert not g.requires_grad and g.grad_fn is None


@pytest.mark.parametrize('bad', ['non_scalar', 'not_tensor', 'argnums', 'aux_not_pair',
                                 'jvp_primals_not_tuple', 'vjp_cotangent_shape'])
def test_errors_as_torch(bad):
    def attempt(lib):
        F, x, w = lib.func, lib.tensor(X), lib.tensor(W)
        if bad == 'non_scalar':
            F.grad(lambda a: a * 2)(x)
        elif bad == 'not_tensor':
            F.grad(lambda a: 3.0)(x)
        elif bad == 'argnums':
            F.grad(loss(lib), argnums=2)(x, w)
        elif bad == 'aux_not_pair':
            F.grad(lambda a: a.sum(), has_aux=True)(x)
        elif bad == 'jvp_primals_not_tuple':
            F.jvp(lambda a: a, x, (x,))
        else:
            F.vjp(lambda a: a * 2, x)[1](lib.ones(5, dtype=lib.float64))
    kinds = []
    for lib in (dynagrad, torch):
        with pytest.raises(Exception) as info:
            attempt(lib)
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1]


def test_functional_call_and_stack_module_state_match_torch():
    outs = []
    for lib in (dynagrad, torch):
        lib.manual_seed(0)
        models = [lib.nn.Linear(4, 3).double() for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        assert params['weight'].shape == (3, 3, 4) and params['weight'].requires_grad
        x = lib.tensor(X)
        # each copy's output through functional_call with its slice of the stacked state
        ys = [lib.func.functional_call(models[0], {k: v[i] for k, v in params.items()}, (x,))
              for i in range(3)]
        per_model_grad = lib.func.grad(
            lambda p: lib.func.functional_call(models[0], p, (x,)).sum())(
            {k: v[1].detach() for k, v in params.items()})
        outs.append([_np(ys), _np(per_model_grad)])
    _assert_close(*outs)
