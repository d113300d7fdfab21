"""The native optimizer updates (``dynagrad.native.optim``: ``adam_step``, ``sgd_step``):
Adam, AdamW and SGD over their options, five steps on float32 and float64 parameters of
odd sizes, against PyTorch (single-tensor, foreach and fused updates) and against
dynagrad's NumPy update (``set_kernels('numpy')``, equal to the bit): parameters, every
state tensor and the state dict's layout; which parameters fall back to the NumPy update;
version counters and errors as before."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import backend
from native_support import NUMBA_MISSING, kernels_counted, needs_numba

SHAPES = [(7, 13), (5,), (3, 1, 17), (), (1,)]
STEPS = 5
DTYPES = {'float32': (np.float32, torch.float32), 'float64': (np.float64, torch.float64)}

ADAM = [dict(), dict(amsgrad=True), dict(maximize=True), dict(weight_decay=0.1),
        dict(weight_decay=0.1, amsgrad=True, maximize=True),
        dict(weight_decay=0.05, decoupled_weight_decay=True),
        dict(betas=(0.3, 0.9)),         # 1 - beta1 >= 0.5: lerp's other formula
        dict(betas=(0.5, 0.99), eps=1e-3, amsgrad=True)]
ADAMW = [dict(), dict(amsgrad=True), dict(maximize=True, weight_decay=0.3), dict(weight_decay=0),
         dict(betas=(0.2, 0.95), amsgrad=True, maximize=True)]
SGD = [dict(), dict(momentum=0.9), dict(momentum=0.9, dampening=0.3), dict(momentum=0.9,
       nesterov=True), dict(weight_decay=0.1), dict(maximize=True),
       dict(momentum=0.5, nesterov=True, weight_decay=0.1, maximize=True),
       dict(momentum=0.9, dampening=0.5, weight_decay=0.01, maximize=True)]
CASES = ([('Adam', c) for c in ADAM] + [('AdamW', c) for c in ADAMW]
         + [('SGD', c) for c in SGD])
FLAGS = [dict(), dict(foreach=True), dict(fused=True)]
KERNEL = {'Adam': 'adam_step', 'AdamW': 'adam_step', 'SGD': 'sgd_step'}


def _calls(name, params, steps):
    """The kernel calls of ``steps`` steps updating ``params`` parameters natively: one
    per parameter and step."""
    return {KERNEL[name]: steps * params}


@pytest.fixture
def count_kernels():
    """Count the calls of the optimizer kernels while the test runs (kernels 'native')."""
    if NUMBA_MISSING is not None:
        pytest.skip(f'numba does not load: {NUMBA_MISSING}')
    with kernels_counted('native', ('adam_step', 'sgd_step')) as calls:
        yield calls


def _values(shapes, dtype, seed):
    """The parameters' starting values and STEPS gradients for each, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(STEPS)]
    return start, grads


def _run(lib, name, config, flags, dtype, *, steps=STEPS, shapes=SHAPES, lr=0.05, seed=0,
         kernels='native'):
    """(parameter values, optimizer, parameters) after ``steps`` steps of ``lib``'s
    optimizer (dynagrad with ``kernels``)."""
    np_dtype, torch_dtype = DTYPES[dtype]
    start, grads = _values(shapes, np_dtype, seed)
    if lib is torch:
        params = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in start]
        make_grad = torch.from_numpy
    else:
        params = [dynagrad.nn.Parameter(dynagrad.tensor(a.copy())) for a in start]
        make_grad = dynagrad.tensor
    if isinstance(lr, str):     # a 0-d tensor learning rate
        lr = lib.tensor(float(lr), dtype=lib.float64)
    opt = getattr(lib.optim, name)(params, lr=lr, **config, **flags)
    previous = backend.set_kernels(kernels)
    try:
        for step in range(steps):
            for p, g in zip(params, grads[step]):
                p.grad = make_grad(g.copy())
            opt.step()
    finally:
        backend.set_kernels(previous)
    return [p.detach().numpy().copy() for p in params], opt, params


def _state(opt):
    """The state dict's per-parameter state as {index: {name: array}}, in order."""
    return {k: {n: (v.detach().numpy().copy() if hasattr(v, 'detach') else v)
                for n, v in s.items()}
            for k, s in opt.state_dict()['state'].items()}


