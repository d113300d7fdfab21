"""DataPipes: datasets built by chaining steps, ``IterableWrapper(range(10)).map(f).batch(4)``.

A step is a DataPipe class registered under a functional name (``functional_datapipe``);
calling that name on any DataPipe of its kind wraps it in the step. Chains are graphs of
DataPipes that ``graph.traverse_dps`` walks, so that DataLoader and ``graph_settings`` can
reach the shufflers and sharding filters inside them.
"""
from ..dataset import Dataset, IterableDataset, T_co

__all__ = ['DataChunk', 'IterDataPipe', 'MapDataPipe', 'DFIterDataPipe']


class DataChunk(list):
    """A batch made by ``batch()``: a list, that ``unbatch`` knows to split again."""

    def __init__(self, items):
        super().__init__(items)
        self.items = items

    def as_str(self, indent=''):
        return indent + '[' + ', '.join(str(i) for i in iter(self)) + ']'

    def raw_iterator(self):
        yield from self.items


class _Functional:
    """The functional names of one DataPipe kind: ``dp.map(...)`` builds a Mapper."""
    functions = None

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f'Unable to add DataPipe function name {function_name} as it is '
                            'already taken')
        cls.functions[function_name] = cls_to_register

    def __getattr__(self, name):
        step = type(self).functions.get(name)
        if step is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

        def call(*args, **kwargs):
            return step(self, *args, **kwargs)
        call.__name__ = name
        call.__doc__ = step.__doc__
        return call

    def __dir__(self):
        return list(super().__dir__()) + list(type(self).functions)

    def __repr__(self):
        return type(self).__qualname__

    def __str__(self):
        return type(self).__qualname__


class IterDataPipe(_Functional, IterableDataset[T_co]):
    """A DataPipe read by iterating: every step of ``IterDataPipe.functions`` applies."""
    functions = {}

    def reset(self):
        """Called when a new iteration starts (Shuffler draws its order there)."""


class MapDataPipe(_Functional, Dataset[T_co]):
    """A DataPipe read by index (``dp[i]``), with ``len``: ``MapDataPipe.functions`` apply."""
    functions = {}


class DFIterDataPipe(IterDataPipe[T_co]):
    """The base of dataframe DataPipes (dynagrad has no dataframe steps)."""

    def _is_dfpipe(self):
        return True
