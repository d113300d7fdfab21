"""The iterable DataPipes, by torch's short names."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .combining import (ConcaterIterDataPipe as Concater,
                        MultiplexerIterDataPipe as Multiplexer, ZipperIterDataPipe as Zipper)
from .grouping import BatcherIterDataPipe as Batcher, UnBatcherIterDataPipe as UnBatcher
from .selecting import FilterIterDataPipe as Filter
from .sharding import ShardingFilterIterDataPipe as ShardingFilter
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ['Batcher', 'Collator', 'Concater', 'Filter', 'IterableWrapper', 'Mapper',
           'Multiplexer', 'Sampler', 'ShardingFilter', 'Shuffler', 'UnBatcher', 'Zipper']