def _tolerance(dtype, ulps):
    eps = np.finfo(DTYPES[dtype][0]).eps
    return dict(rtol=ulps * eps, atol=ulps * eps)


def _compare(a, b, dtype, ulps, what):
    """Equal to the bit (NaN where NaN) with ``ulps`` 0, else within ``ulps`` epsilons,
    relative and absolute."""
    if ulps == 0:
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, **_tolerance(dtype, ulps), err_msg=what)


def _assert_same(ours, theirs, dtype, ulps, what):
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.dtype == b.dtype and a.shape == b.shape, (what, i, a.dtype, b.dtype)
        _compare(a, b, dtype, ulps, f'{what} {i}')


def _assert_same_state(ours, theirs, dtype, ulps):
    assert list(ours) == list(theirs)
    for k in ours:
        assert list(ours[k]) == list(theirs[k]), (k, list(ours[k]), list(theirs[k]))
        for n in ours[k]:
            a, b = np.asarray(ours[k][n]), np.asarray(theirs[k][n])
            assert a.dtype == b.dtype and a.shape == b.shape, (k, n, a.dtype, b.dtype)
            _compare(a, b, dtype, 0 if n == 'step' else ulps, f'state {k} {n}')


CASE_IDS = [f'{n}-{c}' for n, c in CASES]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('flags', FLAGS, ids=str)
@pytest.mark.parametrize('name,config', CASES, ids=CASE_IDS)
def test_native_update_matches_numpy_update_and_torch(count_kernels, name, config, flags,
                                                      dtype):
    ours, opt, _ = _run(dynagrad, name, config, flags, dtype)
    assert count_kernels == _calls(name, len(SHAPES), STEPS)
    reference, ref_opt, _ = _run(dynagrad, name, config, flags, dtype, kernels='numpy')
    # against the NumPy update: the same arithmetic, to the bit
    _assert_same(ours, reference, dtype, 0, 'parameter')
    _assert_same_state(_state(opt), _state(ref_opt), dtype, 0)
    # against PyTorch with the same flags and with its single-tensor update (whose SIMD
    # kernels fuse multiply-adds: a few ulps)
    for torch_flags in (flags, dict(foreach=False)):
        theirs, torch_opt, _ = _run(torch, name, config, torch_flags, dtype)
        _assert_same(ours, theirs, dtype, 32, f'parameter vs torch {torch_flags}')
        _assert_same_state(_state(opt), _state(torch_opt), dtype, 32)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('name,config', [('Adam', dict(amsgrad=True)), ('AdamW', {}),
                                         ('SGD', dict(momentum=0.9, nesterov=True))],
                         ids=['Adam', 'AdamW', 'SGD'])
def test_tensor_learning_rate(count_kernels, name, config, dtype):
    ours, opt, _ = _run(dynagrad, name, config, {}, dtype, lr='0.05')
    assert count_kernels == _calls(name, len(SHAPES), STEPS)
    theirs, torch_opt, _ = _run(torch, name, config, dict(foreach=False), dtype, lr='0.05')
    _assert_same(ours, theirs, dtype, 32, 'parameter vs torch')
    _assert_same_state(_state(opt), _state(torch_opt), dtype, 32)


def test_the_numpy_update_of_a_0d_parameter_keeps_its_momentum():
    """(Found by these tests.) With weight decay or maximize, a 0-d parameter's gradient
    became a NumPy scalar whose copy SGD kept as its momentum buffer, which in-place
    updates then missed: the NumPy update now matches PyTorch there too."""
    config = dict(momentum=0.9, weight_decay=0.1, maximize=True)
    ours, opt, _ = _run(dynagrad, 'SGD', config, {}, 'float64', shapes=[()],
                        kernels='numpy')
    theirs, torch_opt, _ = _run(torch, 'SGD', config, {}, 'float64', shapes=[()])
    _assert_same(ours, theirs, 'float64', 8, 'parameter')
    _assert_same_state(_state(opt), _state(torch_opt), 'float64', 8)


@pytest.mark.parametrize('name,config', [('Adam', dict(amsgrad=True)),
                                         ('SGD', dict(momentum=0.9))], ids=['Adam', 'SGD'])
