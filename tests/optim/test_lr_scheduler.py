"""optim.lr_scheduler against torch.optim.lr_scheduler: the lr (and cycled momentum)
sequences over enough steps to cover every phase, state-dict round trips, warnings, and
torch's errors for invalid arguments."""
import math
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import nn, optim

LRS = (0.1, 0.05)


def _optimizer(lib, name='SGD', **kwargs):
    p1 = lib.nn.Parameter(lib.ones(2))
    p2 = lib.nn.Parameter(lib.ones(3))
    if name == 'SGD':
        kwargs.setdefault('momentum', 0.9)
    return getattr(lib.optim, name)([{'params': [p1], 'lr': LRS[0]},
                                     {'params': [p2], 'lr': LRS[1]}], **kwargs)


def _momenta(opt):
    return [g['betas'][0] if 'betas' in g else g.get('momentum') for g in opt.param_groups]


def _sequence(lib, make, steps, opt_name='SGD', metrics=None):
    opt = _optimizer(lib, opt_name)
    sched = make(lib.optim.lr_scheduler, opt)
    out = [(list(sched.get_last_lr()), _momenta(opt))]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out.append((list(sched.get_last_lr()), _momenta(opt)))
        assert [g['lr'] for g in opt.param_groups] == sched.get_last_lr()
    return out, sched


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for k, ((lr, mom), (tlr, tmom)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(lr, tlr, rtol=1e-12, atol=1e-15, err_msg=f'step {k}')
        if tmom[0] is not None:
            np.testing.assert_allclose(mom, tmom, rtol=1e-12, err_msg=f'momentum, step {k}')


def _plateau_metrics():
    # improves, stalls (patience runs out twice), improves again, then gets worse
    return [1.0, 0.9, 0.8] + [0.8] * 6 + [0.5, 0.4] + [0.41] * 8 + [0.3] + [0.9] * 12


CASES = {
    'StepLR': (lambda s, o: s.StepLR(o, step_size=3, gamma=0.5), 20),
    'MultiStepLR': (lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3), 15),
    'ExponentialLR': (lambda s, o: s.ExponentialLR(o, gamma=0.9), 20),
    'CosineAnnealingLR': (lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.001), 45),
    'CosineAnnealingWarmRestarts': (
        lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01), 40),
    'CosineAnnealingWarmRestarts-T_mult1': (
        lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4), 20),
    'LinearLR-warmup': (lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=8), 15),
    'LinearLR-decay': (lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                               total_iters=10), 15),
    'ConstantLR': (lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4), 10),
    'LambdaLR': (lambda s, o: s.LambdaLR(o, lambda e: 0.95 ** e), 15),
    'LambdaLR-list': (lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e % 3]), 10),
    'MultiplicativeLR': (lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.0),
                         15),
    'PolynomialLR': (lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0), 10),
    'OneCycleLR-cos': (lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30), 29),
    'OneCycleLR-linear': (lambda s, o: s.OneCycleLR(o, max_lr=1.0, epochs=5, steps_per_epoch=6,
                                                    anneal_strategy='linear', pct_start=0.4),
                          29),
    'OneCycleLR-three_phase': (
        lambda s, o: s.OneCycleLR(o, max_lr=0.8, total_steps=40, three_phase=True,
                                  div_factor=10.0, final_div_factor=100.0), 39),
    'OneCycleLR-no-momentum': (
        lambda s, o: s.OneCycleLR(o, max_lr=0.8, total_steps=20, cycle_momentum=False), 19),
    'CyclicLR-triangular': (
        lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4), 30),
    'CyclicLR-triangular2': (
        lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                step_size_down=5, mode='triangular2'), 40),
    'CyclicLR-exp_range': (
        lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode='exp_range',
                                gamma=0.9, base_momentum=0.7, max_momentum=0.95), 30),
    'CyclicLR-scale_fn': (
        lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                scale_fn=lambda x: 1 / (1 + x), scale_mode='iterations',
                                cycle_momentum=False), 15),
    'ReduceLROnPlateau': (lambda s, o: s.ReduceLROnPlateau(o, factor=0.5, patience=2), 32),
    'ReduceLROnPlateau-max-abs-cooldown': (
        lambda s, o: s.ReduceLROnPlateau(o, mode='max', factor=0.3, patience=1, cooldown=2,
                                         threshold=0.05, threshold_mode='abs',
                                         min_lr=[0.001, 0.004]), 32),
    'ReduceLROnPlateau-min_lr': (
        lambda s, o: s.ReduceLROnPlateau(o, factor=0.1, patience=0, min_lr=0.002), 32),
    'SequentialLR': (
        lambda s, o: s.SequentialLR(o, [s.LinearLR(o, start_factor=0.1, total_iters=4),
                                        s.ExponentialLR(o, gamma=0.8),
                                        s.StepLR(o, step_size=2)], milestones=[5, 10]), 18),
    'SequentialLR-cosine': (
        lambda s, o: s.SequentialLR(o, [s.ConstantLR(o, factor=0.5, total_iters=3),
                                        s.CosineAnnealingLR(o, T_max=8)], milestones=[3]), 15),
    'ChainedScheduler': (
        lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.2, total_iters=4),
                                         s.ExponentialLR(o, gamma=0.9)]), 12),
    'ChainedScheduler-warmup-multistep': (
        lambda s, o: s.ChainedScheduler([s.LinearLR(o, start_factor=0.5, total_iters=3),
                                         s.MultiStepLR(o, milestones=[4, 7])], optimizer=o), 10),
}

