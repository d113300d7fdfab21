"""Recurrent layers, cells and packed sequences against torch.nn as the oracle.

Weights move between the two through state dicts (both ways); outputs, final states and
the gradients of the input, the initial states and every parameter must match.
"""
import itertools
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.nn.modules import rnn as R
from dynagrad.nn.utils import rnn as U

F64 = np.float64


def dg(a, requires_grad=False):
    t = dynagrad.from_numpy(np.array(a))
    return t.requires_grad_() if requires_grad else t


def th(a, requires_grad=False):
    t = torch.from_numpy(np.array(a))
    return t.requires_grad_() if requires_grad else t


def copy_torch_to_dg(tmod, dmod):
    sd = {k: dynagrad.from_numpy(v.detach().numpy().copy()) for k, v in
          tmod.state_dict().items()}
    result = dmod.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys


def copy_dg_to_torch(dmod, tmod):
    sd = {k: torch.from_numpy(v.numpy().copy()) for k, v in dmod.state_dict().items()}
    tmod.load_state_dict(sd)


def close(a, b, tol):
    a = a.detach().numpy() if hasattr(a, 'detach') else a
    np.testing.assert_allclose(np.asarray(a._data if hasattr(a, '_data') else a),
                               b.detach().numpy(), rtol=tol, atol=tol)


def check_grads(dmod, tmod, tol):
    dparams = dict(dmod.named_parameters())
    tparams = dict(tmod.named_parameters())
    assert list(dparams) == list(tparams)
    for name, p in tparams.items():
        assert dparams[name].grad is not None, name
        np.testing.assert_allclose(dparams[name].grad.numpy(), p.grad.numpy(), rtol=tol,
                                   atol=tol, err_msg=name)


MODES = [('LSTM', {}), ('GRU', {}), ('RNN', {}), ('RNN', {'nonlinearity': 'relu'})]


def make_pair(mode, kwargs, dtype=torch.float64, direction='t2d'):
    tcls, dcls = getattr(torch.nn, mode), getattr(R, mode)
    torch.manual_seed(0)
    tmod = tcls(**kwargs).to(dtype)
    dmod = dcls(**kwargs)
    dmod = dmod.double() if dtype == torch.float64 else dmod
    if direction == 't2d':
        copy_torch_to_dg(tmod, dmod)
    else:
        copy_dg_to_torch(dmod, tmod)
    return tmod, dmod


# -- full layers -----------------------------------------------------------------------

@pytest.mark.parametrize('mode,extra', MODES, ids=['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('num_layers,bidirectional,batch_first,bias,with_h0', [
    (1, False, False, True, False),
    (2, False, False, True, True),
    (1, True, False, True, True),
    (2, True, True, True, False),
    (2, True, True, False, True),
    (1, False, True, False, True),
])
def test_layer_matches_torch(mode, extra, num_layers, bidirectional, batch_first, bias,
                             with_h0):
    I, H, T, B = 5, 4, 6, 3
    kwargs = dict(input_size=I, hidden_size=H, num_layers=num_layers, bias=bias,
                  batch_first=batch_first, bidirectional=bidirectional, **extra)
    direction = 'd2t' if num_layers == 2 else 't2d'
    tmod, dmod = make_pair(mode, kwargs, direction=direction)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, I) if batch_first else (T, B, I))
    D = 2 if bidirectional else 1
    h0 = rng.standard_normal((num_layers * D, B, H))
    c0 = rng.standard_normal((num_layers * D, B, H))
    tx, dx = th(x, True), dg(x, True)
    is_lstm = mode == 'LSTM'
    targs, dargs = [tx], [dx]
    if with_h0:
        th0, dh0 = th(h0, True), dg(h0, True)
        if is_lstm:
            tc0, dc0 = th(c0, True), dg(c0, True)
            targs.append((th0, tc0))
            dargs.append((dh0, dc0))
        else:
            targs.append(th0)
            dargs.append(dh0)
    tout, thn = tmod(*targs)
    dout, dhn = dmod(*dargs)
    close(dout, tout, 1e-10)
    if is_lstm:
        close(dhn[0], thn[0], 1e-10)
        close(dhn[1], thn[1], 1e-10)
    else:
        close(dhn, thn, 1e-10)
    # a loss that uses every output, with distinct weights per element
    wo = rng.standard_normal(tuple(tout.shape))
    wh = rng.standard_normal(tuple(h0.shape))
    tl = (tout * th(wo)).sum() + ((thn[0] if is_lstm else thn) * th(wh)).sum()
    dl = (dout * dg(wo)).sum() + ((dhn[0] if is_lstm else dhn) * dg(wh)).sum()
    if is_lstm:
        tl = tl + (thn[1] * th(wh)).sum() * 0.5
        dl = dl + (dhn[1] * dg(wh)).sum() * 0.5
    tl.backward()
    dl.backward()
    close(dx.grad, tx.grad, 1e-10)
    if with_h0:
        close(dh0.grad, th0.grad, 1e-10)
        if is_lstm:
            close(dc0.grad, tc0.grad, 1e-10)
    check_grads(dmod, tmod, 1e-10)


