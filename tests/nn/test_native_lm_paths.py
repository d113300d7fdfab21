"""The paths the LSTM language model's step runs through, with the native kernels and with
the NumPy ones, against torch: cross-entropy's backward from the unnormalised softmax the
kernel keeps (also with the kernels switched between forward and backward, and a retained
graph run twice), the recurrent layers' backward that skips the product feeding an
initial state nobody asked a gradient of, and whole training steps of the benchmark's
model (embedding, 2-layer LSTM, decoder, cross-entropy, clipping, SGD)."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from native_support import MODES, kernels_counted, kernels_mode, needs_numba


def _tol(dt):
    return dict(rtol=2e-5, atol=2e-6) if dt == np.float32 else dict(rtol=1e-11, atol=1e-12)


# -- cross-entropy ----------------------------------------------------------------------

def _ce_case(dt, soft, rng, n=7, c=6):
    x = (rng.standard_normal((n, c)) * 3).astype(dt)
    if soft:
        target = rng.dirichlet(np.ones(c), n).astype(dt)
    else:
        target = rng.integers(0, c, n)
        target[0] = 2
    return x, target


def _ce_kwargs(lib, dt, weighted, smoothing, soft):
    kw = dict(label_smoothing=smoothing)
    if weighted:
        kw['weight'] = lib.tensor(np.linspace(0.5, 2.0, 6).astype(dt))
    if not soft:
        kw['ignore_index'] = 2
    return kw


def _torch_ce_grad(x, target, kw, g):
    xt = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.cross_entropy(xt, torch.tensor(target), **kw)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), xt.grad.numpy()


@needs_numba
@pytest.mark.parametrize('dt', [np.float32, np.float64])
@pytest.mark.parametrize('soft', [False, True], ids=['indices', 'probabilities'])
@pytest.mark.parametrize('forward_mode,backward_mode',
                         [('native', 'numpy'), ('numpy', 'native')])
@pytest.mark.parametrize('weighted,smoothing', [(False, 0.0), (True, 0.2)])
def test_cross_entropy_kernels_switched_between_passes(dt, soft, forward_mode, backward_mode,
                                                       weighted, smoothing):
    """Forward with one kind of kernels, backward with the other: the softmax the forward
    kept (unnormalised exponentials and 1 / sums from the kernel, probabilities from
    NumPy) still gives torch's gradient."""
    rng = np.random.default_rng(4)
    x, target = _ce_case(dt, soft, rng)
    g = np.array(0.75, dt)
    expected = _torch_ce_grad(x, target, _ce_kwargs(torch, dt, weighted, smoothing, soft), g)
    xd = dynagrad.tensor(x, requires_grad=True)
    with kernels_mode(forward_mode):
        y = F.cross_entropy(xd, dynagrad.tensor(target),
                            **_ce_kwargs(dynagrad, dt, weighted, smoothing, soft))
    with kernels_mode(backward_mode):
        y.backward(dynagrad.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), expected[0], **_tol(dt))
    np.testing.assert_allclose(xd.grad.numpy(), expected[1], **_tol(dt))


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('soft', [False, True], ids=['indices', 'probabilities'])
def test_cross_entropy_retained_graph_twice(mode, soft):
    """The kept softmax is read, not consumed: a second backward through a retained graph
    adds the same gradient again."""
    rng = np.random.default_rng(5)
    x, target = _ce_case(np.float32, soft, rng, n=5)
    g = np.array(1.0, np.float32)
    _, once = _torch_ce_grad(x, target, {}, g)
    xd = dynagrad.tensor(x, requires_grad=True)
    with kernels_mode(mode):
        y = F.cross_entropy(xd, dynagrad.tensor(target))
        y.backward(retain_graph=True)
        first = xd.grad.numpy().copy()
        y.backward()
    np.testing.assert_allclose(first, once, **_tol(np.float32))
    np.testing.assert_allclose(xd.grad.numpy(), 2 * once, **_tol(np.float32))


@needs_numba
def test_cross_entropy_wide_rows_against_numpy_path_and_torch():
    """Rows as wide as the language model's vocabulary (10,000 classes, where the kernel's
    backward folds 1 / sum into its factor), per-row upstream gradients."""
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((12, 10_000)) * 4).astype(np.float32)
    target = rng.integers(0, 10_000, 12)
    g = rng.uniform(0.5, 1.5, 12).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.cross_entropy(xt, torch.tensor(target), reduction='none')
    yt.backward(torch.tensor(g))
    results = []
    for mode in ('native', 'numpy'):
        xd = dynagrad.tensor(x, requires_grad=True)
        with kernels_mode(mode):
            y = F.cross_entropy(xd, dynagrad.tensor(target), reduction='none')
            y.backward(dynagrad.tensor(g))
        results.append((y.detach().numpy(), xd.grad.numpy()))
    for got in results:
        np.testing.assert_allclose(got[0], yt.detach().numpy(), rtol=2e-6, atol=1e-5)
        np.testing.assert_allclose(got[1], xt.grad.numpy(), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-9)


