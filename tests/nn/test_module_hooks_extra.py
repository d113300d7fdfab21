"""Module's state-dict hooks, extra state, backward pre-hooks, ``to_empty``,
``set_submodule`` and the state-dict conversions of weight/spectral norm, against torch."""
import copy
import pickle
import typing
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import dynagrad as dg


def build(lib):
    """The same nested model in both libraries, with identical weights."""
    rng = np.random.default_rng(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Sequential(lib.nn.Linear(4, 2)))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))).to(p.dtype))
    return m


def both():
    return build(dg), build(torch)


def plain(value):
    """Hook arguments in a form comparable across libraries."""
    if isinstance(value, (dg.Tensor, torch.Tensor)):
        return ('tensor', tuple(value.shape))
    if isinstance(value, (dg.nn.Module, torch.nn.Module)):
        return ('module', type(value).__name__)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def assert_same_state(d_sd, t_sd):
    assert list(d_sd) == list(t_sd)
    for k in t_sd:
        np.testing.assert_allclose(np.asarray(d_sd[k].detach().numpy(), dtype=float),
                                   t_sd[k].detach().numpy().astype(float), rtol=1e-6)


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e), str(e)
    return None


# -- state_dict hooks ------------------------------------------------------------------
def record_state_dict_hooks(model):
    calls = []
    for name, m in model.named_modules():
        m.register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars, name=name: calls.append(
                ('pre', name, prefix, keep_vars)))
        m.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta, name=name: calls.append(
                ('post', name, prefix, list(sd), dict(meta))))
    return calls


def test_state_dict_hooks_order_and_arguments_match_torch():
    d, t = both()
    d_calls, t_calls = record_state_dict_hooks(d), record_state_dict_hooks(t)
    d_sd, t_sd = d.state_dict(keep_vars=True), t.state_dict(keep_vars=True)
    assert d_calls == t_calls
    assert [c[0] for c in d_calls][:2] == ['pre', 'pre']
    assert_same_state(d_sd, t_sd)
    assert dict(d_sd._metadata) == dict(t_sd._metadata)


def test_state_dict_post_hook_edits_in_place_and_must_return_none():
    def drop_bias(mod, sd, prefix, meta):
        del sd[prefix + 'bias']
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        m.register_state_dict_post_hook(drop_bias)
        assert list(m.state_dict()) == ['weight']
    d, t = dg.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    d.register_state_dict_post_hook(lambda *a: {})
    t.register_state_dict_post_hook(lambda *a: {})
    assert raised(d.state_dict) == raised(t.state_dict)
    assert raised(d.state_dict)[1] == 'state_dict post-hook must return None'


def test_private_state_dict_hook_may_return_a_new_dict_and_refuses_public_ones():
    def replace(mod, sd, prefix, meta):
        return OrderedDict((k.upper(), v) for k, v in sd.items())

    results = []
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        m._register_state_dict_hook(replace)
        results.append(list(m.state_dict()))

        def public(mod, sd, prefix, meta):
            return None
        m2 = lib.nn.Linear(2, 2)
        m2.register_state_dict_post_hook(public)
        results.append(raised(lambda: m2._register_state_dict_hook(public)))
    assert results[0] == results[2] == ['WEIGHT', 'BIAS']
    assert results[1][0] is results[3][0] is RuntimeError
    assert results[1][1] == results[3][1]


def test_state_dict_hook_handles_remove():
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        calls = []
        handles = [m.register_state_dict_pre_hook(lambda *a: calls.append('pre')),
                   m.register_state_dict_post_hook(lambda *a: calls.append('post') and None),
                   m._register_state_dict_hook(lambda *a: calls.append('private') and None)]
        m.state_dict()
        assert calls == ['pre', 'post', 'private']
        for h in handles:
            h.remove()
        m.state_dict()
        assert calls == ['pre', 'post', 'private']


# -- load_state_dict hooks -------------------------------------------------------------
def record_load_hooks(model):
    calls = []
    for name, m in model.named_modules():
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors, name=name:
            calls.append(('pre', name, plain(mod), list(sd), prefix, plain(meta), strict,
                          list(missing), list(unexpected), list(errors))))
        m._register_load_state_dict_pre_hook(
            lambda sd, prefix, meta, strict, missing, unexpected, errors, name=name:
            calls.append(('private', name, prefix)))
        m._register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest, name=name: calls.append(
                ('with_module', name, plain(mod), prefix)), with_module=True)
        m.register_load_state_dict_post_hook(
            lambda mod, keys, name=name: calls.append(
                ('post', name, plain(mod), list(keys.missing_keys),
                 list(keys.unexpected_keys))))
    return calls


