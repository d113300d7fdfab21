"""The top-level forms of nn.functional ops (``dynagrad.softmax``, ``dynagrad.lstm``, ...)
against torch's top-level forms: what the conformance table (tests/op_db, rows named
``toplevel.*``) cannot express: flat-weight recurrent layers and cells, the extra outputs
of the ``native_*`` forms, random dropout, in-place forms, and where the top-level
signatures differ from nn.functional's."""
import inspect
import warnings

import numpy as np
import pytest
import torch

import dynagrad

RNG = np.random.default_rng(16)


def arr(*shape, dtype=np.float32):
    return np.asarray(RNG.standard_normal(shape), dtype=dtype)


def both(a, requires_grad=True):
    t, d = torch.tensor(a), dynagrad.tensor(a)
    if requires_grad and a.dtype.kind == 'f':
        t.requires_grad_()
        d.requires_grad_()
    return t, d


def close(d, t, atol=1e-5, rtol=1e-5):
    assert tuple(d.shape) == tuple(t.shape)
    assert str(d.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# -- recurrent layers from flat weights -----------------------------------------------------

GATES = {'lstm': 4, 'gru': 3, 'rnn_tanh': 1, 'rnn_relu': 1}


def _flat_weights(mode, I, H, num_layers, bidirectional, bias, proj):
    D = 2 if bidirectional else 1
    out_size = proj or H
    ws = []
    for layer in range(num_layers):
        for _ in range(D):
            ins = I if layer == 0 else out_size * D
            G = GATES[mode] * H
            ws += [arr(G, ins) * 0.4, arr(G, out_size) * 0.4]
            if bias:
                ws += [arr(G) * 0.4, arr(G) * 0.4]
            if proj:
                ws.append(arr(proj, H) * 0.4)
    return ws


@pytest.mark.filterwarnings('ignore:LSTM with projections is not supported with oneDNN')
@pytest.mark.parametrize('mode,num_layers,bidirectional,bias,batch_first,proj', [
    ('lstm', 2, True, True, False, 0),
    ('lstm', 1, False, False, True, 2),
    ('gru', 2, True, True, True, 0),
    ('gru', 1, False, False, False, 0),
    ('rnn_tanh', 2, False, True, False, 0),
    ('rnn_relu', 1, True, True, True, 0),
])
def test_recurrent_layer_from_flat_weights(mode, num_layers, bidirectional, bias, batch_first,
                                           proj):
    I, H, T, B = 3, 4, 5, 2
    D = 2 if bidirectional else 1
    weights = _flat_weights(mode, I, H, num_layers, bidirectional, bias, proj)
    x = arr(B, T, I) if batch_first else arr(T, B, I)
    h0, c0 = arr(num_layers * D, B, proj or H), arr(num_layers * D, B, H)
    results = []
    for lib in (torch, dynagrad):
        params = [lib.tensor(w, requires_grad=True) for w in weights]
        X, H0, C0 = (lib.tensor(a, requires_grad=True) for a in (x, h0, c0))
        hx = [H0, C0] if mode == 'lstm' else H0
        outs = getattr(lib, mode)(X, hx, params, bias, num_layers, 0.0, False, bidirectional,
                                  batch_first)
        assert isinstance(outs, tuple) and len(outs) == (3 if mode == 'lstm' else 2)
        sum(((o * (k + 1)).sum() for k, o in enumerate(outs))).backward()
        grads = [X.grad, H0.grad] + ([C0.grad] if mode == 'lstm' else [])
        results.append(list(outs) + grads + [p.grad for p in params])
    for d, t in zip(results[1], results[0]):
        close(d, t, atol=1e-5)


def test_lstm_on_packed_data():
    """The ``(data, batch_sizes, hx, params, ...)`` overload: a packed batch."""
    I, H = 3, 4
    batch_sizes = np.array([3, 2, 2, 1])
    data = arr(int(batch_sizes.sum()), I)
    weights = _flat_weights('lstm', I, H, 1, True, True, 0)
    h0, c0 = arr(2, 3, H), arr(2, 3, H)
    results = []
    for lib in (torch, dynagrad):
        params = [lib.tensor(w, requires_grad=True) for w in weights]
        X = lib.tensor(data, requires_grad=True)
        out = lib.lstm(X, lib.tensor(batch_sizes), [lib.tensor(h0), lib.tensor(c0)], params,
                       True, 1, 0.0, False, True)
        (out[0].sum() + out[1].sum() * 2 + out[2].sum() * 3).backward()
        results.append(list(out) + [X.grad] + [p.grad for p in params])
    for d, t in zip(results[1], results[0]):
        close(d, t)


def test_gru_on_packed_data():
    I, H = 2, 3
    batch_sizes = np.array([2, 2, 1])
    data = arr(5, I)
    weights = _flat_weights('gru', I, H, 2, False, True, 0)
    h0 = arr(2, 2, H)
    results = []
    for lib in (torch, dynagrad):
        params = [lib.tensor(w, requires_grad=True) for w in weights]
        out = lib.gru(lib.tensor(data), lib.tensor(batch_sizes), lib.tensor(h0), params, True,
                      2, 0.0, False, False)
        (out[0].sum() + out[1].sum()).backward()
        results.append(list(out) + [p.grad for p in params])
    for d, t in zip(results[1], results[0]):
        close(d, t)


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('bias', [True, False])
def test_cells(mode, bias):
    G = GATES[mode] * 4
    arrays = [arr(2, 3), arr(2, 4), arr(2, 4), arr(G, 3), arr(G, 4)]
    if bias:
        arrays += [arr(G), arr(G)]
    results = []
    for lib in (torch, dynagrad):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        hx = (ts[1], ts[2]) if mode == 'lstm' else ts[1]
        out = getattr(lib, mode + '_cell')(ts[0], hx, *ts[3:])
        outs = out if isinstance(out, tuple) else (out,)
        sum(((o * (k + 1)).sum() for k, o in enumerate(outs))).backward()
        results.append(list(outs) + [t.grad for t in ts if t.grad is not None])
    assert len(results[0]) == len(results[1])
    for d, t in zip(results[1], results[0]):
        close(d, t)


def test_lstm_cell_takes_bias_by_keyword():
    x, h, c, wi, wh, bi = arr(2, 3), arr(2, 4), arr(2, 4), arr(16, 3), arr(16, 4), arr(16)
    t = torch.lstm_cell(*(torch.tensor(a) for a in (x,)), (torch.tensor(h), torch.tensor(c)),
                        torch.tensor(wi), torch.tensor(wh), b_ih=torch.tensor(bi))
    d = dynagrad.lstm_cell(dynagrad.tensor(x), (dynagrad.tensor(h), dynagrad.tensor(c)),
                           dynagrad.tensor(wi), dynagrad.tensor(wh), b_ih=dynagrad.tensor(bi))
    for a, b in zip(d, t):
        close(a, b)


def test_recurrent_parameter_count_error():
    x = dynagrad.tensor(arr(3, 2, 2))
    with pytest.raises(RuntimeError, match='expected 4 parameters'):
        dynagrad.lstm(x, [dynagrad.zeros(1, 2, 3), dynagrad.zeros(1, 2, 3)],
                      [dynagrad.zeros(12, 2)], True, 1, 0.0, False, False, False)


def test_recurrent_dropout_between_layers_in_training():
    """Dropout 1.0 between two layers: the second layer sees zeros, as in torch."""
    weights = _flat_weights('rnn_tanh', 2, 3, 2, False, True, 0)
    x, h0 = arr(4, 1, 2), np.zeros((2, 1, 3), np.float32)
    outs = []
    for lib in (torch, dynagrad):
        params = [lib.tensor(w) for w in weights]
        outs.append(lib.rnn_tanh(lib.tensor(x), lib.tensor(h0), params, True, 2, 1.0, True,
                                 False, False))
    for d, t in zip(outs[1], outs[0]):
        close(d, t)


# -- native_* forms: their extra outputs ----------------------------------------------------

def test_native_layer_norm_statistics():
    x = arr(2, 3, 4)
    (tx, dx), (tw, dw) = both(x), both(arr(4))
    t = torch.native_layer_norm(tx, [4], tw, None, 1e-5)
    d = dynagrad.native_layer_norm(dx, [4], dw, None, 1e-5)
    assert len(d) == 3
    for a, b in zip(d, t):
        close(a, b)
        assert a.requires_grad == b.requires_grad


def test_native_batch_norm_training_and_eval():
    x = arr(4, 3, 2)
    for training in (True, False):
        t_stats = [torch.zeros(3), torch.ones(3)]
        d_stats = [dynagrad.zeros(3), dynagrad.ones(3)]
        (tx, dx), (tw, dw) = both(x), both(arr(3))
        t = torch.native_batch_norm(tx, tw, None, *t_stats, training, 0.2, 1e-5)
        d = dynagrad.native_batch_norm(dx, dw, None, *d_stats, training, 0.2, 1e-5)
        for a, b in zip(list(d) + d_stats, list(t) + t_stats):
            close(a, b)
            assert a.requires_grad == b.requires_grad
        t[0].sum().backward()
        d[0].sum().backward()
        close(dx.grad, tx.grad)
        close(dw.grad, tw.grad)


def test_native_group_norm_statistics_require_grad():
    x = arr(2, 6, 5)
    (tx, dx), (tw, dw), (tb, db) = both(x), both(arr(6)), both(arr(6))
    t = torch.native_group_norm(tx, tw, tb, 2, 6, 5, 3, 1e-5)
    d = dynagrad.native_group_norm(dx, dw, db, 2, 6, 5, 3, 1e-5)
    for a, b in zip(d, t):
        close(a, b)
        assert a.requires_grad == b.requires_grad


def test_native_dropout_outputs():
    x = arr(50, 40)
    tx, dx = both(x)
    for train in (True, None):
        dynagrad.manual_seed(0)
        out, mask = dynagrad.native_dropout(dx, 0.3, train)
        assert mask.dtype == dynagrad.bool and tuple(mask.shape) == x.shape
        kept = mask.numpy()
        assert 0.6 < kept.mean() < 0.8
        np.testing.assert_allclose(out.detach().numpy(), np.where(kept, x / 0.7, 0), rtol=1e-6)
        assert out.grad_fn.name() == torch.native_dropout(tx, 0.3, True)[0].grad_fn.name()
        out.sum().backward()
        np.testing.assert_allclose(dx.grad.numpy(), np.where(kept, 1 / 0.7, 0), rtol=1e-6)
        dx.grad = None
    d_out, d_mask = dynagrad.native_dropout(dx, 0.3, False)
    t_out, t_mask = torch.native_dropout(tx, 0.3, False)
    close(d_out, t_out)
    assert d_mask.numpy().all() and t_mask.all()
    assert d_out is not dx and t_out is not tx
    d_out, d_mask = dynagrad.native_dropout(dx, 1.0, True)
    t_out, t_mask = torch.native_dropout(tx, 1.0, True)
    close(d_out, t_out)
    assert not d_mask.numpy().any() and not t_mask.any()


def test_native_norm_is_not_for_dense_tensors():
    """PyTorch has native_norm for sparse tensors only; a dense input raises, here too."""
    with pytest.raises(NotImplementedError):
        torch.native_norm(torch.ones(3))
    with pytest.raises(NotImplementedError, match='sparse'):
        dynagrad.native_norm(dynagrad.ones(3))


# -- random and in-place forms --------------------------------------------------------------

@pytest.mark.parametrize('name', ['dropout', 'feature_dropout', 'alpha_dropout',
                                  'feature_alpha_dropout'])
def test_dropout_forms_in_training(name):
    x = np.abs(arr(40, 30, 2)) + 0.5
    dx = dynagrad.tensor(x, requires_grad=True)
    dynagrad.manual_seed(1)
    out = getattr(dynagrad, name)(dx, 0.4, True).detach().numpy()
    if name.startswith('feature'):   # whole channels (dim 1) share their fate
        kept = out != 0 if 'alpha' not in name else out >= 0
        assert (kept == kept[..., :1]).all()
    if 'alpha' in name:   # dropped values sit at one value, kept ones are affine in x
        assert len(np.unique(np.round(out[out < 0], 5))) == 1
    else:
        np.testing.assert_allclose(out[out != 0], (x / 0.6)[out != 0], rtol=1e-6)
        assert 0.5 < (out != 0).mean() < 0.7
    # the same seed, the same mask; out of training the input itself
    dynagrad.manual_seed(1)
    np.testing.assert_array_equal(getattr(dynagrad, name)(dx, 0.4, True).detach().numpy(),
                                  out)
    assert getattr(dynagrad, name)(dx, 0.4, False) is dx


@pytest.mark.parametrize('name', ['dropout_', 'feature_dropout_', 'alpha_dropout_',
                                  'feature_alpha_dropout_'])
def test_inplace_dropout_forms(name):
    x = np.abs(arr(6, 4, 3)) + 0.5
    d = dynagrad.tensor(x)
    t = torch.tensor(x)
    assert getattr(dynagrad, name)(d, 0.5, False) is d
    assert getattr(torch, name)(t, 0.5, False) is t
    dynagrad.manual_seed(3)
    assert getattr(dynagrad, name)(d, 0.5, True) is d
    assert not np.array_equal(d.numpy(), x)


def test_rrelu_training_draws_slopes_in_range():
    x = -np.abs(arr(1000)) - 0.1
    out = dynagrad.rrelu(dynagrad.tensor(x), 0.1, 0.3, True).numpy()
    slopes = out / x
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6
    assert slopes.std() > 0.01


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('name', ['rrelu', 'rrelu_'])
def test_rrelu_training_slopes_bit_for_bit_with_generator(name, dtype):
    """PyTorch draws one uniform per element <= 0, in order; a transposed input included."""
    x = arr(6, 9, dtype=dtype)
    x[0, :3] = 0
    t, d = torch.tensor(x).T.clone(), dynagrad.tensor(x).T.clone()
    t_out = getattr(torch, name)(t, 0.1, 0.3, True, torch.Generator().manual_seed(21))
    d_out = getattr(dynagrad, name)(d, 0.1, 0.3, True, dynagrad.Generator().manual_seed(21))
    np.testing.assert_array_equal(d_out.numpy(), t_out.numpy())
    assert (d_out is d) == (name == 'rrelu_')


def test_rrelu_training_default_generator_bit_for_bit_and_gradient():
    x = arr(7, 5)
    torch.manual_seed(8)
    dynagrad.manual_seed(8)
    t, d = both(x)
    t_out = torch.nn.functional.rrelu(t, 0.2, 0.6, True)
    d_out = dynagrad.nn.functional.rrelu(d, 0.2, 0.6, True)
    np.testing.assert_array_equal(d_out.detach().numpy(), t_out.detach().numpy())
    w = arr(7, 5)
    t_out.backward(torch.tensor(w))
    d_out.backward(dynagrad.tensor(w))
    np.testing.assert_array_equal(d.grad.numpy(), t.grad.numpy())
    # both generators advanced by the same draws
    np.testing.assert_array_equal(dynagrad.rand(4).numpy(), torch.rand(4).numpy())


def test_rrelu_wrong_generator_type():
    with pytest.raises(TypeError, match='generator'):
        dynagrad.rrelu(dynagrad.tensor(arr(3)), 0.1, 0.3, True, object())


def test_embedding_renorm_():
    w, idx = arr(5, 3) * 3, np.array([0, 2, 2])
    t, d = torch.tensor(w), dynagrad.tensor(w)
    with torch.no_grad():
        t_out = torch.embedding_renorm_(t, torch.tensor(idx), 1.0, 2.0)
    d_out = dynagrad.embedding_renorm_(d, dynagrad.tensor(idx), 1.0, 2.0)
    assert t_out is t and d_out is d
    close(d, t)


@pytest.mark.parametrize('mode', [0, 1, 2])
@pytest.mark.parametrize('padding_idx', [None, 2])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_embedding_bag_bookkeeping_outputs(mode, padding_idx, dtype):
    w, idx, off = arr(6, 3, dtype=dtype), np.array([1, 2, 3, 4, 5]), np.array([0, 2, 2])
    t = torch.embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(off), False, mode,
                            False, None, False, padding_idx)
    d = dynagrad.embedding_bag(dynagrad.tensor(w), dynagrad.tensor(idx), dynagrad.tensor(off),
                               False, mode, False, None, False, padding_idx)
    assert len(d) == 4
    for a, b in zip(d, t):
        close(a, b)