ADAM_CASES = ['OneCycleLR-cos', 'OneCycleLR-three_phase', 'CyclicLR-triangular2',
              'CyclicLR-exp_range']


def _metrics(name):
    return _plateau_metrics() if name.startswith('ReduceLROnPlateau') else None


@pytest.mark.parametrize('name', list(CASES))
def test_lr_sequence_matches_torch(name):
    make, steps = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter('error')          # the right call order warns about nothing
        ours, _ = _sequence(dynagrad, make, steps, metrics=_metrics(name))
    theirs, _ = _sequence(torch, make, steps, metrics=_metrics(name))
    _assert_same(ours, theirs)
    assert len({tuple(lr) for lr, _ in ours}) >= 2     # it moved


@pytest.mark.parametrize('name', ADAM_CASES)
def test_momentum_cycles_adam_beta1_like_torch(name):
    make, steps = CASES[name]
    ours, _ = _sequence(dynagrad, make, steps, opt_name='Adam')
    theirs, _ = _sequence(torch, make, steps, opt_name='Adam')
    _assert_same(ours, theirs)
    assert len({m[0] for _, m in ours}) > 2


def test_plateau_reduces_lr_at_torchs_epochs():
    make, steps = CASES['ReduceLROnPlateau']
    ours, sched = _sequence(dynagrad, make, steps, metrics=_plateau_metrics())
    reductions = [k for k in range(1, len(ours)) if ours[k][0][0] < ours[k - 1][0][0]]
    assert len(reductions) >= 3 and sched.num_bad_epochs <= sched.patience


def test_warm_restarts_restart():
    make, steps = CASES['CosineAnnealingWarmRestarts']
    ours, _ = _sequence(dynagrad, make, steps)
    lrs = [lr[0] for lr, _ in ours]
    assert [k for k in range(1, len(lrs)) if lrs[k] > lrs[k - 1]] == [5, 15, 35]
    assert lrs[5] == LRS[0]


@pytest.mark.parametrize('name', ['StepLR', 'CosineAnnealingLR', 'OneCycleLR-cos',
                                  'CyclicLR-triangular2', 'ReduceLROnPlateau',
                                  'SequentialLR', 'ChainedScheduler', 'LambdaLR',
                                  'CosineAnnealingWarmRestarts'])
def test_state_dict_round_trip(name):
    make, steps = CASES[name]
    metrics = _metrics(name)
    full, _ = _sequence(dynagrad, make, steps, metrics=metrics)
    cut = steps // 2
    opt = _optimizer(dynagrad)
    sched = make(dynagrad.optim.lr_scheduler, opt)
    out = [(list(sched.get_last_lr()), _momenta(opt))]
    for i in range(cut):
        opt.step()
        sched.step(*([metrics[i]] if metrics else []))
        out.append((list(sched.get_last_lr()), _momenta(opt)))
    sched_sd, opt_sd = sched.state_dict(), opt.state_dict()
    assert 'optimizer' not in sched_sd
    # rebuild, then load the scheduler and afterwards the optimizer (as torch's docs say)
    opt2 = _optimizer(dynagrad)
    sched2 = make(dynagrad.optim.lr_scheduler, opt2)
    sched2.load_state_dict(sched_sd)
    opt2.load_state_dict(opt_sd)
    assert getattr(sched2, 'last_epoch', None) == getattr(sched, 'last_epoch', None)
    for i in range(cut, steps):
        opt2.step()
        sched2.step(*([metrics[i]] if metrics else []))
        out.append((list(sched2.get_last_lr()), _momenta(opt2)))
    _assert_same(out, full)


