"""Fused cross-entropy (``CrossEntropy``: class indices with weights, an ignored index and
label smoothing; class probabilities with weights and label smoothing), with the native
kernels (``dynagrad.native.softmax``) and with the NumPy kernels: values, gradients and node
names against torch and against each other, non-finite logits, empty batches, the index
range check the kernel does, gradcheck and gradgradcheck in float64."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad.autograd import gradcheck, gradgradcheck
from native_support import MODES, kernels_counted, kernels_mode, needs_numba

DTYPES = [np.float32, np.float64]
REDUCTIONS = ['mean', 'sum', 'none']
N, C = 9, 5
WEIGHT = np.linspace(0.5, 2.0, C)
INDEX_VARIANTS = {
    'plain': {}, 'weight': dict(weight=True), 'ignore': dict(ignore_index=1),
    'weight_ignore': dict(weight=True, ignore_index=2),
    'smooth': dict(label_smoothing=0.2),
    'smooth_ignore': dict(label_smoothing=0.3, ignore_index=2),
    'smooth_weight_ignore': dict(label_smoothing=0.1, weight=True, ignore_index=1),
    'smooth_one': dict(label_smoothing=1.0, weight=True),
}
SOFT_VARIANTS = {'plain': {}, 'weight': dict(weight=True), 'smooth': dict(label_smoothing=0.25),
                 'smooth_weight': dict(label_smoothing=0.1, weight=True)}


def _logits(dtype, rng, n=N):
    return (rng.standard_normal((n, C)) * 3).astype(dtype)


def _index_target(rng, n=N):
    t = rng.integers(0, C, n)
    t[:3] = [1, 2, 1]      # every ignore_index used below occurs
    return t


def _soft_target(dtype, rng, n=N):
    return rng.dirichlet(np.ones(C), n).astype(dtype)


def _run(lib, x, target, kwargs, g_seed=0):
    """(loss, d loss / d logits, node name) of ``lib``'s cross_entropy."""
    kwargs = dict(kwargs)
    if kwargs.pop('weight', False):
        kwargs['weight'] = lib.tensor(WEIGHT.astype(x.dtype))
    xt = lib.tensor(x, requires_grad=True)
    fn = torch.nn.functional.cross_entropy if lib is torch else F.cross_entropy
    y = fn(xt, lib.tensor(target), **kwargs)
    g = np.random.default_rng(g_seed).uniform(0.5, 1.5, tuple(y.shape)).astype(x.dtype)
    y.backward(lib.tensor(g))
    name = y.grad_fn.name() if lib is torch else type(y.grad_fn).__name__
    return y.detach().numpy(), xt.grad.numpy(), name


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)


def _check_variant(mode, dtype, target, kwargs, x):
    expected = _run(torch, x, target, kwargs)
    with kernels_mode(mode):
        got = _run(dynagrad, x, target, kwargs)
    with kernels_mode('numpy'):
        reference = _run(dynagrad, x, target, kwargs)
    assert got[2] == expected[2], 'node name'
    for k, what in enumerate(('loss', 'gradient')):
        assert got[k].dtype == dtype and got[k].shape == expected[k].shape
        np.testing.assert_array_equal(np.isnan(got[k]), np.isnan(expected[k]),
                                      err_msg=f'{what}: NaNs')
        np.testing.assert_allclose(got[k], expected[k], err_msg=f'{what} vs torch',
                                   **_tol(dtype))
        np.testing.assert_allclose(got[k], reference[k], err_msg=f'{what} vs NumPy kernels',
                                   **_tol(dtype))


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('variant', sorted(INDEX_VARIANTS))
def test_class_indices(mode, dtype, reduction, variant):
    rng = np.random.default_rng(1)
    _check_variant(mode, dtype, _index_target(rng),
                   dict(INDEX_VARIANTS[variant], reduction=reduction), _logits(dtype, rng))


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('variant', sorted(SOFT_VARIANTS))
def test_class_probabilities(mode, dtype, reduction, variant):
    rng = np.random.default_rng(2)
    _check_variant(mode, dtype, _soft_target(dtype, rng),
                   dict(SOFT_VARIANTS[variant], reduction=reduction), _logits(dtype, rng))


def _special_logits(dtype):
    x = _logits(dtype, np.random.default_rng(3), 8)
    x[0, 1] = np.nan            # a NaN: the row's loss and gradient NaN
    x[1, 2] = np.inf
    x[2, 0] = -np.inf           # a masked class, not the target
    x[3, :] = -np.inf           # every class masked
    x[4, 3] = -np.inf           # a masked class that is the target (inf loss)
    x[5, :] = [1e4, -1e4, 0, 3e4, -3e4]
    x[6, 4] = np.nan            # a NaN in an ignored row: torch leaves the loss finite
    return x


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('reduction', ['none', 'sum'])
@pytest.mark.parametrize('variant', ['plain', 'weight_ignore', 'smooth_weight_ignore'])
def test_non_finite_logits_as_torch(mode, dtype, reduction, variant):
    target = np.array([0, 0, 1, 2, 3, 0, 2, 4])
    kwargs = dict(INDEX_VARIANTS[variant], reduction=reduction)
    if 'ignore_index' in kwargs:
        kwargs['ignore_index'] = 2
    _check_variant(mode, dtype, target, kwargs, _special_logits(dtype))


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('variant', sorted(SOFT_VARIANTS))
def test_non_finite_logits_with_probabilities_as_torch(mode, dtype, variant):
    x = _special_logits(dtype)
    q = _soft_target(dtype, np.random.default_rng(4), 8)
    q[2, 0] = 0.0     # a zero probability on a -inf logit: 0 * -inf, NaN in torch too
    _check_variant(mode, dtype, q, dict(SOFT_VARIANTS[variant], reduction='none'), x)


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('kwargs', [{}, dict(label_smoothing=0.2, weight=True)])
def test_every_target_ignored(mode, reduction, kwargs):
    """The mean over no kept row: 0 / 0, NaN as torch; gradient 0."""
    x = _logits(np.float32, np.random.default_rng(5))
    _check_variant(mode, np.float32, np.full(N, 3), dict(kwargs, ignore_index=3,
                                                         reduction=reduction), x)


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('reduction', REDUCTIONS)
@pytest.mark.parametrize('soft', [False, True])
def test_empty_batch(mode, dtype, reduction, soft):
    x = np.zeros((0, C), dtype)
    target = np.zeros((0, C), dtype) if soft else np.zeros(0, np.int64)
    for kwargs in ({}, dict(label_smoothing=0.1, weight=True)):
        expected = _run(torch, x, target, dict(kwargs, reduction=reduction))
        with kernels_mode(mode):
            got = _run(dynagrad, x, target, dict(kwargs, reduction=reduction))
        for a, b in zip(got[:2], expected[:2]):
            assert a.shape == b.shape and a.dtype == dtype
            np.testing.assert_array_equal(a, b)


