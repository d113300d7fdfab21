"""The remaining nn modules (issue 16, C2) against torch with the same weights and inputs:
Buffer, uninitialized parameters and the lazy modules, ConvTranspose3d, InstanceNorm3d,
FeatureAlphaDropout, CrossMapLRN2d, NLLLoss2d, TripletMarginWithDistanceLoss,
AdaptiveLogSoftmaxWithLoss, SyncBatchNorm, DataParallel, Container, factory_kwargs,
LinearCrossEntropyLoss."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import dynagrad
import dynagrad.nn as nn
import dynagrad.nn.functional as F


def dg(t, requires_grad=False):
    return dynagrad.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def same_weights(d_module, t_module):
    """Load torch's state dict into the dynagrad module."""
    d_module.load_state_dict({k: dg(v) for k, v in t_module.state_dict().items()})


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def raises_like(d_call, t_call):
    """Both raise the same exception type with the same message (dynagrad's names aside)."""
    with pytest.raises(Exception) as t_err:
        t_call()
    with pytest.raises(type(t_err.value)) as d_err:
        d_call()
    assert str(d_err.value).replace('dynagrad', 'torch') == str(t_err.value)


# -- Buffer, factory_kwargs, Container ------------------------------------------------------

def test_buffer_marker_matches_torch():
    t = tnn.Buffer(torch.ones(2), persistent=False)
    d = nn.Buffer(dynagrad.ones(2), persistent=False)
    assert type(d) is dynagrad.Tensor and type(t) is torch.Tensor
    assert isinstance(d, nn.Buffer) and isinstance(t, tnn.Buffer)
    assert not isinstance(dynagrad.ones(2), nn.Buffer)
    assert d.persistent is t.persistent is False
    assert nn.Buffer(dynagrad.ones(1)).persistent is True
    src = dynagrad.ones(2, requires_grad=True)
    assert nn.Buffer(src).requires_grad and nn.Buffer(src).grad_fn is None


def test_factory_kwargs_matches_torch():
    for kwargs in (None, {'device': 'cpu', 'dtype': 'x'}, {'factory_kwargs': {'dtype': 1},
                                                           'device': 'cpu'}):
        assert nn.factory_kwargs(kwargs) == tnn.factory_kwargs(kwargs)
    raises_like(lambda: nn.factory_kwargs({'x': 1}), lambda: tnn.factory_kwargs({'x': 1}))
    both = {'factory_kwargs': {'dtype': 1}, 'dtype': 2}
    raises_like(lambda: nn.factory_kwargs(both), lambda: tnn.factory_kwargs(both))


def test_container_is_deprecated_and_registers_children():
    with pytest.warns(FutureWarning, match='`nn.Container` is deprecated'):
        c = nn.Container(a=nn.ReLU())
    with pytest.warns(FutureWarning):
        t = tnn.Container(a=tnn.ReLU())
    assert repr(c) == repr(t)
    assert list(dict(c.named_children())) == ['a']


# -- uninitialized parameters and lazy modules -----------------------------------------------

def test_uninitialized_parameter_refuses_use_like_torch():
    d, t = nn.UninitializedParameter(), tnn.UninitializedParameter()
    assert repr(d) == repr(t) == '<UninitializedParameter>'
    assert d.requires_grad and str(d.dtype) == 'dynagrad.float32'
    raises_like(lambda: d.shape, lambda: t.shape)
    with pytest.raises(ValueError, match='Attempted to use an uninitialized parameter'):
        d + 1
    with pytest.raises(ValueError, match='Attempted to use an uninitialized parameter'):
        d.numel()
    d.materialize((2, 3))
    assert type(d) is nn.Parameter and tuple(d.shape) == (2, 3)
    b = nn.UninitializedBuffer()
    assert repr(b) == '<UninitializedBuffer>' and not b.requires_grad
    b.materialize(4, dtype=dynagrad.float64)
    assert type(b) is dynagrad.Tensor and b.dtype == dynagrad.float64


