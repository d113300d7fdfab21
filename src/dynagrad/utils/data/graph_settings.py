"""Settings applied across a DataPipe graph: shuffling on or off, seeds, sharding."""
import warnings

from .datapipes.iter.sharding import SHARDING_PRIORITIES
from .graph import DataPipeGraph, traverse_dps

__all__ = ['apply_random_seed', 'apply_sharding', 'apply_shuffle_seed',
           'apply_shuffle_settings', 'get_all_graph_pipes', 'SHARDING_PRIORITIES',
           'DataPipeGraph', 'traverse_dps']


def get_all_graph_pipes(graph):
    """Every DataPipe of ``graph`` (a ``traverse_dps`` result), each once."""
    found, stack = {}, [graph]
    while stack:
        for key, (dp, sub) in stack.pop().items():
            if key not in found:
                found[key] = dp
                stack.append(sub)
    return list(found.values())


def _shufflers(datapipe):
    return [dp for dp in get_all_graph_pipes(traverse_dps(datapipe))
            if hasattr(dp, 'set_shuffle') and hasattr(dp, 'set_seed')]


def apply_sharding(datapipe, num_of_instances, instance_id,
                   sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Shard the first sharding DataPipe on each path from ``datapipe`` to its sources."""
    def walk(graph, ancestor):
        for dp, sub in graph.values():
            if hasattr(dp, 'apply_sharding') and (not hasattr(dp, 'is_shardable')
                                                  or dp.is_shardable()):
                if ancestor is not None:
                    raise RuntimeError(f'Sharding twice on a single pipeline is likely '
                                       f'unintended and will cause data loss. Sharding '
                                       f'already applied to {ancestor} while trying to apply '
                                       f'to {dp}')
                dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                walk(sub, dp)
            else:
                walk(sub, ancestor)
    walk(traverse_dps(datapipe), None)
    return datapipe


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turn every shuffler of the graph on or off (``None``: leave them); with
    ``shuffle=True`` and no shuffler, one is added on top, with a warning."""
    if shuffle is None:
        return datapipe
    shufflers = _shufflers(datapipe)
    if not shufflers and shuffle:
        warnings.warn('`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. '
                      'Adding one at the end. Be aware that the default buffer size might not '
                      'be sufficient for your task.')
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for dp in shufflers:
        dp.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe, rng):
    """Seed every shuffler of the graph from ``rng`` (a dynagrad Generator)."""
    from ... import empty, int64
    for dp in _shufflers(datapipe):
        dp.set_seed(int(empty((), dtype=int64).random_(generator=rng).item()))
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    warnings.warn('`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the '
                  'future releases. Please use `apply_random_seed` instead.', FutureWarning)
    return apply_random_seed(datapipe, rng)