@needs_numba
@pytest.mark.parametrize('soft', [False, True])
@pytest.mark.parametrize('smoothing', [0.0, 0.2])
def test_the_kernels_run(soft, smoothing):
    """The fused op reaches its kernels, forward and backward; under no_grad the forward
    alone (the softmax is not stored), and a later backward of a graph-less result is not
    asked for."""
    rng = np.random.default_rng(6)
    x = dynagrad.tensor(_logits(np.float32, rng), requires_grad=True)
    target = dynagrad.tensor(_soft_target(np.float32, rng) if soft else _index_target(rng))
    name = 'soft_cross_entropy' if soft else 'cross_entropy'
    with kernels_counted('native') as calls:
        F.cross_entropy(x, target, label_smoothing=smoothing).backward()
        assert calls == {name: 1, name + '_backward': 1}
        with dynagrad.no_grad():
            value = F.cross_entropy(x, target, label_smoothing=smoothing)
        assert calls[name] == 2
    with kernels_mode('numpy'):
        reference = F.cross_entropy(x, target, label_smoothing=smoothing)
    np.testing.assert_allclose(value.numpy(), reference.detach().numpy(), rtol=2e-6)


@pytest.mark.parametrize('mode', MODES)
def test_probabilities_requiring_grad_keep_the_composed_path(mode):
    """A probability target that needs a gradient gets it (torch's), through log_softmax."""
    rng = np.random.default_rng(7)
    x, q = _logits(np.float64, rng), _soft_target(np.float64, rng)
    grads = []
    for lib, fn in ((torch, torch.nn.functional.cross_entropy), (dynagrad, F.cross_entropy)):
        xt, qt = lib.tensor(x, requires_grad=True), lib.tensor(q, requires_grad=True)
        with kernels_mode(mode):
            fn(xt, qt, label_smoothing=0.1, weight=lib.tensor(WEIGHT)).backward()
        grads.append((xt.grad.numpy(), qt.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('smoothing', [0.0, 0.2])
def test_target_out_of_range_raises_index_error(mode, dtype, smoothing):
    x = dynagrad.tensor(_logits(dtype, np.random.default_rng(8)), requires_grad=True)
    target = _index_target(np.random.default_rng(8))
    target[4], target[6] = C, -1
    with kernels_mode(mode):
        with pytest.raises(IndexError, match=f'Target {C} is out of bounds'):
            F.cross_entropy(x, dynagrad.tensor(target), label_smoothing=smoothing)
        with pytest.raises(IndexError, match='Target -1 is out of bounds'):
            F.cross_entropy(x, dynagrad.tensor(np.where(target == C, 0, target)))
        # an ignored index outside the classes is no error
        target[4] = target[6] = -100
        F.cross_entropy(x, dynagrad.tensor(target), label_smoothing=smoothing)
    with pytest.raises(IndexError):
        torch.nn.functional.cross_entropy(torch.tensor(x.detach().numpy()),
                                          torch.tensor(np.where(target == -100, C, target)))


GRADCHECK_CASES = [(False, dict(reduction='mean')), (False, dict(weight=True, ignore_index=1)),
                   (False, dict(label_smoothing=0.2, reduction='none')),
                   (False, dict(label_smoothing=0.3, weight=True, ignore_index=2)),
                   (False, dict(label_smoothing=0.1, reduction='sum')),
                   (True, dict()), (True, dict(weight=True, reduction='none')),
                   (True, dict(label_smoothing=0.2, weight=True, reduction='sum'))]


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('soft,kwargs', GRADCHECK_CASES)
def test_gradcheck_float64(mode, soft, kwargs):
    rng = np.random.default_rng(9)
    x = dynagrad.tensor(_logits(np.float64, rng, 4), requires_grad=True)
    target = dynagrad.tensor(_soft_target(np.float64, rng, 4) if soft
                             else _index_target(rng, 4))
    kwargs = dict(kwargs)
    if kwargs.pop('weight', False):
        kwargs['weight'] = dynagrad.tensor(WEIGHT)

    def f(x):
        return F.cross_entropy(x, target, **kwargs)
    with kernels_mode(mode):
        assert gradcheck(f, (x,), eps=1e-6, atol=1e-7, rtol=1e-5)
        assert gradgradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)
