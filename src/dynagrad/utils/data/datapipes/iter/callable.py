"""Mapper (``map``) and Collator (``collate``)."""
from ..._utils.collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ['MapperIterDataPipe', 'CollatorIterDataPipe', 'apply_on_columns']


def _pick(data, input_col):
    if input_col is None:
        return (data,)
    if isinstance(input_col, (list, tuple)):
        return tuple(data[c] for c in input_col)
    return (data[input_col],)


def apply_on_columns(fn, data, input_col, output_col):
    """``fn`` on the whole item, or on its ``input_col`` fields, written where
    ``output_col`` says (None: in place of the first input field, the others removed;
    -1: appended)."""
    if input_col is None and output_col is None:
        return fn(data)
    result = fn(*_pick(data, input_col))
    was_tuple = isinstance(data, tuple)
    data = list(data) if was_tuple else (
        DataChunk(list(data)) if isinstance(data, DataChunk) else
        data.copy() if hasattr(data, 'copy') else data)
    if output_col is None:
        if isinstance(input_col, (list, tuple)):
            data[input_col[0]] = result
            for c in sorted(input_col[1:], reverse=True):
                del data[c]
        else:
            data[input_col] = result
    elif output_col == -1 and isinstance(data, list):
        data.append(result)
    else:
        data[output_col] = result
    return tuple(data) if was_tuple else data


@functional_datapipe('map')
class MapperIterDataPipe(IterDataPipe):
    """Applies ``fn`` to each item (or to its ``input_col`` fields)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        if input_col is None and output_col is not None:
            raise ValueError('`output_col` must be None when `input_col` is None.')
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError('`output_col` must be a single-element list or tuple')
            output_col = output_col[0]
        self.datapipe, self.fn = datapipe, fn
        self.input_col, self.output_col = input_col, output_col

    def __iter__(self):
        for data in self.datapipe:
            yield apply_on_columns(self.fn, data, self.input_col, self.output_col)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe('collate')
class CollatorIterDataPipe(MapperIterDataPipe):
    """Applies ``collate_fn`` (or ``conversion``, ``default_collate`` by default) to each
    item, most often a batch."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        super().__init__(datapipe, fn=collate_fn if collate_fn is not None else conversion)