@pytest.mark.parametrize('mode,extra', MODES, ids=['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
def test_layer_float32_matches_torch(mode, extra):
    kwargs = dict(input_size=7, hidden_size=6, num_layers=2, **extra)
    tmod, dmod = make_pair(mode, kwargs, dtype=torch.float32)
    x = np.random.default_rng(2).standard_normal((5, 4, 7)).astype(np.float32)
    tx, dx = th(x, True), dg(x, True)
    tout, _ = tmod(tx)
    dout, _ = dmod(dx)
    assert dout.dtype == dynagrad.float32
    close(dout, tout, 1e-5)
    tout.sum().backward()
    dout.sum().backward()
    close(dx.grad, tx.grad, 1e-4)
    check_grads(dmod, tmod, 1e-4)


@pytest.mark.parametrize('mode,extra', MODES, ids=['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('bidirectional', [False, True])
@pytest.mark.parametrize('enforce_sorted', [True, False])
def test_packed_sequence_matches_torch(mode, extra, bidirectional, enforce_sorted):
    I, H, T, B = 3, 4, 5, 4
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    kwargs = dict(input_size=I, hidden_size=H, num_layers=2, bidirectional=bidirectional,
                  **extra)
    tmod, dmod = make_pair(mode, kwargs)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((T, B, I))
    D = 2 if bidirectional else 1
    h0 = rng.standard_normal((2 * D, B, H))
    tx, dx = th(x, True), dg(x, True)
    th0, dh0 = th(h0, True), dg(h0, True)
    is_lstm = mode == 'LSTM'
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    dp = U.pack_padded_sequence(dx, lengths, enforce_sorted=enforce_sorted)
    close(dp.data, tp.data, 0)
    assert dp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    if is_lstm:
        tout, (thn, tcn) = tmod(tp, (th0, th0 * 0.5))
        dout, (dhn, dcn) = dmod(dp, (dh0, dh0 * 0.5))
        close(dcn, tcn, 1e-10)
    else:
        tout, thn = tmod(tp, th0)
        dout, dhn = dmod(dp, dh0)
    assert isinstance(dout, U.PackedSequence)
    close(dout.data, tout.data, 1e-10)
    close(dhn, thn, 1e-10)
    tpad, tlen = torch.nn.utils.rnn.pad_packed_sequence(tout, batch_first=True)
    dpad, dlen = U.pad_packed_sequence(dout, batch_first=True)
    close(dpad, tpad, 1e-10)
    assert dlen.tolist() == tlen.tolist()
    w = rng.standard_normal(tuple(tpad.shape))
    tl = (tpad * th(w)).sum() + (thn ** 2).sum()
    dl = (dpad * dg(w)).sum() + (dhn ** 2).sum()
    if is_lstm:
        tl = tl + tcn.sum()
        dl = dl + dcn.sum()
    tl.backward()
    dl.backward()
    close(dx.grad, tx.grad, 1e-10)
    close(dh0.grad, th0.grad, 1e-10)
    check_grads(dmod, tmod, 1e-10)


@pytest.mark.parametrize('mode,extra', MODES, ids=['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('with_h0', [False, True])
def test_unbatched_input_matches_torch(mode, extra, with_h0):
    kwargs = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, **extra)
    tmod, dmod = make_pair(mode, kwargs)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 3))
    h0 = rng.standard_normal((4, 4))
    tx, dx = th(x, True), dg(x, True)
    targs, dargs = [tx], [dx]
    if with_h0:
        hx_t = (th(h0), th(h0 * 2)) if mode == 'LSTM' else th(h0)
        hx_d = (dg(h0), dg(h0 * 2)) if mode == 'LSTM' else dg(h0)
        targs.append(hx_t)
        dargs.append(hx_d)
    tout, thn = tmod(*targs)
    dout, dhn = dmod(*dargs)
    assert tuple(dout.shape) == tuple(tout.shape)
    close(dout, tout, 1e-10)
    thn = thn[0] if mode == 'LSTM' else thn
    dhn = dhn[0] if mode == 'LSTM' else dhn
    assert tuple(dhn.shape) == tuple(thn.shape)
    close(dhn, thn, 1e-10)
    (tout.sum() + thn.sum()).backward()
    (dout.sum() + dhn.sum()).backward()
    close(dx.grad, tx.grad, 1e-10)
    check_grads(dmod, tmod, 1e-10)


@pytest.mark.parametrize('bidirectional', [False, True])
@pytest.mark.parametrize('packed', [False, True])
def test_lstm_projection_matches_torch(bidirectional, packed):
    kwargs = dict(input_size=3, hidden_size=5, num_layers=2, proj_size=2,
                  bidirectional=bidirectional)
    tmod, dmod = make_pair('LSTM', kwargs)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 3))
    D = 2 if bidirectional else 1
    h0, c0 = rng.standard_normal((2 * D, 3, 2)), rng.standard_normal((2 * D, 3, 5))
    tx, dx = th(x, True), dg(x, True)
    th0, dh0, tc0, dc0 = th(h0, True), dg(h0, True), th(c0, True), dg(c0, True)
    tin, din = tx, dx
    if packed:
        tin = torch.nn.utils.rnn.pack_padded_sequence(tx, [4, 3, 1])
        din = U.pack_padded_sequence(dx, [4, 3, 1])
    tout, (thn, tcn) = tmod(tin, (th0, tc0))
    dout, (dhn, dcn) = dmod(din, (dh0, dc0))
    if packed:
        tout, dout = tout.data, dout.data
    close(dout, tout, 1e-10)
    close(dhn, thn, 1e-10)
    close(dcn, tcn, 1e-10)
    ((tout ** 2).sum() + thn.sum() + (tcn * 3).sum()).backward()
    ((dout ** 2).sum() + dhn.sum() + (dcn * 3).sum()).backward()
    for a, b in [(dx, tx), (dh0, th0), (dc0, tc0)]:
        close(a.grad, b.grad, 1e-10)
    check_grads(dmod, tmod, 1e-10)


def test_state_dict_keys_shapes_and_init_match_torch():
    for mode, kwargs in [('LSTM', dict(proj_size=3)), ('GRU', {}), ('RNN', {})]:
        kw = dict(input_size=7, hidden_size=8, num_layers=2, bidirectional=True, **kwargs)
        t = getattr(torch.nn, mode)(**kw)
        d = getattr(R, mode)(**kw)
        tsd, dsd = t.state_dict(), d.state_dict()
        assert list(tsd) == list(dsd)
        for k in tsd:
            assert tuple(tsd[k].shape) == tuple(dsd[k].shape), k
        assert d._flat_weights_names == t._flat_weights_names
        assert [[p.shape for p in ws] for ws in d.all_weights] == \
            [[p.shape for p in ws] for ws in t.all_weights]
    big = R.LSTM(50, 100, num_layers=2)
    bound = 1 / np.sqrt(100)
    values = np.concatenate([p.detach().numpy().ravel() for p in big.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert abs(values.mean()) < 0.01 * bound * 10
    assert abs(values.std() - bound / np.sqrt(3)) < 0.02 * bound


def test_reprs_match_torch():
    cases = [
        ('LSTM', (4, 3, 2), dict(bias=False, batch_first=True, dropout=0.1,
                                 bidirectional=True, proj_size=2)),
        ('RNN', (4, 3), dict(nonlinearity='relu')),
        ('GRU', (4, 3), {}),
        ('LSTMCell', (3, 4), dict(bias=False)),
        ('RNNCell', (3, 4), dict(nonlinearity='relu')),
        ('GRUCell', (2, 3), {}),
    ]
    for name, args, kwargs in cases:
        assert repr(getattr(R, name)(*args, **kwargs)) == \
            repr(getattr(torch.nn, name)(*args, **kwargs))


def test_constructor_errors_match_torch():
    for kwargs, exc, msg in [
        (dict(dropout=2), ValueError, 'dropout should be a number in range [0, 1]'),
        (dict(proj_size=3), ValueError, 'proj_size has to be smaller than hidden_size'),
        (dict(proj_size=-1), ValueError, 'proj_size should be a positive integer or zero'),
        (dict(num_layers=0), ValueError, 'num_layers must be greater than zero'),
    ]:
        with pytest.raises(exc, match=msg.replace('[', r'\[').replace(']', r'\]')):
            R.LSTM(4, 3, **kwargs)
    with pytest.raises(ValueError, match='hidden_size must be greater than zero'):
        R.LSTM(4, 0)
    with pytest.raises(ValueError, match='proj_size argument is only supported for LSTM'):
        R.GRU(4, 3, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        R.RNN(4, 3, nonlinearity='gelu')
    with pytest.warns(UserWarning, match='non-zero dropout expects num_layers greater than 1'):
        R.LSTM(4, 3, dropout=0.5)


def test_forward_errors_match_torch():
    lstm, gru = R.LSTM(4, 3, 2), R.GRU(4, 3)
    cases = [
        (lambda: lstm(dynagrad.randn(5, 2, 6)), RuntimeError,
         'input.size(-1) must be equal to input_size. Expected 4, got 6'),
        (lambda: lstm(dynagrad.randn(5, 2, 4), (dynagrad.randn(2, 3), dynagrad.randn(2, 3))),
         RuntimeError, 'For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D)'),
        (lambda: lstm(dynagrad.randn(5, 2, 4), (dynagrad.randn(2, 2, 5),
                                                dynagrad.randn(2, 2, 3))),
         RuntimeError, 'Expected hidden[0] size (2, 2, 3), got [2, 2, 5]'),
        (lambda: lstm(dynagrad.randn(5, 2, 4), (dynagrad.randn(2, 2, 3),
                                                dynagrad.randn(2, 3, 3))),
         RuntimeError, 'Expected hidden[1] size (2, 2, 3), got [2, 3, 3]'),
        (lambda: lstm(dynagrad.randn(5, 4), (dynagrad.randn(2, 1, 3), dynagrad.randn(2, 1, 3))),
         RuntimeError, 'For unbatched 2-D input, hx and cx should also be 2-D'),
        (lambda: lstm(dynagrad.randn(2, 5, 2, 4)), ValueError,
         'LSTM: Expected input to be 2D or 3D, got 4D instead'),
        (lambda: gru(dynagrad.randn(5, 2, 4), dynagrad.randn(1, 3)), RuntimeError,
         'For batched 3-D input, hx should also be 3-D but got 2-D tensor'),
        (lambda: gru(dynagrad.randn(5, 2, 4), dynagrad.randn(1, 3, 3)), RuntimeError,
         'Expected hidden size (1, 2, 3), got [1, 3, 3]'),
        (lambda: gru(dynagrad.randn(5, 4), dynagrad.randn(1, 2, 3)), RuntimeError,
         'For unbatched 2-D input, hx should also be 2-D but got 3-D tensor'),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value)


def test_dropout_between_layers_training_only():
    torch_free = R.LSTM(3, 50, num_layers=2, dropout=0.5)
    x = dynagrad.randn(4, 2, 3)
    dynagrad.manual_seed(0)
    a, _ = torch_free(x)
    dynagrad.manual_seed(1)
    b, _ = torch_free(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    dynagrad.manual_seed(0)
    a2, _ = torch_free(x)
    np.testing.assert_array_equal(a.detach().numpy(), a2.detach().numpy())  # the generator
    torch_free.eval()
    e1, _ = torch_free(x)
    e2, _ = torch_free(x)
    np.testing.assert_array_equal(e1.detach().numpy(), e2.detach().numpy())
    # eval output equals a dropout-free twin
    twin = R.LSTM(3, 50, num_layers=2)
    twin.load_state_dict(torch_free.state_dict())
    np.testing.assert_allclose(twin(x)[0].detach().numpy(), e1.detach().numpy())
    # the mask: Bernoulli(1 - p) scaled by 1 / (1 - p), one per element, between layers only
    torch_free.train()
    masks = []
    real = R._dropout_mask

    def spy(x, p):
        m = real(x, p)
        masks.append(m.numpy())
        return m
    R._dropout_mask = spy
    try:
        torch_free(dynagrad.randn(40, 10, 3))
    finally:
        R._dropout_mask = real
    assert len(masks) == 1 and masks[0].shape == (400, 50)
    assert set(np.unique(masks[0])) == {0.0, 2.0}
    assert abs((masks[0] == 0).mean() - 0.5) < 0.02
    # p = 1 drops everything: the second layer sees zeros
    drop_all = R.GRU(3, 4, num_layers=2, dropout=1.0)
    twin = R.GRU(4, 4)
    twin.load_state_dict({k[:-1] + '0': v for k, v in drop_all.state_dict().items()
                          if k.endswith('l1')})
    out, _ = drop_all(x)
    np.testing.assert_allclose(out.detach().numpy(), twin(dynagrad.zeros(4, 2, 4))[0]
                               .detach().numpy(), rtol=1e-6)


# -- cells -------------------------------------------------------------------------------

CELLS = [('LSTMCell', {}), ('GRUCell', {}), ('RNNCell', {}), ('RNNCell',
                                                              {'nonlinearity': 'relu'}),
         ('LSTMCell', {'bias': False}), ('GRUCell', {'bias': False})]


@pytest.mark.parametrize('name,extra', CELLS)
@pytest.mark.parametrize('batched,with_h', list(itertools.product([True, False], repeat=2)))
def test_cell_matches_torch(name, extra, batched, with_h):
    I, H, B = 4, 3, 2
    torch.manual_seed(0)
    tcell = getattr(torch.nn, name)(I, H, **extra).double()
    dcell = getattr(R, name)(I, H, **extra).double()
    copy_dg_to_torch(dcell, tcell) if batched else copy_torch_to_dg(tcell, dcell)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((B, I) if batched else (I,))
    hs = rng.standard_normal((2, B, H) if batched else (2, H))
    tx, dx = th(x, True), dg(x, True)
    args_t, args_d = [tx], [dx]
    is_lstm = name == 'LSTMCell'
    if with_h:
        th_, dh_ = th(hs[0], True), dg(hs[0], True)
        tc_, dc_ = th(hs[1], True), dg(hs[1], True)
        args_t.append((th_, tc_) if is_lstm else th_)
        args_d.append((dh_, dc_) if is_lstm else dh_)
    tout, dout = tcell(*args_t), dcell(*args_d)
    if is_lstm:
        for a, b in zip(dout, tout):
            close(a, b, 1e-12)
        tl = (tout[0] ** 2).sum() + (tout[1] * 3).sum()
        dl = (dout[0] ** 2).sum() + (dout[1] * 3).sum()
    else:
        close(dout, tout, 1e-12)
        tl, dl = (tout ** 2).sum(), (dout ** 2).sum()
    tl.backward()
    dl.backward()
    close(dx.grad, tx.grad, 1e-12)
    if with_h:
        close(dh_.grad, th_.grad, 1e-12)
        if is_lstm:
            close(dc_.grad, tc_.grad, 1e-12)
    check_grads(dcell, tcell, 1e-12)


def test_cell_errors_match_torch():
    c = R.LSTMCell(4, 3)
    for fn, exc, msg in [
        (lambda: c(dynagrad.randn(2, 5, 4)), ValueError,
         'LSTMCell: Expected input to be 1D or 2D, got 3D instead'),
        (lambda: c(dynagrad.randn(2, 5)), RuntimeError,
         'input has inconsistent input_size: got 5 expected 4'),
        (lambda: c(dynagrad.randn(2, 4), (dynagrad.randn(3, 3), dynagrad.randn(2, 3))),
         RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3"),
        (lambda: R.GRUCell(4, 3)(dynagrad.randn(2, 4), dynagrad.randn(2, 2)), RuntimeError,
         'hidden0 has inconsistent hidden_size: got 2, expected 3'),
    ]:
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value)


def test_lstm_cell_loop_equals_lstm_layer():
    """A cell stepped in a Python loop gives the layer's result (same weights)."""
    layer = R.LSTM(3, 4).double()
    cell = R.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = dynagrad.randn(6, 2, 3, dtype=dynagrad.float64)
    out, (h, c) = layer(x)
    hc = None
    for t in range(6):
        hc = cell(x[t], hc)
    np.testing.assert_allclose(hc[0].detach().numpy(), h[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(hc[1].detach().numpy(), c[0].detach().numpy(), rtol=1e-12)


# -- gradcheck and double backward ---------------------------------------------------------

@pytest.mark.parametrize('mode', ['LSTM', 'GRU', 'RNN'])
def test_gradcheck_tiny_layers(mode):
    from dynagrad.autograd import gradcheck, gradgradcheck
    dynagrad.manual_seed(0)
    kw = dict(proj_size=2) if mode == 'LSTM' else {}
    mod = getattr(R, mode)(2, 3, bidirectional=True, **kw).double()
    params = list(mod.parameters())
    x = dynagrad.randn(3, 2, 2, dtype=dynagrad.float64, requires_grad=True)

    def fn(x, *ps):
        for p, name in zip(ps, mod._flat_weights_names):
            mod._parameters[name] = p
        out, hn = mod(x)
        return out, hn[0] if mode == 'LSTM' else hn

    try:
        leaves = [p.detach().requires_grad_() for p in params]
        assert gradcheck(fn, (x, *leaves), eps=1e-6, atol=1e-5)
        assert gradgradcheck(fn, (x, *leaves), eps=1e-6, atol=1e-4)
    finally:
        for p, name in zip(params, mod._flat_weights_names):
            mod._parameters[name] = p


def test_gradcheck_packed_lstm_and_gru_cells():
    from dynagrad.autograd import gradcheck
    for name in ('LSTMCell', 'GRUCell'):
        cell = getattr(R, name)(2, 3).double()
        x = dynagrad.randn(2, 2, dtype=dynagrad.float64, requires_grad=True)
        h = dynagrad.randn(2, 3, dtype=dynagrad.float64, requires_grad=True)
        if name == 'LSTMCell':
            c = dynagrad.randn(2, 3, dtype=dynagrad.float64, requires_grad=True)
            assert gradcheck(lambda x, h, c: cell(x, (h, c)), (x, h, c), eps=1e-6, atol=1e-5)
        else:
            assert gradcheck(lambda x, h: cell(x, h), (x, h), eps=1e-6, atol=1e-5)
    lstm = R.LSTM(2, 3).double()
    x = dynagrad.randn(4, 3, 2, dtype=dynagrad.float64, requires_grad=True)

    def packed(x):
        out, (h, c) = lstm(U.pack_padded_sequence(x, [4, 2, 1]))
        return out.data, h, c
    assert gradcheck(packed, (x,), eps=1e-6, atol=1e-5)


def test_double_backward_matches_torch():
    tmod, dmod = make_pair('GRU', dict(input_size=2, hidden_size=3))
    x = np.random.default_rng(7).standard_normal((4, 2, 2))
    tx, dx = th(x, True), dg(x, True)
    (tg,) = torch.autograd.grad(tmod(tx)[0].pow(2).sum(), tx, create_graph=True)
    (dgx,) = dynagrad.autograd.grad(dmod(dx)[0].pow(2).sum(), dx, create_graph=True)
    close(dgx, tg, 1e-10)
    tg.pow(2).sum().backward()
    dgx.pow(2).sum().backward()
    close(dx.grad, tx.grad, 1e-10)
    check_grads(dmod, tmod, 1e-10)


def test_fused_and_reference_paths_agree():
    mod = R.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    x = dynagrad.randn(5, 2, 3, dtype=dynagrad.float64)
    packed = U.pack_padded_sequence(x, [5, 3])
    results = []
    for fused in (True, False):
        R.USE_FUSED = fused
        try:
            mod.zero_grad()
            out, (h, c) = mod(packed)
            (out.data.sum() + h.sum() + c.sum()).backward()
            results.append([out.data.detach().numpy(), h.detach().numpy()]
                           + [p.grad.numpy() for p in mod.parameters()])
        finally:
            R.USE_FUSED = True
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_training_loss_decreases_and_truncated_bptt():
    dynagrad.manual_seed(0)
    lstm = R.LSTM(1, 8)
    head = dynagrad.nn.Linear(8, 1)
    opt = dynagrad.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
    t = np.linspace(0, 6, 21, dtype=np.float32)
    x = dynagrad.from_numpy(np.sin(t[:-1]).reshape(20, 1, 1))
    y = dynagrad.from_numpy(np.sin(t[1:]).reshape(20, 1, 1))
    losses = []
    for _ in range(40):
        hc = None
        total = 0.0
        for chunk in range(2):  # truncated BPTT: detach the state between chunks
            sl = slice(chunk * 10, chunk * 10 + 10)
            out, hc = lstm(x[sl], hc)
            hc = (hc[0].detach(), hc[1].detach())
            loss = ((head(out) - y[sl]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total)
    assert losses[-1] < 0.5 * losses[0]


def test_no_grad_forward_records_nothing():
    mod = R.GRU(3, 4)
    with dynagrad.no_grad():
        out, h = mod(dynagrad.randn(5, 2, 3))
    assert out.grad_fn is None and not out.requires_grad


# -- pack / pad utilities ------------------------------------------------------------------

@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('enforce_sorted,lengths', [(True, [4, 4, 2, 1]),
                                                   (False, [1, 4, 2, 3])])
def test_pack_pad_roundtrip_matches_torch(batch_first, enforce_sorted, lengths):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 4, 2))  # (T, B, *) or (B, T, *): both 4 x 4
    tx, dx = th(x, True), dg(x, True)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, torch.tensor(lengths),
                                                 batch_first=batch_first,
                                                 enforce_sorted=enforce_sorted)
    dp = U.pack_padded_sequence(dx, dynagrad.tensor(lengths), batch_first=batch_first,
                                enforce_sorted=enforce_sorted)
    close(dp.data, tp.data, 0)
    assert dp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert dp.batch_sizes.dtype == dynagrad.int64
    for a, b in [(dp.sorted_indices, tp.sorted_indices),
                 (dp.unsorted_indices, tp.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()
    for total in (None, 6):
        tpad, tl = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first=batch_first,
                                                          padding_value=-1.5,
                                                          total_length=total)
        dpad, dl = U.pad_packed_sequence(dp, batch_first=batch_first, padding_value=-1.5,
                                         total_length=total)
        close(dpad, tpad, 0)
        assert dl.tolist() == tl.tolist() and dl.dtype == dynagrad.int64
    w = rng.standard_normal(tuple(tpad.shape))
    (tpad * th(w)).sum().backward()
    (dpad * dg(w)).sum().backward()
    close(dx.grad, tx.grad, 0)


def test_pad_sequence_and_pack_sequence_match_torch():
    rng = np.random.default_rng(9)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    ts = [th(s, True) for s in seqs]
    ds = [dg(s, True) for s in seqs]
    for batch_first, side, value in itertools.product([False, True], ['right', 'left'],
                                                       [0.0, 7.0]):
        t = torch.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_value=value,
                                            padding_side=side)
        d = U.pad_sequence(ds, batch_first=batch_first, padding_value=value,
                           padding_side=side)
        close(d, t, 0)
    tp = torch.nn.utils.rnn.pack_sequence(ts, enforce_sorted=False)
    dp = U.pack_sequence(ds, enforce_sorted=False)
    close(dp.data, tp.data, 0)
    assert dp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    (tp.data ** 2).sum().backward()
    (dp.data ** 2).sum().backward()
    for a, b in zip(ds, ts):
        close(a.grad, b.grad, 0)
    for a, b in zip(U.unpack_sequence(dp), torch.nn.utils.rnn.unpack_sequence(tp)):
        close(a, b, 0)
    with pytest.raises(RuntimeError, match='Expected padding_side to be one of left or right'):
        U.pad_sequence(ds, padding_side='x')


def test_pack_errors_match_torch():
    x = dynagrad.randn(3, 2, 4)
    with pytest.raises(RuntimeError, match='must be sorted in decreasing order when '
                                           '`enforce_sorted` is True'):
        U.pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        U.pack_padded_sequence(x, [3, 0])
    with pytest.raises(RuntimeError, match=r'Expected `len\(lengths\)` to be equal to '
                                           'batch_size, but got 3'):
        U.pack_padded_sequence(x, [3, 2, 1])
    p = U.pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match='Expected total_length to be at least the length of '
                                         'the longest sequence in input, but got '
                                         'total_length=2 and max sequence length being 3'):
        U.pad_packed_sequence(p, total_length=2)


def test_packed_sequence_is_a_namedtuple_with_to():
    p = U.pack_sequence([dynagrad.ones(2, 1), dynagrad.ones(3, 1) * 2], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p.to(dynagrad.float64).data.dtype == dynagrad.float64
    assert p.double().batch_sizes is batch_sizes
    assert not p.is_cuda
    q = U.PackedSequence(dynagrad.ones(3), dynagrad.tensor([2, 1]), dynagrad.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]


def test_dynagrad_does_not_warn_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        R.LSTM(3, 4, num_layers=2, dropout=0.2)(dynagrad.randn(2, 1, 3))
