"""The native kernels (``dynagrad.native``, numba): each op that has one checked with it on
and with it off, against torch and against the NumPy path.

The conformance table's rows of those ops run in two columns, 'numpy' and 'native'
(forward in every form, backward, gradcheck in float64); the native column is skipped,
saying why, where numba does not load. Then each kernel is compared with the NumPy path
on larger arrays, in ulps of float32 against float64 where NumPy's own result is not the
reference, and on the values that break naive code (NaN, infinities, -inf masks).
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad import backend, native
from dynagrad.autograd import gradcheck

from native_support import table_columns, kernels_mode, needs_numba
from ops import test_conformance as conformance


# the table's rows whose ops reach a native kernel
KERNEL_OPS = ('nn.functional.gelu', 'nn.functional.gelu_tanh', 'nn.functional.softmax',
              'nn.functional.log_softmax', 'nn.functional.softmax_implicit_dim',
              'nn.functional.log_softmax_implicit_dim', 'nn.functional.layer_norm',
              'toplevel.softmax', 'toplevel.log_softmax', 'toplevel.layer_norm',
              'toplevel.native_layer_norm', 'nn.functional.cross_entropy',
              'nn.functional.rms_norm', 'toplevel.rms_norm', 'nn.functional.embedding',
              'nn.functional.embedding_max_norm', 'nn.functional.relu', 'masked_fill')
# kernels the rows above do not reach: the random draws (the table compares values, so its
# dropout rows draw nothing), tested in tests/ops/test_native_random.py; the optimizer
# updates, in tests/optim/test_native_optim.py; attention's and the recurrent cells', whose
# rows run in tests/nn/test_native_attention.py and tests/nn/test_native_rnn.py; the
# convolution's (im2col, col2im, the whole forward and backward by images, the direct
# kernel) and pooling's, in
# tests/nn/test_native_conv.py; class-probability
# cross-entropy (the table's probability targets require grad, which keeps them off the
# fused op), in tests/nn/test_native_cross_entropy.py; F.linear's few-rows product, in
# tests/test_small_tensor_paths.py; multinomial's draws, in tests/ops/test_small_op_paths.py;
# batched products of small matrices and the bias folded into F.linear's product, in
# tests/ops/test_native_blas.py
UNTABLED = {'linear', 'matmul_rows', 'batched_matmul', 'linear_bias', 'bernoulli_mask', 'dropout', 'multinomial_race',
            'multinomial_with_replacement', 'adam_step', 'sgd_step',
            'attention_probs', 'attention_probs_backward', 'lstm_step', 'lstm_step_backward',
            'gru_step', 'gru_step_backward', 'im2col', 'col2im', 'conv_forward', 'conv_backward',
            'conv2d_direct', 'max_pool',
            'max_pool_backward', 'soft_cross_entropy', 'soft_cross_entropy_backward'}
ROWS, GRADCHECK_ROWS, test_row, test_row_gradcheck = table_columns(KERNEL_OPS)


def test_rows_exist():
    assert {p.values[0].name for p in ROWS} == set(KERNEL_OPS)
    assert len(GRADCHECK_ROWS) > 10




@needs_numba
@pytest.mark.parametrize('kernels', ['native'], indirect=True)
def test_the_native_column_runs_the_kernels(kernels):
    """The rows above really reach the kernels (forward and backward of each)."""
    for op, sample, i in (p.values for p in ROWS):
        if sample.has_float_input and not sample.has_empty:
            conformance.check_row(op, sample, i)
    assert set(kernels) == set(native.FAMILIES) - UNTABLED, sorted(kernels)


# -- each kernel against the NumPy path and torch, on larger arrays -------------------------

def _run(fn, arrays, g, mode):
    """``fn``'s output and its inputs' gradients for upstream ``g``, with ``mode`` kernels."""
    with kernels_mode(mode):
        leaves = [dynagrad.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        out.backward(dynagrad.tensor(g))
        return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


def _torch(fn, arrays, g):
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    out.backward(torch.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


def _ln(lib):
    f = F if lib is dynagrad else torch.nn.functional
    return lambda x, w, b: f.layer_norm(x, (x.shape[-1],), w, b)


def _rms(lib):
    f = F if lib is dynagrad else torch.nn.functional
    return lambda x, w: f.rms_norm(x, (x.shape[-1],), w)


CASES = {
    'rms_norm': (_rms, 2),
    'gelu': (lambda lib: (F if lib is dynagrad else torch.nn.functional).gelu, 1),
    'gelu_tanh': (lambda lib: lambda x: (F if lib is dynagrad else torch.nn.functional).gelu(
        x, approximate='tanh'), 1),
    'softmax': (lambda lib: lambda x: lib.softmax(x, -1), 1),
    'log_softmax': (lambda lib: lambda x: lib.log_softmax(x, -1), 1),
    'layer_norm': (_ln, 3),
    'relu': (lambda lib: (F if lib is dynagrad else torch.nn.functional).relu, 1),
}


def _inputs(case, dtype, shape=(24, 16, 96)):
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    params = [rng.standard_normal(shape[-1]).astype(dtype) for _ in range(CASES[case][1] - 1)]
    return [x] + params, rng.standard_normal(shape).astype(dtype)


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('case', sorted(CASES))
def test_kernel_against_numpy_path_and_torch(case, dtype):
    make, _ = CASES[case]
    arrays, g = _inputs(case, dtype)
    nat = _run(make(dynagrad), arrays, g, 'native')
    ref = _run(make(dynagrad), arrays, g, 'numpy')
    tor = _torch(make(torch), arrays, g)
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for k, (a, b, c) in enumerate(zip(nat, ref, tor)):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, c, err_msg=f'{case}: output {k} vs torch', **tol)
        np.testing.assert_allclose(a, b, err_msg=f'{case}: output {k} vs NumPy path', **tol)


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
@pytest.mark.parametrize('weighted', [False, True])
def test_cross_entropy_against_numpy_path_and_torch(dtype, reduction, weighted):
    """The fused cross-entropy (class indices) with ignore_index and class weights."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((40, 65)) * 4).astype(dtype)
    target = rng.integers(0, 65, 40)
    target[::7] = -100
    weight = rng.uniform(0.5, 2, 65).astype(dtype) if weighted else None
    g = rng.standard_normal(40 if reduction == 'none' else ()).astype(dtype)

    def make(lib):
        f = F if lib is dynagrad else torch.nn.functional
        t = lib.tensor(target)
        w = None if weight is None else lib.tensor(weight)
        return lambda a: f.cross_entropy(a, t, weight=w, reduction=reduction)
    nat = _run(make(dynagrad), [x], g, 'native')
    ref = _run(make(dynagrad), [x], g, 'numpy')
    tor = _torch(make(torch), [x], g)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for k, (a, b, c) in enumerate(zip(nat, ref, tor)):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, c, err_msg=f'output {k} vs torch', **tol)
        np.testing.assert_allclose(a, b, err_msg=f'output {k} vs NumPy path', **tol)


