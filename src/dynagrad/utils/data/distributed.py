"""``DistributedSampler``: each rank iterates over its own shard of the data set."""
import math

from .dataset import T_co
from .sampler import Sampler

__all__ = ['DistributedSampler']


class DistributedSampler(Sampler[T_co]):
    """The indices of rank ``rank`` out of ``num_replicas``, as ``torch.utils.data``'s.

    Every rank draws the same permutation (seeded with ``seed + epoch``, so call
    ``set_epoch(epoch)`` at the start of each epoch to reshuffle), then takes every
    ``num_replicas``-th index starting at ``rank``. So that every rank gets the same number
    of samples, and so runs the same number of steps (a collective per step must be called
    by all), the list is padded by repeating its first indices, or, with
    ``drop_last=True``, cut to a multiple of ``num_replicas``.

    The permutation comes from dynagrad's generator, so the order differs from PyTorch's for
    the same seed; with ``shuffle=False`` the lists are identical.
    ``num_replicas``/``rank`` default to the process group's world size and rank.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError('Requires distributed package to be available: call '
                                   'dynagrad.distributed.init_process_group() first, or pass '
                                   'num_replicas and rank')
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if num_replicas < 1:
            raise ValueError(f'num_replicas must be at least 1, got {num_replicas}')
        if rank >= num_replicas or rank < 0:
            raise ValueError(f'Invalid rank {rank}, rank should be in the interval '
                             f'[0, {num_replicas - 1}]')
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            # Drop the tail so that every rank gets the same number of whole samples.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ...ops import random as rnd
            g = rnd.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = rnd.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            if missing > 0:
                repeats = math.ceil(missing / len(indices))
                indices += (indices * repeats)[:missing]
        assert len(indices) == self.total_size
        mine = indices[self.rank:self.total_size:self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Reseed the shuffle for this epoch (identically on every rank)."""
        self.epoch = epoch