def test_versions_and_state_tensors_as_the_numpy_update(count_kernels, name, config):
    """Each step bumps each parameter's version once, writes the parameters and the state
    tensors in place (the same objects, the same arrays) and leaves the state tensors'
    versions alone, with either kernels."""
    seen = {}
    for kernels in ('native', 'numpy'):
        _, opt, params = _run(dynagrad, name, config, {}, 'float32', steps=1,
                              kernels=kernels)
        arrays = [p._data for p in params]
        state = [dict(opt.state[p]) for p in params]
        buffers = [{n: t._data for n, t in s.items()} for s in state]
        versions = [p._version for p in params]
        state_versions = [{n: t._version for n, t in s.items()} for s in state]
        previous = backend.set_kernels(kernels)
        try:
            for _ in range(3):
                for p in params:
                    p.grad = dynagrad.ones_like(p)
                opt.step()
        finally:
            backend.set_kernels(previous)
        assert all(p._data is a for p, a in zip(params, arrays))
        for p, s, b in zip(params, state, buffers):
            assert opt.state[p].keys() == s.keys()
            assert all(opt.state[p][n] is t and t._data is b[n] for n, t in s.items())
        seen[kernels] = ([p._version - v for p, v in zip(params, versions)],
                         [{n: t._version - state_versions[i][n] for n, t in s.items()}
                          for i, s in enumerate(state)])
    assert seen['native'] == seen['numpy']
    assert seen['native'][0] == [3] * len(SHAPES)
    assert count_kernels == _calls(name, len(SHAPES), 4)


