"""Every layer, with the same weights (copied both ways through state dicts), gives the
same outputs and gradients as torch's."""
import numpy as np
import pytest
import torch

import dynagrad as dg

RNG = np.random.default_rng(0)


def x(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape)


def tokens(high, *shape):
    return RNG.integers(0, high, shape)


# (layer name, constructor args, constructor kwargs, inputs): float inputs require grad.
LAYERS = [
    ('Linear', (5, 3), {}, [x(4, 5)]),
    ('Linear', (5, 3), dict(bias=False), [x(2, 4, 5)]),
    ('Bilinear', (3, 4, 2), {}, [x(5, 3), x(5, 4)]),
    ('Conv1d', (2, 3, 3), dict(padding=1), [x(2, 2, 7)]),
    ('Conv2d', (2, 4, 3), dict(stride=2, padding=1), [x(2, 2, 7, 7)]),
    ('Conv2d', (4, 4, (3, 2)), dict(groups=2, dilation=(1, 2), bias=False), [x(1, 4, 6, 7)]),
    ('Conv2d', (2, 3, 3), dict(padding='same', padding_mode='reflect'), [x(1, 2, 5, 5)]),
    ('Conv3d', (2, 2, 2), {}, [x(1, 2, 3, 4, 4)]),
    ('ConvTranspose1d', (3, 2, 3), dict(stride=2), [x(2, 3, 5)]),
    ('ConvTranspose2d', (3, 2, 3), dict(stride=2, padding=1, output_padding=1), [x(1, 3, 4, 4)]),
    ('MaxPool1d', (2,), {}, [x(2, 3, 8)]),
    ('MaxPool2d', (2,), {}, [x(2, 3, 6, 6)]),
    ('MaxPool2d', (3,), dict(stride=2, padding=1, ceil_mode=True), [x(1, 2, 7, 7)]),
    ('AvgPool1d', (3,), dict(stride=2), [x(2, 3, 9)]),
    ('AvgPool2d', (2,), dict(padding=1, count_include_pad=False), [x(1, 2, 5, 5)]),
    ('AdaptiveAvgPool1d', (3,), {}, [x(2, 2, 7)]),
    ('AdaptiveAvgPool2d', ((2, 3),), {}, [x(1, 2, 7, 8)]),
    ('AdaptiveMaxPool2d', (2,), {}, [x(1, 2, 5, 6)]),
    ('BatchNorm1d', (3,), {}, [x(6, 3)]),
    ('BatchNorm2d', (3,), dict(momentum=None), [x(4, 3, 2, 2)]),
    ('LayerNorm', ((3, 4),), {}, [x(2, 3, 4)]),
    ('GroupNorm', (2, 4), {}, [x(3, 4, 5)]),
    ('InstanceNorm2d', (3,), dict(affine=True), [x(2, 3, 4, 4)]),
    ('RMSNorm', (4,), dict(eps=1e-6), [x(3, 4)]),
    ('LocalResponseNorm', (3,), {}, [x(2, 5, 3, 3)]),
    ('Embedding', (10, 4), dict(padding_idx=1), [tokens(10, 3, 5)]),
    ('EmbeddingBag', (10, 4), dict(mode='sum'), [tokens(10, 3, 4)]),
    ('Flatten', (), {}, [x(2, 3, 4)]),
    ('Unflatten', (1, (2, 3)), {}, [x(4, 6)]),
    ('Identity', (), {}, [x(3)]),
    ('PReLU', (3,), {}, [x(2, 3, 4)]),
    *[(name, args, {}, [x(3, 6, low=-3, high=3)]) for name, args in [
        ('ReLU', ()), ('ReLU6', ()), ('LeakyReLU', (0.2,)), ('ELU', ()), ('CELU', (0.5,)),
        ('SELU', ()), ('GELU', ()), ('GELU', ('tanh',)), ('SiLU', ()), ('Mish', ()),
        ('Softplus', (2.0,)), ('Softsign', ()), ('Hardtanh', (-0.5, 0.5)), ('Hardsigmoid', ()),
        ('Hardswish', ()), ('Tanhshrink', ()), ('Threshold', (0.1, 20.0)), ('GLU', ()),
        ('LogSigmoid', ()), ('Tanh', ()), ('Sigmoid', ()), ('Softmax', (1,)),
        ('LogSoftmax', (1,)), ('Softmin', (0,)), ('Hardshrink', (0.3,)),
        ('Softshrink', (0.3,))]],
    ('Softmax2d', (), {}, [x(2, 3, 4, 4)]),
    ('PairwiseDistance', (), {}, [x(4, 5), x(4, 5)]),
    ('CosineSimilarity', (), dict(dim=1), [x(4, 5), x(4, 5)]),
]


