"""``functional_datapipe``: register a DataPipe class under a functional name."""
import inspect

from .datapipe import IterDataPipe, MapDataPipe

__all__ = ['functional_datapipe']


class functional_datapipe:
    """``@functional_datapipe('map')`` on an IterDataPipe (or MapDataPipe) class makes
    ``dp.map(*args)`` build ``cls(dp, *args)`` for every DataPipe of that kind."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if inspect.isclass(cls) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif inspect.isclass(cls) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError('`functional_datapipe` can only decorate IterDataPipe or '
                            f'MapDataPipe classes, got {cls!r}')
        return cls
