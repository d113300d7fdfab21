"""``dynagrad.cuda.graphs``: CUDA graph capture, as ``torch.cuda.graphs``.

dynagrad does not capture CUDA graphs: its CUDA device runs each op as CuPy kernels on
arrays it allocates per call, so a captured graph would replay into memory that later ops
have reused. The names exist so that libraries import; nothing is ever capturing, and
making a graph says why it cannot be done.
"""

__all__ = ['is_current_stream_capturing', 'graph_pool_handle', 'CUDAGraph', 'graph',
           'make_graphed_callables']

NO_GRAPHS = ('dynagrad does not capture CUDA graphs: run the code eagerly (or compile it '
             'with dynagrad.compile)')


def is_current_stream_capturing():
    return False


def graph_pool_handle():
    raise RuntimeError(NO_GRAPHS)


class CUDAGraph:
    def __init__(self, keep_graph=False):
        raise RuntimeError(NO_GRAPHS)


class graph:
    """``with dynagrad.cuda.graph(g):`` would capture into ``g``; no ``CUDAGraph`` can be
    made, so neither can this."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode='global',
                 enable_annotations=False, check_input_liveness=False):
        raise RuntimeError(NO_GRAPHS)


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False,
                           pool=None):
    raise RuntimeError(NO_GRAPHS)