def test_load_hooks_order_and_arguments_match_torch():
    d, t = both()
    sd_d, sd_t = d.state_dict(), t.state_dict()
    for sd in (sd_d, sd_t):
        del sd['1.0.bias']
        sd['1.extra'] = sd['0.bias']
    d_calls, t_calls = record_load_hooks(d), record_load_hooks(t)
    d_res = d.load_state_dict(sd_d, strict=False)
    t_res = t.load_state_dict(sd_t, strict=False)
    assert d_calls == t_calls
    assert d_res.missing_keys == t_res.missing_keys == ['1.0.bias']
    assert d_res.unexpected_keys == t_res.unexpected_keys == ['1.extra']


def test_load_pre_hook_rewrites_keys_and_assign_reaches_metadata():
    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        for key in [k for k in sd if k.startswith(prefix + 'old_')]:
            sd[prefix + key[len(prefix) + 4:]] = sd.pop(key)

    def seen(store):
        return lambda mod, sd, prefix, meta, *rest: store.append(dict(meta))
    metas = []
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 3)
        m.register_load_state_dict_pre_hook(rename)
        m.register_load_state_dict_pre_hook(seen(metas))
        src = lib.nn.Linear(2, 3)
        saved = OrderedDict(('old_' + k, v) for k, v in src.state_dict().items())
        saved._metadata = src.state_dict()._metadata
        assert list(saved) == ['old_weight', 'old_bias']
        assert repr(m.load_state_dict(saved, assign=True)) == '<All keys matched successfully>'
        assert list(saved) == ['old_weight', 'old_bias']   # the caller's dict is untouched
        assert m.weight is not src.weight and m.weight.data_ptr() == src.weight.data_ptr()
    assert metas[0] == metas[1] == {'version': 1, 'assign_to_params_buffers': True}


def test_load_pre_hook_errors_raise_and_nothing_is_copied():
    def complain(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        errors.append('the checkpoint is from another model')
    d, t = both()
    before = d.state_dict()
    before = OrderedDict((k, v.clone()) for k, v in before.items())
    source_d, source_t = build(dg), build(torch)
    with dg.no_grad():
        for p in source_d.parameters():
            p.add_(1.0)
    for m in (d, t):
        m[1].register_load_state_dict_pre_hook(complain)
    err_d = raised(lambda: d.load_state_dict(source_d.state_dict()))
    err_t = raised(lambda: t.load_state_dict(source_t.state_dict()))
    assert err_d == err_t
    assert err_d[0] is RuntimeError and 'the checkpoint is from another model' in err_d[1]
    assert_same_state(d.state_dict(), before)


def test_load_post_hook_can_forgive_missing_keys_and_must_return_none():
    def forgive(mod, keys):
        keys.missing_keys.clear()
    results = []
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        m.register_load_state_dict_post_hook(forgive)
        sd = lib.nn.Linear(2, 2).state_dict()
        del sd['bias']
        res = m.load_state_dict(sd)
        results.append((res.missing_keys, res.unexpected_keys))
        np.testing.assert_array_equal(m.weight.detach().numpy(), sd['weight'].numpy())
        m2 = lib.nn.Linear(2, 2)
        m2.register_load_state_dict_post_hook(lambda mod, keys: keys)
        results.append(raised(lambda: m2.load_state_dict(m2.state_dict())))
    assert results[0] == results[2] == ([], [])
    assert results[1] == results[3] and results[1][0] is AssertionError


def test_strict_missing_keys_still_raise_after_post_hooks():
    results = []
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        calls = []
        m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(
            list(keys.missing_keys)))
        sd = m.state_dict()
        del sd['bias']
        results.append((raised(lambda: m.load_state_dict(sd)), calls))
    assert results[0] == results[1]
    assert results[0][0][0] is RuntimeError and 'Missing key(s) in state_dict: "bias"' \
        in results[0][0][1]


def test_load_hook_handles_remove():
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        calls = []
        handles = [m.register_load_state_dict_pre_hook(lambda *a: calls.append('pre')),
                   m._register_load_state_dict_pre_hook(lambda *a: calls.append('private')),
                   m.register_load_state_dict_post_hook(lambda *a: calls.append('post'))]
        m.load_state_dict(m.state_dict())
        assert calls == ['pre', 'private', 'post']
        for h in handles:
            h.remove()
        m.load_state_dict(m.state_dict())
        assert calls == ['pre', 'private', 'post']


