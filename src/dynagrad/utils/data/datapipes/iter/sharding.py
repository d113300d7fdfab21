"""ShardingFilter (``sharding_filter``): each of N instances keeps every N-th item."""
from enum import IntEnum

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import no_length

__all__ = ['SHARDING_PRIORITIES', 'ShardingFilterIterDataPipe']


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


@functional_datapipe('sharding_filter')
class ShardingFilterIterDataPipe(IterDataPipe):
    """After ``apply_sharding(n, i)``, yields the items whose position is ``i`` modulo ``n``
    (all of them before)."""

    def __init__(self, source_datapipe, sharding_group_filter=None):
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups = {}
        self.num_of_instances, self.instance_id = 1, 0

    def is_shardable(self):
        return True

    def apply_sharding(self, num_of_instances, instance_id,
                       sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f'instance_id({instance_id}) should be smaller than '
                             f'num_of_instances({num_of_instances})')
        if sharding_group == SHARDING_PRIORITIES.DEFAULT:
            if self.groups and SHARDING_PRIORITIES.DEFAULT not in self.groups:
                raise RuntimeError('ShardingFilter cannot mix DEFAULT and non DEFAULT groups')
        elif SHARDING_PRIORITIES.DEFAULT in self.groups:
            raise RuntimeError('ShardingFilter cannot mix DEFAULT and non DEFAULT groups')
        self.groups[sharding_group] = (num_of_instances, instance_id)
        # the groups nest: DISTRIBUTED splits first, MULTIPROCESSING splits each share
        self.num_of_instances, self.instance_id = 1, 0
        for group in sorted(self.groups):
            n, i = self.groups[group]
            if self.sharding_group_filter is None or group == self.sharding_group_filter:
                self.instance_id += i * self.num_of_instances
                self.num_of_instances *= n

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        if not hasattr(self.source_datapipe, '__len__'):
            raise no_length(self)
        n = len(self.source_datapipe)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances
                                             else 0)
