"""dynagrad.optim.swa_utils against torch.optim.swa_utils: AveragedModel (running mean,
EMA through avg_fn and multi_avg_fn, use_buffers), SWALR's learning rates, warnings and
errors, update_bn's recomputed batch-norm statistics."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad


def _pair(seed=0):
    """The same small model (Linear, BatchNorm1d, ReLU, Linear) in both libraries."""
    models = []
    for lib in (dynagrad, torch):
        nn = lib.nn
        models.append(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(),
                                    nn.Linear(4, 2)))
    ours, theirs = models
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for (name, tp), p in zip(theirs.named_parameters(), ours.parameters()):
            value = rng.standard_normal(tuple(tp.shape))
            tp.copy_(torch.tensor(value, dtype=tp.dtype))
            p.detach().copy_(dynagrad.tensor(value, dtype=p.dtype))
    return ours, theirs


def _perturb(models, rng):
    """Move both models' parameters the same way and run a training batch (BN buffers)."""
    x = rng.standard_normal((8, 3))
    for model, lib in zip(models, (dynagrad, torch)):
        model.train()
        model(lib.tensor(x, dtype=lib.float32))
    deltas = [rng.standard_normal(tuple(p.shape)) * 0.1 for p in models[1].parameters()]
    for model, lib in zip(models, (dynagrad, torch)):
        with lib.no_grad():
            for p, d in zip(model.parameters(), deltas):
                p.add_(lib.tensor(d, dtype=lib.float32))


def _compare_state(ours, theirs, rtol=1e-6):
    osd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(osd) == list(tsd)
    for k in tsd:
        np.testing.assert_allclose(osd[k].numpy(), tsd[k].numpy(), rtol=rtol, atol=1e-7,
                                   err_msg=k)
        assert osd[k].dtype.name == str(tsd[k].dtype).split('.')[-1], k


AVERAGERS = {
    'swa': lambda su: {},
    'ema_avg_fn': lambda su: dict(avg_fn=su.get_ema_avg_fn(0.9)),
    'ema_multi': lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
    'swa_avg_fn': lambda su: dict(avg_fn=su.get_swa_avg_fn()),
    'swa_multi': lambda su: dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
}


@pytest.mark.parametrize('use_buffers', [False, True])
@pytest.mark.parametrize('averager', list(AVERAGERS))
def test_averaged_model_matches_torch(averager, use_buffers):
    models = _pair()
    averaged = [lib.optim.swa_utils.AveragedModel(
        m, use_buffers=use_buffers, **AVERAGERS[averager](lib.optim.swa_utils))
        for m, lib in zip(models, (dynagrad, torch))]
    if averager == 'swa_multi' and use_buffers:
        # torch's multi-tensor running mean fails on the integer num_batches_tracked
        # buffer (an integer addcdiv); dynagrad's averages it as the default path does
        # (the mean, truncated), so torch's default path is the reference here
        _perturb(models, np.random.default_rng(0))
        averaged[1].update_parameters(models[1])        # the first update copies
        with pytest.raises(RuntimeError, match='Integer division with addcdiv'):
            averaged[1].update_parameters(models[1])
        models = _pair()
        averaged[1] = torch.optim.swa_utils.AveragedModel(models[1], use_buffers=True)
        averaged[0] = dynagrad.optim.swa_utils.AveragedModel(
            models[0], use_buffers=True,
            multi_avg_fn=dynagrad.optim.swa_utils.get_swa_multi_avg_fn())
    rng = np.random.default_rng(1)
    for _ in range(4):
        _perturb(models, rng)
        for avg, m in zip(averaged, models):
            avg.update_parameters(m)
        _compare_state(*averaged)
    assert averaged[0].n_averaged.item() == 4
    assert averaged[0].module is not models[0]           # a deep copy
    # forward runs the averaged copy
    x = np.random.default_rng(2).standard_normal((5, 3))
    for avg in averaged:
        avg.eval()
    out = [avg(lib.tensor(x, dtype=lib.float32)).detach().numpy()
           for avg, lib in zip(averaged, (dynagrad, torch))]
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5, atol=1e-6)


def test_averaged_model_running_mean_by_hand():
    m = dynagrad.nn.Linear(2, 1)
    avg = dynagrad.optim.swa_utils.AveragedModel(m)
    seen = []
    for k in range(3):
        with dynagrad.no_grad():
            m.weight.fill_(float(k * k))
        seen.append(k * k)
        avg.update_parameters(m)
    assert avg.module.weight.tolist() == [[pytest.approx(np.mean(seen), rel=1e-6)] * 2]
    assert avg.n_averaged.dtype == dynagrad.int64


