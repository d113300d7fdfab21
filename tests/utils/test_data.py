"""dynagrad.utils.data against torch.utils.data: batch structure, dtypes, shapes, lengths,
errors; the random parts by their statistics and seeded repeatability (values differ from
torch's by design: another bit generator)."""
import collections
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import dynagrad as dg
import dynagrad.utils.data as dud


# -- helpers -----------------------------------------------------------------------------

def sig(x):
    """A library-neutral description of a batch: container types, tensor shapes and dtypes,
    and the values."""
    if isinstance(x, (dg.Tensor, torch.Tensor)):
        return ('T', tuple(x.shape), str(x.dtype).split('.')[-1], x.detach().tolist())
    if isinstance(x, dict):
        return (type(x).__name__, [(k, sig(v)) for k, v in x.items()])
    if isinstance(x, tuple) and hasattr(x, '_fields'):
        return (type(x).__name__, [sig(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [sig(v) for v in x])
    if isinstance(x, np.ndarray):
        return ('ndarray', x.dtype.str, x.tolist())
    return (type(x).__name__, x)


def to_lib(x, lib):
    """Samples built from NumPy, with the library's tensors where a tensor is wanted."""
    if isinstance(x, Tens):
        return dg.from_numpy(x.a.copy()) if lib == 'dg' else torch.from_numpy(x.a.copy())
    if isinstance(x, dict):
        return type(x)((k, to_lib(v, lib)) for k, v in x.items())
    if isinstance(x, tuple) and hasattr(x, '_fields'):
        return type(x)(*(to_lib(v, lib) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_lib(v, lib) for v in x)
    return x


class Tens:
    def __init__(self, a):
        self.a = np.asarray(a)


Point = collections.namedtuple('Point', 'x y')

COLLATE_CASES = {
    'floats': [1.5, 2.5, -1.0],
    'ints': [1, 2, 3],
    'bools': [True, False, True],
    'int_then_float': [1, 2.5],
    'float_then_int': [1.5, 2],
    'strings': ['a', 'bc'],
    'bytes': [b'a', b'b'],
    'np_f32': [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)],
    'np_f64': [np.arange(3.0), np.arange(3.0) + 1],
    'np_f16': [np.ones(2, np.float16)] * 2,
    'np_i32': [np.arange(4, dtype=np.int32)] * 3,
    'np_i64': [np.arange(4)] * 2,
    'np_u8': [np.arange(4, dtype=np.uint8)] * 2,
    'np_bool': [np.array([True, False])] * 2,
    'np_0d': [np.array(1.5), np.array(2.5)],
    'np_scalar_f32': [np.float32(1), np.float32(2)],
    'np_scalar_i64': [np.int64(1), np.int64(5)],
    'np_scalar_i16': [np.int16(1), np.int16(5)],
    'np_scalar_bool': [np.bool_(True), np.bool_(False)],
    'tensor_f32': [Tens(np.ones((2, 2), np.float32)), Tens(np.zeros((2, 2), np.float32))],
    'tensor_f64': [Tens(np.arange(3.0))] * 2,
    'tensor_i64': [Tens(np.arange(3))] * 4,
    'tensor_0d': [Tens(np.array(3)), Tens(np.array(4))],
    'tensor_bool': [Tens(np.array([True]))] * 2,
    'tuple': [(1, 2.0), (3, 4.0)],
    'list': [[1, 2.0], [3, 4.0]],
    'dict': [{'a': 1, 'b': [1.0, 'x']}, {'a': 2, 'b': [3.0, 'y']}],
    'ordered_dict': [collections.OrderedDict(b=1, a=2.0)] * 2,
    'namedtuple': [Point(1, 2.0), Point(3, 4.0)],
    'nested': [({'img': Tens(np.ones((1, 2, 2), np.float32)), 'label': 3}, 'name0', [np.int32(1)]),
               ({'img': Tens(np.zeros((1, 2, 2), np.float32)), 'label': 5}, 'name1',
                [np.int32(2)])],
    'tensor_and_number': [(Tens(np.ones(3, np.float32)), 0), (Tens(np.zeros(3, np.float32)), 1)],
}


@pytest.mark.parametrize('case', sorted(COLLATE_CASES))
def test_default_collate_matches_torch(case):
    batch = COLLATE_CASES[case]
    got = dud.default_collate(to_lib(batch, 'dg'))
    want = tud.default_collate(to_lib(batch, 'torch'))
    assert sig(got) == sig(want)


@pytest.mark.parametrize('case', sorted(COLLATE_CASES))
def test_default_convert_matches_torch(case):
    sample = COLLATE_CASES[case][0]
    got = dud.default_convert(to_lib(sample, 'dg'))
    want = tud.default_convert(to_lib(sample, 'torch'))
    assert sig(got) == sig(want)


@pytest.mark.parametrize('batch', [
    [np.array([1, 'a'], dtype=object)] * 2,
    [np.array(['a'])] * 2,
    [None, None],
    [{1}, {2}],
    [object(), object()],
], ids=['object_array', 'str_array', 'none', 'set', 'object'])
def test_default_collate_type_errors_match_torch(batch):
    with pytest.raises(TypeError) as want:
        tud.default_collate(batch)
    with pytest.raises(TypeError) as got:
        dud.default_collate(batch)
    assert str(got.value) == str(want.value)


def test_default_collate_uneven_lists():
    with pytest.raises(RuntimeError, match='each element in list of batch should be of equal '
                                           'size'):
        dud.default_collate([[1, 2], [1]])


def test_default_collate_stacks_with_autograd():
    a = dg.ones(2, requires_grad=True)
    b = dud.default_collate([a, a * 2])
    b.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]


# -- datasets ----------------------------------------------------------------------------

def tensor_pair(lib, n=10):
    mod = dg if lib == 'dg' else torch
    x = mod.arange(n * 3, dtype=mod.float32).reshape(n, 3)
    y = mod.arange(n) % 3
    return x, y


class Squares(dud.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {'x': np.full(2, i, np.float32), 'y': i * i, 'name': f's{i}'}

    def __len__(self):
        return self.n


class TorchSquares(tud.Dataset):
    __init__, __getitem__, __len__ = Squares.__init__, Squares.__getitem__, Squares.__len__


class Stream(dud.IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter([(float(i), i) for i in range(self.n)])

    def __len__(self):
        return self.n if self.length is None else self.length


class TorchStream(tud.IterableDataset):
    __init__, __iter__, __len__ = Stream.__init__, Stream.__iter__, Stream.__len__


def test_tensor_dataset():
    x, y = tensor_pair('dg')
    ds = dud.TensorDataset(x, y)
    assert len(ds) == 10
    assert sig(ds[3]) == sig(tud.TensorDataset(*tensor_pair('torch'))[3])
    with pytest.raises(AssertionError, match='Size mismatch between tensors'):
        dud.TensorDataset(dg.ones(2), dg.ones(3))


def test_concat_dataset_and_add():
    a, b = Squares(3), Squares(4)
    cd = a + b
    assert isinstance(cd, dud.ConcatDataset)
    assert len(cd) == 7 and cd.cumulative_sizes == [3, 7]
    assert [cd[i]['y'] for i in range(7)] == [0, 1, 4, 0, 1, 4, 9]
    assert cd[-1]['y'] == 9 and cd[-7]['y'] == 0
    with pytest.raises(ValueError, match='absolute value of index should not exceed dataset '
                                         'length'):
        cd[-8]
    with pytest.raises(IndexError):
        cd[7]
    with pytest.raises(AssertionError, match='datasets should not be an empty iterable'):
        dud.ConcatDataset([])
    with pytest.raises(AssertionError, match='ConcatDataset does not support IterableDataset'):
        dud.ConcatDataset([Stream(3)])


def test_chain_and_stack_datasets():
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, dud.ChainDataset)
    assert list(chained) == list(TorchStream(2) + TorchStream(3))
    assert len(chained) == 5
    sd = dud.StackDataset(Squares(3), range(3))
    assert sd[2][1] == 2 and len(sd) == 3
    assert dud.StackDataset(a=range(2), b=range(2))[1] == {'a': 1, 'b': 1}
    with pytest.raises(ValueError, match='Size mismatch between datasets'):
        dud.StackDataset(range(2), range(3))


def test_subset():
    ds = Squares(10)
    sub = dud.Subset(ds, [7, 2, 5])
    assert len(sub) == 3 and sub[0]['y'] == 49
    assert [s['y'] for s in sub.__getitems__([2, 0])] == [25, 49]
    tsub = tud.Subset(TorchSquares(10), [7, 2, 5])
    assert sig(list(dud.DataLoader(sub, batch_size=2))) == \
        sig(list(tud.DataLoader(tsub, batch_size=2)))


def test_dataset_base_errors():
    with pytest.raises(NotImplementedError, match='Subclasses of Dataset should implement '
                                                  '__getitem__.'):
        dud.Dataset()[0]
    with pytest.raises(NotImplementedError):
        iter(dud.IterableDataset())


# -- random_split -------------------------------------------------------------------------

@pytest.mark.parametrize('n,lengths', [
    (10, [3, 7]), (10, [0.33, 0.33, 0.34]), (10, [0.5, 0.5]), (7, [0.1, 0.9]),
    (100, [0.8, 0.1, 0.1]), (3, [1.0]),
])
def test_random_split_lengths_match_torch(n, lengths):
    got = dud.random_split(range(n), lengths, generator=dg.Generator().manual_seed(1))
    want = tud.random_split(range(n), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in got] == [len(s) for s in want]
    idx = [i for s in got for i in s.indices]
    assert sorted(idx) == list(range(n))
    assert all(isinstance(s, dud.Subset) and isinstance(s.indices, list) for s in got)


def test_random_split_seeded_and_default_generator():
    a = dud.random_split(range(20), [10, 10], generator=dg.Generator().manual_seed(3))
    b = dud.random_split(range(20), [10, 10], generator=dg.Generator().manual_seed(3))
    assert [s.indices for s in a] == [s.indices for s in b]
    dg.manual_seed(5)
    c = dud.random_split(range(20), [10, 10])
    dg.manual_seed(5)
    d = dud.random_split(range(20), [10, 10])
    assert [s.indices for s in c] == [s.indices for s in d]
    assert c[0].indices != sorted(c[0].indices) or c[1].indices != sorted(c[1].indices)


@pytest.mark.parametrize('lengths', [[3, 3], [0.5, 0.6], [-0.5, 1.5], [11]])
def test_random_split_errors_match_torch(lengths):
    with pytest.raises(ValueError) as want:
        tud.random_split(range(10), lengths)
    with pytest.raises(ValueError) as got:
        dud.random_split(range(10), lengths)
    assert str(got.value) == str(want.value)


def test_random_split_warns_on_empty_split():
    with pytest.warns(UserWarning) as rec:
        dud.random_split(range(2), [0.9, 0.05, 0.05])
    assert [str(w.message) for w in rec] == [
        f'Length of split at index {i} is 0. This might result in an empty dataset.'
        for i in (1, 2)]


# -- DataLoader: deterministic parts, against torch ----------------------------------------

@pytest.mark.parametrize('batch_size', [1, 3, 4, 10, 11, None])
@pytest.mark.parametrize('drop_last', [False, True])
def test_loader_tensor_dataset_matches_torch(batch_size, drop_last):
    if batch_size is None and drop_last:
        return
    got = dud.DataLoader(dud.TensorDataset(*tensor_pair('dg')), batch_size=batch_size,
                         drop_last=drop_last)
    want = tud.DataLoader(tud.TensorDataset(*tensor_pair('torch')), batch_size=batch_size,
                          drop_last=drop_last)
    assert len(got) == len(want)
    assert sig(list(got)) == sig(list(want))
    assert sig(list(got)) == sig(list(want))      # a second epoch


def test_loader_dict_samples_match_torch():
    got = list(dud.DataLoader(Squares(5), batch_size=2))
    want = list(tud.DataLoader(TorchSquares(5), batch_size=2))
    assert sig(got) == sig(want)
    assert got[0]['x'].dtype == dg.float32 and got[0]['y'].dtype == dg.int64


def test_loader_sampler_batch_sampler_collate_fn():
    ds, tds = Squares(10), TorchSquares(10)
    order = [9, 0, 4, 4, 2]
    assert sig(list(dud.DataLoader(ds, batch_size=2, sampler=order))) == \
        sig(list(tud.DataLoader(tds, batch_size=2, sampler=order)))
    batches = [[1, 2, 3], [0], [9, 8]]
    got = dud.DataLoader(ds, batch_sampler=batches)
    want = tud.DataLoader(tds, batch_sampler=batches)
    assert len(got) == len(want) == 3
    assert sig(list(got)) == sig(list(want))
    bs = dud.BatchSampler(dud.SequentialSampler(ds), 4, True)
    assert sig(list(dud.DataLoader(ds, batch_sampler=bs))) == sig(list(tud.DataLoader(
        tds, batch_sampler=tud.BatchSampler(tud.SequentialSampler(tds), 4, True))))

    def names(batch):
        return [s['name'] for s in batch]
    assert list(dud.DataLoader(ds, batch_size=4, collate_fn=names)) == \
        list(tud.DataLoader(tds, batch_size=4, collate_fn=names))


def test_loader_uses_getitems():
    calls = []

    class Batched(Squares):
        def __getitems__(self, idx):
            calls.append(list(idx))
            return [self[i] for i in idx]
    list(dud.DataLoader(Batched(5), batch_size=2))
    assert calls == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize('batch_size,drop_last', [(3, False), (3, True), (1, False), (None, False),
                                                  (7, False), (8, True)])
def test_loader_iterable_dataset_matches_torch(batch_size, drop_last):
    got = dud.DataLoader(Stream(7), batch_size=batch_size, drop_last=drop_last)
    want = tud.DataLoader(TorchStream(7), batch_size=batch_size, drop_last=drop_last)
    assert len(got) == len(want)
    assert sig(list(got)) == sig(list(want))


def test_loader_attributes_match_torch():
    for kw in [{}, {'shuffle': True}, {'batch_size': None}, {'batch_size': 3, 'drop_last': True}]:
        g, t = dud.DataLoader(Squares(4), **kw), tud.DataLoader(TorchSquares(4), **kw)
        assert (g.batch_size, g.drop_last, type(g.sampler).__name__,
                type(g.batch_sampler).__name__, g.num_workers) == \
            (t.batch_size, t.drop_last, type(t.sampler).__name__,
             type(t.batch_sampler).__name__, t.num_workers)
    assert dud.DataLoader(Squares(4)).collate_fn is dud.default_collate
    assert dud.DataLoader(Squares(4), batch_size=None).collate_fn is dud.default_convert
    assert dud.get_worker_info() is None


LOADER_ERRORS = [
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=3),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(num_workers=-1),
    dict(batch_size=0),
    dict(batch_size=2.0),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
]


@pytest.mark.parametrize('kw', LOADER_ERRORS, ids=lambda kw: '-'.join(kw))
def test_loader_option_errors_match_torch(kw):
    with pytest.raises(ValueError) as want:
        tud.DataLoader(TorchSquares(4), **kw)
    with pytest.raises(ValueError) as got:
        dud.DataLoader(Squares(4), **kw)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize('kw', [dict(shuffle=True), dict(sampler=[1]), dict(batch_sampler=[[1]])],
                         ids=lambda kw: next(iter(kw)))
def test_loader_iterable_dataset_errors_match_torch(kw):
    with pytest.raises(ValueError) as want:
        tud.DataLoader(TorchStream(3), **kw)
    with pytest.raises(ValueError) as got:
        dud.DataLoader(Stream(3), **kw)
    assert str(got.value) == str(want.value)


def test_loader_num_workers_must_be_an_int():
    with pytest.raises(TypeError, match='num_workers must be an int, got float'):
        dud.DataLoader(Squares(4), num_workers=2.0)


def test_loader_attributes_frozen_after_init():
    loader = dud.DataLoader(Squares(4))
    for name in ('batch_size', 'sampler', 'batch_sampler', 'drop_last', 'dataset'):
        with pytest.raises(ValueError, match=f'{name} attribute should not be set after '
                                             f'DataLoader is initialized'):
            setattr(loader, name, 3)
    loader.collate_fn = list    # allowed, as in torch
    assert isinstance(next(iter(loader)), list)


# -- shuffling and samplers: statistics and seeded repeatability ---------------------------

def epoch_orders(loader, epochs):
    return [[int(v) for b in loader for v in b[1].tolist()] for _ in range(epochs)]


def test_shuffle_is_a_permutation_each_epoch_and_repeats_with_manual_seed():
    ds = dud.TensorDataset(*tensor_pair('dg', 10))
    loader = dud.DataLoader(ds, batch_size=3, shuffle=True)
    dg.manual_seed(123)
    first = [[b[0][:, 0].tolist() for b in loader] for _ in range(3)]
    for epoch in first:
        flat = [int(v) // 3 for batch in epoch for v in batch]
        assert sorted(flat) == list(range(10))
        assert [len(b) for b in epoch] == [3, 3, 3, 1]
    assert first[0] != first[1] != first[2]
    dg.manual_seed(123)
    again = [[b[0][:, 0].tolist() for b in loader] for _ in range(3)]
    assert again == first


def test_shuffle_with_generator_repeats_and_ignores_default():
    ds = dud.TensorDataset(*tensor_pair('dg', 20))
    run = []
    for seed in (7, 7, 8):
        g = dg.Generator().manual_seed(seed)
        dg.manual_seed(int(np.random.SeedSequence().entropy) % 1000)   # must not matter
        loader = dud.DataLoader(ds, batch_size=5, shuffle=True, generator=g)
        run.append([[b[0][:, 0].tolist() for b in loader] for _ in range(2)])
    assert run[0] == run[1]
    assert run[0] != run[2]


def test_shuffle_positions_are_uniform():
    n, epochs = 8, 4000
    loader = dud.DataLoader(dud.TensorDataset(dg.arange(n)), batch_size=n, shuffle=True,
                            generator=dg.Generator().manual_seed(0))
    counts = np.zeros((n, n))
    for _ in range(epochs):
        (batch,) = next(iter(loader))
        counts[np.arange(n), batch.numpy()] += 1
    expected = epochs / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    # (n-1)^2 = 49 degrees of freedom: mean 49, sd ~10; 110 is far in the tail.
    assert chi2 < 110, chi2


def test_random_sampler_replacement_and_num_samples():
    g = dg.Generator().manual_seed(0)
    s = dud.RandomSampler(range(5), replacement=True, num_samples=1000, generator=g)
    draws = list(s)
    assert len(s) == len(draws) == 1000 and set(draws) <= set(range(5))
    counts = np.bincount(draws, minlength=5)
    assert ((counts - 200) ** 2 / 200).sum() < 25
    s = dud.RandomSampler(range(5), num_samples=13, generator=g)
    draws = list(s)
    assert len(draws) == 13
    assert sorted(draws[:5]) == sorted(draws[5:10]) == list(range(5))
    assert len(set(draws[10:])) == 3
    assert len(dud.RandomSampler(range(5))) == 5


def test_random_sampler_default_generator_repeats():
    dg.manual_seed(11)
    a = [list(dud.RandomSampler(range(30))) for _ in range(2)]
    dg.manual_seed(11)
    b = [list(dud.RandomSampler(range(30))) for _ in range(2)]
    assert a == b and a[0] != a[1]


@pytest.mark.parametrize('make,exc', [
    (lambda m: m.RandomSampler(range(3), replacement=1), TypeError),
    (lambda m: m.RandomSampler(range(3), num_samples=0), ValueError),
    (lambda m: m.RandomSampler(range(3), num_samples=2.0), ValueError),
    (lambda m: m.WeightedRandomSampler([1, 2], num_samples=-1), ValueError),
    (lambda m: m.WeightedRandomSampler([[1, 2]], num_samples=1), ValueError),
    (lambda m: m.WeightedRandomSampler([1, 2], num_samples=1, replacement=0), ValueError),
    (lambda m: m.BatchSampler([1], 0, False), ValueError),
    (lambda m: m.BatchSampler([1], 1, 0), ValueError),
])
def test_sampler_errors_match_torch(make, exc):
    with pytest.raises(exc) as want:
        make(tud)
    with pytest.raises(exc) as got:
        make(dud)
    assert str(got.value) == str(want.value)


def test_subset_random_sampler():
    idx = [3, 8, 1, 9, 4]
    s = dud.SubsetRandomSampler(idx, generator=dg.Generator().manual_seed(0))
    orders = [list(s) for _ in range(5)]
    assert len(s) == 5
    assert all(sorted(o) == sorted(idx) for o in orders)
    assert len({tuple(o) for o in orders}) > 1
    dg.manual_seed(2)
    a = list(dud.SubsetRandomSampler(idx))
    dg.manual_seed(2)
    assert list(dud.SubsetRandomSampler(idx)) == a


def test_weighted_random_sampler_frequencies():
    w = [1.0, 2.0, 3.0, 4.0]
    s = dud.WeightedRandomSampler(w, 20000, generator=dg.Generator().manual_seed(0))
    draws = list(s)
    assert len(s) == len(draws) == 20000
    freq = np.bincount(draws, minlength=4) / 20000
    np.testing.assert_allclose(freq, np.array(w) / 10, atol=0.015)
    s = dud.WeightedRandomSampler(dg.tensor(w), 4, replacement=False)
    assert sorted(s) == [0, 1, 2, 3]
    assert s.weights.dtype == dg.float64
    with pytest.raises(RuntimeError, match='cannot sample n_sample > prob_dist.size'):
        list(dud.WeightedRandomSampler(w, 5, replacement=False))
    dg.manual_seed(9)
    a = list(dud.WeightedRandomSampler(w, 50))
    dg.manual_seed(9)
    assert list(dud.WeightedRandomSampler(w, 50)) == a


@pytest.mark.parametrize('n,bs,drop', [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                       (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, bs, drop):
    got = dud.BatchSampler(range(n), bs, drop)
    want = tud.BatchSampler(range(n), bs, drop)
    assert list(got) == list(want)
    assert len(got) == len(want)


def test_sequential_sampler():
    assert list(dud.SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert len(dud.SequentialSampler(Squares(6))) == 6


def test_training_loop_end_to_end():
    dg.manual_seed(0)
    x = dg.randn(64, 3)
    y = x @ dg.tensor([[1.0], [-2.0], [0.5]])
    loader = dud.DataLoader(dud.TensorDataset(x, y), batch_size=16, shuffle=True)
    w = dg.zeros(3, 1, requires_grad=True)
    for _ in range(60):
        for xb, yb in loader:
            loss = ((xb @ w - yb) ** 2).mean()
            loss.backward()
            with dg.no_grad():
                w -= 0.1 * w.grad
            w.grad = None
    np.testing.assert_allclose(w.detach().numpy().ravel(), [1.0, -2.0, 0.5], atol=1e-3)


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        list(dud.DataLoader(Squares(5), batch_size=2, shuffle=True))


def test_utils_reachable_from_package():
    code = 'import dynagrad; print(dynagrad.utils.data.DataLoader.__name__)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'DataLoader'


def test_math_ceil_len_consistency():
    for n in range(12):
        for bs in (1, 2, 5):
            assert len(dud.DataLoader(range(n), batch_size=bs)) == math.ceil(n / bs)


def test_data_classes_are_generic_as_torch():
    """Annotations such as ``DataLoader[Any]`` (kornia's) evaluate, on the classes torch
    makes generic and on those only."""
    import typing
    import torch.utils.data as tud
    import dynagrad.utils.data as dud
    for name in sorted(set(tud.__all__) & set(dud.__all__)):
        theirs, ours = getattr(tud, name), getattr(dud, name)
        if not isinstance(theirs, type):
            continue
        for cls in (theirs, ours):
            try:
                cls[typing.Any]
                generic = True
            except TypeError:
                generic = False
            if cls is theirs:
                expected = generic
            else:
                assert generic == expected, name

    class Squares(dud.Dataset[int]):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 4

    assert [b.tolist() for b in dud.DataLoader(Squares(), batch_size=2)] == [[0, 1], [4, 9]]