LAZY = [
    ('LazyLinear', (4,), (3, 5)),
    ('LazyConv1d', (4, 3), (2, 3, 7)),
    ('LazyConv2d', (4, 3), (2, 3, 6, 6)),
    ('LazyConv3d', (2, 2), (1, 3, 4, 4, 4)),
    ('LazyConvTranspose1d', (4, 3), (2, 3, 5)),
    ('LazyConvTranspose2d', (4, 3), (2, 3, 4, 4)),
    ('LazyConvTranspose3d', (2, 2), (1, 3, 3, 3, 3)),
    ('LazyBatchNorm1d', (), (4, 3)),
    ('LazyBatchNorm2d', (), (2, 3, 4, 4)),
    ('LazyBatchNorm3d', (), (2, 3, 2, 2, 2)),
    ('LazyInstanceNorm1d', (), (2, 3, 5)),
    ('LazyInstanceNorm2d', (), (2, 3, 4, 4)),
    ('LazyInstanceNorm3d', (), (2, 3, 2, 3, 2)),
]


@pytest.mark.parametrize('name,args,shape', LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_becomes_its_class_and_matches_torch(name, args, shape):
    d, t = getattr(nn, name)(*args), getattr(tnn, name)(*args)
    assert repr(d) == repr(t)
    assert d.has_uninitialized_params()
    assert [(k, repr(v)) for k, v in d.state_dict().items()] == \
        [(k, repr(v)) for k, v in t.state_dict().items()]
    x = torch.randn(*shape)
    t_out = t(x)
    d(dg(x))            # initializes, with dynagrad's random values
    assert type(d).__name__ == type(t).__name__ == getattr(tnn, name).cls_to_become.__name__
    assert repr(d) == repr(t)
    assert not d._forward_pre_hooks
    # second forward, now the concrete module, from the same state
    same_weights(d, t)
    d_in = dg(x, requires_grad=True)
    x.requires_grad_(True)
    t_out = t(x)
    d_out = d(d_in)
    close(d_out, t_out, 1e-4)
    t_out.sum().backward()
    d_out.sum().backward()
    close(d_in.grad, x.grad, 1e-4)


def test_lazy_default_initialization_has_pytorch_bounds():
    m = nn.LazyLinear(50)
    m(dynagrad.randn(2, 16))
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2   # uniform in +-1/sqrt(16)
    c = nn.LazyConv2d(8, 3)
    c(dynagrad.randn(1, 4, 5, 5))
    assert np.abs(c.weight.detach().numpy()).max() <= 1 / 6 + 1e-7   # 1/sqrt(4*9)
    bn = nn.LazyBatchNorm1d()
    bn(dynagrad.randn(4, 3))
    np.testing.assert_array_equal(bn.weight.detach().numpy(), np.ones(3))


def test_lazy_errors_match_torch():
    raises_like(lambda: nn.LazyConv2d(4, 3)(dynagrad.randn(3, 6)),
                lambda: tnn.LazyConv2d(4, 3)(torch.randn(3, 6)))
    raises_like(lambda: nn.LazyConv1d(4, 2, groups=2)(dynagrad.randn(1, 3, 5)),
                lambda: tnn.LazyConv1d(4, 2, groups=2)(torch.randn(1, 3, 5)))
    raises_like(lambda: nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict()),
                lambda: tnn.Linear(3, 4).load_state_dict(tnn.LazyLinear(4).state_dict()))


def test_lazy_load_state_dict_materializes():
    t = tnn.Linear(3, 4)
    d = nn.LazyLinear(4)
    result = d.load_state_dict({k: dg(v) for k, v in t.state_dict().items()})
    assert repr(result) == '<All keys matched successfully>'
    assert type(d) is nn.LazyLinear and tuple(d.weight.shape) == (4, 3)
    assert type(d.weight) is nn.Parameter
    x = torch.randn(2, 3)
    close(d(dg(x)), t(x))
    assert type(d) is nn.Linear


