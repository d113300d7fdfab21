"""torch.compiler's markers and switches (dynagrad.compiler.decorators) against torch's."""
import inspect

import pytest
import torch

import dynagrad
import dynagrad.compiler as mine
from dynagrad.compiler.decorators import current_stance


def f(x):
    return x * 2 + 1


@pytest.mark.parametrize('name', ['is_compiling', 'is_dynamo_compiling', 'is_exporting'])
def test_eager_code_is_not_compiling(name):
    assert getattr(mine, name)() is getattr(torch.compiler, name)() is False


def test_markers_keep_the_function_and_check_their_argument():
    assert mine.disable(f) is f and mine.disable()(f) is f and mine.disable(recursive=False)(f) is f
    assert mine.allow_in_graph(f) is torch.compiler.allow_in_graph(f) is f
    assert mine.assume_constant_result(f) is torch.compiler.assume_constant_result(f) is f
    with pytest.raises(AssertionError, match='allow_in_graph expects a callable'):
        torch.compiler.allow_in_graph(3)
    with pytest.raises(AssertionError, match='allow_in_graph expects a callable'):
        mine.allow_in_graph(3)
    assert list(inspect.signature(mine.disable).parameters) == \
        list(inspect.signature(torch.compiler.disable).parameters)
    assert list(inspect.signature(mine.set_stance).parameters) == \
        list(inspect.signature(torch.compiler.set_stance).parameters)
    assert mine.get_default_backend() == torch.compiler.get_default_backend()
    assert set(mine.list_backends()) <= set(torch.compiler.list_backends())
    assert mine.cudagraph_mark_step_begin() is None
    mine.reset()


def test_force_eager_stance_runs_compiled_callables_eagerly():
    # a replay makes one graph node for the whole program, an eager call one per op
    g = dynagrad.compile(f)
    x = dynagrad.ones(3, requires_grad=True)
    for _ in range(3):
        g(x)
    replayed = g(x).grad_fn.name()
    with mine.set_stance('force_eager'):
        assert g(x).grad_fn.name() == 'AddBackward0'
        assert current_stance.name == 'force_eager'
    assert g(x).grad_fn.name() == replayed != 'AddBackward0'
    eager_g = mine.set_stance('force_eager')(lambda: g(x).grad_fn.name())
    assert current_stance.name == 'default'
    assert eager_g() == 'AddBackward0' and current_stance.name == 'default'
    mine.set_stance('force_eager')
    try:
        assert g(x).grad_fn.name() == 'AddBackward0'
    finally:
        mine.set_stance('default')
    assert g(x).grad_fn.name() == replayed


def test_unknown_and_unimplemented_stances_raise_before_changing_anything():
    with pytest.raises(RuntimeError, match='invalid torch.compile stance'):
        mine.set_stance('bogus')
    with pytest.raises(NotImplementedError, match='fail_on_recompile'):
        mine.set_stance('fail_on_recompile')
    with pytest.raises(RuntimeError, match='non-default stance cannot have force_backend'):
        torch.compiler.set_stance('force_eager', force_backend='eager')
    with pytest.raises(RuntimeError, match='non-default stance cannot have force_backend'):
        mine.set_stance('force_eager', force_backend='eager')
    assert current_stance.name == 'default'
