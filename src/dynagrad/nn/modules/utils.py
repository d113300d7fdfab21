"""``dynagrad.nn.modules.utils``: the argument normalisers that ``torch.nn.modules.utils``
holds and that libraries (kornia, torchvision-style layers) import by their private names."""
import collections.abc
from itertools import repeat

__all__ = ['consume_prefix_in_state_dict_if_present']


def _ntuple(n, name='parse'):
    # torch's rule, kept exactly: any iterable (a string included) becomes a tuple as it is,
    # without a length check; anything else is repeated n times.
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, '_single')
_pair = _ntuple(2, '_pair')
_triple = _ntuple(3, '_triple')
_quadruple = _ntuple(4, '_quadruple')


def _reverse_repeat_tuple(t, n):
    """Reverse ``t`` and repeat each element ``n`` times: a Conv/Pool padding as F.pad's."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f'Input dimension should be at least {len(out_size) + 1}')
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place:
    a DataParallel/DDP checkpoint's ``module.`` keys then load into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, '_metadata', None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # '' is the wrapper's own entry; 'module' (no dot) the wrapped model's
            if len(key) == 0:
                continue
            if key == prefix.replace('.', '') or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
