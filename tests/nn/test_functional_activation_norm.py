"""What the op table cannot express for activations, dropout, normalization, embeddings:
random masks (checked through the mask dynagrad drew, and statistically), warnings,
in-place version checks, running statistics and double backward against torch."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import dynagrad
import dynagrad.nn.functional as F


def dg(a, requires_grad=False):
    return dynagrad.tensor(np.array(a), requires_grad=requires_grad)


def th(a, requires_grad=False):
    return torch.tensor(np.array(a), requires_grad=requires_grad)


# -- dropout ----------------------------------------------------------------------------

@pytest.mark.parametrize('p', [0.2, 0.5, 0.8])
def test_dropout_mask_scale_and_gradient(p):
    dynagrad.manual_seed(0)
    x = dynagrad.randn(200, 50, requires_grad=True)
    y = F.dropout(x, p)
    assert y.grad_fn.name() == 'MulBackward0'
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * kept / (1 - p),
                               rtol=1e-6)
    assert abs(1 - kept.mean() - p) < 0.02
    g = np.random.default_rng(0).standard_normal((200, 50)).astype(np.float32)
    y.backward(dynagrad.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * kept / (1 - p), rtol=1e-6)


def test_dropout_repeats_with_seed_and_eval_returns_input():
    x = dynagrad.randn(10, 10)
    dynagrad.manual_seed(3)
    a = F.dropout(x, 0.5).numpy()
    dynagrad.manual_seed(3)
    b = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert TF.dropout(torch.ones(2), 0.5, training=False) is not None


def test_dropout_inplace_writes_target_and_gradient_uses_its_mask():
    dynagrad.manual_seed(1)
    x = dynagrad.randn(30, 30, requires_grad=True)
    y = x.clone()
    out = F.dropout(y, 0.4, inplace=True)
    assert out is y and y._version == 1
    kept = y.detach().numpy() != 0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.6, rtol=1e-6)


@pytest.mark.parametrize('fn,shape,mask_shape', [
    (F.dropout1d, (4, 6, 5), (4, 6, 1)), (F.dropout1d, (6, 5), (6, 1)),
    (F.dropout2d, (4, 6, 3, 2), (4, 6, 1, 1)), (F.dropout3d, (2, 6, 2, 2, 2), (2, 6, 1, 1, 1)),
    (F.dropout3d, (6, 2, 2, 2), (6, 1, 1, 1))])
def test_channel_dropout_zeros_whole_channels(fn, shape, mask_shape):
    dynagrad.manual_seed(2)
    x = (dynagrad.rand(*shape) + 0.5).requires_grad_()
    y = fn(x, 0.5)
    kept = y.detach().numpy() != 0
    per_channel = kept.reshape(mask_shape[:-1] + (-1,)) if len(mask_shape) > 1 else kept
    assert (per_channel.all(-1) | ~per_channel.any(-1)).all(), 'channels dropped whole'
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * kept * 2, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept * 2.0, rtol=1e-6)


def test_dropout2d_warnings_as_torch():
    for lib, f in ((torch, TF), (dynagrad, F)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            f.dropout2d(lib.ones(2, 3, 4), 0.5)
        assert any('Received a 3D input to dropout2d' in str(m.message) for m in w), lib
    with pytest.raises(RuntimeError, match='Expected 2D or 3D input'):
        F.dropout1d(dynagrad.ones(3), 0.5)


@pytest.mark.parametrize('feature', [False, True])
def test_alpha_dropout_keeps_selu_moments(feature):
    p = 0.3
    dynagrad.manual_seed(5)
    x = dynagrad.randn(400, 250, 1, requires_grad=True) if feature else \
        dynagrad.randn(500, 200, requires_grad=True)
    y = (F.feature_alpha_dropout if feature else F.alpha_dropout)(x, p, training=True)
    assert y.grad_fn.name() == 'AddBackward0'
    v = y.detach().numpy()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1) < 0.02
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    b = a * alpha * p
    dropped = np.isclose(v, -alpha * a + b, atol=1e-6)
    np.testing.assert_allclose(v[~dropped], a * x.detach().numpy()[~dropped] + b,
                               rtol=1e-5, atol=1e-5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(dropped, 0, a), rtol=1e-6)
    assert F.alpha_dropout(x, p) is x   # training defaults to False


# -- random activations ---------------------------------------------------------------------

def test_rrelu_training_slopes_and_gradient():
    dynagrad.manual_seed(0)
    x = dynagrad.randn(50, 40, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    assert y.grad_fn.name() == 'RreluWithNoiseBackward0'
    xv, yv = x.detach().numpy(), y.detach().numpy()
    slope = yv[xv < 0] / xv[xv < 0]
    assert slope.min() >= 0.1 and slope.max() <= 0.3 and slope.std() > 0.03
    np.testing.assert_array_equal(yv[xv > 0], xv[xv > 0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(xv > 0, 1, yv / np.where(xv == 0, 1, xv)),
                               rtol=1e-5)
    z = x.clone()
    assert F.rrelu_(z, training=True) is z and z.grad_fn.name() == 'RreluWithNoiseBackward1'


def test_gumbel_softmax_soft_hard_and_distribution():
    logits = np.log(np.array([0.1, 0.2, 0.7], np.float32))
    dynagrad.manual_seed(0)
    x = dynagrad.tensor(np.tile(logits, (4000, 1)), requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(y.detach().numpy().sum(-1), 1, rtol=1e-5)
    freq = np.bincount(y.detach().numpy().argmax(-1), minlength=3) / 4000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.03)
    dynagrad.manual_seed(1)
    h = F.gumbel_softmax(x, tau=0.5, hard=True)
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(-1) == 1).all()
    # straight-through: the gradient is the soft sample's (same noise)
    dynagrad.manual_seed(1)
    s = F.gumbel_softmax(x, tau=0.5)
    g = np.random.default_rng(0).standard_normal(hv.shape).astype(np.float32)
    gh, = dynagrad.autograd.grad(h, [x], dynagrad.tensor(g))
    gs, = dynagrad.autograd.grad(s, [x], dynagrad.tensor(g))
    np.testing.assert_allclose(gh.numpy(), gs.numpy(), rtol=1e-5, atol=1e-6)
    assert h.grad_fn.name() == 'AddBackward0' and s.grad_fn.name() == 'SoftmaxBackward0'


# -- warnings, in-place rules ----------------------------------------------------------------

@pytest.mark.parametrize('name', ['softmax', 'log_softmax', 'softmin'])
def test_implicit_dim_warns_as_torch(name):
    with pytest.warns(UserWarning, match=f'Implicit dimension choice for {name} has been '
                                         'deprecated'):
        getattr(F, name)(dynagrad.ones(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        getattr(F, name)(dynagrad.ones(2, 3), dim=1)


@pytest.mark.parametrize('call', [
    lambda f, y: f.elu_(y), lambda f, y: f.leaky_relu(y, 0.1, inplace=True),
    lambda f, y: f.hardtanh_(y), lambda f, y: f.threshold_(y, 0.0, -1.0),
    lambda f, y: f.silu(y, inplace=True), lambda f, y: f.celu(y, inplace=True),
    lambda f, y: f.dropout(y, 0.5, inplace=True)])
@pytest.mark.parametrize('saved', [True, False])
def test_inplace_activation_version_checks(call, saved):
    def run(lib, f):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        y = x.clone()
        z = y * y if saved else y + 1
        call(f, y)
        z.sum().backward()
    try:
        run(torch, TF)
    except RuntimeError as e:
        assert 'modified by an inplace operation' in str(e)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            run(dynagrad, F)
    else:
        run(dynagrad, F)
    for lib, f in ((torch, TF), (dynagrad, F)):
        with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
            call(f, lib.tensor([0.5, -1.5], requires_grad=True))


def test_inplace_negative_slope_backward_raises_as_torch():
    for lib, f in ((torch, TF), (dynagrad, F)):
        x = lib.tensor([0.5, -1.5], requires_grad=True)
        y = f.leaky_relu(x.clone(), -0.5, inplace=True)
        with pytest.raises(RuntimeError, match='negative slope'):
            y.sum().backward()


# -- normalization: running statistics, double backward -----------------------------------

@pytest.mark.parametrize('fn', ['batch_norm', 'instance_norm'])
def test_running_stats_updated_in_place_as_torch(fn):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    out = []
    for lib, f in ((torch, TF), (dynagrad, F)):
        rm, rv = lib.zeros(3), lib.ones(3)
        v = rm._version
        kw = dict(training=True) if fn == 'batch_norm' else {}
        for _ in range(3):
            getattr(f, fn)(lib.tensor(x), rm, rv, momentum=0.2, **kw)
        out.append((rm.numpy().copy(), rv.numpy().copy(), rm._version - v))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)
    assert out[1][2] == out[0][2]


@pytest.mark.parametrize('case', ['batch_train', 'batch_eval', 'layer', 'group', 'instance',
                                  'rms'])
def test_normalization_double_backward_matches_torch(case):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5))
    w = rng.standard_normal(4)
    b = rng.standard_normal(4)
    g = rng.standard_normal((3, 4, 5))
    v = rng.standard_normal((3, 4, 5))

    def f(lib, m, x, w, b):
        if case == 'batch_train':
            return m.batch_norm(x, None, None, w, b, training=True)
        if case == 'batch_eval':
            rm = lib.tensor(np.linspace(-1, 1, 4))
            rv = lib.tensor(np.linspace(0.5, 2, 4))
            return m.batch_norm(x, rm, rv, w, b)
        if case == 'layer':
            return m.layer_norm(x.transpose(1, 2), (4,), w, b)
        if case == 'group':
            return m.group_norm(x, 2, w, b)
        if case == 'instance':
            return m.instance_norm(x, weight=w, bias=b)
        return m.rms_norm(x.transpose(1, 2), (4,), w)

    results = []
    for lib, m in ((torch, TF), (dynagrad, F)):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = f(lib, m, xs, ws, bs)
        gy = lib.tensor(g if case not in ('layer', 'rms') else g.transpose(0, 2, 1))
        grads = lib.autograd.grad(y, [xs, ws], gy, create_graph=True)
        s = (grads[0] * lib.tensor(v)).sum() + (grads[1] * grads[1]).sum()
        second = lib.autograd.grad(s, [xs, ws, bs], allow_unused=True)
        results.append([None if t is None else t.detach().numpy() for t in second])
    for t, d in zip(*results):
        if t is None:
            assert d is None or not np.any(d)
        else:
            np.testing.assert_allclose(d, t, rtol=1e-7, atol=1e-9)


def test_batch_norm_speed_shape_large_batch():
    """One fused node in forward and backward: a (64, 32, 16, 16) batch stays quick."""
    x = dynagrad.randn(64, 32, 16, 16, requires_grad=True)
    w = dynagrad.ones(32, requires_grad=True)
    y = F.batch_norm(x, None, None, w, None, training=True)
    assert y.grad_fn.name() == 'NativeBatchNormBackward0'
    assert y.grad_fn.next_functions[0][0].name() == 'AccumulateGrad'
    y.sum().backward()
    assert abs(float(x.grad.abs().max())) < 1e-3   # d(sum)/dx of a normalized output is 0


# -- embeddings ------------------------------------------------------------------------------

def test_embedding_max_norm_bumps_version_as_torch():
    idx = np.array([[0, 1], [1, 3]])
    w = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32) * 2
    versions = []
    for lib, f in ((torch, TF), (dynagrad, F)):
        W = lib.tensor(w.copy(), requires_grad=True)
        v = W._version
        y = f.embedding(lib.tensor(idx), W, max_norm=1.0)
        y.sum().backward()
        versions.append((W._version - v, W.detach().numpy().copy(), W.grad.numpy()))
    assert versions[0][0] == versions[1][0]
    np.testing.assert_allclose(versions[1][1], versions[0][1], rtol=1e-5)
    np.testing.assert_allclose(versions[1][2], versions[0][2])


def _embedding_ggy(lib, f, **kw):
    idx = np.array([[0, 2], [2, 2]])
    w = np.random.default_rng(0).standard_normal((4, 3))
    W = lib.tensor(w, requires_grad=True)
    gy = lib.tensor(np.ones((2, 2, 3)), requires_grad=True)
    y = f.embedding(lib.tensor(idx), W, **kw)
    gw, = lib.autograd.grad(y, [W], gy, create_graph=True)
    ggy, = lib.autograd.grad((gw * gw).sum(), [gy])
    return ggy.detach().numpy()


def test_embedding_double_backward_through_scatter():
    np.testing.assert_allclose(_embedding_ggy(dynagrad, F, padding_idx=0),
                               _embedding_ggy(torch, TF, padding_idx=0))


def test_embedding_double_backward_scale_grad_by_freq():
    """Row 2 is read 3 times: its gradient is (g1 + g2 + g3) / 3, and the derivative of its
    square by each g is 2 * (3 / 3) / 3. torch's double backward drops the 1/3 (2.0): its
    formula gathers without the frequency scale. dynagrad differentiates the scaled sum."""
    ggy = _embedding_ggy(dynagrad, F, padding_idx=0, scale_grad_by_freq=True)
    np.testing.assert_allclose(ggy[0, 1], 2 / 3)
    np.testing.assert_allclose(ggy[0, 0], 0)


def test_one_hot_is_int64_and_records_nothing():
    y = F.one_hot(dynagrad.tensor([0, 2]), 3)
    assert y.dtype == dynagrad.int64 and not y.requires_grad
    assert y.tolist() == [[1, 0, 0], [0, 0, 1]]