def test_lazy_modules_copy_pickle_convert_and_nest():
    import copy
    import pickle
    m = nn.LazyLinear(3).double()
    t = tnn.LazyLinear(3).double()
    assert repr(m.weight) == repr(t.weight) and m.weight.dtype == dynagrad.float64
    m(dynagrad.randn(2, 4, dtype=dynagrad.float64))
    assert m.weight.dtype == dynagrad.float64 and tuple(m.weight.shape) == (3, 4)
    for clone in (copy.deepcopy(nn.LazyLinear(3)), pickle.loads(pickle.dumps(nn.LazyLinear(3)))):
        assert repr(clone.weight) == '<UninitializedParameter>'
        clone(dynagrad.randn(2, 5))
        assert type(clone) is nn.Linear and not clone._forward_pre_hooks
    seq = nn.Sequential(nn.LazyConv2d(4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    out = seq(dynagrad.randn(2, 3, 5, 5))
    assert tuple(out.shape) == (2, 2)
    assert [type(c).__name__ for c in seq] == ['Conv2d', 'ReLU', 'Flatten', 'Linear']
    assert seq[3].in_features == 36


def test_lazy_state_dict_into_lazy_module_matches_torch():
    d, t = nn.LazyLinear(3), tnn.LazyLinear(3)
    assert repr(d.load_state_dict(nn.LazyLinear(3).state_dict())) == \
        repr(t.load_state_dict(tnn.LazyLinear(3).state_dict()))
    assert repr(d.weight) == '<UninitializedParameter>' and list(d._parameters) == [
        'weight', 'bias']
    assert repr(d.load_state_dict({}, strict=False)) == \
        repr(t.load_state_dict({}, strict=False))


def test_lazy_module_nested_in_another_loads_as_torch():
    src_t = tnn.Sequential(tnn.Linear(4, 5), tnn.ReLU(), tnn.LazyLinear(3))
    src_t(torch.ones(2, 4))
    state = {k: dynagrad.tensor(v.detach().numpy()) for k, v in src_t.state_dict().items()}
    d = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.LazyLinear(3))
    t = tnn.Sequential(tnn.Linear(4, 5), tnn.ReLU(), tnn.LazyLinear(3))
    assert repr(d.load_state_dict(state)) == repr(t.load_state_dict(src_t.state_dict()))
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(d(dynagrad.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    # both uninitialized: a match with nothing to copy
    lazy = nn.Sequential(nn.LazyLinear(3))
    assert repr(lazy.load_state_dict(nn.Sequential(nn.LazyLinear(3)).state_dict())) == \
        '<All keys matched successfully>'


def test_assigning_a_buffer_registers_it_as_torch():
    for lib, mod in ((dynagrad, nn), (torch, tnn)):
        m = mod.Module()
        m.a = mod.Buffer(lib.ones(2))
        m.b = mod.Buffer(lib.zeros(1), persistent=False)
        m.c = lib.ones(3)        # a plain tensor stays an attribute
        assert list(dict(m.named_buffers())) == ['a', 'b']
        assert list(m.state_dict()) == ['a']
        with pytest.raises(AttributeError, match='cannot assign buffer before Module.__init__'):
            holder = mod.Module.__new__(mod.Module)
            holder.x = mod.Buffer(lib.ones(1))


def test_optimizer_accepts_uninitialized_parameters_like_torch():
    d = nn.LazyLinear(2)
    opt = dynagrad.optim.SGD(d.parameters(), lr=0.1)
    tnn_opt = torch.optim.SGD(tnn.LazyLinear(2).parameters(), lr=0.1)
    assert len(opt.param_groups[0]['params']) == len(tnn_opt.param_groups[0]['params']) == 2
    d(dynagrad.randn(3, 5)).sum().backward()
    before = d.weight.detach().numpy().copy()
    opt.step()
    np.testing.assert_allclose(d.weight.detach().numpy(), before - 0.1 * d.weight.grad.numpy())


# -- new concrete layers ---------------------------------------------------------------------

@pytest.mark.parametrize('kwargs', [{}, {'stride': 2, 'padding': 1, 'output_padding': 1},
                                    {'groups': 2, 'dilation': 2, 'bias': False}])
def test_conv_transpose3d_matches_torch(kwargs):
    t = tnn.ConvTranspose3d(4, 6, 3, **kwargs)
    d = nn.ConvTranspose3d(4, 6, 3, **kwargs)
    assert repr(d) == repr(t)
    same_weights(d, t)
    x = torch.randn(2, 4, 3, 4, 3, requires_grad=True)
    xd = dg(x, True)
    close(d(xd), t(x), 1e-4)
    t(x).square().sum().backward()
    d(xd).square().sum().backward()
    close(xd.grad, x.grad, 1e-4)
    close(d.weight.grad, t.weight.grad, 1e-3)


def test_conv_transpose_output_size_matches_torch():
    t = tnn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    d = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    same_weights(d, t)
    x = torch.randn(1, 2, 4, 4)
    for size in ([8, 8], [1, 3, 7, 8]):
        close(d(dg(x), output_size=size), t(x, output_size=size))
    raises_like(lambda: d(dg(x), output_size=[10, 10]), lambda: t(x, output_size=[10, 10]))
    raises_like(lambda: d(dg(x), output_size=[8]), lambda: t(x, output_size=[8]))


@pytest.mark.parametrize('affine,track', [(False, False), (True, True)])
def test_instance_norm3d_matches_torch(affine, track):
    t = tnn.InstanceNorm3d(3, affine=affine, track_running_stats=track)
    d = nn.InstanceNorm3d(3, affine=affine, track_running_stats=track)
    assert repr(d) == repr(t)
    for shape in ((2, 3, 2, 3, 4), (3, 2, 3, 4)):
        x = torch.randn(*shape)
        close(d(dg(x)), t(x))
    if track:
        close(d.running_mean, t.running_mean)
        close(d.running_var, t.running_var)
    raises_like(lambda: nn.InstanceNorm3d(3, affine=True)(dynagrad.randn(1, 4, 2, 2, 2)),
                lambda: tnn.InstanceNorm3d(3, affine=True)(torch.randn(1, 4, 2, 2, 2)))
    raises_like(lambda: d(dynagrad.randn(2, 3)), lambda: t(torch.randn(2, 3)))


def test_feature_alpha_dropout_module():
    d = nn.FeatureAlphaDropout(0.3)
    assert repr(d) == repr(tnn.FeatureAlphaDropout(0.3))
    x = dynagrad.randn(4, 8, 5, 5)
    y = d(x)
    # whole channels are either kept (affinely) or set to the same value
    per_channel = y.detach().numpy().reshape(32, 25)
    x_ch = x.numpy().reshape(32, 25)
    for row, xr in zip(per_channel, x_ch):
        assert np.allclose(row, row[0]) or np.allclose(np.corrcoef(row, xr)[0, 1], 1)
    d.eval()
    assert d(x) is x or np.array_equal(d(x).numpy(), x.numpy())


@pytest.mark.parametrize('size', [1, 2, 3, 4, 5])
def test_cross_map_lrn2d_matches_torch(size):
    t = tnn.CrossMapLRN2d(size, 1e-2, 0.75, 1.5)
    d = nn.CrossMapLRN2d(size, 1e-2, 0.75, 1.5)
    assert repr(d) == repr(t)
    x = torch.randn(2, 6, 3, 3, dtype=torch.float64, requires_grad=True)
    xd = dg(x, True)
    close(d(xd), t(x), 1e-10)
    raises_like(lambda: d(dynagrad.randn(3, 3, 3)), lambda: t(torch.randn(3, 3, 3)))
    # gradient: finite differences of dynagrad's own forward (see the report on torch's)
    g = np.random.default_rng(size).standard_normal((2, 6, 3, 3))
    d(xd).backward(dynagrad.tensor(g))
    i = (1, 4, 2, 1)
    eps = 1e-6
    xp_, xm = x.detach().numpy().copy(), x.detach().numpy().copy()
    xp_[i] += eps
    xm[i] -= eps
    fd = ((d(dynagrad.tensor(xp_)).numpy() - d(dynagrad.tensor(xm)).numpy()) * g).sum() \
        / (2 * eps)
    assert abs(xd.grad.numpy()[i] - fd) < 1e-6


def test_nll_loss2d_is_a_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match='`NLLLoss2d` has been deprecated'):
        d = nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning):
        t = tnn.NLLLoss2d(ignore_index=1)
    x = torch.randn(2, 3, 4, 4).log_softmax(1)
    y = torch.randint(0, 3, (2, 4, 4))
    close(d(dg(x), dg(y)), t(x, y))
    assert isinstance(d, nn.NLLLoss)


def test_triplet_margin_with_distance_loss_matches_torch():
    a, p, n = (torch.randn(5, 4, requires_grad=True) for _ in range(3))
    da, dp, dn = (dg(v, True) for v in (a, p, n))
    cases = [({}, {}),
             ({'distance_function': lambda x, y: (x - y).abs().sum(-1), 'margin': 0.5,
               'swap': True, 'reduction': 'sum'},
              {'distance_function': lambda x, y: (x - y).abs().sum(-1), 'margin': 0.5,
               'swap': True, 'reduction': 'sum'})]
    for dkw, tkw in cases:
        close(F.triplet_margin_with_distance_loss(da, dp, dn, **dkw),
              TF.triplet_margin_with_distance_loss(a, p, n, **tkw))
        d_loss = nn.TripletMarginWithDistanceLoss(**dkw)
        t_loss = tnn.TripletMarginWithDistanceLoss(**tkw)
        out_d, out_t = d_loss(da, dp, dn), t_loss(a, p, n)
        close(out_d, out_t)
    assert repr(nn.TripletMarginWithDistanceLoss()) == repr(tnn.TripletMarginWithDistanceLoss())
    out_d.backward()
    out_t.backward()
    for x, y in ((da, a), (dp, p), (dn, n)):
        close(x.grad, y.grad)
    raises_like(lambda: nn.TripletMarginWithDistanceLoss(margin=0),
                lambda: tnn.TripletMarginWithDistanceLoss(margin=0))
    raises_like(lambda: F.triplet_margin_with_distance_loss(da, dp, dn, margin=-1),
                lambda: TF.triplet_margin_with_distance_loss(a, p, n, margin=-1))
    raises_like(lambda: F.triplet_margin_with_distance_loss(da, dp, dn.sum(0)),
                lambda: TF.triplet_margin_with_distance_loss(a, p, n.sum(0)))
    raises_like(lambda: F.triplet_margin_with_distance_loss(da, dp, dn, reduction='x'),
                lambda: TF.triplet_margin_with_distance_loss(a, p, n, reduction='x'))


# -- AdaptiveLogSoftmaxWithLoss ------------------------------------------------------------

def _asm_pair(**kwargs):
    t = tnn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7], **kwargs)
    d = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7], **kwargs)
    same_weights(d, t)
    return d, t


