"""Fetchers: one batch (or sample) from a dataset, given what the sampler chose."""

__all__ = ['MapDatasetFetcher', 'IterableDatasetFetcher', 'make_fetcher']


class MapDatasetFetcher:
    """``dataset[i]`` for each index of the batch (or ``__getitems__`` of them all)."""
    __slots__ = ('dataset', 'auto_collation', 'collate_fn', 'drop_last')

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, '__getitems__', None)
            if callable(getitems):
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
            return self.collate_fn(data)
        return self.collate_fn(self.dataset[index])


class IterableDatasetFetcher:
    """The next samples of the dataset's iterator; StopIteration once it is exhausted (a
    last, shorter batch first unless ``drop_last``)."""
    __slots__ = ('dataset_iter', 'auto_collation', 'collate_fn', 'drop_last', 'ended')

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
            return self.collate_fn(data)
        return self.collate_fn(next(self.dataset_iter))


def make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableDatasetFetcher if kind == 'iterable' else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
