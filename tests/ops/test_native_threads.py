"""The native kernels on several threads (``dynagrad.native.threads``): a kernel split into
chunks of rows (elements, images, heads) by ``set_num_threads(n)`` gives the one-thread
result bit for bit, whatever the thread count (2, and 3 for uneven chunks), and torch's
within tolerance through the ops; kernels called from two Python threads at once, and in a
child made by ``fork``, still give the right values; with one thread nothing is split.

The size thresholds (``MIN_PER_THREAD`` in each family module, and
``MIN_PER_THREAD_BACKWARD`` where the backward is lighter) keep the small arrays here serial, so most tests lower them to one row per chunk (``small_chunks``) to split arrays of
any size; one test per family runs above the real threshold.
"""
import multiprocessing
import threading

import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad import backend, native

NUMBA_MISSING = native.available()
pytestmark = pytest.mark.skipif(NUMBA_MISSING is not None,
                                reason=f'numba does not load: {NUMBA_MISSING}')

FAMILIES = ('activation', 'normalization', 'attention', 'conv', 'pooling', 'softmax',
            'indexing', 'linalg')


def _module(family):
    import importlib
    return importlib.import_module(f'dynagrad.native.{family}')


@pytest.fixture(autouse=True)
def native_kernels():
    previous = backend.set_kernels('native')
    threads_before = dynagrad.get_num_threads()
    yield
    backend.set_kernels(previous)
    dynagrad.set_num_threads(threads_before)


@pytest.fixture(params=['blas', 'python'])
def runner(request, monkeypatch):
    """Chunk entries run on OpenBLAS's workers ('blas', where NumPy's BLAS offers them) or
    on the Python pool ('python', what other BLAS libraries get)."""
    from dynagrad.native import chunks
    if request.param == 'python':
        monkeypatch.setattr(chunks, '_blas_runner', lambda: None)
    elif chunks._blas_runner() is None:
        pytest.skip("NumPy's BLAS is not a threaded OpenBLAS: no workers to run chunks on")
    return request.param


@pytest.fixture
def splits(monkeypatch, runner):
    """Records the chunk count of every ``parallel_for`` call the family modules make, and
    of every chunk entry run (``chunks.run``)."""
    calls = []
    from dynagrad.native import chunks, threads
    original, original_run = threads.parallel_for, chunks.run

    def spy(count, parts, body):
        calls.append((count, parts))
        return original(count, parts, body)

    def spy_run(entry, count, parts, *fields):
        calls.append((count, parts))
        return original_run(entry, count, parts, *fields)
    for family in FAMILIES:
        if hasattr(_module(family), 'parallel_for'):
            monkeypatch.setattr(_module(family), 'parallel_for', spy)
    monkeypatch.setattr(chunks, 'run', spy_run)
    return calls


@pytest.fixture
def small_chunks(monkeypatch, splits):
    from dynagrad.native import chunks
    monkeypatch.setattr(chunks, 'PYTHON_POOL_FACTOR', 1)
    for family in FAMILIES:
        module = _module(family)
        for name in ('MIN_PER_THREAD', 'MIN_PER_THREAD_BACKWARD', 'MIN_WORK_PER_THREAD',
                     'MIN_ROWS_WORK_PER_THREAD'):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, 1)
    return splits


def _bits(result):
    """Every array in ``result`` (an array or a tuple of them, None kept) as bytes."""
    if isinstance(result, tuple):
        return tuple(_bits(r) for r in result)
    return None if result is None else (result.dtype.str, result.shape, result.tobytes())


def _same_on_all_counts(compute, splits, expect_split=True):
    """``compute()`` on 1, 2 and 3 threads: the same bits each time, split into several
    chunks, at most one per thread (when ``expect_split``), else not split."""
    dynagrad.set_num_threads(1)
    del splits[:]
    serial = _bits(compute())
    assert splits == []
    for n in (2, 3):
        dynagrad.set_num_threads(n)
        del splits[:]
        assert _bits(compute()) == serial
        if expect_split:
            assert splits and all(1 < parts <= n for _, parts in splits), splits
    return serial


RNG = np.random.default_rng(0)


def _randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# -- the pool itself -------------------------------------------------------------------------

@pytest.mark.parametrize('count, parts', [(1, 1), (7, 2), (7, 3), (10, 4), (5, 5), (100, 3)])
def test_parallel_for_covers_each_item_once(count, parts):
    from dynagrad.native.threads import parallel_for
    seen = []
    lock = threading.Lock()

    def body(lo, hi):
        with lock:
            seen.extend(range(lo, hi))
    parallel_for(count, parts, body)
    assert sorted(seen) == list(range(count))


