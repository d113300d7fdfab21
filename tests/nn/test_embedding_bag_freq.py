"""embedding_bag(scale_grad_by_freq=True) with indices repeated unequally often, against
torch's embedding(scale_grad_by_freq=True) reduced per bag: PyTorch 2.13's CPU embedding_bag
divides some rows by another row's count (pytorch/pytorch#190063); its embedding kernel
divides by the documented frequency, as dynagrad's embedding_bag does."""
import numpy as np
import pytest
import torch

import dynagrad as dg
import dynagrad.nn.functional as F

IDX = [0, 1, 1, 2, 1, 4, 0, 5, 3]
OFFSETS = [0, 3, 5, 5, 8]


def _torch_reference(w, mode, padding_idx, psw):
    idx = torch.tensor(IDX)
    rows = torch.nn.functional.embedding(idx, w, padding_idx=padding_idx,
                                         scale_grad_by_freq=True)
    keep = (idx != padding_idx) if padding_idx is not None else torch.ones(len(IDX), dtype=bool)
    rows = rows * keep[:, None].to(w.dtype)
    if psw is not None:
        rows = rows * psw[:, None]
    bags = []
    for start, end in zip(OFFSETS, OFFSETS[1:] + [len(IDX)]):
        total = rows[start:end].sum(0)
        bags.append(total / max(int(keep[start:end].sum()), 1) if mode == 'mean' else total)
    return torch.stack(bags)


@pytest.mark.parametrize('mode,padding_idx,weighted', [
    ('sum', None, False), ('sum', 1, False), ('sum', None, True), ('sum', 0, True),
    ('mean', None, False), ('mean', 1, False)])
def test_mixed_counts_match_torchs_embedding(mode, padding_idx, weighted):
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(6, 3, dtype=torch.float64, generator=gen)
    psw = torch.rand(len(IDX), dtype=torch.float64, generator=gen) if weighted else None
    grad = torch.randn(len(OFFSETS), 3, dtype=torch.float64, generator=gen)
    tw = weight.clone().requires_grad_()
    tp = psw.clone().requires_grad_() if weighted else None
    expected = _torch_reference(tw, mode, padding_idx, tp)
    expected.backward(grad)
    dw = dg.tensor(weight.numpy(), requires_grad=True)
    dp = dg.tensor(psw.numpy(), requires_grad=True) if weighted else None
    got = F.embedding_bag(dg.tensor(IDX), dw, dg.tensor(OFFSETS), mode=mode,
                          padding_idx=padding_idx, scale_grad_by_freq=True,
                          per_sample_weights=dp)
    got.backward(dg.tensor(grad.numpy()))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(dw.grad.numpy(), tw.grad.numpy(), atol=1e-12)
    if weighted:   # the per-sample weights' gradient is not scaled (as in torch)
        np.testing.assert_allclose(dp.grad.numpy(), tp.grad.numpy(), atol=1e-12)


def test_module_scales_by_frequency():
    torch.manual_seed(0)
    tm = torch.nn.EmbeddingBag(6, 3, mode='sum', scale_grad_by_freq=True)
    dm = dg.nn.EmbeddingBag(6, 3, mode='sum', scale_grad_by_freq=True)
    dm.weight.data = dg.tensor(tm.weight.detach().numpy())
    w = tm.weight.detach().clone().requires_grad_()
    _torch_reference(w, 'sum', None, None).sum().backward()
    dm(dg.tensor(IDX), dg.tensor(OFFSETS)).sum().backward()
    np.testing.assert_allclose(dm.weight.grad.numpy(), w.grad.numpy(), atol=1e-6)
    assert 'scale_grad_by_freq=True' in repr(dm) and repr(dm) == repr(tm)


def test_max_mode_refuses_as_torch():
    w = dg.randn(5, 3)
    with pytest.raises(ValueError, match='max mode does not support scaling the gradient by '
                                         'the frequency'):
        F.embedding_bag(dg.tensor([0, 1]), w, dg.tensor([0]), mode='max',
                        scale_grad_by_freq=True)
    with pytest.raises(ValueError, match='max mode does not support scaling'):
        torch.nn.functional.embedding_bag(torch.tensor([0, 1]), torch.randn(5, 3),
                                          torch.tensor([0]), mode='max',
                                          scale_grad_by_freq=True)