def test_adaptive_log_softmax_matches_torch():
    d, t = _asm_pair(div_value=2.0, head_bias=True)
    assert repr(d) == repr(t)
    assert list(d.state_dict()) == list(t.state_dict())
    x = torch.randn(6, 8, requires_grad=True)
    y = torch.tensor([0, 3, 4, 8, 9, 6])
    xd = dg(x, True)
    out_d, out_t = d(xd, dg(y)), t(x, y)
    assert type(out_d).__name__ == '_ASMoutput' and out_d._fields == ('output', 'loss')
    close(out_d.output, out_t.output)
    close(out_d.loss, out_t.loss)
    out_d.loss.backward()
    out_t.loss.backward()
    close(xd.grad, x.grad)
    for (name, p_d), (_, p_t) in zip(d.named_parameters(), t.named_parameters()):
        close(p_d.grad, p_t.grad)
    close(d.log_prob(dg(x)), t.log_prob(x))
    np.testing.assert_array_equal(d.predict(dg(x)).numpy(), t.predict(x).numpy())
    one = torch.randn(8)
    out1_d, out1_t = d(dg(one), dynagrad.tensor(8)), t(one, torch.tensor(8))
    close(out1_d.output, out1_t.output)
    assert tuple(out1_d.output.shape) == ()


