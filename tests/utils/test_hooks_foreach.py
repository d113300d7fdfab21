"""dynagrad.utils.hooks and dynagrad.utils._foreach_utils against torch's."""
import collections
import warnings

import pytest
import torch
import torch.utils._foreach_utils as their_foreach
import torch.utils.hooks as their_hooks

import dynagrad
import dynagrad.utils._foreach_utils as my_foreach
import dynagrad.utils.hooks as my_hooks


def test_removable_handle_over_a_library_table_and_extra_dicts():
    for hooks in (my_hooks, their_hooks):
        table, extra = collections.OrderedDict(), collections.OrderedDict()
        handle = hooks.RemovableHandle(table, extra_dict=extra)
        table[handle.id] = 'hook'
        extra[handle.id] = True
        handle.remove()
        handle.remove()
        assert not table and not extra
        with hooks.RemovableHandle(table) as h:
            table[h.id] = 'x'
        assert not table


def test_warn_if_has_hooks_as_torch():
    messages = []
    for lib, hooks in ((dynagrad, my_hooks), (torch, their_hooks)):
        t = lib.ones(1, requires_grad=True)
        t.register_hook(hooks.unserializable_hook(lambda g: g))
        quiet = lib.ones(1, requires_grad=True)
        loud = lib.ones(1, requires_grad=True)
        loud.register_hook(lambda g: g)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            hooks.warn_if_has_hooks(t)
            hooks.warn_if_has_hooks(quiet)
            assert not w
            hooks.warn_if_has_hooks(loud)
        messages.append(str(w[0].message).split(' on tensor')[1])
    assert messages[0] == messages[1]


def test_group_tensors_by_device_and_dtype_as_torch():
    def groups(lib, foreach, with_indices):
        a, b, c = lib.ones(2), lib.ones(2, dtype=lib.float64), lib.zeros(3)
        out = foreach._group_tensors_by_device_and_dtype([[a, b, c], [c, a, b]],
                                                         with_indices=with_indices)
        return {(str(dev), str(dt).split('.')[1]): ([[x.tolist() for x in lst] for lst in lists],
                                                    idx)
                for (dev, dt), (lists, idx) in out.items()}
    for with_indices in (True, False):
        assert groups(dynagrad, my_foreach, with_indices) == \
            groups(torch, their_foreach, with_indices)
    for lib, foreach in ((dynagrad, my_foreach), (torch, their_foreach)):
        with pytest.raises(RuntimeError, match='the 1-th Tensor is not'):
            foreach._group_tensors_by_device_and_dtype([[lib.ones(1), None]])
    assert my_foreach._get_foreach_kernels_supported_devices() == \
        their_foreach._get_foreach_kernels_supported_devices()
    assert my_foreach._get_fused_kernels_supported_devices() == \
        their_foreach._get_fused_kernels_supported_devices()
    assert my_foreach._has_foreach_support([dynagrad.ones(1)], dynagrad.device('cpu')) == \
        their_foreach._has_foreach_support([torch.ones(1)], torch.device('cpu'))