def test_grid_sampler_mode_out_of_range():
    """torch reads an out-of-range mode as garbage; dynagrad names the valid ones."""
    x, g = dynagrad.ones(1, 1, 3, 3), dynagrad.zeros(1, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r'interpolation_mode must be an int in \[0, 3\)'):
        dynagrad.grid_sampler(x, g, 5, 0, False)
    with pytest.raises(RuntimeError, match='padding_mode'):
        dynagrad.grid_sampler(x, g, 0, 3, False)
    with pytest.raises(RuntimeError, match='expected 4D input'):
        dynagrad.grid_sampler_2d(dynagrad.ones(1, 1, 2, 2, 2), g, 0, 0, False)
    with pytest.raises(RuntimeError, match='expected 5D input'):
        dynagrad.grid_sampler_3d(x, g, 0, 0, False)


# -- signatures that differ from nn.functional -----------------------------------------------

def test_softmax_dim_is_required_and_dtype_positional():
    x = arr(2, 3)
    with pytest.raises(TypeError):
        torch.softmax(torch.tensor(x))
    with pytest.raises(TypeError):
        dynagrad.softmax(dynagrad.tensor(x))
    close(dynagrad.log_softmax(dynagrad.tensor(x), 1, dynagrad.float64),
          torch.log_softmax(torch.tensor(x), 1, torch.float64))