def test_parallel_for_raises_a_chunks_error_in_the_caller():
    from dynagrad.native.threads import parallel_for

    def body(lo, hi):
        if lo > 0:
            raise ValueError(f'chunk at {lo}')
    with pytest.raises(ValueError, match='chunk at'):
        parallel_for(10, 3, body)


def test_chunks_follow_the_thread_count_and_the_threshold():
    from dynagrad.native.threads import chunks
    dynagrad.set_num_threads(1)
    assert chunks(10 ** 6, 10) == 1
    dynagrad.set_num_threads(3)
    assert chunks(10 ** 6, 10) == 3
    assert chunks(25, 10) == 2          # each chunk at least 10 items
    assert chunks(19, 10) == 1
    threadpoolctl = pytest.importorskip('threadpoolctl')
    with threadpoolctl.threadpool_limits(1, user_api='blas'):   # what the benchmarks use
        assert chunks(10 ** 6, 10) == 1 == dynagrad.get_num_threads()
    assert chunks(10 ** 6, 10) == 3


# -- each kernel: bit for bit against one thread ---------------------------------------------

@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('tanh_form', [False, True])
def test_gelu(small_chunks, dtype, tanh_form):
    k = native.load('gelu'), native.load('gelu_backward')
    x, g = _randn(3, 37, dtype=dtype), _randn(3, 37, dtype=dtype)
    _same_on_all_counts(lambda: k[0](x, tanh_form), small_chunks)
    _same_on_all_counts(lambda: k[1](g, x, tanh_form), small_chunks)


def _real_minimum(minimum, runner):
    """A chunk entry's size threshold as it applies with ``runner``."""
    from dynagrad.native import chunks
    return minimum * (chunks.PYTHON_POOL_FACTOR if runner == 'python' else 1)


def test_gelu_above_the_real_threshold(splits, runner):
    from dynagrad.native import activation
    x = _randn(2 * _real_minimum(activation.MIN_PER_THREAD, runner) + 5)
    _same_on_all_counts(lambda: native.load('gelu')(x, False), splits)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('affine', [(True, True), (True, False), (False, False)])
def test_layer_norm(small_chunks, dtype, affine):
    x, g = _randn(4, 5, 24, dtype=dtype), _randn(4, 5, 24, dtype=dtype)
    w = _randn(24, dtype=dtype) if affine[0] else None
    b = _randn(24, dtype=dtype) if affine[1] else None
    out, mean, rstd = _same_on_all_counts(
        lambda: native.load('layer_norm')(x, 24, w, b, 1e-5), small_chunks)
    mean, rstd = (np.frombuffer(a[2], dtype) for a in (mean, rstd))
    backward = native.load('layer_norm_backward')
    # the input's gradient alone is split; with a parameter's gradient (summed over all
    # rows) the kernel stays on one thread
    _same_on_all_counts(lambda: backward(g, x, mean, rstd, w, 24, (True, False, False),
                                         (24,)), small_chunks)
    needs = (True, affine[0], affine[1])
    if any(needs[1:]):
        _same_on_all_counts(lambda: backward(g, x, mean, rstd, w, 24, needs, (24,)),
                            small_chunks, expect_split=False)
        assert small_chunks == []


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('affine', [True, False])
def test_rms_norm(small_chunks, dtype, affine):
    x, g = _randn(7, 3, 16, dtype=dtype), _randn(7, 3, 16, dtype=dtype)
    w = _randn(16, dtype=dtype) if affine else None
    out, rstd = _same_on_all_counts(lambda: native.load('rms_norm')(x, 16, w, 1e-6),
                                    small_chunks)
    rstd = np.frombuffer(rstd[2], dtype)
    backward = native.load('rms_norm_backward')
    _same_on_all_counts(lambda: backward(g, x, rstd, w, 16, (True, False)), small_chunks)
    if affine:
        _same_on_all_counts(lambda: backward(g, x, rstd, w, 16, (True, True)), small_chunks,
                            expect_split=False)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_softmax_and_log_softmax(small_chunks, dtype):
    x, g = _randn(6, 5, 19, dtype=dtype), _randn(6, 5, 19, dtype=dtype)
    for name in ('softmax', 'log_softmax'):
        y = native.load(name)(x)
        _same_on_all_counts(lambda: native.load(name)(x), small_chunks)
        _same_on_all_counts(lambda: native.load(f'{name}_backward')(g, y), small_chunks)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('shapes', [((6, 4, 9, 9), (1, 1, 9, 9)), ((6, 4, 9, 9), (9, 9)),
                                    ((7, 13), (7, 13))])
