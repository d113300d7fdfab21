"""Sampler and Shuffler (``shuffle``)."""
import random

from ...sampler import SequentialSampler
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import no_length

__all__ = ['SamplerIterDataPipe', 'ShufflerIterDataPipe', 'draw_seed']


def draw_seed():
    """A seed from dynagrad's default generator, so that ``manual_seed`` repeats orders."""
    from ..... import empty, int64
    return int(empty((), dtype=int64).random_().item())


class SamplerIterDataPipe(IterDataPipe):
    """Yields what ``sampler(data_source=datapipe, *sampler_args, **sampler_kwargs)``
    yields (indices, for the samplers of ``torch.utils.data``)."""

    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None,
                 sampler_kwargs=None):
        if not hasattr(datapipe, '__len__'):
            raise AssertionError('Sampler class requires input datapipe implemented `__len__`')
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler = sampler(*self.sampler_args, data_source=self.datapipe,
                               **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        if hasattr(self.sampler, '__len__'):
            return len(self.sampler)
        raise no_length(self)


class SeededShuffle:
    """What the iterable and the map-style shufflers share: the switch DataLoader flips
    (``set_shuffle``) and the seed of the next order (``set_seed``, else the default
    generator's draw at ``reset``)."""

    def _start_shuffling(self):
        self._shuffle_enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._shuffle_enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def reset(self):
        if self._shuffle_enabled:
            self._rng.seed(draw_seed() if self._seed is None else self._seed)
            self._seed = None


@functional_datapipe('shuffle')
class ShufflerIterDataPipe(SeededShuffle, IterDataPipe):
    """Yields the items in a random order drawn through a buffer of ``buffer_size`` items
    (the whole DataPipe when it is no longer). Each iteration draws a new order from
    ``set_seed``'s seed, or from dynagrad's default generator; ``set_shuffle(False)`` (the
    DataLoader's ``shuffle=False``) passes the items through in order."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        if buffer_size <= 0:
            raise AssertionError('buffer_size should be larger than 0')
        if unbatch_level != 0:
            datapipe = datapipe.unbatch(unbatch_level=unbatch_level)
        self.datapipe, self.buffer_size = datapipe, buffer_size
        self._start_shuffling()

    def __iter__(self):
        if not self._shuffle_enabled:
            yield from self.datapipe
            return
        self.reset()
        buffer = []
        for x in self.datapipe:
            if len(buffer) == self.buffer_size:
                i = self._rng.randrange(len(buffer))
                buffer[i], x = x, buffer[i]
                yield x
            else:
                buffer.append(x)
        while buffer:
            i = self._rng.randrange(len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()

    def __len__(self):
        if hasattr(self.datapipe, '__len__'):
            return len(self.datapipe)
        raise no_length(self)

    def __getstate__(self):
        state = self.__dict__.copy()
        state['_rng'] = self._rng.getstate()
        return state

    def __setstate__(self, state):
        rng = random.Random()
        rng.setstate(state['_rng'])
        self.__dict__.update(state, _rng=rng)