def _ulps(actual, exact):
    """|actual - exact| in float32 ulps of the exact value."""
    return np.abs(actual.astype(np.float64) - exact) / np.spacing(
        np.abs(exact).astype(np.float32)).astype(np.float64)


@needs_numba
@pytest.mark.parametrize('form', ['none', 'tanh'])
def test_gelu_float32_in_ulps(form):
    """float32 GELU (rational erf and tanh in the kernel) against float64, for x >= 0
    (left of 0 every float32 GELU, torch's too, loses relative accuracy to cancellation)."""
    x = np.linspace(0, 12, 100_001, dtype=np.float32)
    with kernels_mode('numpy'):
        exact = F.gelu(dynagrad.tensor(x.astype(np.float64)), approximate=form).numpy()
        exact_neg = F.gelu(dynagrad.tensor(-x.astype(np.float64)), approximate=form).numpy()
    with kernels_mode('native'):
        got = F.gelu(dynagrad.tensor(x), approximate=form).numpy()
        got_neg = F.gelu(dynagrad.tensor(-x), approximate=form).numpy()
    torch_ulps = _ulps(torch.nn.functional.gelu(torch.tensor(x), approximate=form).numpy(),
                       exact).max()
    assert _ulps(got, exact).max() <= max(4.0, torch_ulps)
    assert np.abs(got_neg - exact_neg).max() < 2e-6