def test_masked_fill(small_chunks, dtype, shapes):
    x = _randn(*shapes[0], dtype=dtype)
    mask = RNG.random(shapes[1]) < 0.4
    out = _same_on_all_counts(lambda: native.load('masked_fill')(x, mask, -np.inf),
                              small_chunks)
    expected = torch.from_numpy(x).masked_fill(torch.from_numpy(mask), float('-inf'))
    assert out[2] == expected.numpy().tobytes()


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('rows, n_in, n_out', [(3, 9, 37), (20, 16, 70), (33, 40, 17)])
def test_linear_by_weight_rows(small_chunks, dtype, rows, n_in, n_out):
    """The few-row product split into whole tiles of weight rows: each output as on one
    thread, with and without a bias."""
    x, w, b = _randn(rows, n_in, dtype=dtype), _randn(n_out, n_in, dtype=dtype), \
        _randn(n_out, dtype=dtype)
    for bias in (b, None):
        out = _same_on_all_counts(lambda: native.load('linear')(x, w, bias), small_chunks)
    expected = torch.nn.functional.linear(*(torch.from_numpy(a) for a in (x, w)))
    np.testing.assert_allclose(np.frombuffer(out[2], dtype).reshape(rows, n_out),
                               expected.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('rows, n_in, n_out', [(3, 9, 150), (7, 33, 150), (20, 16, 300)])
def test_matmul_rows_by_columns(small_chunks, dtype, rows, n_in, n_out):
    """The recurrent step's product split into whole wide tiles of columns, the last rows
    through the padded block: each output as on one thread."""
    x, w = _randn(rows, n_in, dtype=dtype), _randn(n_in, n_out, dtype=dtype)
    out = _same_on_all_counts(lambda: native.load('matmul_rows')(x, w), small_chunks)
    np.testing.assert_allclose(np.frombuffer(out[2], dtype).reshape(rows, n_out),
                               x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_norms_above_the_real_threshold(splits, runner):
    from dynagrad.native import normalization
    rows = 2 * _real_minimum(normalization.MIN_PER_THREAD, runner) // 64 + 3
    x, w = _randn(rows, 64), _randn(64)
    _same_on_all_counts(lambda: native.load('layer_norm')(x, 64, w, w, 1e-5), splits)
    _same_on_all_counts(lambda: native.load('rms_norm')(x, 64, w, 1e-5), splits)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('mask', ['none', 'causal', 'additive', 'broadcast'])
def test_attention_probs(small_chunks, dtype, mask):
    s = _randn(2, 5, 9, 11, dtype=dtype)
    add = None
    if mask == 'additive':
        add = np.where(RNG.random((2, 5, 9, 11)) < 0.3, -np.inf, 0.0).astype(dtype)
        add[0, 1, 2] = -np.inf      # a row with no visible key
    elif mask == 'broadcast':
        add = _randn(5, 1, 11, dtype=dtype)
    probs = native.load('attention_probs')
    _same_on_all_counts(lambda: probs(s.copy(), 0.3, add, mask == 'causal'), small_chunks)
    p, _ = probs(s.copy(), 0.3, add, mask == 'causal')
    dp = _randn(*s.shape, dtype=dtype)
    keep = (RNG.random(s.shape) < 0.8).astype(dtype) / dtype(0.8)
    backward = native.load('attention_probs_backward')
    for k in (None, keep):
        _same_on_all_counts(lambda: backward(dp.copy(), p, k, 0.3), small_chunks)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('geometry', [
    dict(K=(3, 3), stride=(1, 1), pads=((1, 1), (1, 1)), dilation=(1, 1)),
    dict(K=(2, 3), stride=(2, 1), pads=((0, 0), (2, 2)), dilation=(1, 2)),
    dict(K=(3,), stride=(2,), pads=((1, 1),), dilation=(1,)),
])
def test_im2col_and_col2im(small_chunks, dtype, geometry):
    from dynagrad.native import conv
    spatial = (9, 8)[:len(geometry['K'])]
    x = _randn(5, 3, *spatial, dtype=dtype)
    out = tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, (lo, hi), k, s, d in zip(
        spatial, geometry['pads'], geometry['K'], geometry['stride'], geometry['dilation']))
    cols = _same_on_all_counts(lambda: conv.im2col(x, out=out, **geometry), small_chunks)
    cols = _randn(5, 3, *geometry['K'], *out, dtype=dtype)
    _same_on_all_counts(lambda: conv.col2im(cols, spatial, **geometry), small_chunks)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('window', [
    ((2, 2), (2, 2), (0, 0), (1, 1), (4, 5)),       # the 2x2 kernel
    ((3, 3), (2, 2), (1, 1), (1, 1), (5, 6)),
    ((3,), (1,), (1,), (2,), (9,)),
])
def test_max_pool(small_chunks, dtype, window):
    k, s, p, d, out = window
    spatial = (9, 11)[:len(k)]
    x = _randn(3, 4, *spatial, dtype=dtype)
    x[0, 1].flat[3] = np.nan
    y, idx = _same_on_all_counts(lambda: native.load('max_pool')(x, k, s, p, d, out),
                                 small_chunks)
    idx = np.frombuffer(idx[2], np.int64).reshape(3, 4, *out)
    g = _randn(3, 4, *out, dtype=dtype)
    _same_on_all_counts(lambda: native.load('max_pool_backward')(g, idx, x.shape, len(k)),
                        small_chunks)


def test_conv_and_pool_above_the_real_threshold(splits, runner):
    from dynagrad.native import conv, pooling
    images = 2 * max(conv.MIN_PER_THREAD, _real_minimum(pooling.MIN_PER_THREAD, runner)) \
        // (8 * 24 * 24) + 2
    x = _randn(images, 8, 24, 24)
    geometry = dict(K=(3, 3), stride=(1, 1), pads=((0, 0), (0, 0)), dilation=(1, 1))
    cols = _same_on_all_counts(lambda: conv.im2col(x, out=(22, 22), **geometry), splits)
    cols = np.frombuffer(cols[2], np.float32).reshape(images, 8, 3, 3, 22, 22)
    _same_on_all_counts(lambda: conv.col2im(cols, (24, 24), **geometry), splits)
    _same_on_all_counts(
        lambda: native.load('max_pool')(x, (2, 2), (2, 2), (0, 0), (1, 1), (12, 12)), splits)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('geometry, channels', [
    (dict(K=(3, 3), stride=(1, 1), pads=((0, 0), (0, 0)), dilation=(1, 1)), (16, 32)),
    (dict(K=(3, 3), stride=(2, 1), pads=((1, 1), (0, 0)), dilation=(1, 2)), (4, 6)),
])
def test_conv_by_images(small_chunks, monkeypatch, dtype, geometry, channels):
    """The whole convolution split by images (columns and products per chunk) and its
    gradients: through F.conv2d the same bits on any thread count; the kernels on two
    threads equal to im2col and one batched product, col2im of the input gradient's, and
    the weight gradient's products cut into row blocks (16 -> 32 channels at 11x11:
    (144, 121) @ (121, 32) per image, above OpenBLAS's threading size)."""
    from dynagrad.native import conv
    monkeypatch.setattr(conv, 'MIN_MACS_PER_THREAD', 1)
    C, O = channels
    x = _randn(5, C, 13, 13, dtype=dtype)
    w = _randn(O, C, 3, 3, dtype=dtype)
    b = _randn(O, dtype=dtype)
    args = dict(stride=geometry['stride'], padding=tuple(lo for lo, _ in geometry['pads']),
                dilation=geometry['dilation'])
    ty = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), **args)
    gy = _randn(*ty.shape, dtype=dtype)

    def through_the_op():
        leaves = [dynagrad.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = F.conv2d(*leaves, **args)
        y.backward(dynagrad.tensor(gy))
        return (y.detach().numpy(),) + tuple(t.grad.numpy() for t in leaves)
    y, gx, gw, gb = _same_on_all_counts(through_the_op, small_chunks)
    tensors = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    torch.nn.functional.conv2d(*tensors, **args).backward(torch.tensor(gy))
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for ours, theirs in zip((y, gx, gw), [ty] + [t.grad for t in tensors]):
        np.testing.assert_allclose(np.frombuffer(ours[2], dtype).reshape(ours[1]),
                                   theirs.detach().numpy(), **tol)

    dynagrad.set_num_threads(2)
    out = ty.shape[2:]
    w2 = w.reshape(O, -1)
    y2, cols = conv.conv_forward(x, w2, out=out, **geometry)
    assert _bits(cols) == _bits(conv.im2col(x, out=out, **geometry))
    assert _bits(y2) == _bits(np.matmul(w2, cols))
    assert (conv._weight_rows(C * 9, y2.shape[2], O) is not None) == (C == 16)
    gx2, gw2 = conv.conv_backward(gy, w2, cols, (13, 13), **geometry)
    back = np.matmul(w2.T, gy.reshape(5, O, -1)).reshape((5, C) + geometry['K'] + out)
    assert _bits(gx2) == _bits(conv.col2im(back, (13, 13), **geometry))
    np.testing.assert_allclose(gw2, np.einsum('nkl,nol->ok', cols, gy.reshape(5, O, -1)), **tol)


# -- through the ops, against torch -----------------------------------------------------------

def _both(a, requires_grad=True):
    return (dynagrad.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(ours, theirs, tol=1e-5):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()),
                               theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize('n', [2, 3])
def test_ops_on_threads_match_torch(small_chunks, n):
    dynagrad.set_num_threads(n)
    x, tx = _both(_randn(4, 6, 32))
    w, tw = _both(_randn(32))
    b, tb = _both(_randn(32))
    y = F.layer_norm(F.gelu(x), (32,), w, b)
    ty = torch.nn.functional.layer_norm(torch.nn.functional.gelu(tx), (32,), tw, tb)
    _close(y, ty)
    g = _randn(4, 6, 32)
    y.backward(dynagrad.tensor(g))
    ty.backward(torch.tensor(g))
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        _close(ours.grad, theirs.grad, 1e-4)

    q, tq = _both(_randn(2, 3, 8, 16))
    a = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    ta = torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True)
    _close(a, ta)
    a.sum().backward()
    ta.sum().backward()
    _close(q.grad, tq.grad, 1e-4)

    img, timg = _both(_randn(6, 2, 12, 12))
    k, tk = _both(_randn(4, 2, 3, 3))
    c = F.max_pool2d(F.conv2d(img, k, padding=1), 2)
    tc = torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(timg, tk, padding=1), 2)
    _close(c, tc, 1e-4)
    c.sum().backward()
    tc.sum().backward()
    _close(img.grad, timg.grad, 1e-4)
    _close(k.grad, tk.grad, 1e-3)
    assert {parts for _, parts in small_chunks} == {n}


