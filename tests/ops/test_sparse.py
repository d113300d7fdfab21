"""ops/sparse.py: sparse_coo_tensor's overloads, against torch."""
import pytest
import torch

import dynagrad


@pytest.mark.parametrize('call', [lambda m: m.sparse_coo_tensor(size=(5, 3)),
                                  lambda m: m.sparse_coo_tensor((5, 3)),
                                  lambda m: m.sparse_coo_tensor([2, 4], dtype=m.float64),
                                  lambda m: m.sparse_coo_tensor(size=m.Size([3]),
                                                                requires_grad=True)])
def test_sparse_coo_tensor_of_a_size_alone_is_empty_as_torch(call):
    mine, theirs = call(dynagrad), call(torch)
    assert mine.layout is dynagrad.sparse_coo
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    assert mine._nnz() == theirs._nnz() == 0
    assert tuple(mine._indices().shape) == tuple(theirs._indices().shape)
    assert mine._indices().dtype is dynagrad.int64
    assert mine.requires_grad == theirs.requires_grad
    assert mine.is_coalesced() == theirs.is_coalesced()
    assert (mine.detach().to_dense().numpy() == theirs.detach().to_dense().numpy()).all()


def test_sparse_coo_tensor_needs_values_or_a_size_alone():
    with pytest.raises(TypeError, match='invalid combination of arguments'):
        torch.sparse_coo_tensor()
    with pytest.raises(TypeError, match='invalid combination of arguments'):
        dynagrad.sparse_coo_tensor()
    with pytest.raises(TypeError, match='invalid combination of arguments'):
        dynagrad.sparse_coo_tensor(dynagrad.tensor([[0]]), size=(2,))