SPECIAL = np.array([[0.0, 1.0, -2.0, np.nan, 3.0],
                    [np.inf, 0.0, 1.0, 2.0, -1.0],
                    [-np.inf, 0.0, 1.0, -np.inf, 2.0],
                    [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
                    [-100.0, 0.0, 100.0, -1e4, 1e4]])


@needs_numba
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('case', sorted(CASES))
def test_special_values_as_torch(case, dtype):
    """NaN, infinities, fully masked rows (all -inf) and far-apart values give torch's
    values and gradients, NaNs where torch has them and exact zeros where it has them
    (RMS norm: the NumPy path's)."""
    make, n = CASES[case]
    x = SPECIAL.astype(dtype)
    arrays = [x] + [np.linspace(0.5, 1.5, 5).astype(dtype)] * (n - 1)
    g = np.ones(x.shape, dtype)
    nat = _run(make(dynagrad), arrays, g, 'native')
    if case == 'rms_norm':
        # torch's rms_norm is a chain of small ops: on a row holding inf its gradient's NaNs
        # follow that chain; the fused op (NumPy path and kernel alike) makes the row NaN
        tor = _run(make(dynagrad), arrays, g, 'numpy')
    else:
        tor = _torch(make(torch), arrays, g)
    if case.startswith('gelu'):
        # GELU(+inf): torch's vectorised loop gives NaN, its scalar tail inf (by the
        # tensor's length); either is accepted
        odd = np.isposinf(x)
        nat[0][odd] = tor[0][odd]
    for k, (a, c) in enumerate(zip(nat, tor)):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(c), err_msg=f'{case} {k}: NaNs')
        np.testing.assert_array_equal(a == 0, c == 0, err_msg=f'{case} {k}: zeros')
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6, equal_nan=True)


@needs_numba
def test_layouts_and_dtypes_the_kernels_do_not_take():
    """A non-last softmax dim, a non-contiguous input, bfloat16 and float16 keep or reach
    the right result; only float32/float64 NumPy arrays go to a kernel."""
    x = np.random.default_rng(1).standard_normal((6, 8, 10)).astype(np.float32)
    with kernels_mode('native'):
        t = dynagrad.tensor(x)
        for got, want in ((dynagrad.softmax(t, 1), torch.softmax(torch.tensor(x), 1)),
                          (dynagrad.softmax(t.mT, -1), torch.softmax(torch.tensor(x).mT, -1)),
                          (F.gelu(t[..., ::2]), torch.nn.functional.gelu(
                              torch.tensor(x)[..., ::2]))):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        for dt in ('bfloat16', 'float16'):
            got = F.gelu(t.to(getattr(dynagrad, dt))).float().numpy()
            backend.set_kernels('numpy')
            want = F.gelu(t.to(getattr(dynagrad, dt))).float().numpy()
            backend.set_kernels('native')
            if dt == 'bfloat16':
                np.testing.assert_array_equal(got, want)
            np.testing.assert_allclose(got, torch.nn.functional.gelu(
                torch.tensor(x).to(getattr(torch, dt))).float().numpy(), rtol=1e-2, atol=1e-2)
        assert backend.native_kernel('gelu', x.astype(np.int64)) is None
        assert backend.native_kernel('gelu', x.astype(np.float16)) is None
        assert backend.native_kernel('gelu', x) is not None