def _fallback_params(lib, dtype):
    """A contiguous parameter, a transposed (non-contiguous) leaf and a float16 one."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((5, 9)).astype(dtype)
    odd = rng.standard_normal((6, 4)).astype(dtype)
    half = rng.standard_normal(7).astype(np.float16)
    if lib is torch:
        return [torch.nn.Parameter(torch.from_numpy(base.copy())),
                torch.nn.Parameter(torch.from_numpy(odd.copy()).t()),
                torch.nn.Parameter(torch.from_numpy(half.copy()))]
    return [dynagrad.nn.Parameter(dynagrad.tensor(base.copy())),
            dynagrad.nn.Parameter(dynagrad.tensor(odd.copy()).t()),
            dynagrad.nn.Parameter(dynagrad.tensor(half.copy()))]


@pytest.mark.parametrize('name,config', [('Adam', dict(weight_decay=0.1)),
                                         ('SGD', dict(momentum=0.9, nesterov=True))],
                         ids=['Adam', 'SGD'])
def test_parameters_the_kernel_does_not_take_fall_back(count_kernels, name, config):
    """A non-contiguous parameter and a float16 one take the NumPy update (one kernel call
    per step, for the contiguous one), and all three still follow PyTorch."""
    out = {}
    for lib in (dynagrad, torch):
        params = _fallback_params(lib, np.float32)
        assert lib is torch or not params[1]._data.flags.c_contiguous
        opt = getattr(lib.optim, name)(params, lr=0.05, **config)
        for step in range(3):
            rng = np.random.default_rng(step)
            for p in params:
                g = rng.standard_normal(tuple(p.shape)).astype(
                    np.float16 if p.dtype in (torch.float16, dynagrad.float16) else np.float32)
                p.grad = lib.tensor(g)
            opt.step()
        out[lib.__name__] = [p.detach().float().numpy() for p in params]
    assert count_kernels == _calls(name, 1, 3)
    for a, b, tol in zip(out['dynagrad'], out['torch'], (1e-6, 1e-6, 2e-3)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize('name', ['AdamW', 'SGD'])
def test_non_contiguous_gradients_are_read_as_they_are(count_kernels, name):
    """A transposed and a strided 1-d gradient (the kernel reads a contiguous copy)."""
    ps = [dynagrad.nn.Parameter(dynagrad.ones(4, 6)), dynagrad.nn.Parameter(dynagrad.ones(5))]
    qs = [torch.nn.Parameter(torch.ones(4, 6)), torch.nn.Parameter(torch.ones(5))]
    g = np.arange(24, dtype=np.float32).reshape(6, 4) / 10
    h = np.arange(10, dtype=np.float32) / 7
    ps[0].grad, ps[1].grad = dynagrad.tensor(g).t(), dynagrad.tensor(h)[::2]
    qs[0].grad, qs[1].grad = torch.from_numpy(g).t(), torch.from_numpy(h)[::2]
    assert not any(p.grad._data.flags.c_contiguous for p in ps)
    config = dict(lr=0.1, momentum=0.9) if name == 'SGD' else dict(lr=0.1)
    for _ in range(2):
        getattr(dynagrad.optim, name)(ps, **config).step()
        getattr(torch.optim, name)(qs, **config).step()
    assert count_kernels == _calls(name, 2, 2)
    for p, q in zip(ps, qs):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)


def test_differentiable_steps_do_not_use_the_kernel(count_kernels):
    w = dynagrad.ones(3, requires_grad=True)
    p = w.clone()
    opt = dynagrad.optim.Adam([p], lr=0.1, differentiable=True)
    p.grad = dynagrad.tensor([1.0, -1.0, 2.0])
    opt.step()
    assert count_kernels == {}
    assert p.grad_fn is not None


def test_a_loaded_state_continues_with_either_kernels(count_kernels):
    """Three native steps, the state dict loaded into a fresh optimizer that takes two
    NumPy steps, against five NumPy steps: the state the kernel writes is the state the
    NumPy update reads (and the other way round)."""
    config, dtype = dict(amsgrad=True, weight_decay=0.1), 'float64'
    start, grads = _values(SHAPES, np.float64, 0)
    params = [dynagrad.nn.Parameter(dynagrad.tensor(a.copy())) for a in start]
    opt = dynagrad.optim.AdamW(params, lr=0.05, **config)
    for step in range(STEPS):
        if step == 3:
            saved = opt.state_dict()
            opt = dynagrad.optim.AdamW(params, lr=0.05, **config)
            opt.load_state_dict(saved)
            backend.set_kernels('numpy')
        for p, g in zip(params, grads[step]):
            p.grad = dynagrad.tensor(g.copy())
        opt.step()
    assert count_kernels == {'adam_step': 3 * len(SHAPES)}
    reference, ref_opt, _ = _run(dynagrad, 'AdamW', config, {}, dtype, kernels='numpy')
    _assert_same([p.detach().numpy() for p in params], reference, dtype, 0, 'parameter')
    _assert_same_state(_state(opt), _state(ref_opt), dtype, 0)


def _error(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 - compared between the two kernels
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize('kernels', [pytest.param('native', marks=needs_numba), 'numpy'])
def test_errors_unchanged(kernels):
    previous = backend.set_kernels(kernels)
    try:
        p = dynagrad.nn.Parameter(dynagrad.ones(3))
        with pytest.raises(RuntimeError, match='`fused` does not support `differentiable`'):
            dynagrad.optim.Adam([p], fused=True, differentiable=True)
        with pytest.raises(RuntimeError, match='`fused` and `foreach` cannot be `True`'):
            dynagrad.optim.SGD([p], fused=True, foreach=True)
        opt = dynagrad.optim.AdamW([p], capturable=True)
        p.grad = dynagrad.ones(3)
        with pytest.raises(AssertionError, match='If capturable=True'):
            opt.step()
        assert p.detach().numpy().tolist() == [1.0, 1.0, 1.0]
        # amsgrad switched on after a step: its buffer is missing, as in PyTorch
        opt = dynagrad.optim.Adam([p], lr=0.1)
        opt.step()
        opt.param_groups[0]['amsgrad'] = True
        with pytest.raises(KeyError, match='max_exp_avg_sq'):
            opt.step()
        # a read-only parameter array: NumPy's error, nothing written
        q = dynagrad.nn.Parameter(dynagrad.ones(4))
        q._data.flags.writeable = False
        q.grad = dynagrad.ones(4)
        with pytest.raises(ValueError, match='read-only'):
            dynagrad.optim.SGD([q], lr=0.1, momentum=0.9).step()
        with pytest.raises(ValueError, match='read-only'):
            dynagrad.optim.Adam([q], lr=0.1).step()
    finally:
        backend.set_kernels(previous)


def test_sparse_gradients_keep_their_paths(count_kernels):
    """SGD takes a sparse gradient through its sparse update; Adam refuses one."""
    emb = dynagrad.nn.Embedding(10, 3, sparse=True)
    emb(dynagrad.tensor([1, 4, 4])).sum().backward()
    before = emb.weight.detach().numpy().copy()
    dynagrad.optim.SGD(emb.parameters(), lr=0.5, momentum=0.9).step()
    changed = np.flatnonzero((emb.weight.detach().numpy() != before).any(1))
    assert changed.tolist() == [1, 4]
    with pytest.raises(RuntimeError, match='Adam does not support sparse gradients'):
        dynagrad.optim.Adam(emb.parameters()).step()
    assert count_kernels == {}


@needs_numba
def test_a_native_step_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        _run(dynagrad, 'AdamW', {}, {'fused': True}, 'float32', steps=1)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('name,config', [('Adam', dict(amsgrad=True, eps=0.0)),
                                         ('AdamW', dict(maximize=True)),
                                         ('SGD', dict(momentum=0.9, nesterov=True,
                                                      weight_decay=0.1))],
                         ids=['Adam', 'AdamW', 'SGD'])
def test_non_finite_values_as_the_numpy_update(count_kernels, name, config, dtype):
    """NaN, infinities, zeros (0/0 with eps=0) and extremes give the NumPy update's values,
    NaN where it has NaN (amsgrad's maximum lets a NaN win on either side)."""
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 1e30, 1.0]
    out = {}
    for kernels in ('native', 'numpy'):
        previous = backend.set_kernels(kernels)
        try:
            np_dtype = DTYPES[dtype][0]
            p = dynagrad.nn.Parameter(dynagrad.tensor(np.array(special[::-1] * 2, np_dtype)))
            opt = getattr(dynagrad.optim, name)([p], lr=0.1, **config)
            for shift in range(3):
                p.grad = dynagrad.tensor(np.array(special[shift:] + special[:shift] + [0.5] * 8,
                                                  np_dtype))
                with np.errstate(all='ignore'):
                    opt.step()
            out[kernels] = (p.detach().numpy().copy(), _state(opt))
        finally:
            backend.set_kernels(previous)
    np.testing.assert_array_equal(out['native'][0], out['numpy'][0])
    _assert_same_state(out['native'][1], out['numpy'][1], dtype, 0)
    assert np.isnan(out['native'][0]).any() and np.isfinite(out['native'][0]).any()
    assert count_kernels == _calls(name, 1, 3)


