"""``nn.modules.utils``: the argument normalisers and the state-dict prefix helper, equal to
torch's on the same inputs."""
from collections import OrderedDict

import torch
import torch.nn.modules.utils as tu

import dynagrad.nn.modules.utils as du


@torch.no_grad()
def test_ntuple_helpers_match_torch():
    for name in ('_single', '_pair', '_triple', '_quadruple'):
        for arg in (3, (1, 2), [4, 5, 6], 'ab', range(2)):
            assert getattr(du, name)(arg) == getattr(tu, name)(arg), (name, arg)
        assert getattr(du, name).__name__ == name
    assert du._ntuple(5)(7) == tu._ntuple(5)(7)
    assert du._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert du._list_with_default([None, 4], [8, 9, 10]) == \
        tu._list_with_default([None, 4], [8, 9, 10])


def test_consume_prefix_matches_torch():
    def make():
        sd = OrderedDict([('module.w', 1), ('module.b', 2), ('other', 3)])
        sd._metadata = OrderedDict([('', {}), ('module', {'v': 1}), ('module.sub', {})])
        return sd

    ours, theirs = make(), make()
    du.consume_prefix_in_state_dict_if_present(ours, 'module.')
    tu.consume_prefix_in_state_dict_if_present(theirs, 'module.')
    assert list(ours.items()) == list(theirs.items())
    assert list(ours._metadata.items()) == list(theirs._metadata.items())


def test_pooling_layers_normalise_as_torch():
    import dynagrad as dg
    for args in ((2,), ([2, 3], None, 1), ((3, 2), 1, (1, 0))):
        assert dg.nn.MaxPool2d(*args).kernel_size == torch.nn.MaxPool2d(*args).kernel_size


def test_nn_utils_is_not_shadowed_by_modules_utils():
    """nn's star import of nn.modules binds modules.utils as `utils`; nn.utils must stay the
    package of clip_grad_norm_ and friends, as in torch."""
    import dynagrad as dg
    assert dg.nn.utils.__name__ == 'dynagrad.nn.utils' and torch.nn.utils.__name__ == 'torch.nn.utils'
    assert callable(dg.nn.utils.clip_grad_norm_) and dg.nn.modules.utils._pair(3) == (3, 3)


def test_module_list_abs_index_and_tensor_identity_as_torch():
    """pyro's PyroModuleList calls ModuleList._get_abs_string_index; its param store compares
    tensors by _cdata."""
    import dynagrad as dg
    ours = dg.nn.ModuleList([dg.nn.ReLU(), dg.nn.Tanh(), dg.nn.Sigmoid()])
    theirs = torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid()])
    for i in (0, 2, -1, -3):
        assert ours._get_abs_string_index(i) == theirs._get_abs_string_index(i)
    for m in (ours, theirs):
        for bad in (3, -4):
            try:
                m._get_abs_string_index(bad)
                raise AssertionError('no IndexError')
            except IndexError as e:
                assert 'out of range' in str(e)
    for m in (dg, torch):
        a = m.ones(2)
        assert a._cdata == a._cdata and a._cdata != m.ones(2)._cdata
        assert isinstance(a._cdata, int)