def test_dropout_takes_train_not_training():
    x = arr(3)
    for lib in (torch, dynagrad):
        with pytest.raises(TypeError):
            lib.dropout(lib.tensor(x), 0.5)
        with pytest.raises(TypeError):
            lib.dropout(lib.tensor(x), p=0.5, training=False)
        out = lib.dropout(lib.tensor(x), p=0.5, train=False)
        np.testing.assert_array_equal(out.numpy(), x)


def test_batch_norm_takes_affine_before_running_stats():
    x = arr(4, 3)
    w, b, rm, rv = np.abs(arr(3)) + 0.5, np.abs(arr(3)) + 0.5, arr(3), np.abs(arr(3)) + 0.5
    t = torch.batch_norm(*(torch.tensor(a) for a in (x, w, b, rm, rv)), False, 0.1, 1e-5, False)
    d = dynagrad.batch_norm(*(dynagrad.tensor(a) for a in (x, w, b, rm, rv)), False, 0.1, 1e-5,
                            False)
    close(d, t)
    # nn.functional's order (running statistics second) is another computation
    f = dynagrad.nn.functional.batch_norm(*(dynagrad.tensor(a) for a in (x, w, b, rm, rv)))
    assert not np.allclose(f.numpy(), d.numpy())
    with pytest.raises(TypeError):
        dynagrad.batch_norm(dynagrad.tensor(x), None, None, None, None, True, 0.1, 1e-5)


