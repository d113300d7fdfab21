"""The linear-algebra functions PyTorch removed in 1.9 raise PyTorch's own messages (which
name the replacement), from the same places."""
import pytest
import torch

import dynagrad


@pytest.mark.parametrize('name,args', [('symeig', 1), ('eig', 1), ('matrix_rank', 1),
                                       ('lstsq', 2), ('solve', 2)])
def test_removed_functions_raise_torch_messages(name, args):
    with pytest.raises(RuntimeError) as want:
        getattr(torch, name)(*[torch.eye(2)] * args)
    with pytest.raises(RuntimeError) as got:
        getattr(dynagrad, name)(*[dynagrad.eye(2)] * args)
    assert str(got.value) == str(want.value)
    from dynagrad import _linalg_utils
    assert getattr(_linalg_utils, name) is getattr(dynagrad, name)