@pytest.mark.parametrize('config', [dict(momentum=0.9, nesterov=True, weight_decay=0.01),
                                    dict(weight_decay=0.1, maximize=True)], ids=str)
def test_sgd_over_groups_and_mixed_dtypes(count_kernels, config):
    """Parameters of 0 to 3 dimensions, float32 and float64 alternating and two groups:
    every parameter updated as the NumPy update does (to the bit) and as PyTorch's, by one
    kernel call each."""
    shapes = [(3, 5), (7,), (), (2, 2, 2), (1,), (11,), (4, 3), (6,), (9,), (5, 5), (1, 1)]
    dtypes = [np.float32] * 9 + [np.float64, np.float32]
    rng = np.random.default_rng(1)
    start = [rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)]
    grads = [[rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)]
             for _ in range(3)]
    out = {}
    for lib, kernels in ((dynagrad, 'native'), (dynagrad, 'numpy'), (torch, None)):
        params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in start]
        opt = lib.optim.SGD([{'params': params[:9]}, {'params': params[9:], 'lr': 0.02}],
                            lr=0.05, **config)
        previous = backend.set_kernels(kernels) if kernels else None
        try:
            for step in range(3):
                for p, g in zip(params, grads[step]):
                    p.grad = lib.tensor(g.copy())
                opt.step()
        finally:
            if kernels:
                backend.set_kernels(previous)
        out[kernels] = [p.detach().numpy().copy() for p in params]
    assert count_kernels == {'sgd_step': 3 * len(shapes)}
    for a, b, c in zip(out['native'], out['numpy'], out[None]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-7)
