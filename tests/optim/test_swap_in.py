"""optim.swap_in_optimizer_params_and_state against torch.optim's: a step inside the block
updates the swap-in parameters and state (in place) and leaves the live optimizer as it
was; malformed state dicts raise torch's errors before anything changes."""
import copy

import numpy as np
import pytest
import torch

import dynagrad


def _setup(lib):
    rng = np.random.default_rng(0)
    model = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    opt = lib.optim.Adam(model.named_parameters(), lr=0.1)
    x = lib.tensor(rng.standard_normal((4, 3)))
    model(x).sum().backward()
    opt.step()
    params = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
    for p, g in zip(params.values(), (rng.standard_normal((2, 3)), rng.standard_normal(2))):
        p.grad = lib.tensor(g)
    return model, opt, params


def _arrays(tensors):
    return [t.detach().numpy().copy() for t in tensors]


def test_step_inside_acts_on_the_swap_in_values_like_torch():
    results = []
    for lib in (dynagrad, torch):
        model, opt, params = _setup(lib)
        osd = copy.deepcopy(opt.state_dict())
        live_before = _arrays(model.parameters())
        live_state = opt.state[model.weight]
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd) as entered:
            assert entered is None
            assert opt.param_groups[0]['params'][0] is params['weight']
            assert opt.param_groups[0]['param_names'] == ['weight', 'bias']
            assert opt.state[params['weight']]['exp_avg'] is osd['state'][0]['exp_avg']
            opt.param_groups[0]['lr'] = 0.5          # not kept: only in-place edits are
            opt.step()
        assert opt.state[model.weight] is live_state and opt.param_groups[0]['lr'] == 0.1
        assert osd['param_groups'][0]['lr'] == 0.1
        for now, before in zip(_arrays(model.parameters()), live_before):
            np.testing.assert_array_equal(now, before)
        results.append(_arrays(params.values())
                       + _arrays([osd['state'][0]['exp_avg'], osd['state'][0]['step']]))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_packed_ids_say_which_state_goes_with_which_parameter():
    for lib in (dynagrad, torch):
        model, opt, params = _setup(lib)
        osd = copy.deepcopy(opt.state_dict())
        osd['param_groups'][0]['params'] = [1, 0]
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
            assert opt.state[params['weight']]['exp_avg'] is osd['state'][1]['exp_avg']


def _mutations():
    def pop(key):
        return lambda sd: sd.pop(key)

    def group(fn):
        return lambda sd: fn(sd['param_groups'])
    return {
        'not a dict': None,
        'no state': pop('state'),
        'state a list': lambda sd: sd.__setitem__('state', [1]),
        'no groups': pop('param_groups'),
        'groups a tuple': lambda sd: sd.__setitem__('param_groups', tuple(sd['param_groups'])),
        'extra group': group(lambda gs: gs.append(dict(gs[0]))),
        'group not a dict': group(lambda gs: gs.__setitem__(0, 5)),
        'group without params': group(lambda gs: gs[0].pop('params')),
        'string ids': group(lambda gs: gs[0].__setitem__('params', ['a', 'b'])),
        'group size': group(lambda gs: gs[0].__setitem__('params', [0])),
        'duplicate ids': group(lambda gs: gs[0].__setitem__('params', [0, 0])),
        'state value': lambda sd: sd['state'].__setitem__(0, 5),
        'extra state': lambda sd: sd['state'].__setitem__(7, {}),
    }


@pytest.mark.parametrize('mutation', list(_mutations()))
def test_malformed_state_dicts_raise_like_torch(mutation):
    errors = []
    for lib in (torch, dynagrad):
        model, opt, params = _setup(lib)
        osd = copy.deepcopy(opt.state_dict())
        fn = _mutations()[mutation]
        if fn is None:
            osd = 5
        else:
            fn(osd)
        groups, state = opt.param_groups, opt.state
        with pytest.raises(RuntimeError) as err:
            with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
                pass
        assert opt.param_groups is groups and opt.state is state
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_parameter_count_and_uninitialized_state_like_torch():
    errors = []
    for lib in (torch, dynagrad):
        model, opt, params = _setup(lib)
        osd = copy.deepcopy(opt.state_dict())
        with pytest.raises(RuntimeError) as count:
            with lib.optim.swap_in_optimizer_params_and_state(
                    opt, {'weight': params['weight']}, osd):
                pass
        fresh = lib.optim.SGD(model.parameters(), lr=0.1)
        with pytest.raises(RuntimeError) as uninit:
            with lib.optim.swap_in_optimizer_params_and_state(fresh, params,
                                                              fresh.state_dict()):
                pass
        errors.append((str(count.value), str(uninit.value)))
    assert errors[0] == errors[1]
