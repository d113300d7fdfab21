"""In-place writes into expanded tensors (elements sharing memory), compared with torch: most
ops refuse with torch's "unsupported operation" RuntimeError (never NumPy's read-only
ValueError), fill_/zero_/index_put_/masked_fill_/index_fill_ write through the shared memory
(the last three with torch's deprecation warning), and a view without overlap (a row of an
expanded tensor, or expand adding leading 1s) is written like any other."""
import warnings

import pytest
import torch

import dynagrad as dg


def _outcome(lib, write, make):
    base, t = make(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            write(lib, t)
        except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
            return type(e), str(e), base.tolist()
    messages = sorted({str(w.message).split(' (Triggered')[0] for w in caught
                       if 'expanded tensors' in str(w.message)})
    return 'ok', base.tolist(), t.tolist(), messages


def _expanded(lib):
    base = lib.zeros(3)
    return base, base.expand(2, 3)


WRITES = {
    'copy_': lambda L, t: t.copy_(L.ones(2, 3)),
    'copy_broadcast': lambda L, t: t.copy_(L.ones(3)),
    'copy_0dim': lambda L, t: t.copy_(L.tensor(5.0)),
    'fill_': lambda L, t: t.fill_(2),
    'fill_tensor': lambda L, t: t.fill_(L.tensor(2.0)),
    'zero_': lambda L, t: t.zero_(),
    'add_': lambda L, t: t.add_(1),
    'mul_': lambda L, t: t.mul_(2),
    'iadd': lambda L, t: t.__iadd__(1),
    'exp_': lambda L, t: t.exp_(),
    'clamp_': lambda L, t: t.clamp_(1),
    'normal_': lambda L, t: t.normal_(),
    'uniform_': lambda L, t: t.uniform_(),
    'bernoulli_': lambda L, t: t.bernoulli_(0.5),
    'random_': lambda L, t: t.random_(0, 5),
    'data_normal_': lambda L, t: t.data.normal_(),
    'setitem_row': lambda L, t: t.__setitem__(0, 1.0),
    'setitem_row_tensor': lambda L, t: t.__setitem__(0, L.tensor([1.0, 2.0, 3.0])),
    'setitem_column': lambda L, t: t.__setitem__((slice(None), 0), 1.0),
    'setitem_all': lambda L, t: t.__setitem__(slice(None), 1.0),
    'setitem_list': lambda L, t: t.__setitem__([0], 1.0),
    'index_put_': lambda L, t: t.index_put_((L.tensor([0]),), L.tensor(1.0)),
    'masked_fill_': lambda L, t: t.masked_fill_(L.ones(2, 3, dtype=L.bool), 1.0),
    'index_fill_': lambda L, t: t.index_fill_(1, L.tensor([0]), 1.0),
    'scatter_': lambda L, t: t.scatter_(1, L.tensor([[0], [0]]), 1.0),
    'index_copy_': lambda L, t: t.index_copy_(1, L.tensor([0]), L.ones(2, 1)),
    'row_normal_': lambda L, t: t[1].normal_(),
}


@pytest.mark.parametrize('name', list(WRITES))
def test_write_into_expanded_matches_torch(name):
    t = _outcome(torch, WRITES[name], _expanded)
    d = _outcome(dg, WRITES[name], _expanded)
    if t[0] == 'ok':
        assert d[0] == 'ok', d
        if 'normal' not in name and 'random' not in name:
            assert d == t
        else:   # random values: the memory is shared all the same
            assert d[2][0] == d[2][1] == d[1]
    else:
        assert d[0] is t[0] is RuntimeError
        assert d[1] == t[1]
        assert d[2] == t[2] == [0.0, 0.0, 0.0]     # nothing written


def test_expand_adding_leading_ones_is_writable():
    # transformers' BERT: position_ids = arange(n).expand((1, -1)), then copy_ into it
    def run(L):
        ids = L.arange(5).expand((1, -1))
        ids.copy_(L.arange(5).flip(0).expand((1, -1)))
        ids.add_(1)
        return ids.tolist()
    assert run(dg) == run(torch) == [[5, 4, 3, 2, 1]]


def test_write_through_expanded_view_of_a_graph_matches_torch():
    def run(L, write):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        t = y.expand(2, 3)
        try:
            write(t)
        except RuntimeError as e:
            return 'write', str(e), y.tolist(), y._version
        try:
            y.sum().backward()
        except RuntimeError as e:   # torch: CopySlices' region overlaps
            return 'backward', str(e), y.tolist()
        return 'ok', y.tolist(), x.grad.tolist()
    for write in (lambda t: t.mul_(2), lambda t: t.fill_(3.0), lambda t: t[1].fill_(4.0),
                  lambda t: t[0].mul_(2)):
        assert run(dg, write) == run(torch, write)