def test_losses_reduce_nothing_by_default():
    """torch's top-level losses default to reduction 0 (none), nn.functional's to 'mean'."""
    x, y = arr(4, 3), np.sign(arr(4, 3))
    for name in ('hinge_embedding_loss', 'kl_div', 'binary_cross_entropy_with_logits'):
        t = getattr(torch, name)(torch.tensor(x), torch.tensor(np.abs(y)))
        d = getattr(dynagrad, name)(dynagrad.tensor(x), dynagrad.tensor(np.abs(y)))
        assert tuple(t.shape) == (4, 3)
        close(d, t)
        with warnings.catch_warnings():   # F.kl_div's advice about 'mean'
            warnings.simplefilter('ignore')
            f = getattr(dynagrad.nn.functional, name)(dynagrad.tensor(x),
                                                      dynagrad.tensor(np.abs(y)))
        assert tuple(f.shape) == ()
    with pytest.raises(ValueError, match='reduction must be 0'):
        dynagrad.kl_div(dynagrad.tensor(x), dynagrad.tensor(y), 'mean')


def test_kl_div_mean_does_not_warn():
    x, y = arr(4, 3), np.abs(arr(4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        t = torch.kl_div(torch.tensor(x), torch.tensor(y), 1)
        d = dynagrad.kl_div(dynagrad.tensor(x), dynagrad.tensor(y), 1)
    close(d, t)


def test_embedding_takes_weight_first():
    w, idx = arr(5, 3), np.array([4, 0])
    close(dynagrad.embedding(dynagrad.tensor(w), dynagrad.tensor(idx)),
          torch.embedding(torch.tensor(w), torch.tensor(idx)))


def test_pooling_indices_always_returned():
    x = arr(1, 2, 8)
    for name in ('adaptive_max_pool1d', 'max_pool1d_with_indices'):
        t = getattr(torch, name)(torch.tensor(x), 3)
        d = getattr(dynagrad, name)(dynagrad.tensor(x), 3)
        assert isinstance(d, tuple) and len(d) == 2
        for a, b in zip(d, t):
            close(a, b)
    with pytest.raises(TypeError):
        dynagrad.adaptive_max_pool1d(dynagrad.tensor(x), 3, True)


def test_poisson_nll_loss_requires_every_argument():
    for lib in (torch, dynagrad):
        with pytest.raises(TypeError):
            lib.poisson_nll_loss(lib.ones(3), lib.ones(3))


def test_tensor_methods():
    x = arr(2, 3, 4)
    tx, dx = both(x)
    close(dx.hardshrink(0.3), tx.hardshrink(0.3))
    close(dx.hardshrink(), tx.hardshrink())
    tw, dw = both(arr(3))
    close(dx.prelu(dw), tx.prelu(tw))


def test_top_level_names_are_exported():
    from dynagrad.nn.functional import toplevel
    for name in toplevel.__all__:
        assert getattr(dynagrad, name) is getattr(toplevel, name)
        assert hasattr(torch, name), name
    assert 'softmax' not in dynagrad.nn.functional.__all__ or \
        dynagrad.nn.functional.softmax is not dynagrad.softmax


@pytest.mark.parametrize('name', ['softmax', 'dropout', 'layer_norm', 'batch_norm',
                                  'max_pool2d', 'conv2d', 'group_norm', 'embedding',
                                  'kl_div', 'triplet_margin_loss', 'celu', 'rrelu'])
def test_parameter_names_match_torch_schemas(name):
    """Positional order and names as torch's top-level schema (``self`` is ``input``)."""
    schema = torch._C._jit_get_schemas_for_operator('aten::' + name)[0]
    expected = [('input' if a.name == 'self' else a.name) for a in schema.arguments]
    params = list(inspect.signature(getattr(dynagrad, name)).parameters)
    assert [p for p in params if p != 'out'] == expected   # out=: the .out overload's


# -- nn.functional forms added by another part of issue 16 (last: they may be missing) ----

def _need(name):
    if not hasattr(dynagrad.nn.functional, name):
        pytest.skip(f'dynagrad.nn.functional.{name} is not there yet')


def test_max_pool3d():
    _need('max_pool3d')
    x = arr(1, 2, 5, 5, 4)
    tx, dx = both(x)
    t, d = torch.max_pool3d(tx, 2), dynagrad.max_pool3d(dx, 2)
    close(d, t)
    t.sum().backward()
    d.sum().backward()
    close(dx.grad, tx.grad)
    close(dynagrad.max_pool3d(dx, [3, 2, 2], [], 1, 1, True),
          torch.max_pool3d(tx, [3, 2, 2], [], 1, 1, True))


@pytest.mark.parametrize('name', ['channel_shuffle', 'native_channel_shuffle'])
def test_channel_shuffle(name):
    _need(name)
    x = arr(2, 6, 3, 2)
    tx, dx = both(x)
    t, d = getattr(torch, name)(tx, 3), getattr(dynagrad, name)(dx, 3)
    close(d, t)
