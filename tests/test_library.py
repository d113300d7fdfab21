"""dynagrad.library (torch.library's custom_op, register_fake, register_autograd, Library)
against torch.library."""
import pytest
import torch

import dynagrad
from dynagrad import library as mine


def _define(lib, torch_mod, ns, suffix):
    @lib.custom_op(f'{ns}::mysin_{suffix}', mutates_args=())
    def mysin(x: torch_mod.Tensor, scale: float = 1.0) -> torch_mod.Tensor:
        return x.sin() * scale

    @mysin.register_fake
    def _(x, scale=1.0):
        return torch_mod.empty_like(x)

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos() * ctx.scale, None

    mysin.register_autograd(backward, setup_context=setup)
    return mysin


def test_custom_op_with_autograd_matches_torch():
    ops = {}
    for lib, mod in ((mine, dynagrad), (torch.library, torch)):
        op = _define(lib, mod, 'dgtest', 'a')
        x = mod.tensor([0.5, 1.0, -2.0], dtype=mod.float64, requires_grad=True)
        y = op(x, scale=3.0)
        y.sum().backward()
        ops[mod] = (y.detach().tolist(), x.grad.tolist(), type(y.grad_fn).__name__ if mod is torch
                    else y.grad_fn.name(), repr(op))
        with mod.no_grad():
            assert op(x).grad_fn is None
    assert ops[dynagrad] == ops[torch]


def test_custom_op_runs_below_autograd_and_backward_without_formula_raises():
    msgs = []
    for lib, mod in ((mine, dynagrad), (torch.library, torch)):
        @lib.custom_op('dgtest::double_b', mutates_args=())
        def double(x: mod.Tensor) -> mod.Tensor:
            return x * 2
        x = mod.ones(2, requires_grad=True)
        y = double(x)
        assert y.requires_grad
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
        assert double(mod.ones(2)).grad_fn is None
    assert msgs[0] == msgs[1]


def test_mutating_op_and_kernels():
    for lib, mod in ((mine, dynagrad), (torch.library, torch)):
        @lib.custom_op('dgtest::add_c', mutates_args={'x'})
        def add_(x: mod.Tensor, v: float) -> None:
            x.add_(v)
        t = mod.zeros(2)
        assert add_(t, 1.5) is None
        assert t.tolist() == [1.5, 1.5]

    @mine.custom_op('dgtest::k_d', mutates_args=())
    def f(x: dynagrad.Tensor) -> dynagrad.Tensor:
        return x + 1

    @f.register_kernel('cpu')
    def _(x):
        return x + 10
    assert f(dynagrad.zeros(1)).tolist() == [10.0]


@pytest.mark.parametrize('bad', ['noqualifier', 'ns::'])
def test_bad_names_and_missing_annotations_raise_value_error(bad):
    with pytest.raises(ValueError):
        mine.custom_op(bad, lambda x: x, mutates_args=())
    for lib in (mine, torch.library):
        with pytest.raises(ValueError, match='Parameter x must have a type annotation'):
            lib.custom_op('dgtest::noann_e', lambda x: x, mutates_args=())
        with pytest.raises(TypeError):
            lib.custom_op('dgtest::nomut_e', lambda x: x)


def test_library_kinds_define_and_impl():
    for lib in (mine, torch.library):
        with pytest.raises(ValueError, match='Unsupported kind: BAD'):
            lib.Library('dgtest_f', 'BAD')
        first = lib.Library('dgtest_g', 'DEF')
        with pytest.raises(RuntimeError, match='Only a single TORCH_LIBRARY'):
            lib.Library('dgtest_g', 'DEF')
        assert repr(lib.Library('dgtest_h', 'FRAGMENT')) == \
            'Library(kind=FRAGMENT, ns=dgtest_h, dispatch_key=)>'
        first.define('twice(Tensor x) -> Tensor')
        first.impl('twice', lambda x: x * 2, 'CPU')
    assert mine.get_op('dgtest_g::twice')(dynagrad.ones(2)).tolist() == \
        torch.ops.dgtest_g.twice(torch.ones(2)).tolist()


def test_infer_schema_as_torch():
    for mod, lib in ((dynagrad, mine), (torch, torch.library)):
        def g(x: mod.Tensor, n: int) -> mod.Tensor:
            return x

        def h(x: mod.Tensor, v: float) -> None:
            pass
        got = (lib.infer_schema(g, mutates_args=()), lib.infer_schema(h, mutates_args={'x'}))
        if mod is torch:
            assert got == mine_got
        mine_got = got