def test_state_dict_keys_match_torch():
    for name in ['StepLR', 'CosineAnnealingLR', 'ReduceLROnPlateau', 'OneCycleLR-cos',
                 'CosineAnnealingWarmRestarts', 'SequentialLR', 'LambdaLR']:
        make, _ = CASES[name]
        ours = make(dynagrad.optim.lr_scheduler, _optimizer(dynagrad)).state_dict()
        theirs = make(torch.optim.lr_scheduler, _optimizer(torch)).state_dict()
        assert set(ours) == set(theirs), name
        for k in ('last_epoch', 'base_lrs', '_last_lr', '_step_count'):
            if k in theirs:
                assert ours[k] == theirs[k], (name, k)


def test_closed_form_with_epoch_argument_warns_like_torch():
    for lib in (dynagrad, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match='The epoch parameter in `scheduler.step\\(\\)`'):
            sched.step(5)
        assert sched.get_last_lr() == pytest.approx([LRS[0] / 4, LRS[1] / 4])


def test_warning_when_scheduler_steps_before_optimizer():
    for lib in (dynagrad, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
        with pytest.warns(UserWarning, match=r'Detected call of `lr_scheduler.step\(\)` '
                                             r'before `optimizer.step\(\)`'):
            sched.step()


def test_get_lr_outside_step_warns():
    for lib in (dynagrad, torch):
        sched = lib.optim.lr_scheduler.ExponentialLR(_optimizer(lib), gamma=0.5)
        with pytest.warns(UserWarning, match='please use `get_last_lr\\(\\)`'):
            sched.get_lr()


def test_initial_lr_and_base_lrs():
    opt = _optimizer(dynagrad)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2)
    assert [g['initial_lr'] for g in opt.param_groups] == list(LRS)
    assert sched.base_lrs == list(LRS) and sched.last_epoch == 0
    sched2 = optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)   # resuming
    assert sched2.last_epoch == 4


def test_one_cycle_past_total_steps_raises():
    for lib in (dynagrad, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        opt.step()
        with pytest.raises(ValueError, match='Tried to step 4 times'):
            sched.step()


INVALID = [
    lambda s, o: s.ConstantLR(o, factor=2.0),
    lambda s, o: s.LinearLR(o, start_factor=0),
    lambda s, o: s.LinearLR(o, end_factor=1.5),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, eta_min='0'),
    lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    lambda s, o: s.ReduceLROnPlateau(o, mode='avg'),
    lambda s, o: s.ReduceLROnPlateau(o, threshold_mode='relative'),
    lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=0),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1.5),
    lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy='cosine'),
    lambda s, o: s.OneCycleLR(o, max_lr=[1.0], total_steps=10),
    lambda s, o: s.CyclicLR(o, base_lr=0.1, max_lr=1.0, mode='sawtooth'),
    lambda s, o: s.CyclicLR(o, base_lr=[0.1, 0.2, 0.3], max_lr=1.0),
    lambda s, o: s.LambdaLR(o, [lambda e: 1.0]),
    lambda s, o: s.MultiplicativeLR(o, 0.5),
    lambda s, o: s.StepLR(o, step_size=2, last_epoch=3),
    lambda s, o: s.StepLR(object(), step_size=2),
    lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]),
    lambda s, o: s.SequentialLR(o, [], milestones=[]),
    lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]),
    lambda s, o: s.ChainedScheduler([]),
]


@pytest.mark.parametrize('make', INVALID, ids=range(len(INVALID)))
def test_invalid_arguments_raise_like_torch(make):
    with pytest.raises(Exception) as theirs:
        make(torch.optim.lr_scheduler, _optimizer(torch))
    with pytest.raises(type(theirs.value)) as ours:
        make(dynagrad.optim.lr_scheduler, _optimizer(dynagrad))
    assert str(ours.value) == str(theirs.value)


def test_cycle_momentum_needs_momentum():
    for lib in (dynagrad, torch):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.Adagrad([p])
        with pytest.raises(ValueError, match='optimizer must support momentum or beta1'):
            lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=1.0)
        with pytest.raises(ValueError, match='optimizer must support momentum or beta1'):
            lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)
    # nothing was changed before the error
    p = nn.Parameter(dynagrad.ones(1))
    opt = optim.Adagrad([p], lr=0.3)
    with pytest.raises(ValueError):
        optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=1.0)
    assert opt.param_groups[0]['lr'] == 0.3 and 'max_momentum' not in opt.param_groups[0]


def test_scheduler_drives_training_like_torch():
    """An optimizer and its scheduler together, against torch: parameters after 20 epochs."""
    results = []
    for lib in (dynagrad, torch):
        w = lib.nn.Parameter(lib.tensor([1.0, -1.0], dtype=lib.float64))
        opt = lib.optim.SGD([w], lr=0.2, momentum=0.5)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=20)
        for _ in range(20):
            opt.zero_grad()
            ((w - 3) ** 2).sum().backward()
            opt.step()
            sched.step()
        results.append(w.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    assert math.isfinite(results[0][0])