def test_averaged_model_refuses_both_avg_fns_like_torch():
    su, tsu = dynagrad.optim.swa_utils, torch.optim.swa_utils
    with pytest.raises(Exception) as theirs:
        tsu.AveragedModel(torch.nn.Linear(1, 1), avg_fn=tsu.get_swa_avg_fn(),
                          multi_avg_fn=tsu.get_swa_multi_avg_fn())
    with pytest.raises(type(theirs.value)) as ours:
        su.AveragedModel(dynagrad.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                         multi_avg_fn=su.get_swa_multi_avg_fn())
    assert str(ours.value) == str(theirs.value)


def _two_groups(lib):
    ps = [lib.nn.Parameter(lib.ones(1)) for _ in range(2)]
    return lib.optim.SGD([{'params': [ps[0]]}, {'params': [ps[1]], 'lr': 0.5}], lr=1.0)


@pytest.mark.parametrize('swa_lr', [0.1, [0.1, 0.2], (0.3, 0.05)], ids=str)
@pytest.mark.parametrize('strategy', ['cos', 'linear'])
@pytest.mark.parametrize('epochs', [0, 1, 3])
def test_swalr_learning_rates_match_torch(swa_lr, strategy, epochs):
    runs = []
    for lib in (dynagrad, torch):
        opt = _two_groups(lib)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr, anneal_epochs=epochs,
                                          anneal_strategy=strategy)
        lrs = [sched.get_last_lr()]
        for _ in range(6):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        runs.append((lrs, [g['swa_lr'] for g in opt.param_groups], sched.state_dict()))
    (ours, our_swa, our_sd), (theirs, their_swa, their_sd) = runs
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert our_swa == their_swa
    assert set(our_sd) == set(their_sd)


@pytest.mark.parametrize('kwargs', [
    dict(swa_lr=0.1, anneal_strategy='exp'), dict(swa_lr=0.1, anneal_epochs=-1),
    dict(swa_lr=0.1, anneal_epochs=2.5), dict(swa_lr=[0.1])], ids=str)
def test_swalr_errors_match_torch(kwargs):
    with pytest.raises(Exception) as theirs:
        torch.optim.swa_utils.SWALR(_two_groups(torch), **kwargs)
    opt = _two_groups(dynagrad)
    with pytest.raises(type(theirs.value)) as ours:
        dynagrad.optim.swa_utils.SWALR(opt, **kwargs)
    assert str(ours.value) == str(theirs.value)
    assert all('swa_lr' not in g for g in opt.param_groups)     # nothing changed


def test_swalr_warnings_match_torch():
    for lib in (dynagrad, torch):
        sched = lib.optim.swa_utils.SWALR(_two_groups(lib), 0.1)
        with pytest.warns(UserWarning, match='please use `get_last_lr'):
            sched.get_lr()
        with pytest.warns(UserWarning, match=r'before `optimizer.step\(\)`'):
            sched.step()


def test_update_bn_matches_torch_and_restores_settings():
    models = _pair()
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((6, 3)) * 2 + 1 for _ in range(3)]
    for model, lib in zip(models, (dynagrad, torch)):
        model.eval()
        bn = model[1]
        bn.momentum = 0.3
        loader = [lib.tensor(batches[0], dtype=lib.float32),
                  (lib.tensor(batches[1], dtype=lib.float32), 'label'),
                  [lib.tensor(batches[2], dtype=lib.float32), 0]]
        lib.optim.swa_utils.update_bn(loader, model)
        assert bn.momentum == 0.3 and not model.training
    _compare_state(*models, rtol=1e-5)
    # a cumulative average over the three batches, not a momentum average
    assert models[0][1].num_batches_tracked.item() == 3


def test_update_bn_without_batch_norm_does_nothing():
    model = dynagrad.nn.Linear(2, 2)
    calls = []
    dynagrad.optim.swa_utils.update_bn(calls, model)
    model2 = dynagrad.nn.Sequential(dynagrad.nn.BatchNorm1d(2))

    def loader():
        calls.append(1)
        yield dynagrad.ones(2, 2)
    dynagrad.optim.swa_utils.update_bn(loader(), model2)
    assert calls == [1]


def test_submodule_import():
    import importlib
    import dynagrad as dg
    mod = importlib.import_module('dynagrad.optim.swa_utils')
    assert dg.optim.swa_utils is mod
    assert sorted(mod.__all__) == sorted(torch.optim.swa_utils.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        from dynagrad.optim.swa_utils import SWALR, AveragedModel, update_bn  # noqa: F401