# -- extra state -----------------------------------------------------------------------
def with_extra_state(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.steps = 0

        def get_extra_state(self):
            return {'steps': self.steps}

        def set_extra_state(self, state):
            self.steps = state['steps']
    return Counter


def test_extra_state_saved_and_loaded_as_torch_does():
    keys = []
    for lib in (dg, torch):
        Counter = with_extra_state(lib)
        outer = lib.nn.Sequential(Counter())
        outer[0].steps = 7
        sd = outer.state_dict()
        keys.append(list(sd))
        assert sd['0._extra_state'] == {'steps': 7}
        fresh = lib.nn.Sequential(Counter())
        assert repr(fresh.load_state_dict(sd)) == '<All keys matched successfully>'
        assert fresh[0].steps == 7
        del sd['0._extra_state']
        res = fresh.load_state_dict(sd, strict=False)
        keys.append((res.missing_keys, res.unexpected_keys))
    assert keys[0] == keys[2] == ['0._extra_state', '0.lin.weight', '0.lin.bias']
    assert keys[1] == keys[3] == (['0._extra_state'], [])


def test_extra_state_key_is_unexpected_without_set_extra_state():
    results = []
    for lib in (dg, torch):
        sd = lib.nn.Linear(2, 2).state_dict()
        sd['_extra_state'] = 1
        res = lib.nn.Linear(2, 2).load_state_dict(sd, strict=False)
        results.append((res.missing_keys, res.unexpected_keys))
    assert results[0] == results[1] == ([], ['_extra_state'])


def test_base_extra_state_methods_raise_like_torch():
    for name, args in (('get_extra_state', ()), ('set_extra_state', (1,))):
        d = raised(lambda: getattr(dg.nn.Linear(1, 1), name)(*args))
        t = raised(lambda: getattr(torch.nn.Linear(1, 1), name)(*args))
        assert d[0] is t[0] is RuntimeError
        assert d[1].startswith(t[1].split('. ')[0])


# -- backward pre-hooks ----------------------------------------------------------------
def run_backward_with_pre_hooks(lib):
    m = build(lib)
    calls = []

    def pre(mod, grad_output):
        calls.append(('pre', [g.numpy().tolist() for g in grad_output]))
        return tuple(g * 2 for g in grad_output)

    def full(mod, grad_input, grad_output):
        calls.append(('full', [g.numpy().tolist() for g in grad_output]))
    m[1].register_full_backward_pre_hook(pre)
    m[1].register_full_backward_hook(full)
    m[0].register_full_backward_pre_hook(lambda mod, g: calls.append(('pre0', len(g))))
    x = lib.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    m(x).pow(2).sum().backward()
    return calls, x.grad.numpy(), [p.grad.numpy() for p in m.parameters()]


def test_full_backward_pre_hook_replaces_grad_output_like_torch():
    d_calls, d_xgrad, d_pgrads = run_backward_with_pre_hooks(dg)
    t_calls, t_xgrad, t_pgrads = run_backward_with_pre_hooks(torch)
    assert [c[0] for c in d_calls] == [c[0] for c in t_calls] == ['pre', 'full', 'pre0']
    np.testing.assert_allclose(d_calls[0][1], t_calls[0][1], rtol=1e-6)
    np.testing.assert_allclose(d_calls[1][1], t_calls[1][1], rtol=1e-6)   # the doubled one
    np.testing.assert_allclose(d_xgrad, t_xgrad, rtol=1e-6)
    for a, b in zip(d_pgrads, t_pgrads):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_full_backward_pre_hook_checks_count_and_handle_removes():
    errors = []
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        h = m.register_full_backward_pre_hook(lambda mod, g: (g[0], g[0]))
        x = lib.ones(1, 2, requires_grad=True)
        errors.append(raised(lambda: m(x).sum().backward()))
        h.remove()
        m(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), m.weight.detach().numpy().sum(0)[None])
    assert errors[0] == errors[1] and errors[0][0] is RuntimeError


@pytest.mark.filterwarnings('ignore:Full backward hook is firing')
def test_backward_pre_hook_prepend_runs_first():
    for lib in (dg, torch):
        m = lib.nn.Linear(2, 2)
        calls = []
        m.register_full_backward_pre_hook(lambda mod, g: calls.append('a'))
        m.register_full_backward_pre_hook(lambda mod, g: calls.append('b'), prepend=True)
        m(lib.ones(1, 2)).sum().backward()
        assert calls == ['b', 'a']


