"""SparseAdam: PyTorch's constructor, checks, state dict and refusal of dense gradients (its
update with the sparse gradients of Embedding(sparse=True) is checked against torch in
tests/sparse/test_sparse.py)."""
import pytest
import torch

import dynagrad


@pytest.mark.parametrize('kwargs,message', [
    (dict(lr=-1), 'Invalid learning rate: -1'), (dict(eps=-1), 'Invalid epsilon value: -1'),
    (dict(betas=(1.0, 0.9)), 'Invalid beta parameter at index 0: 1.0'),
    (dict(betas=(0.9, 1.5)), 'Invalid beta parameter at index 1: 1.5')])
def test_constructor_checks_as_torch(kwargs, message):
    for lib in (torch, dynagrad):
        with pytest.raises(ValueError, match=message):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], **kwargs)


def test_defaults_repr_state_dict_and_dense_refusal_as_torch():
    t = torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(3))], lr=0.01)
    d = dynagrad.optim.SparseAdam([dynagrad.nn.Parameter(dynagrad.ones(3))], lr=0.01)
    assert d.defaults == t.defaults
    assert repr(d) == repr(t)
    assert d.state_dict() == t.state_dict()
    for opt, lib in ((t, torch), (d, dynagrad)):
        opt.step()                      # no gradient yet: nothing to refuse
        opt.param_groups[0]['params'][0].grad = lib.ones(3)
        with pytest.raises(RuntimeError, match='SparseAdam does not support dense gradients, '
                                               'please consider Adam instead'):
            opt.step()