# -- one thread, concurrency, fork -------------------------------------------------------------

def test_one_thread_never_splits(small_chunks):
    from dynagrad.native import threads
    dynagrad.set_num_threads(1)
    x = dynagrad.tensor(_randn(8, 64), requires_grad=True)
    F.layer_norm(F.gelu(x), (64,)).sum().backward()
    F.max_pool2d(F.conv2d(x.reshape(2, 1, 16, 16), dynagrad.ones(2, 1, 3, 3)), 2).sum()
    assert small_chunks == []
    assert threads.chunks(10 ** 9, 1) == 1


def test_two_python_threads_at_once(small_chunks):
    dynagrad.set_num_threads(2)
    gelu, norm = native.load('gelu'), native.load('layer_norm')
    inputs = [_randn(16, 40) for _ in range(2)]
    dynagrad.set_num_threads(1)
    expected = [(_bits(gelu(x, False)), _bits(norm(x, 40, None, None, 1e-5))) for x in inputs]
    dynagrad.set_num_threads(2)
    wrong, errors = [], []
    start = threading.Barrier(2)

    def run(i):
        try:
            start.wait()
            for _ in range(200):
                got = (_bits(gelu(inputs[i], False)),
                       _bits(norm(inputs[i], 40, None, None, 1e-5)))
                if got != expected[i]:
                    wrong.append(i)
        except BaseException as e:      # reported below, in the test's thread
            errors.append(e)
    workers = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert not any(t.is_alive() for t in workers), 'a kernel call hung'
    assert errors == [] and wrong == []
    assert len(small_chunks) == 800


def _child(conn, x):
    from dynagrad.native import activation, threads
    activation.MIN_PER_THREAD = 1
    dynagrad.set_num_threads(2)
    workers_at_start = threads._pool.workers        # the parent's threads are not here
    result = native.load('gelu')(x, False).tobytes()
    conn.send((result, workers_at_start, threads._pool.workers))
    conn.close()


def test_kernels_run_in_a_forked_child(small_chunks, runner):
    dynagrad.set_num_threads(2)
    x = _randn(64, 33)
    parent_result = native.load('gelu')(x, False)   # the parent's pool now has a thread
    assert small_chunks
    context = multiprocessing.get_context('fork')
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, x))
    child.start()
    assert receive.poll(120), 'the child produced nothing (hung?)'
    result, workers_at_start, workers_after = receive.recv()
    assert result == parent_result.tobytes()
    # OpenBLAS starts its own workers again in the child; the Python pool makes one
    assert (workers_at_start, workers_after) == (0, 1 if runner == 'python' else 0)
    child.join(30)
    assert child.exitcode == 0