def test_adaptive_log_softmax_errors_match_torch():
    d, t = _asm_pair()
    for x, y in ((torch.randn(5, 8), torch.tensor([0, 10, 1, 2, 3])),
                 (torch.randn(5, 8), torch.tensor([0, 1])),
                 (torch.randn(2, 3, 8), torch.tensor([0, 1])),
                 (torch.randn(2, 8), torch.tensor(1)),
                 (torch.randn(2, 8), torch.zeros(2, 2, dtype=torch.long))):
        raises_like(lambda: d(dg(x), dg(y)), lambda: t(x, y))
    for cutoffs in ([4, 4], [0, 4], [4, 10], [7, 4], []):
        raises_like(lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs),
                    lambda: tnn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs))


# -- SyncBatchNorm, DataParallel ------------------------------------------------------------

def test_sync_batch_norm_single_process_is_batch_norm():
    t = tnn.SyncBatchNorm(3)
    d = nn.SyncBatchNorm(3)
    assert repr(d) == repr(t)
    for shape, t_cls in (((4, 3), tnn.BatchNorm1d), ((2, 3, 5), tnn.BatchNorm1d),
                         ((2, 3, 2, 2), tnn.BatchNorm2d)):
        x = torch.randn(*shape)
        t_bn, d_bn = t_cls(3), nn.SyncBatchNorm(3)
        close(d_bn(dg(x)), t_bn(x))
        close(d_bn.running_var, t_bn.running_var)
    raises_like(lambda: d(dynagrad.randn(3)), lambda: t(torch.randn(3)))