# -- recurrent layers: no gradient for the initial state --------------------------------

def _recurrent(lib, cls, weights, x, h0, c0, h0_grad):
    mod = getattr(lib.nn, cls)(4, 5, 2, bidirectional=True).double()
    with (torch.no_grad() if lib is torch else dynagrad.no_grad()):
        for p, v in zip(mod.parameters(), weights):
            p.copy_(lib.tensor(v))
    xt = lib.tensor(x, requires_grad=True)
    h = lib.tensor(h0, requires_grad=h0_grad)
    c = lib.tensor(c0, requires_grad=True)
    out, state = mod(xt, (h, c) if cls == 'LSTM' else h)
    loss = (out * out).sum() + (state[0] if cls == 'LSTM' else state).sum() * 3
    if cls == 'LSTM':
        loss = loss + (state[1] * state[1]).sum()
    loss.backward()
    grads = [xt.grad.numpy()] + [p.grad.numpy() for p in mod.parameters()]
    if cls == 'LSTM':
        grads.append(c.grad.numpy())
    if h0_grad:
        grads.append(h.grad.numpy())
    else:
        assert h.grad is None
    return grads


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('cls', ['LSTM', 'GRU'])
@pytest.mark.parametrize('h0_grad', [False, True], ids=['h0 constant', 'h0 requires grad'])
def test_recurrent_initial_state_without_gradient(mode, cls, h0_grad):
    """h0 constant (truncated back-propagation through time): the input's, the weights'
    and c0's gradients are torch's, h0's stays None."""
    torch.manual_seed(0)
    ref = getattr(torch.nn, cls)(4, 5, 2, bidirectional=True).double()
    weights = [p.detach().numpy().copy() for p in ref.parameters()]
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 3, 4))
    h0, c0 = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    expected = _recurrent(torch, cls, weights, x, h0, c0, h0_grad)
    with kernels_mode(mode):
        got = _recurrent(dynagrad, cls, weights, x, h0, c0, h0_grad)
    assert len(got) == len(expected)
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


@needs_numba
def test_lstm_kernels_run_float32():
    """float32 with the step kernels counted: both run once per step and direction."""
    torch.manual_seed(1)
    ref = torch.nn.LSTM(3, 4, bidirectional=True)
    weights = [p.detach().numpy().copy() for p in ref.parameters()]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    zeros = np.zeros((2, 2, 4), np.float32)
    expected = _recurrent_f32(torch, ref, x, zeros)
    mod = dynagrad.nn.LSTM(3, 4, bidirectional=True)
    with dynagrad.no_grad():
        for p, v in zip(mod.parameters(), weights):
            p.copy_(dynagrad.tensor(v))
    with kernels_counted('native', ('lstm_step', 'lstm_step_backward')) as calls:
        got = _recurrent_f32(dynagrad, mod, x, zeros)
    assert calls == {'lstm_step': 10, 'lstm_step_backward': 10}
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=3e-5, atol=3e-6)


def _recurrent_f32(lib, mod, x, zeros):
    xt = lib.tensor(x, requires_grad=True)
    out, (h, c) = mod(xt, (lib.tensor(zeros), lib.tensor(zeros)))
    ((out * out).sum() + h.sum() + (c * c).sum()).backward()
    return [out.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in mod.parameters()]


# -- the benchmark's language model, whole steps ----------------------------------------

@pytest.mark.parametrize('mode', MODES)
def test_language_model_steps_match_torch(mode):
    """Three steps of benchmarks.workloads.lm_autograd's model at its smoke size: the same
    losses and, after them, the same parameters as torch (same seed, same initial weights
    drawn from the same generator)."""
    from benchmarks import workloads as W
    sizes = W.LM_SIZES['smoke']
    with kernels_mode(mode):
        step = W.lm_autograd(dynagrad, sizes)
        got = [step() for _ in range(3)]
        params = _closure_params(step)
    step_t = W.lm_autograd(torch, sizes)
    expected = [step_t() for _ in range(3)]
    params_t = _closure_params(step_t)
    np.testing.assert_allclose(got, expected, rtol=2e-6)
    assert len(params) == len(params_t) == 11   # embedding, 2 x 4 LSTM, decoder 2
    for a, e in zip(params, params_t):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=2e-6)


def _closure_params(step):
    """The parameter list the step's closure holds (the optimizer's)."""
    names = step.__code__.co_freevars
    opt = step.__closure__[names.index('opt')].cell_contents
    return [p.detach().numpy().copy() for group in opt.param_groups for p in group['params']]