# -- to_empty, set_submodule, class attributes -----------------------------------------
def test_to_empty_keeps_shapes_dtypes_and_parameters():
    for lib in (dg, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double()
        m[0].weight.requires_grad_(False)
        old = [t for t in m.state_dict(keep_vars=True).values()]
        assert m.to_empty(device='cpu') is m
        new = list(m.state_dict(keep_vars=True).values())
        assert [(tuple(a.shape), str(a.dtype).split('.')[-1]) for a in old] == \
            [(tuple(b.shape), str(b.dtype).split('.')[-1]) for b in new]
        assert all(type(p).__name__ == 'Parameter' for p in m.parameters())
        assert [p.requires_grad for p in m.parameters()] == [False, True, True, True]
        child = m[1].weight
        child_data = child.data_ptr()
        m.to_empty(device='cpu', recurse=False)   # the Sequential has no tensors of its own
        assert m[1].weight.data_ptr() == child_data
    with pytest.raises(TypeError):
        dg.nn.Linear(1, 1).to_empty('cpu')


@pytest.mark.parametrize('target,strict', [
    ('1.5', False), ('1.5', True), ('0', True), ('zz', True), ('0.zz', True),
    ('0.weight', False), ('zz.a', False), ('', False), ('foo', False)])
def test_set_submodule_matches_torch(target, strict):
    outcome = []
    for lib in (dg, torch):
        s = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        s.foo = 3
        err = raised(lambda: s.set_submodule(target, lib.nn.Tanh(), strict=strict))
        outcome.append((err, [(n, type(m).__name__) for n, m in s.named_modules()]))
    assert outcome[0] == outcome[1]


def test_set_submodule_refuses_a_non_module():
    d = raised(lambda: dg.nn.Sequential(dg.nn.ReLU()).set_submodule('0', 3))
    t = raised(lambda: torch.nn.Sequential(torch.nn.ReLU()).set_submodule('0', 3))
    assert d == t and d[0] is ValueError


def test_class_attributes():
    assert dg.nn.Module.call_super_init is torch.nn.Module.call_super_init is False
    assert dg.nn.Module.dump_patches is torch.nn.Module.dump_patches is False
    assert isinstance(dg.nn.Module.T_destination, typing.TypeVar)
    assert dg.nn.Module.T_destination.__name__ == torch.nn.Module.T_destination.__name__


def test_hook_tables_survive_copy_and_old_pickles():
    m = dg.nn.Linear(2, 2)
    m.register_load_state_dict_post_hook(print)
    c = copy.deepcopy(m)
    assert list(c._load_state_dict_post_hooks.values()) == [print]
    state = m.__getstate__()
    for name in ('_state_dict_hooks', '_backward_pre_hooks', '_load_state_dict_pre_hooks'):
        del state[name]     # as a module pickled before these tables existed
    old = dg.nn.Linear.__new__(dg.nn.Linear)
    old.__setstate__(state)
    assert list(old.state_dict()) == ['weight', 'bias']
    old(dg.ones(1, 2)).sum().backward()
    assert pickle.loads(pickle.dumps(dg.nn.Linear(2, 2))).state_dict().keys() == \
        {'weight', 'bias'}


# -- weight_norm / spectral_norm state-dict conversions --------------------------------
def to_lib(sd, lib):
    out = OrderedDict((k, lib.tensor(v.detach().numpy())) for k, v in sd.items())
    out._metadata = copy.deepcopy(getattr(sd, '_metadata', None))
    return out


def test_parametrized_weight_norm_loads_legacy_weight_norm_keys_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        legacy_t = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
        legacy_d = dg.nn.utils.weight_norm(dg.nn.Linear(3, 4))
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    for legacy_sd in (legacy_t.state_dict(), legacy_d.state_dict()):
        assert list(legacy_sd) == ['bias', 'weight_g', 'weight_v']
        outs = []
        for lib in (dg, torch):
            new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4))
            res = new.load_state_dict(to_lib(legacy_sd, lib))
            assert repr(res) == '<All keys matched successfully>'
            assert list(new.state_dict()) == ['bias', 'parametrizations.weight.original0',
                                              'parametrizations.weight.original1']
            np.testing.assert_array_equal(
                new.parametrizations.weight.original1.detach().numpy(),
                legacy_sd['weight_v'].detach().numpy())
            outs.append(new(lib.tensor(x)).detach().numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_legacy_spectral_norm_records_its_version_like_torch():
    d = dg.nn.utils.spectral_norm(dg.nn.Sequential(dg.nn.Linear(3, 4))[0])
    t = torch.nn.utils.spectral_norm(torch.nn.Sequential(torch.nn.Linear(3, 4))[0])
    d_sd, t_sd = d.state_dict(), t.state_dict()
    assert list(d_sd) == list(t_sd) == ['bias', 'weight_orig', 'weight_u', 'weight_v']
    assert dict(d_sd._metadata) == dict(t_sd._metadata) == {
        '': {'version': 1, 'spectral_norm': {'weight.version': 1}}}
    # saved with its version, it loads unchanged (no conversion)
    fresh = dg.nn.utils.spectral_norm(dg.nn.Linear(3, 4))
    assert repr(fresh.load_state_dict(d_sd)) == '<All keys matched successfully>'
    np.testing.assert_array_equal(fresh.weight_v.numpy(), d_sd['weight_v'].numpy())


def test_legacy_spectral_norm_converts_a_version_0_state_dict_like_torch():
    src = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4)).state_dict()
    old = OrderedDict(bias=src['bias'], weight_orig=src['weight_orig'],
                      weight=src['weight_orig'] / 3.0, weight_u=src['weight_u'])
    loaded = []
    for lib in (dg, torch):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
        assert repr(m.load_state_dict(to_lib(old, lib))) == '<All keys matched successfully>'
        m.eval()
        out = m(lib.ones(1, 3))
        loaded.append((m.weight_v.numpy(), (m.weight / m.weight_orig).detach().numpy(),
                       out.detach().numpy()))
    for a, b in zip(*loaded):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loaded[0][1], np.full((4, 3), 1 / 3), rtol=1e-4)
    # a version-0 dict lacking weight_u: reported missing, as torch does
    results = []
    for lib in (dg, torch):
        partial = to_lib(OrderedDict((k, v) for k, v in old.items() if k != 'weight_u'), lib)
        res = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4)).load_state_dict(partial,
                                                                              strict=False)
        results.append((res.missing_keys, res.unexpected_keys))
    assert results[0] == results[1]


