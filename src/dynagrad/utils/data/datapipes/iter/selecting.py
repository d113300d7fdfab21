"""Filter (``filter``)."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .callable import _pick

__all__ = ['FilterIterDataPipe']


@functional_datapipe('filter')
class FilterIterDataPipe(IterDataPipe):
    """Keeps the items for which ``filter_fn`` (on the item or its ``input_col`` fields)
    returns True."""

    def __init__(self, datapipe, filter_fn, input_col=None):
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def __iter__(self):
        for data in self.datapipe:
            keep = self.filter_fn(*_pick(data, self.input_col))
            if not isinstance(keep, bool):
                raise ValueError(f'Boolean output is required for `filter_fn` of '
                                 f'FilterIterDataPipe, got {type(keep)}')
            if keep:
                yield data
