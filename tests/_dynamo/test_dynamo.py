"""dynagrad._dynamo: the torch._dynamo names libraries import, against torch's."""
import pytest
import torch
import torch._dynamo

import dynagrad
import dynagrad._dynamo as mine


def test_config_defaults_patch_and_unknown_names_as_torch():
    theirs = torch._dynamo.config
    for name in ['suppress_errors', 'cache_size_limit', 'recompile_limit',
                 'accumulated_cache_size_limit', 'capture_scalar_outputs',
                 'capture_dynamic_output_shape_ops', 'verbose', 'optimize_ddp',
                 'automatic_dynamic_shapes', 'assume_static_by_default']:
        assert getattr(mine.config, name) == getattr(theirs, name), name
    for config in (mine.config, theirs):
        with pytest.raises(AttributeError, match='torch._dynamo.config.bogus_flag does not exist'):
            config.bogus_flag = 1
        with pytest.raises(AttributeError, match='torch._dynamo.config.bogus_flag does not exist'):
            config.bogus_flag
        with config.patch(suppress_errors=True):
            assert config.suppress_errors is True
        assert config.suppress_errors is False
    mine.config.capture_scalar_outputs = True
    try:
        import dynagrad._dynamo.config as again
        assert again.capture_scalar_outputs is True
    finally:
        mine.config.capture_scalar_outputs = False


def test_markers_and_hints():
    x = dynagrad.ones(2, 3)
    for fn in ('mark_dynamic', 'maybe_mark_dynamic'):
        assert getattr(mine, fn)(x, 0) is getattr(torch._dynamo, fn)(torch.ones(2, 3), 0) is None
    assert mine.mark_static(x) is None and mine.mark_static_address(x) is None
    assert mine.is_compiling() is torch._dynamo.is_compiling() is False
    f = abs
    assert mine.disable(f) is f and mine.allow_in_graph(f) is f
    assert issubclass(mine.exc.Unsupported, RuntimeError)
    assert [c.__name__ for c in mine.exc.Unsupported.__mro__[:3]] == \
        [c.__name__ for c in torch._dynamo.exc.Unsupported.__mro__[:3]]
    assert dynagrad._dynamo is mine


def test_optimize_compiles():
    g = mine.optimize('inductor')(lambda t: t * 3)
    assert isinstance(g, dynagrad.compiler.CompiledFunction)
    for _ in range(4):
        assert g(dynagrad.ones(2)).tolist() == [3.0, 3.0]


def test_transform_getitem_mode_lets_vmap_index_with_scalars():
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as Theirs
    from dynagrad._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    a = torch.arange(10.) * 3
    with Theirs():
        expected = torch.vmap(lambda i: a[i])(torch.tensor([1, 3, 5]))
    b = dynagrad.arange(10.) * 3
    with TransformGetItemToIndex():
        got = dynagrad.vmap(lambda i: b[i])(dynagrad.tensor([1, 3, 5]))
    assert got.tolist() == expected.tolist()


def test_compiled_module_class_support_flag_and_testing_names():
    compiled = dynagrad.compile(dynagrad.nn.Linear(2, 2))
    # (torch.compile itself is not called: it changes torch-wide defaults other tests read)
    from dynagrad._dynamo.eval_frame import OptimizedModule
    assert isinstance(compiled, OptimizedModule) and isinstance(compiled, mine.OptimizedModule)
    assert issubclass(torch._dynamo.eval_frame.OptimizedModule, torch.nn.Module)
    assert issubclass(OptimizedModule, dynagrad.nn.Module)
    assert not isinstance(dynagrad.nn.Linear(2, 2), OptimizedModule)
    assert mine.is_dynamo_supported() is torch._dynamo.is_dynamo_supported() is True
    from dynagrad._dynamo.testing import CompileCounter
    from dynagrad._dynamo.utils import counters
    counter = CompileCounter()
    assert (counter.frame_count, counter.op_count) == (0, 0)
    assert counters['nothing'] == {}


def test_list_backends_is_a_part_of_torchs_and_compiles():
    for tags in (('debug', 'experimental'), ()):
        ours = mine.list_backends(exclude_tags=tags)
        assert ours and set(ours) <= set(torch._dynamo.list_backends(exclude_tags=tags))
        for backend in ours:
            f = dynagrad.compile(lambda x: x * 2, backend=backend)
            assert f(dynagrad.ones(2)).tolist() == [2.0, 2.0]
    assert mine.list_backends() == ['inductor'] and 'inductor' in torch._dynamo.list_backends()