def _copy_weights(src, dst, to_lib):
    """Load src's state dict into dst (arrays go through NumPy)."""
    state = {k: to_lib(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)


@pytest.mark.parametrize('name,args,kwargs,inputs', LAYERS,
                         ids=[f'{layer[0]}-{i}' for i, layer in enumerate(LAYERS)])
@pytest.mark.parametrize('direction', ['torch_to_dynagrad', 'dynagrad_to_torch'])
def test_layer_matches_torch(name, args, kwargs, inputs, direction):
    t_layer = getattr(torch.nn, name)(*args, **kwargs).double()
    d_layer = getattr(dg.nn, name)(*args, **kwargs).double()
    if direction == 'torch_to_dynagrad':
        _copy_weights(t_layer, d_layer, dg.tensor)
    else:
        _copy_weights(d_layer, t_layer, torch.tensor)
    assert list(d_layer.state_dict()) == list(t_layer.state_dict())
    assert repr(d_layer).replace('dynagrad.', 'torch.') == repr(t_layer)

    def make(lib):
        out = []
        for a in inputs:
            if a.dtype.kind == 'f':
                out.append(lib.tensor(a, dtype=lib.float64, requires_grad=True))
            else:
                out.append(lib.tensor(a))
        return out
    d_in, t_in = make(dg), make(torch)
    d_out, t_out = d_layer(*d_in), t_layer(*t_in)
    np.testing.assert_allclose(d_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9,
                               atol=1e-11)
    g = RNG.standard_normal(tuple(t_out.shape))
    d_out.backward(dg.tensor(g))
    t_out.backward(torch.tensor(g))
    for d, t in zip(d_in, t_in):
        if t.grad is not None:
            np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (dn, dp), (tn, tp) in zip(d_layer.named_parameters(), t_layer.named_parameters()):
        assert dn == tn
        if tp.grad is not None:
            np.testing.assert_allclose(dp.grad.numpy(), tp.grad.numpy(), rtol=1e-9,
                                       atol=1e-11, err_msg=dn)
    for (bn, db), (_, tb) in zip(d_layer.named_buffers(), t_layer.named_buffers()):
        np.testing.assert_allclose(db.numpy(), tb.numpy(), rtol=1e-9, err_msg=bn)


@pytest.mark.parametrize('name,args', [('BatchNorm2d', (3,)), ('Dropout', (0.5,)),
                                       ('InstanceNorm2d', (3,))])
def test_eval_mode_matches_torch(name, args):
    t_layer = getattr(torch.nn, name)(*args).double()
    d_layer = getattr(dg.nn, name)(*args).double()
    a = x(4, 3, 2, 2)
    for _ in range(3):  # update running statistics in training mode
        d_layer(dg.tensor(a))
        t_layer(torch.tensor(a))
    d_layer.eval()
    t_layer.eval()
    np.testing.assert_allclose(d_layer(dg.tensor(a)).detach().numpy(),
                               t_layer(torch.tensor(a)).detach().numpy(), rtol=1e-9)


def test_default_initialisation_has_torchs_ranges():
    for build in [lambda nn: nn.Linear(50, 40), lambda nn: nn.Conv2d(8, 16, 3),
                  lambda nn: nn.Embedding(100, 30), lambda nn: nn.Bilinear(10, 5, 8)]:
        d, t = build(dg.nn), build(torch.nn)
        for (name, dp), (_, tp) in zip(d.named_parameters(), t.named_parameters()):
            dv, tv = dp.detach().numpy(), tp.detach().numpy()
            assert dv.shape == tv.shape
            if dv.size >= 500:  # enough samples for the spread to be comparable
                assert abs(dv.std() - tv.std()) < 0.1 * tv.std(), name
            assert np.abs(dv).max() <= np.abs(tv).max() * 1.3 + 1e-3, name


def _probs(*shape):
    p = RNG.uniform(0.05, 0.95, shape)
    return p


LOSSES = [
    ('L1Loss', {}, [x(4, 3), x(4, 3)]),
    ('MSELoss', dict(reduction='sum'), [x(4, 3), x(4, 3)]),
    ('SmoothL1Loss', dict(beta=0.5), [x(4, 3), x(4, 3)]),
    ('HuberLoss', dict(delta=0.5), [x(4, 3), x(4, 3)]),
    ('SoftMarginLoss', {}, [x(4, 3), np.sign(x(4, 3))]),
    ('KLDivLoss', dict(reduction='batchmean'), [np.log(_probs(4, 3)), _probs(4, 3)]),
    ('HingeEmbeddingLoss', {}, [x(4, 3), np.sign(x(4, 3))]),
    ('CrossEntropyLoss', dict(label_smoothing=0.1), [x(5, 4), tokens(4, 5)]),
    ('NLLLoss', {}, [np.log(_probs(5, 4)), tokens(4, 5)]),
    ('BCELoss', {}, [_probs(4, 3), _probs(4, 3)]),
    ('BCEWithLogitsLoss', {}, [x(4, 3), _probs(4, 3)]),
    ('MultiLabelSoftMarginLoss', {}, [x(4, 3), (x(4, 3) > 0).astype(np.float64)]),
    ('MultiMarginLoss', {}, [x(5, 4), tokens(4, 5)]),
    ('MultiLabelMarginLoss', {}, [x(3, 4), np.array([[1, 2, -1, 0], [0, -1, 0, 0],
                                                     [3, 1, 0, -1]])]),
    ('PoissonNLLLoss', {}, [x(4, 3), np.abs(x(4, 3))]),
    ('GaussianNLLLoss', {}, [x(4, 3), x(4, 3), np.abs(x(4, 3)) + 0.1]),
    ('MarginRankingLoss', dict(margin=0.1), [x(5), x(5), np.sign(x(5))]),
    ('CosineEmbeddingLoss', {}, [x(4, 3), x(4, 3), np.sign(x(4))]),
    ('TripletMarginLoss', {}, [x(4, 3), x(4, 3), x(4, 3)]),
]


@pytest.mark.parametrize('name,kwargs,inputs', LOSSES, ids=[loss[0] for loss in LOSSES])
def test_loss_module_matches_torch(name, kwargs, inputs):
    d_loss, t_loss = getattr(dg.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(d_loss) == repr(t_loss)

    no_grad = {'SoftMarginLoss': (1,)}.get(name, ())  # torch refuses grad for these inputs

    def make(lib):
        return [lib.tensor(a, dtype=lib.float64, requires_grad=i not in no_grad)
                if a.dtype.kind == 'f' else lib.tensor(a) for i, a in enumerate(inputs)]
    d_in, t_in = make(dg), make(torch)
    d_out, t_out = d_loss(*d_in), t_loss(*t_in)
    np.testing.assert_allclose(d_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9)
    d_out.sum().backward()
    t_out.sum().backward()
    for d, t in zip(d_in, t_in):
        if t.grad is not None:
            np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_rrelu_module_in_eval_mode_matches_torch():
    a = x(3, 6, low=-3, high=3)
    d, t = dg.nn.RReLU().eval(), torch.nn.RReLU().eval()
    np.testing.assert_allclose(d(dg.tensor(a)).numpy(), t(torch.tensor(a)).numpy())