def test_remove_spectral_norm_drops_its_state_dict_hooks():
    # torch 2.13 means to drop both hooks too, but misses the load pre-hook (it compares
    # the wrapper it stores, not the hook): its module then refuses its own state dict.
    m = dg.nn.utils.spectral_norm(dg.nn.Linear(3, 4))
    dg.nn.utils.remove_spectral_norm(m)
    sd = m.state_dict()
    t = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4))
    torch.nn.utils.remove_spectral_norm(t)
    assert dict(sd._metadata) == dict(t.state_dict()._metadata) == {'': {'version': 1}}
    assert not m._load_state_dict_pre_hooks and not m._state_dict_hooks
    assert repr(m.load_state_dict(sd)) == '<All keys matched successfully>'


def test_size_mismatch_with_post_hooks_loads_the_rest_as_torch_does():
    outcome = []
    for lib in (dg, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))
        calls = []
        m.register_load_state_dict_post_hook(lambda mod, keys: calls.append('post'))
        sd = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 2)).state_dict()
        err = raised(lambda: m.load_state_dict(sd))
        err = (err[0], err[1].replace(lib.__name__ + '.Size', 'Size'))
        same = np.array_equal(m[0].weight.detach().numpy(), sd['0.weight'].numpy())
        outcome.append((err, calls, same))
    assert outcome[0] == outcome[1]
    assert outcome[0][0][0] is RuntimeError and outcome[0][2]


def test_size_mismatch_without_post_hooks_changes_nothing():
    m = dg.nn.Sequential(dg.nn.Linear(2, 3), dg.nn.Linear(3, 1))
    before = m[0].weight.detach().clone()
    sd = dg.nn.Sequential(dg.nn.Linear(2, 3), dg.nn.Linear(3, 2)).state_dict()
    with pytest.raises(RuntimeError, match='size mismatch for 1.weight'):
        m.load_state_dict(sd)
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), before.numpy())


def test_reassigning_a_child_or_parameter_keeps_its_place_like_torch():
    orders = []
    for lib in (dg, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        m[0] = lib.nn.Tanh()
        lin = lib.nn.Linear(2, 2)
        lin.weight = lib.nn.Parameter(lib.zeros(2, 2))
        orders.append(([type(c).__name__ for c in m], list(lin.state_dict())))
    assert orders[0] == orders[1] == (['Tanh', 'ReLU'], ['weight', 'bias'])
