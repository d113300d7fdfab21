"""DistributedSampler against torch.utils.data.DistributedSampler: identical index lists
without shuffling; with shuffling (another generator) the same structure: lengths,
padding, a partition of the padded permutation, set_epoch reshuffling."""
import itertools

import pytest
import torch.utils.data as tud

from dynagrad.utils.data import DataLoader, TensorDataset
from dynagrad.utils.data.distributed import DistributedSampler
import dynagrad as dg

CASES = list(itertools.product([1, 2, 3, 4, 7, 10, 11, 16], [1, 2, 3, 4, 5],
                               [False, True]))


def lists(cls, n, replicas, shuffle, drop_last, epoch=0, seed=0):
    out = []
    for rank in range(replicas):
        s = cls(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                drop_last=drop_last)
        s.set_epoch(epoch)
        out.append((len(s), list(s)))
    return out


@pytest.mark.parametrize('n,replicas,drop_last', CASES)
def test_without_shuffle_the_lists_are_torchs(n, replicas, drop_last):
    ours = lists(DistributedSampler, n, replicas, False, drop_last)
    theirs = lists(tud.DistributedSampler, n, replicas, False, drop_last)
    assert ours == theirs


@pytest.mark.parametrize('n,replicas,drop_last', CASES)
@pytest.mark.parametrize('epoch', [0, 3])
def test_with_shuffle_the_structure_is_torchs(n, replicas, drop_last, epoch):
    ours = lists(DistributedSampler, n, replicas, True, drop_last, epoch)
    theirs = lists(tud.DistributedSampler, n, replicas, True, drop_last, epoch)
    assert [length for length, _ in ours] == [length for length, _ in theirs]
    assert all(length == len(idx) for length, idx in ours)
    every = [i for _, idx in ours for i in idx]
    total = sum(length for length, _ in ours)
    if drop_last:  # a subset of distinct indices, the tail dropped
        assert len(set(every)) == total == n - n % replicas
    else:  # every index at least once; the padding repeats the first ones of the permutation
        assert set(every) == set(range(n))
        assert total == len(every) == -(-n // replicas) * replicas
        perm = [ours[k % replicas][1][k // replicas] for k in range(total)]
        assert perm[n:] == (perm[:n] * (total // n + 1))[:total - n]
        assert sorted(perm[:n]) == list(range(n))


def test_set_epoch_reshuffles_identically_on_every_rank():
    a = DistributedSampler(range(100), num_replicas=2, rank=0, seed=5)
    b = DistributedSampler(range(100), num_replicas=2, rank=1, seed=5)
    first = (list(a), list(b))
    assert sorted(first[0] + first[1]) == list(range(100))
    a.set_epoch(1)
    b.set_epoch(1)
    second = (list(a), list(b))
    assert sorted(second[0] + second[1]) == list(range(100))
    assert second != first
    assert list(a) == second[0]  # the same epoch gives the same order again
    c = DistributedSampler(range(100), num_replicas=2, rank=0, seed=6)
    assert list(c) != first[0]


def test_errors_and_the_dataloader():
    with pytest.raises(ValueError, match=r'Invalid rank 2, rank should be in the interval \[0, 1\]'):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match='init_process_group'):
        DistributedSampler(range(4))
    data = TensorDataset(dg.arange(10))
    sampler = DistributedSampler(data, num_replicas=3, rank=1, shuffle=False)
    got = [b[0].tolist() for b in DataLoader(data, batch_size=2, sampler=sampler)]
    assert got == [[1, 4], [7, 0]]