def test_convert_sync_batchnorm_shares_parameters():
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3, affine=True),
                          nn.Sequential(nn.BatchNorm1d(4, affine=False)))
    model.eval()
    bn_weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    tmodel = tnn.Sequential(tnn.Conv2d(2, 3, 1), tnn.BatchNorm2d(3, affine=True),
                            tnn.Sequential(tnn.BatchNorm1d(4, affine=False))).eval()
    assert repr(converted) == repr(tnn.SyncBatchNorm.convert_sync_batchnorm(tmodel))
    assert type(converted[1]) is nn.SyncBatchNorm and converted[1].weight is bn_weight
    assert not converted[1].training
    assert list(converted.state_dict()) == list(tmodel.state_dict())


SYNC_WORKER = textwrap.dedent('''
    import numpy as np
    import dynagrad, dynagrad.distributed as dist, dynagrad.nn as nn
    dist.init_process_group('mpi')
    rank, size = dist.get_rank(), dist.get_world_size()
    full = np.random.default_rng(0).standard_normal((8, 3, 2)).astype(np.float64)
    weight = np.random.default_rng(1).standard_normal((8, 3, 2))
    shard = slice(rank * 4, rank * 4 + 4)
    bn = nn.SyncBatchNorm(3).double()
    x = dynagrad.tensor(full[shard], requires_grad=True)
    y = bn(x)
    (y * dynagrad.tensor(weight[shard])).sum().backward()
    ref = nn.BatchNorm1d(3).double()
    xr = dynagrad.tensor(full, requires_grad=True)
    yr = ref(xr)
    (yr * dynagrad.tensor(weight)).sum().backward()
    # the weight's gradient is each rank's own part (DDP sums them), as in PyTorch
    weight_grad = bn.weight.grad.clone()
    dist.all_reduce(weight_grad)
    checks = [np.allclose(y.detach().numpy(), yr.detach().numpy()[shard]),
              np.allclose(x.grad.numpy(), xr.grad.numpy()[shard]),
              np.allclose(bn.running_mean.numpy(), ref.running_mean.numpy()),
              np.allclose(bn.running_var.numpy(), ref.running_var.numpy()),
              np.allclose(weight_grad.numpy(), ref.weight.grad.numpy())]
    print(f'rank {rank} SYNC_OK {all(checks)} {checks}', flush=True)
''')


def test_sync_batch_norm_reduces_over_ranks(tmp_path):
    pytest.importorskip('mpi4py')
    from dynagrad.distributed.run import find_mpirun
    if find_mpirun() is None:
        pytest.skip('mpirun is missing: the two-rank SyncBatchNorm check needs it')
    script = tmp_path / 'sync_bn.py'
    script.write_text(SYNC_WORKER)
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, '-m', 'dynagrad.distributed.run', '-n', '2',
                           str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'rank 0 SYNC_OK True' in proc.stdout and 'rank 1 SYNC_OK True' in proc.stdout, \
        proc.stdout + proc.stderr


