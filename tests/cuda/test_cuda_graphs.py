"""dynagrad.cuda.graphs and StreamContext: the names torch.cuda has, nothing capturing, and
a clear error where a graph would be made (a CPU-only torch raises RuntimeError too)."""
import pytest
import torch

import dynagrad


def test_names_exist_as_in_torch():
    for name in torch.cuda.graphs.__all__:
        assert hasattr(dynagrad.cuda.graphs, name) and hasattr(dynagrad.cuda, name), name
    assert dynagrad.cuda.is_current_stream_capturing() is False
    assert isinstance(dynagrad.cuda.stream(None), dynagrad.cuda.StreamContext)
    assert isinstance(torch.cuda.stream(None), torch.cuda.StreamContext)
    with dynagrad.cuda.StreamContext(None) as s, torch.cuda.StreamContext(None) as t:
        assert s is None and t is None


@pytest.mark.parametrize('make', [
    lambda m: m.CUDAGraph(), lambda m: m.graph_pool_handle(),
    lambda m: m.make_graphed_callables(abs, ())])
def test_making_a_graph_raises_runtime_error_as_cpu_torch(make):
    with pytest.raises(RuntimeError):
        make(torch.cuda)
    with pytest.raises(RuntimeError, match='does not capture CUDA graphs'):
        make(dynagrad.cuda)
