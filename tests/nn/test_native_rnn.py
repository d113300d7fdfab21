"""The LSTM and GRU step kernels (``dynagrad.native.rnn``): nn.LSTM, nn.GRU (several
layers, both directions, projections, no biases, packed sequences), LSTMCell and GRUCell
with the kernels on, against torch with the same weights and against the NumPy path:
outputs, final states and the gradients of the input, the initial states and every
parameter; gradcheck in float64; saturated gates."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck
from dynagrad.nn.utils import rnn as U
from native_support import kernels_counted, needs_numba

pytestmark = needs_numba
KERNELS = ('lstm_step', 'lstm_step_backward', 'gru_step', 'gru_step_backward')


def counting(mode):
    """Run with ``mode`` kernels; yields a dict counting the step kernels' calls."""
    return kernels_counted(mode, KERNELS)


def _dg_module(tmod, cls, args, kwargs, dt):
    dmod = getattr(dynagrad.nn, cls)(*args, **kwargs)
    if dt == np.float64:
        dmod = dmod.double()   # load_state_dict keeps the parameters' dtype, as torch's
    dmod.load_state_dict({k: dynagrad.tensor(v.detach().numpy().astype(dt))
                          for k, v in tmod.state_dict().items()})
    return dmod


def _states(lib, cls, x_shape, hidden, dt, rng, num_states):
    """Initial states (requiring gradients) for a module with ``num_states`` of them."""
    arrays = [rng.standard_normal(s).astype(dt) for s in hidden[:num_states]]
    return [lib.tensor(a, requires_grad=True) for a in arrays], arrays


def _run(lib, mod, x, states, pack_lengths=None):
    """Output, final states, and the gradients of x, the states and every parameter for a
    loss touching all the outputs."""
    xt = lib.tensor(x, requires_grad=True)
    hx = [lib.tensor(s, requires_grad=True) for s in states]
    arg = hx[0] if len(hx) == 1 else tuple(hx) if hx else None
    inp = xt
    utils = U if lib is dynagrad else torch.nn.utils.rnn
    if pack_lengths is not None:
        inp = utils.pack_padded_sequence(xt, pack_lengths, enforce_sorted=False)
    out = mod(inp, arg)
    if isinstance(mod, (torch.nn.LSTMCell, dynagrad.nn.LSTMCell)):
        outs = list(out)
    elif isinstance(mod, (torch.nn.GRUCell, dynagrad.nn.GRUCell)):
        outs = [out]
    else:
        o, h = out
        if pack_lengths is not None:
            o = utils.pad_packed_sequence(o)[0]
        outs = [o] + (list(h) if isinstance(h, tuple) else [h])
    weights = np.random.default_rng(1)
    loss = None
    for t in outs:
        w = lib.tensor(weights.standard_normal(tuple(t.shape)).astype(x.dtype))
        term = (t * w).sum() + (t * t).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return ([t.detach().numpy() for t in outs] + [xt.grad.numpy()]
            + [h.grad.numpy() for h in hx] + [p.grad.numpy() for p in mod.parameters()])


CASES = {
    'LSTM 2 layers bidirectional': ('LSTM', (5, 7, 2), dict(bidirectional=True), (6, 3, 5),
                                    [(4, 3, 7), (4, 3, 7)]),
    'LSTM projection': ('LSTM', (5, 7, 2), dict(proj_size=3), (6, 3, 5),
                        [(2, 3, 3), (2, 3, 7)]),
    'LSTM no bias, batch first': ('LSTM', (4, 6), dict(bias=False, batch_first=True),
                                  (3, 5, 4), [(1, 3, 6), (1, 3, 6)]),
    'GRU 2 layers bidirectional': ('GRU', (5, 7, 2), dict(bidirectional=True), (6, 3, 5),
                                   [(4, 3, 7)]),
    'GRU no bias': ('GRU', (5, 9), dict(bias=False), (4, 2, 5), [(1, 2, 9)]),
    'LSTMCell': ('LSTMCell', (5, 7), {}, (3, 5), [(3, 7), (3, 7)]),
    'GRUCell': ('GRUCell', (5, 7), {}, (3, 5), [(3, 7)]),
}
KERNELS_OF = {'LSTM': ('lstm_step', 'lstm_step_backward'),
              'GRU': ('gru_step', 'gru_step_backward')}


