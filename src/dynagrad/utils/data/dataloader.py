"""``DataLoader``: batches from a dataset, in the main process (``num_workers=0``)."""
import numpy as np

from .dataset import IterableDataset
from .sampler import Sampler, SequentialSampler, RandomSampler, BatchSampler
from .collate import default_collate, default_convert

__all__ = ['DataLoader', 'get_worker_info']


def get_worker_info():
    """``None``: dynagrad loads data in the main process, never in a worker."""
    return None


class _InfiniteConstantSampler(Sampler):
    """The 'indices' of an IterableDataset: None forever (the dataset decides what comes)."""

    def __iter__(self):
        while True:
            yield None


_FROZEN = ('batch_size', 'batch_sampler', 'sampler', 'drop_last', 'dataset',
           'persistent_workers')


class DataLoader:
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    ``batch_size`` samples per batch (``None`` turns batching off); ``shuffle`` draws a new
    order each epoch from ``generator`` (default: dynagrad's default generator, so
    ``dynagrad.manual_seed`` makes the epochs repeat); ``sampler`` / ``batch_sampler``
    choose indices instead; ``collate_fn`` merges samples (``default_collate``);
    ``drop_last`` drops a last, incomplete batch. Data loads in the main process:
    ``num_workers`` must be 0 (worker processes are not implemented).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device='',
                 in_order=True):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool):
            raise TypeError(f'num_workers must be an int, got {type(num_workers).__name__}')
        if num_workers < 0:
            raise ValueError('num_workers option should be non-negative; use num_workers=0 to '
                             'disable multiprocessing.')
        if num_workers > 0:
            raise NotImplementedError(f'dynagrad\'s DataLoader loads data in the main process '
                                      f'only: num_workers={num_workers} is not supported, use '
                                      f'num_workers=0')
        if timeout < 0:
            raise ValueError('timeout option should be non-negative')
        if prefetch_factor is not None:
            raise ValueError('prefetch_factor option could only be specified in '
                             'multiprocessing.let num_workers > 0 to enable multiprocessing, '
                             'otherwise set prefetch_factor to None.')
        if persistent_workers:
            raise ValueError('persistent_workers option needs num_workers > 0')

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = 'iterable'
            if shuffle not in (False, None):
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'shuffle option, but got shuffle={shuffle}')
            if sampler is not None:
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'sampler option, but got sampler={sampler}')
            if batch_sampler is not None:
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified '
                                 f'batch_sampler option, but got batch_sampler={batch_sampler}')
        else:
            self._dataset_kind = 'map'
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError('sampler option is mutually exclusive with shuffle')
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError('batch_sampler option is mutually exclusive with batch_size, '
                                 'shuffle, sampler, and drop_last')
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError('batch_size=None option disables auto-batching and is mutually '
                             'exclusive with drop_last')

        if sampler is None:
            if self._dataset_kind == 'iterable':
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.__initialized = True

    def __setattr__(self, name, value):
        if self.__dict__.get('_DataLoader__initialized') and name in _FROZEN:
            raise ValueError(f'{name} attribute should not be set after '
                             f'{type(self).__name__} is initialized')
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        if self._dataset_kind == 'iterable':
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter:
    """One pass over a DataLoader."""

    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        # As PyTorch does at the start of every pass, draw a base seed (for workers, which
        # dynagrad does not have) from the loader's generator: the random streams advance
        # alike, epoch after epoch.
        from ...ops.random import array_rng
        self._base_seed = int(array_rng(loader.generator).integers(0, 1 << 63, dtype=np.int64))
        self._dataset_iter = iter(self._dataset) if loader._dataset_kind == 'iterable' else None
        self._ended = False
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _fetch_iterable(self, index):
        if self._auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self._dataset_iter))
                except StopIteration:
                    self._ended = True
                    break
            if not data or (self._drop_last and len(data) < len(index)):
                raise StopIteration
            return self._collate_fn(data)
        return self._collate_fn(next(self._dataset_iter))

    def _fetch_map(self, index):
        if self._auto_collation:
            getitems = getattr(self._dataset, '__getitems__', None)
            if callable(getitems):
                data = getitems(index)
            else:
                data = [self._dataset[i] for i in index]
            return self._collate_fn(data)
        return self._collate_fn(self._dataset[index])

    def __next__(self):
        if self._ended:
            raise StopIteration
        index = next(self._sampler_iter)
        if self._dataset_iter is not None:
            out = self._fetch_iterable(index)
        else:
            out = self._fetch_map(index)
        self._num_yielded += 1
        return out
