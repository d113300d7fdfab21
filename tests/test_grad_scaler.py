"""dynagrad.amp.GradScaler against torch.amp.GradScaler on the CPU: the same model, data and
scale schedule step by step (growth, backoff after an injected inf, unscale_ then clipping),
and the API's errors, warnings and state."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg

LIBS = (dg, torch)


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        result = fn()
    return result, [(x.category.__name__, str(x.message).replace('torch.', 'dynagrad.'))
                    for x in w]


rng = np.random.default_rng(0)
W = rng.standard_normal((3, 4)).astype(np.float32)
X = rng.standard_normal((8, 8, 4)).astype(np.float32)
Y = rng.standard_normal((8, 8, 3)).astype(np.float32)


def _train(lib, optimizer, inf_steps=(3,), nan_steps=(6,), clip_steps=(1,), autocast=False,
           **scaler_kw):
    lin = lib.nn.Linear(4, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W))
        lin.bias.zero_()
    opt = optimizer(lib, lin.parameters())
    scaler = lib.amp.GradScaler('cpu', **scaler_kw)
    log = []
    for step in range(len(X)):
        opt.zero_grad()
        x = lib.tensor(X[step])
        if step in inf_steps:
            x[0, 0] = float('inf')
        if step in nan_steps:
            x[1, 1] = float('nan')
        with lib.autocast('cpu', enabled=autocast):
            loss = ((lin(x) - lib.tensor(Y[step])) ** 2).mean()
        scaler.scale(loss).backward()
        if step in clip_steps:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
        result = scaler.step(opt)
        scaler.update()
        log.append(dict(scale=scaler.get_scale(), tracker=scaler._get_growth_tracker(),
                        weight=lin.weight.detach().float().numpy().copy(),
                        bias=lin.bias.detach().float().numpy().copy(),
                        skipped=result is None and step in set(inf_steps) | set(nan_steps),
                        state=scaler.state_dict()))
    return log


OPTIMIZERS = {
    'sgd_momentum': lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9),
    'adam': lambda lib, p: lib.optim.Adam(p, lr=0.01),
}


@pytest.mark.parametrize('autocast', [False, True], ids=['float32', 'autocast'])
@pytest.mark.parametrize('opt', sorted(OPTIMIZERS))
def test_training_step_by_step_as_torch(opt, autocast):
    d = _train(dg, OPTIMIZERS[opt], autocast=autocast, init_scale=2.0 ** 10, growth_interval=2)
    t = _train(torch, OPTIMIZERS[opt], autocast=autocast, init_scale=2.0 ** 10,
               growth_interval=2)
    for step, (a, b) in enumerate(zip(d, t)):
        assert a['scale'] == b['scale'], step
        assert a['tracker'] == b['tracker'], step
        assert a['state'] == b['state'], step
        assert a['skipped'] == b['skipped'], step
        tol = dict(rtol=1e-2, atol=1e-2) if autocast else dict(rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a['weight'], b['weight'], err_msg=f'step {step}', **tol)
        np.testing.assert_allclose(a['bias'], b['bias'], err_msg=f'step {step}', **tol)
    scales = [s['scale'] for s in t]
    assert scales == [1024.0, 2048.0, 2048.0, 1024.0, 1024.0, 2048.0, 1024.0, 1024.0]


def test_an_overflowing_step_leaves_the_parameters_alone():
    lin = dg.nn.Linear(2, 1)
    opt = dg.optim.SGD(lin.parameters(), lr=1.0)
    scaler = dg.amp.GradScaler('cpu')
    before = lin.weight.detach().clone()
    scaler.scale(lin(dg.tensor([[float('inf'), 1.0]])).sum()).backward()
    assert scaler.step(opt) is None
    scaler.update()
    np.testing.assert_array_equal(lin.weight.detach().numpy(), before.numpy())
    assert scaler.get_scale() == 2.0 ** 15


def test_unscale_divides_the_gradients():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler('cpu', init_scale=8.0)
        scaler.scale((w * w).sum()).backward()
        assert w.grad.tolist() == [16.0, 32.0]
        scaler.unscale_(opt)
        assert w.grad.tolist() == [2.0, 4.0]


def test_bfloat16_gradients_are_unscaled_and_float16_ones_refused_as_torch():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], dtype=lib.bfloat16, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler('cpu', init_scale=4.0)
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        assert str(w.grad.dtype).endswith('bfloat16')
        assert w.grad.float().tolist() == [2.0, 4.0]
        h = lib.tensor([1.0], dtype=lib.float16, requires_grad=True)
        opt = lib.optim.SGD([h], lr=0.1)
        scaler.scale((h * h).sum()).backward()
        with pytest.raises(ValueError, match='Attempting to unscale FP16 gradients.'):
            scaler.unscale_(opt)


# -- scale() ---------------------------------------------------------------------------------

def test_scale_of_tensors_lists_tuples_and_iterables_as_torch():
    for lib in LIBS:
        scaler = lib.amp.GradScaler('cpu', init_scale=4.0)
        a, b = lib.tensor(1.5), lib.tensor([2.0, 3.0])
        assert scaler.scale(a).item() == 6.0
        out = scaler.scale([a, (b, a)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[1][0].tolist() == [8.0, 12.0]
        gen = scaler.scale(x for x in (a, b))
        assert not isinstance(gen, (list, tuple))
        assert [t.tolist() for t in gen] == [6.0, [8.0, 12.0]]
        with pytest.raises(ValueError, match='outputs must be a Tensor or an iterable of '
                                             'Tensors'):
            scaler.scale([a, 3])
        assert str(scaler.scale(lib.tensor(1.0, dtype=lib.bfloat16)).dtype).endswith('float32')
        assert str(scaler.scale(lib.ones(2, dtype=lib.bfloat16)).dtype).endswith('bfloat16')


# -- misuse: PyTorch's errors -------------------------------------------------------------------

def _setup(lib):
    w = lib.tensor([1.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    return w, opt, lib.amp.GradScaler('cpu')


@pytest.mark.parametrize('misuse,exc,message', [
    (lambda lib, w, o, s: (s.unscale_(o), s.unscale_(o)), RuntimeError,
     'unscale_() has already been called on this optimizer since the last update().'),
    (lambda lib, w, o, s: (s.step(o), s.unscale_(o)), RuntimeError,
     'unscale_() is being called after step().'),
    (lambda lib, w, o, s: (s.step(o), s.step(o)), RuntimeError,
     'step() has already been called since the last update().'),
    (lambda lib, w, o, s: s.step(o, closure=lambda: None), RuntimeError,
     'Closure use is not currently supported if GradScaler is enabled.'),
    (lambda lib, w, o, s: s.update(), AssertionError,
     'No inf checks were recorded prior to update.'),
    (lambda lib, w, o, s: s.update(lib.tensor([2.0], requires_grad=True)), AssertionError,
     'new_scale should be a float or a 1-element'),
    (lambda lib, w, o, s: s.update(lib.tensor([2.0, 3.0])), AssertionError,
     'new_scale should be a float or a 1-element'),
], ids=['unscale_twice', 'unscale_after_step', 'step_twice', 'closure', 'update_no_step',
        'new_scale_requires_grad', 'new_scale_two_elements'])
def test_misuse_raises_as_torch(misuse, exc, message):
    for lib in LIBS:
        w, opt, scaler = _setup(lib)
        scaler.scale((w * 2).sum()).backward()
        with pytest.raises(exc) as info:
            misuse(lib, w, opt, scaler)
        assert message in str(info.value).replace('torch.', 'dynagrad.').replace(
            'dynagrad.', '')


def test_calls_before_scale_raise_as_torch():
    for lib in LIBS:
        w, opt, scaler = _setup(lib)
        for call, name in ((lambda: scaler.step(opt), 'step'),
                           (lambda: scaler.unscale_(opt), 'unscale_'),
                           (lambda: scaler.update(), 'update')):
            with pytest.raises(AssertionError, match=f'Attempted {name} but _scale is None.'):
                call()


def test_no_gradients_means_no_inf_checks_as_torch():
    for lib in LIBS:
        w, opt, scaler = _setup(lib)
        scaler.scale(lib.tensor(1.0))
        with pytest.raises(AssertionError, match='No inf checks were recorded for this '
                                                 'optimizer.'):
            scaler.step(opt)


def test_bad_factors_as_torch():
    for lib in LIBS:
        with pytest.raises(AssertionError, match='The growth factor must be > 1.0.'):
            lib.amp.GradScaler('cpu', growth_factor=1.0)
        with pytest.raises(AssertionError, match='The backoff factor must be < 1.0.'):
            lib.amp.GradScaler('cpu', backoff_factor=1.0)


# -- without CUDA, and the deprecated spellings ------------------------------------------------

@pytest.mark.parametrize('make', [
    lambda lib: lib.amp.GradScaler(), lambda lib: lib.amp.GradScaler('cuda'),
    lambda lib: lib.cuda.amp.GradScaler(), lambda lib: lib.cpu.amp.GradScaler(),
    lambda lib: lib.amp.GradScaler('cpu'), lambda lib: lib.cuda.amp.GradScaler(enabled=False),
], ids=['default', 'cuda', 'cuda_amp', 'cpu_amp', 'cpu', 'cuda_amp_disabled'])
def test_construction_warnings_and_enabled_as_torch(make):
    (d, dw), (t, tw) = caught(lambda: make(dg)), caught(lambda: make(torch))
    assert dw == tw
    assert d.is_enabled() == t.is_enabled()
    assert d.state_dict() == t.state_dict()


def test_a_disabled_scaler_passes_everything_through_as_torch():
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            scaler = lib.cuda.amp.GradScaler()
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        loss = (w * 3).sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        assert scaler.step(opt) is None       # SGD.step's own return
        scaler.update()
        assert w.tolist() == [-0.5]
        assert scaler.get_scale() == 1.0 and scaler._get_growth_tracker() == 0
        assert scaler.state_dict() == {}
        scaler.load_state_dict({})            # ignored when disabled


# -- state --------------------------------------------------------------------------------------

def test_getters_setters_and_state_dict_round_trip_as_torch():
    states = []
    for lib in LIBS:
        s = lib.amp.GradScaler('cpu', init_scale=256.0, growth_factor=3.0, backoff_factor=0.25,
                               growth_interval=7)
        assert (s.get_scale(), s.get_growth_factor(), s.get_backoff_factor(),
                s.get_growth_interval(), s.is_enabled()) == (256.0, 3.0, 0.25, 7, True)
        s.set_growth_factor(4.0)
        s.set_backoff_factor(0.5)
        s.set_growth_interval(3)
        states.append(s.state_dict())
        other = lib.amp.GradScaler('cpu')
        other.load_state_dict(s.state_dict())
        assert other.state_dict() == s.state_dict()
        with pytest.raises(RuntimeError, match='The source state dict is empty'):
            other.load_state_dict({})
    assert states[0] == states[1]


def test_state_dict_moves_between_libraries_mid_training():
    t = _train(torch, OPTIMIZERS['sgd_momentum'], init_scale=2.0 ** 10, growth_interval=2)
    s = dg.amp.GradScaler('cpu')
    s.load_state_dict(t[4]['state'])
    assert s.state_dict() == t[4]['state']
    w, opt, _ = _setup(dg)
    s.scale((w * 2).sum()).backward()
    s.step(opt)
    s.update(16.0)
    assert s.get_scale() == 16.0


def test_pickle_between_iterations_as_torch():
    for lib in LIBS:
        w, opt, scaler = _setup(lib)
        scaler.scale((w * 2).sum()).backward()
        scaler.step(opt)
        with pytest.raises(AssertionError, match='may only be pickled at the beginning'):
            pickle.dumps(scaler)
        scaler.update()
        copy = pickle.loads(pickle.dumps(scaler))
        assert copy.state_dict() == scaler.state_dict()
        assert copy._scale is None            # remade lazily by the next scale()