def _tol(dt):
    return dict(rtol=3e-5, atol=3e-6) if dt == np.float32 else dict(rtol=1e-12, atol=1e-12)


def _compare(cls, args, kwargs, x_shape, hidden, dt, scale=1.0, pack_lengths=None):
    torch.manual_seed(0)
    tmod = getattr(torch.nn, cls)(*args, **kwargs).to(
        torch.float32 if dt == np.float32 else torch.float64)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(x_shape) * scale).astype(dt)
    states = [rng.standard_normal(s).astype(dt) for s in hidden]
    with counting('native') as calls:
        got = _run(dynagrad, _dg_module(tmod, cls, args, kwargs, dt), x, states, pack_lengths)
    assert set(calls) == set(KERNELS_OF[cls.replace('Cell', '')]), calls
    with counting('numpy'):
        ref = _run(dynagrad, _dg_module(tmod, cls, args, kwargs, dt), x, states,
                   pack_lengths)
    expected = _run(torch, tmod, x, states, pack_lengths)
    assert len(got) == len(ref) == len(expected)
    for k, (a, b, c) in enumerate(zip(got, ref, expected)):
        assert a.dtype == dt
        if scale > 1 and dt == np.float32:
            # saturated gates: 1 - a rounds differently in each implementation (torch's
            # sigmoid, NumPy's tanh, the kernels' rational fit) by a float32 ulp next to 1,
            # which the weights' gradients multiply by the large inputs: compared in norm
            for other in (b, c):
                assert np.linalg.norm(a - other) <= 5e-4 * np.linalg.norm(other) + 1e-6, k
            continue
        np.testing.assert_allclose(a, b, **_tol(dt), err_msg=f'numpy path, item {k}')
        np.testing.assert_allclose(a, c, **_tol(dt), err_msg=f'torch, item {k}')
    return got


