"""utils/data/datapipes, graph, graph_settings: DataPipe chains against torch's."""
import pytest
import torch
import torch.utils.data.datapipes.iter as T
import torch.utils.data.datapipes.map as TM
from torch.utils.data import graph_settings as tgs

import dynagrad
import dynagrad.utils.data.datapipes.iter as M
import dynagrad.utils.data.datapipes.map as MM
from dynagrad.utils.data import graph_settings as mgs


def plain(x):
    """Items as plain Python values, to compare torch's with dynagrad's."""
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [plain(v) for v in x]
    if hasattr(x, 'tolist'):
        return x.tolist()
    return x


def double(x):
    return 2 * x


CHAINS = [
    lambda I: I.IterableWrapper(range(10)).map(double),
    lambda I: I.IterableWrapper(range(10)).filter(lambda x: x % 3 != 0).batch(3),
    lambda I: I.IterableWrapper(range(10)).batch(4, drop_last=True),
    lambda I: I.IterableWrapper([[0, 1], [2, [3, 4]]]).unbatch(),
    lambda I: I.IterableWrapper([[0, 1], [2, [3, 4]]]).unbatch(unbatch_level=-1),
    lambda I: I.IterableWrapper([(1, 2, 3), (4, 5, 6)]).map(lambda a, b: a + b,
                                                               input_col=[0, 2]),
    lambda I: I.IterableWrapper([(1, 2), (4, 5)]).map(double, input_col=1, output_col=-1),
    lambda I: I.IterableWrapper([{'a': 1}, {'a': 2}]).map(double, input_col='a',
                                                          output_col='b'),
    lambda I: I.IterableWrapper([(1, 2), (3, 4)]).filter(lambda v: v > 2, input_col=1),
    lambda I: I.IterableWrapper(range(3)).concat(I.IterableWrapper(range(5, 7))),
    lambda I: I.IterableWrapper(range(3)).zip(I.IterableWrapper('abcd')),
    lambda I: I.IterableWrapper(range(3)).mux(I.IterableWrapper(range(10, 15)),
                                              I.IterableWrapper(range(20, 22))),
    lambda I: I.IterableWrapper(range(6)).batch(2).collate(),
    lambda I: I.Sampler(I.IterableWrapper(range(5, 9))),
    lambda I: I.IterableWrapper(range(5)).shuffle().set_shuffle(False),
]


@pytest.mark.parametrize('chain', CHAINS)
def test_iter_chains_as_torch(chain):
    mine, theirs = chain(M), chain(T)
    assert plain(list(mine)) == plain(list(theirs))
    assert plain(list(mine)) == plain(list(theirs))     # a second epoch
    try:
        expected = len(theirs)
    except TypeError as e:
        with pytest.raises(TypeError) as raised:
            len(mine)
        if "doesn't have valid length" in str(e):
            assert "doesn't have valid length" in str(raised.value)
    else:
        assert len(mine) == expected


@pytest.mark.parametrize('chain', [
    lambda I: I.SequenceWrapper(range(5)).map(double),
    lambda I: I.SequenceWrapper(range(7)).batch(3),
    lambda I: I.SequenceWrapper(range(7)).batch(3, drop_last=True),
    lambda I: I.SequenceWrapper(range(3)).concat(I.SequenceWrapper('xy')),
    lambda I: I.SequenceWrapper(range(3)).zip(I.SequenceWrapper('xyzw'))])
def test_map_chains_as_torch(chain):
    mine, theirs = chain(MM), chain(TM)
    assert len(mine) == len(theirs)
    assert plain([mine[i] for i in range(len(mine))]) == \
        plain([theirs[i] for i in range(len(theirs))])


def test_shuffle_is_a_permutation_repeated_by_the_seed_and_switched_by_settings():
    dp = M.IterableWrapper(range(50)).shuffle(buffer_size=7)
    dynagrad.manual_seed(3)
    first = list(dp)
    dynagrad.manual_seed(3)
    assert list(dp) == first and sorted(first) == list(range(50)) and first != list(range(50))
    mapped = M.IterableWrapper(range(20)).map(double).shuffle().batch(5)
    for gs, made in ((mgs, mapped), (tgs, T.IterableWrapper(range(20)).map(double).shuffle()
                                     .batch(5))):
        off = gs.apply_shuffle_settings(made, shuffle=False)
        assert [list(b) for b in off] == [list(range(i, i + 10, 2)) for i in range(0, 40, 10)]
        assert gs.apply_shuffle_settings(made, shuffle=None) is made
    with pytest.warns(UserWarning, match='does not contain a `Shuffler`'):
        added = mgs.apply_shuffle_settings(M.IterableWrapper(range(9)), shuffle=True)
    assert isinstance(added, M.Shuffler) and sorted(added) == list(range(9))
    mshuf = MM.SequenceWrapper(range(8)).shuffle()
    assert isinstance(mshuf, M.Shuffler.__mro__[1]) and sorted(mshuf) == list(range(8))
    g = dynagrad.Generator().manual_seed(5)
    mgs.apply_random_seed(dp, g)
    once = list(dp)
    mgs.apply_random_seed(dp, dynagrad.Generator().manual_seed(5))
    assert list(dp) == once


def test_graph_and_sharding_as_torch():
    for I, gs in ((M, mgs), (T, tgs)):
        src = I.IterableWrapper(range(10))
        top = src.shuffle().sharding_filter().map(double)
        pipes = gs.get_all_graph_pipes(gs.traverse_dps(top))
        assert sorted(type(p).__name__ for p in pipes) == sorted(
            ['MapperIterDataPipe', 'ShardingFilterIterDataPipe', 'ShufflerIterDataPipe',
             'IterableWrapperIterDataPipe'])
        sharded = gs.apply_sharding(I.IterableWrapper(range(10)).sharding_filter(), 3, 1)
        assert list(sharded) == [1, 4, 7] and len(sharded) == 3
        with pytest.raises(RuntimeError, match='Sharding twice'):
            gs.apply_sharding(I.IterableWrapper(range(4)).sharding_filter().sharding_filter(),
                              2, 0)


@pytest.mark.parametrize('workers', [0, 2])
def test_dataloader_reads_datapipes_as_torch(workers):
    def load(lib, I):
        dp = I.IterableWrapper(range(10)).sharding_filter().map(double)
        return plain(list(lib.utils.data.DataLoader(dp, batch_size=2, num_workers=workers,
                                                    shuffle=False)))
    assert load(dynagrad, M) == load(torch, T)


def test_functional_names_and_registration():
    from dynagrad.utils.data import IterDataPipe, functional_datapipe
    assert {'map', 'filter', 'batch', 'unbatch', 'shuffle', 'sharding_filter', 'concat', 'zip',
            'mux', 'collate'} <= set(IterDataPipe.functions)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        M.IterableWrapper([1]).nope

    @functional_datapipe('dg_test_repeat')
    class Repeat(IterDataPipe):
        def __init__(self, dp, times):
            self.dp, self.times = dp, times

        def __iter__(self):
            for x in self.dp:
                yield from [x] * self.times
    try:
        assert list(M.IterableWrapper([1, 2]).dg_test_repeat(2)) == [1, 1, 2, 2]
        with pytest.raises(Exception, match='already taken'):
            functional_datapipe('dg_test_repeat')(Repeat)
    finally:
        del IterDataPipe.functions['dg_test_repeat']
    with pytest.raises(TypeError, match='can only decorate'):
        functional_datapipe('x')(object)