@needs_numba
@pytest.mark.parametrize('approximate', ['none', 'tanh'])
def test_gradcheck_float64_native(approximate):
    with kernels_mode('native'):
        rng = np.random.default_rng(2)
        x = dynagrad.tensor(rng.standard_normal((3, 7)), requires_grad=True)
        w = dynagrad.tensor(rng.standard_normal(7), requires_grad=True)
        b = dynagrad.tensor(rng.standard_normal(7), requires_grad=True)
        assert gradcheck(lambda a: F.gelu(a, approximate=approximate), (x,))
        assert gradcheck(lambda a: dynagrad.softmax(a, -1), (x,))
        assert gradcheck(lambda a: dynagrad.log_softmax(a, -1), (x,))
        assert gradcheck(lambda a, w, b: F.layer_norm(a, (7,), w, b), (x, w, b))
        assert gradcheck(lambda a, w: F.layer_norm(a, (7,), w), (x, w))
        assert gradcheck(lambda a: F.layer_norm(a, (7,)), (x,))
        assert gradcheck(lambda a, w: F.rms_norm(a, (7,), w), (x, w))
        assert gradcheck(lambda a: F.rms_norm(a, (3, 7)), (x,))
        t = dynagrad.tensor([0, 6, -100])
        assert gradcheck(lambda a: F.cross_entropy(a, t), (x,))


# -- the switch ----------------------------------------------------------------------------

def _python(code, **env):
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True).stdout.strip()


def test_import_never_loads_numba():
    assert _python('import sys, dynagrad; print("numba" in sys.modules)') == 'False'


def test_environment_variable_numpy_keeps_numba_out():
    code = ('import sys, dynagrad, dynagrad.nn.functional as F\n'
            'F.gelu(dynagrad.ones(3)); F.layer_norm(dynagrad.ones(2, 3), (3,))\n'
            'print(dynagrad.backends.cpu.kernels, "numba" in sys.modules)')
    assert _python(code, DYNAGRAD_KERNELS='numpy') == 'numpy False'


def test_environment_variable_unknown_value_warns_and_runs_auto():
    code = ('import warnings, dynagrad, dynagrad.nn.functional as F\n'
            'with warnings.catch_warnings(record=True) as w:\n'
            '    warnings.simplefilter("always")\n'
            '    F.gelu(dynagrad.ones(3))\n'
            'print(dynagrad.backends.cpu.kernels, any("DYNAGRAD_KERNELS" in str(x.message) '
            'for x in w))')
    assert _python(code, DYNAGRAD_KERNELS='fortran') == 'auto True'


def test_set_kernels_rejects_unknown_modes():
    with pytest.raises(ValueError):
        dynagrad.backends.cpu.set_kernels('fortran')


def test_native_without_numba_warns_once_and_runs_numpy(monkeypatch):
    """numba missing (or refusing this NumPy): the NumPy path, and one RuntimeWarning."""
    monkeypatch.setattr(native, 'available', lambda: 'ImportError: No module named numba')
    previous = dynagrad.backends.cpu.set_kernels('native')
    try:
        x = dynagrad.tensor([-1.0, 0.5, 2.0])
        with pytest.warns(RuntimeWarning, match='numba does not load'):
            got = F.gelu(x)
        assert backend.native_kernel('gelu', x.numpy()) is None
        np.testing.assert_allclose(got.numpy(), torch.nn.functional.gelu(
            torch.tensor([-1.0, 0.5, 2.0])).numpy(), rtol=1e-6)
    finally:
        dynagrad.backends.cpu.set_kernels(previous)


