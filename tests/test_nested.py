"""nested/: nested tensors against torch.nested."""
import numpy as np
import pytest
import torch

import dynagrad


def arrays(ts):
    return [t.detach().numpy().tolist() for t in ts]


@pytest.mark.parametrize('data', [[[1, 2, 3], [1], [1, 2]],
                                  [[[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]]]])
def test_nested_tensor_answers_as_torch(data):
    mine = dynagrad.nested.nested_tensor(data)
    theirs = torch.nested.nested_tensor(data)
    assert mine.is_nested and theirs.is_nested and isinstance(mine, dynagrad.Tensor)
    assert repr(mine) == repr(theirs)
    assert (mine.dim(), mine.size(0), mine.numel(), str(mine.dtype)[9:]) == \
        (theirs.dim(), theirs.size(0), theirs.numel(), str(theirs.dtype)[6:])
    assert mine.layout is dynagrad.strided
    assert arrays(mine.unbind()) == arrays(theirs.unbind())
    assert mine.values().tolist() == theirs.values().tolist()
    for pad in (0, -1):
        assert mine.to_padded_tensor(pad).tolist() == theirs.to_padded_tensor(pad).tolist()
        assert dynagrad.nested.to_padded_tensor(mine, pad).tolist() == \
            torch.nested.to_padded_tensor(theirs, pad).tolist()
    for op in (lambda t: t + 1, lambda t: 2 * t, lambda t: t - t, lambda t: -t,
               lambda t: t * t):
        assert arrays(op(mine).unbind()) == arrays(op(theirs).unbind())
    with pytest.raises(RuntimeError, match="doesn't support sizes"):
        mine.size()
    with pytest.raises(RuntimeError, match="doesn't support sizes"):
        theirs.size()


def test_regular_dims_padding_to_a_size_and_errors_as_torch():
    parts = [np.ones((2, 3)), np.arange(3.0).reshape(1, 3)]
    mine = dynagrad.nested.as_nested_tensor([dynagrad.tensor(p) for p in parts])
    theirs = torch.nested.as_nested_tensor([torch.tensor(p) for p in parts])
    assert mine.size(2) == theirs.size(2) == 3
    assert mine.to_padded_tensor(0.5, (2, 4, 5)).tolist() == \
        theirs.to_padded_tensor(0.5, (2, 4, 5)).tolist()
    with pytest.raises(RuntimeError, match='irregular'):
        mine.size(1)
    with pytest.raises(RuntimeError, match='irregular'):
        theirs.size(1)
    with pytest.raises(RuntimeError, match='must have the same dimension'):
        dynagrad.nested.nested_tensor([dynagrad.ones(2, 3), dynagrad.ones(3)])
    with pytest.raises(RuntimeError, match='must have the same dimension'):
        torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(3)])
    with pytest.raises(RuntimeError, match='unbind'):
        dynagrad.sum(mine)


def test_jagged_layout_as_torch():
    mine = dynagrad.nested.nested_tensor([dynagrad.arange(3.0), dynagrad.arange(2.0)],
                                         layout=dynagrad.jagged)
    theirs = torch.nested.nested_tensor([torch.arange(3.0), torch.arange(2.0)],
                                        layout=torch.jagged)
    assert repr(mine) == repr(theirs)
    assert mine.layout is dynagrad.jagged
    assert mine.values().tolist() == theirs.values().tolist()
    assert mine.offsets().tolist() == theirs.offsets().tolist()
    assert mine.to_padded_tensor(0.0).tolist() == theirs.to_padded_tensor(0.0).tolist()
    m = dynagrad.nested.nested_tensor_from_jagged(dynagrad.arange(5.0),
                                                  dynagrad.tensor([0, 2, 5]))
    t = torch.nested.nested_tensor_from_jagged(torch.arange(5.0), torch.tensor([0, 2, 5]))
    assert arrays(m.unbind()) == arrays(t.unbind())
    m = dynagrad.nested.nested_tensor_from_jagged(dynagrad.arange(5.0),
                                                  lengths=dynagrad.tensor([1, 4]))
    assert arrays(m.unbind()) == [[0.0], [1.0, 2.0, 3.0, 4.0]]


def test_gradients_reach_the_components_as_torch():
    grads = []
    for lib in (dynagrad, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([4.0], requires_grad=True)
        nt = lib.nested.as_nested_tensor([a, b])
        (nt * 3).to_padded_tensor(0.0).pow(2).sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    assert grads[0] == grads[1]
    leaf = dynagrad.nested.nested_tensor([[1.0], [2.0, 3.0]], requires_grad=True)
    assert leaf.requires_grad and all(c.is_leaf for c in leaf.unbind())