def test_data_parallel_runs_the_module():
    t = tnn.DataParallel(tnn.Linear(3, 2))
    d = nn.DataParallel(nn.Linear(3, 2))
    assert repr(d) == repr(t)
    assert list(d.state_dict()) == list(t.state_dict()) == ['module.weight', 'module.bias']
    same_weights(d, t)
    assert d.device_ids == t.device_ids == []
    x = torch.randn(4, 3)
    close(d(dg(x)), t(x))
    assert isinstance(d.module, nn.Linear)
    close(nn.parallel.data_parallel(d.module, dg(x)), t(x))


# -- linear_cross_entropy --------------------------------------------------------------------

@pytest.mark.parametrize('kwargs', [{}, {'reduction': 'sum', 'label_smoothing': 0.1},
                                    {'ignore_index': 2, 'reduction': 'none'}])
def test_linear_cross_entropy_matches_torch(kwargs):
    x = torch.randn(5, 4, requires_grad=True)
    w = torch.randn(6, 4, requires_grad=True)
    b = torch.randn(6, requires_grad=True)
    y = torch.tensor([0, 1, 2, 5, 2])
    xd, wd, bd = dg(x, True), dg(w, True), dg(b, True)
    out_t = TF.linear_cross_entropy(x, w, y, linear_bias=b, **kwargs)
    out_d = F.linear_cross_entropy(xd, wd, dg(y), linear_bias=bd, **kwargs)
    close(out_d, out_t)
    out_t.sum().backward()
    out_d.sum().backward()
    for a, c in ((xd, x), (wd, w), (bd, b)):
        close(a.grad, c.grad)
    options = nn.LinearCrossEntropyOptions()
    close(F.linear_cross_entropy(xd, wd, dg(y), options=options, **kwargs),
          TF.linear_cross_entropy(x, w, y, options=tnn.LinearCrossEntropyOptions(), **kwargs))


def test_linear_cross_entropy_k_dimensional_and_module():
    x = torch.randn(3, 4)
    w = torch.randn(6, 2, 4)
    b = torch.randn(6, 2)
    y = torch.randint(0, 6, (3, 2))
    close(F.linear_cross_entropy(dg(x), dg(w), dg(y), linear_bias=dg(b)),
          TF.linear_cross_entropy(x, w, y, linear_bias=b))
    for kwargs in ({}, {'out_features': (2,), 'bias': True, 'reduction': 'sum',
                        'weight': torch.rand(6), 'label_smoothing': 0.2}):
        dkw = {k: dg(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        t = tnn.LinearCrossEntropyLoss(4, 6, **kwargs)
        d = nn.LinearCrossEntropyLoss(4, 6, **dkw)
        assert repr(d) == repr(t)
        assert list(d.state_dict()) == list(t.state_dict())
        same_weights(d, t)
        target = y if kwargs else y[:, 0]
        close(d(dg(x), dg(target)), t(x, target))
    assert repr(nn.LinearCrossEntropyOptions()) == repr(tnn.LinearCrossEntropyOptions())


def test_linear_cross_entropy_errors_match_torch():
    x, y = torch.randn(3, 4), torch.tensor([0, 1, 2])
    raises_like(lambda: F.linear_cross_entropy(dg(x), dynagrad.randn(6, 5), dg(y)),
                lambda: TF.linear_cross_entropy(x, torch.randn(6, 5), y))
    raises_like(lambda: F.linear_cross_entropy(dg(x), dynagrad.randn(6, 2, 4), dg(y),
                                               linear_bias=dynagrad.randn(6)),
                lambda: TF.linear_cross_entropy(x, torch.randn(6, 2, 4), y,
                                                linear_bias=torch.randn(6)))
    raises_like(lambda: nn.LinearCrossEntropyLoss(4, 6, weight=dynagrad.ones(5)),
                lambda: tnn.LinearCrossEntropyLoss(4, 6, weight=torch.ones(5)))
    for kw in ({'acc_policy': 'x'}, {'chunking_method': 'x'}, {'batch_chunk_size': 0}):
        raises_like(lambda: nn.LinearCrossEntropyOptions(**kw),
                    lambda: tnn.LinearCrossEntropyOptions(**kw))