@pytest.mark.filterwarnings('ignore::UserWarning')   # torch: projections without oneDNN
@pytest.mark.parametrize('dt', [np.float32, np.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('case', list(CASES))
def test_matches_torch_and_numpy_path(case, dt):
    _compare(*CASES[case], dt)


@pytest.mark.parametrize('cls', ['LSTM', 'GRU'])
def test_packed_sequences(cls):
    """Steps with fewer rows than the batch (a packed sequence of unequal lengths)."""
    hidden = [(2, 4, 6)] * (2 if cls == 'LSTM' else 1)
    _compare(cls, (3, 6), dict(bidirectional=True), (5, 4, 3), hidden, np.float64,
             pack_lengths=torch.tensor([5, 2, 4, 1]))


@pytest.mark.parametrize('dt', [np.float32, np.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('cls', ['LSTM', 'GRU'])
def test_saturated_gates(cls, dt):
    """Pre-activations in the hundreds: the gates saturate to 0 and 1 with no overflow or
    NaN, as torch's."""
    hidden = [(1, 2, 5)] * (2 if cls == 'LSTM' else 1)
    got = _compare(cls, (4, 5), {}, (6, 2, 4), hidden, dt, scale=300.0)
    assert all(np.isfinite(a).all() for a in got)


@pytest.mark.parametrize('cls', ['LSTM', 'GRU', 'LSTMCell', 'GRUCell'])
def test_gradcheck_float64(cls):
    rng = np.random.default_rng(2)
    dynagrad.manual_seed(0)
    cell = cls.endswith('Cell')
    mod = getattr(dynagrad.nn, cls)(3, 4).double()
    x = dynagrad.tensor(rng.standard_normal((2, 3) if cell else (4, 2, 3)),
                        requires_grad=True)
    shape = (2, 4) if cell else (1, 2, 4)
    h = dynagrad.tensor(rng.standard_normal(shape), requires_grad=True)
    c = dynagrad.tensor(rng.standard_normal(shape), requires_grad=True)
    lstm = 'LSTM' in cls

    def fn(x, h, c):
        out = mod(x, (h, c) if lstm else h)
        if cell:
            return out[0] + 2 * out[1] if lstm else out
        return out[0].sum(0) + (out[1][0] + out[1][1] if lstm else out[1]).sum(0)
    with counting('native') as calls:
        assert gradcheck(fn, (x, h, c))
    assert len(calls) == 2, calls


def test_double_backward_runs_recorded_ops():
    """create_graph=True differentiates the re-run reference layer: same second-order
    gradients with the kernels on and off."""
    results = []
    for mode in ('native', 'numpy'):
        with counting(mode):
            rng = np.random.default_rng(3)
            dynagrad.manual_seed(0)
            lstm = dynagrad.nn.LSTM(3, 4).double()
            x = dynagrad.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
            out, _ = lstm(x)
            gx, = dynagrad.autograd.grad((out * out).sum(), [x], create_graph=True)
            (gx * gx).sum().backward()
            results.append([gx.detach().numpy(), x.grad.numpy()]
                           + [p.grad.numpy() for p in lstm.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('cls,kwargs', [('LSTM', {}), ('LSTM', dict(proj_size=3)),
                                        ('GRU', {})], ids=['LSTM', 'LSTM projection', 'GRU'])
def test_recurrent_products_take_the_few_row_product_kernel(cls, kwargs):
    """Each step's recurrent product (forward, and backward through the recurrent weights)
    runs in the few-row product kernel (float32): one call per step each way, h0 needing
    no gradient (the backward's last step then has no product); values as torch's."""
    torch.manual_seed(0)
    tmod = getattr(torch.nn, cls)(5, 7, **kwargs)
    dmod = _dg_module(tmod, cls, (5, 7), kwargs, np.float32)
    x = np.random.default_rng(0).standard_normal((6, 3, 5)).astype(np.float32)
    with kernels_counted('native', ('matmul_rows',)) as calls:
        xd = dynagrad.tensor(x, requires_grad=True)
        out, _ = dmod(xd)
        out.pow(2).sum().backward()
    assert calls == {'matmul_rows': 6 + 5}
    xt = torch.tensor(x, requires_grad=True)
    tout, _ = tmod(xt)
    tout.pow(2).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), **_tol(np.float32))
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), **_tol(np.float32))
    for p, q in zip(dmod.parameters(), tmod.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('rows, inner, cols', [
    (20, 200, 800), (20, 800, 200), (7, 13, 37), (1, 5, 3), (23, 64, 100), (5, 1, 16),
    (11, 9, 72), (6, 3, 8), (3, 17, 5)])
def test_matmul_rows_kernel_against_numpy(rows, inner, cols, dtype):
    """The few-row product kernel (blocks of 5 rows in tiles of 4 vectors, then one vector, a
    half vector and single columns; the last rows in a block padded with zero rows) gives
    NumPy's product within rounding, written into ``out`` when given."""
    from dynagrad.native import linalg
    rng = np.random.default_rng(rows * 1000 + cols)
    x = rng.standard_normal((rows, inner)).astype(dtype)
    w = rng.standard_normal((inner, cols)).astype(dtype)
    expected = x.astype(np.float64) @ w.astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-5 * np.sqrt(inner)) if dtype == np.float32 else \
        dict(rtol=1e-12, atol=1e-12 * np.sqrt(inner))
    np.testing.assert_allclose(linalg.matmul_rows(x, w), expected, **tol)
    out = np.full((rows, cols), np.nan, dtype)
    assert linalg.matmul_rows(x, w, out) is out
    np.testing.assert_allclose(out, expected, **tol)
