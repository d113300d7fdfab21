"""Native CPU kernels, compiled by numba: the optional ``fast`` tier (``pip install
'dynagrad[fast]'``).

Ops never import this package or numba: they ask ``backend.native_kernel(name, array)``,
the one dispatch point beside the array door, and get either a kernel or None (then the
NumPy path runs, which stays the reference implementation). This module only knows which
family module holds which kernel; numba is imported when the first kernel is asked for,
so ``import dynagrad`` never pays for it (``import numba`` alone is about 0.4 s).

Kernels are compiled on first call per dtype with ``cache=True``: a cold cache costs
seconds per kernel (see docs/benchmarks.md), a warm one milliseconds. Threads: not numba's
``parallel=True`` (its pip ``workqueue`` layer aborts when two Python threads launch
parallel kernels at once, and breaks after ``fork``). A kernel runs on chunks of
independent rows, above per-kernel size thresholds measured to pay (each family module's
``MIN_PER_THREAD``), with ``dynagrad.get_num_threads()`` threads: through ``chunks`` on
the BLAS's own worker threads where NumPy's BLAS is OpenBLAS (one pool for products and
kernels), else, and for the convolution's chunks that call BLAS themselves, on
``threads.parallel_for``'s Python threads. Results are bit-identical to one thread.
"""
import importlib

# kernel name -> family module (one file per family)
FAMILIES = {
    'gelu': 'activation', 'gelu_backward': 'activation',
    'relu': 'activation', 'relu_backward': 'activation',
    'layer_norm': 'normalization', 'layer_norm_backward': 'normalization',
    'rms_norm': 'normalization', 'rms_norm_backward': 'normalization',
    'softmax': 'softmax', 'softmax_backward': 'softmax',
    'log_softmax': 'softmax', 'log_softmax_backward': 'softmax',
    'cross_entropy': 'softmax', 'cross_entropy_backward': 'softmax',
    'soft_cross_entropy': 'softmax', 'soft_cross_entropy_backward': 'softmax',
    'bernoulli_mask': 'random', 'dropout': 'random',
    'multinomial_race': 'random', 'multinomial_with_replacement': 'random',
    'embedding_backward': 'indexing', 'masked_fill': 'indexing',
    'adam_step': 'optim', 'sgd_step': 'optim',
    'attention_probs': 'attention', 'attention_probs_backward': 'attention',
    'lstm_step': 'rnn', 'lstm_step_backward': 'rnn',
    'gru_step': 'rnn', 'gru_step_backward': 'rnn',
    'im2col': 'conv', 'col2im': 'conv', 'conv_forward': 'conv', 'conv_backward': 'conv',
    'conv2d_direct': 'conv_direct',
    'max_pool': 'pooling', 'max_pool_backward': 'pooling',
    'linear': 'linalg', 'matmul_rows': 'linalg', 'batched_matmul': 'blas', 'linear_bias': 'blas',
}


def available():
    """None when numba loads, else why not (an ImportError's message): numba missing, in
    Pyodide, or refusing this NumPy version."""
    try:
        import numba  # noqa: F401
    except Exception as e:   # numba raises ImportError, or worse, on a NumPy it does not support
        return f'{type(e).__name__}: {e}'
    return None


def load(name):
    """The kernel ``name`` (a Python function over NumPy arrays)."""
    module = importlib.import_module(f'{__name__}.{FAMILIES[name]}')
    return getattr(module, name)