_MODELS_WITHOUT_NUMBA = '''
import sys
if {block}:
    sys.modules['numba'] = None     # import numba now raises ImportError, as where it is missing
sys.path.insert(0, {root!r})
import numpy as np
import dynagrad
from benchmarks import workloads as W
s = W.GPT_SIZES['smoke']
losses = []
for compiled in (False, True):
    dynagrad.manual_seed(0)
    model = W.gpt_model(dynagrad, s, use_sdpa=not compiled)
    run = dynagrad.compile(model) if compiled else model
    opt = dynagrad.optim.AdamW(model.parameters(), lr=1e-2)
    data = np.random.default_rng(0).integers(0, s['vocab'], (s['batch'], s['context'] + 1))
    x, y = dynagrad.tensor(data[:, :-1]), dynagrad.tensor(data[:, 1:])
    for _ in range(3):
        _, loss = run(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
cnn = W.cnn_autograd(dynagrad, 4)
lm = W.lm_autograd(dynagrad, W.LM_SIZES['smoke'])
losses += [cnn() for _ in range(2)] + [lm() for _ in range(2)]
print(dynagrad.backend.native_kernels_active(),
      sys.modules.get('numba') is not None, repr(losses))
'''


def test_models_run_without_numba_as_with_numpy_kernels():
    """A machine without numba: training the benchmark models (GPT with sdpa and dropout,
    compiled GPT, CNN, LSTM language model) runs the NumPy path, with the same losses as
    DYNAGRAD_KERNELS=numpy gives where numba is installed."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    blocked = _python(_MODELS_WITHOUT_NUMBA.format(block=True, root=root))
    numpy_kernels = _python(_MODELS_WITHOUT_NUMBA.format(block=False, root=root),
                            DYNAGRAD_KERNELS='numpy')
    assert blocked.split(' ', 2)[:2] == ['False', 'False']
    assert numpy_kernels.split(' ', 2)[:2] == ['False', 'False']
    assert blocked.split(' ', 2)[2] == numpy_kernels.split(' ', 2)[2]   # the same bits


@needs_numba
@pytest.mark.parametrize('x_shape, mask_shape, native_path', [
    ((12, 4, 16, 16), (1, 1, 16, 16), True), ((1, 4, 8, 8), (1, 1, 8, 8), True),
    ((3, 5), (5,), True), ((3, 5), (), True), ((2, 3, 4), (2, 1, 4), False),
    ((4,), (3, 4), False)])
def test_masked_fill_kernel_and_its_numpy_fallback(x_shape, mask_shape, native_path):
    """The kernel takes a mask repeated over leading axes; any other broadcast (or a mask
    making the result larger than x) goes to NumPy, and the op matches torch either way."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    mask = rng.random(mask_shape) < 0.5
    assert (native.load('masked_fill')(x, mask, -1.5) is not None) == native_path
    with kernels_mode('native'):
        out = dynagrad.tensor(x).masked_fill(dynagrad.tensor(mask), float('-inf'))
    expected = torch.tensor(x).masked_fill(torch.tensor(mask), float('-inf'))
    assert out.shape == expected.shape and np.array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize('mode', ['numpy', 'native'])
def test_masked_fill_with_a_complex_number_on_a_real_tensor(mode):
    """torch fills a real tensor with a complex number only without an imaginary part."""
    if mode == 'native' and native.available() is not None:
        pytest.skip(f'numba does not load: {native.available()}')
    x, mask = np.zeros(3, np.float32), np.array([True, False, True])
    with kernels_mode(mode):
        out = dynagrad.tensor(x).masked_fill(dynagrad.tensor(mask), 2 + 0j)
        with pytest.raises(RuntimeError, match='value cannot be converted to type float '
                                               'without overflow'):
            dynagrad.tensor(x).masked_fill(dynagrad.tensor(mask), 2 + 1j)
    expected = torch.tensor(x).masked_fill(torch.tensor(mask), 2 + 0j)
    assert out.dtype == dynagrad.float32 and np.array_equal(out.numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match='value cannot be converted to type float '
                                           'without overflow'):
        torch.tensor(x).masked_fill(torch.tensor(mask), 2 + 1j)
