"""``swap_in_optimizer_params_and_state``: run optimizer code against other parameter
tensors and another state dict for the length of a with-block, as in torch.optim."""
import contextlib
from collections import defaultdict

__all__ = ['swap_in_optimizer_params_and_state']

_NAME = 'swap_in_optimizer_params_and_state'


def _checked_groups(optimizer, state_dict):
    """The saved groups, each checked against the live one, before anything changes."""
    if not isinstance(state_dict, dict):
        raise RuntimeError(f'{_NAME} requires a DCP-style optimizer state_dict.')
    state = state_dict.get('state')
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           'packed parameter ids to per-param state dicts, got '
                           f'{type(state).__name__}.')
    groups = state_dict.get('param_groups')
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f'of param-group dicts, got {type(groups).__name__}.')
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError('swapin_optim_state has a different number of parameter groups '
                           'than the live optimizer.')
    ids = []
    for i, (saved, live) in enumerate(zip(groups, optimizer.param_groups)):
        if not isinstance(saved, dict):
            raise RuntimeError(f'{_NAME} requires each optimizer param group to be a '
                               'dictionary.')
        packed = saved.get('params')
        if not isinstance(packed, list) or not all(
                isinstance(k, int) and not isinstance(k, bool) for k in packed):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                               "param_groups[*]['params'] entries keyed by packed parameter "
                               'ids.')
        if len(packed) != len(live['params']):
            raise RuntimeError(f'swapin_optim_state param group {i} has a different number of '
                               'params than the live optimizer param group.')
        ids.extend(packed)
    if not all(isinstance(v, dict) for v in state.values()):
        raise RuntimeError(f'{_NAME} requires per-parameter optimizer state entries to be '
                           'dictionaries.')
    extra = [k for k in state if k not in set(ids)]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           "packed parameter ids from param_groups[*]['params']; got extra "
                           f'keys {extra}.')
    return groups, ids, state


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Inside the block, ``optimizer`` works on the tensors of ``swapin_parameters`` (a dict,
    in the order of the optimizer's parameters) with the state and group options of
    ``swapin_optim_state`` (an ``optimizer.state_dict()``-shaped dict); its own parameters,
    state and groups come back on exit. The state tensors are shared, so in-place updates
    reach ``swapin_optim_state``; anything else done to the optimizer inside is dropped.
    """
    if not optimizer.state:
        raise RuntimeError(f'{_NAME} requires initialized optimizer state.')
    groups, ids, state = _checked_groups(optimizer, swapin_optim_state)
    params = list(swapin_parameters.values())
    if len(params) != len(ids):
        raise RuntimeError(f'{_NAME} requires the explicit parameter state to match '
                           'optimizer.param_groups ordering.')
    new_state = defaultdict(dict)
    new_groups = []
    start = 0
    for saved, live in zip(groups, optimizer.param_groups):
        mine = params[start:start + len(saved['params'])]
        group = {'params': mine}
        if 'param_names' in live:
            group['param_names'] = list(live['param_names'])
        group.update((k, v) for k, v in saved.items() if k not in group)
        new_groups.append(group)
        for p, packed_id in zip(mine, saved['params']):
            new_state[p] = dict(state.get(packed_id, {}))
        start += len(mine)
    live_groups, live_state = optimizer.param_groups, optimizer.state
    optimizer.param_groups, optimizer.state = new_groups, new_state
    try:
        yield
    finally:
        optimizer.param_groups, optimizer.state = live_groups, live_state
