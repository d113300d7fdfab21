"""``traverse_dps``: the graph of a DataPipe chain, each DataPipe with the ones it reads."""
from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ['traverse_dps', 'DataPipeGraph']

DataPipeGraph = dict   # {id(datapipe): (datapipe, DataPipeGraph of its sources)}


def _sources(dp):
    found = []

    def visit(value, depth):
        if isinstance(value, (IterDataPipe, MapDataPipe)):
            found.append(value)
        elif depth and isinstance(value, (list, tuple, set)):
            for v in value:
                visit(v, depth - 1)
        elif depth and isinstance(value, dict):
            for v in value.values():
                visit(v, depth - 1)
    for value in vars(dp).values():
        visit(value, 2)
    return found


def traverse_dps(datapipe):
    """``{id(datapipe): (datapipe, traverse of each DataPipe it reads)}``."""
    def walk(dp, seen):
        if id(dp) in seen:
            return {id(dp): (dp, {})}
        seen = seen | {id(dp)}
        children = {}
        for src in _sources(dp):
            children.update(walk(src, seen))
        return {id(dp): (dp, children)}
    return walk(datapipe, frozenset())


def traverse(datapipe, only_datapipe=True):
    return traverse_dps(datapipe)
