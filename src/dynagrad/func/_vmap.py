"""``vmap``: a function of one sample, run on a batch in one pass (``torch.func.vmap``).

Each call opens a level: the inputs become batched tensors (``autograd/batched.py``)
whose batch dim is that level's, the function runs once, every op on a batched tensor
going through its batching rule (``_batch_rules.py``), and the outputs' batch dims are
moved to ``out_dims``. Levels nest (``vmap(vmap(f))``) and compose with the other
transforms of ``dynagrad.func``: ``vmap(grad(f))`` is per-sample gradients.
"""
import functools

from ..autograd import batched as _batched
from ..autograd.batched import BatchedTensor, batched, state as _state
from ..tensor import Tensor

__all__ = ['vmap']


def _install_rules():
    if _state.rules is None:
        from ._batch_rules import Rules
        _state.rules = Rules()


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for k in tree for x in _leaves(tree[k])]
    return [tree]


def _rebuild(tree, it):
    if isinstance(tree, (tuple, list)):
        parts = [_rebuild(t, it) for t in tree]
        return type(tree)(*parts) if hasattr(tree, '_fields') else type(tree)(parts)
    if isinstance(tree, dict):
        return {k: _rebuild(tree[k], it) for k in tree}
    return next(it)


def _structure(tree):
    if isinstance(tree, (tuple, list)):
        return f'{type(tree).__name__}({", ".join(_structure(t) for t in tree)})'
    if isinstance(tree, dict):
        return '{' + ', '.join(f'{k!r}: {_structure(v)}' for k, v in tree.items()) + '}'
    return '*'


def _dims_for(dims, tree, api, what, inputs_repr):
    """One dim (int or None) per leaf of ``tree``: ``dims`` is one for all, or a tree
    matching ``tree``'s structure down to where it holds one."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_leaves(tree))
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)) and \
            len(dims) == len(tree):
        return [d for sub_d, sub_t in zip(dims, tree)
                for d in _dims_for(sub_d, sub_t, api, what, inputs_repr)]
    if isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        return [d for k in tree for d in _dims_for(dims[k], tree[k], api, what, inputs_repr)]
    raise ValueError(
        f'{api}: {what} is not compatible with the structure of `{inputs_repr}`. {what} has '
        f'structure {_structure(dims)} but {inputs_repr} has structure {_structure(tree)}.')


def vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None):
    """``func`` vectorised over a batch dim of its inputs (``torch.func.vmap``)."""
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f'vmap: chunk_size should be None or greater than 0. (got '
                         f'{chunk_size})')
    if not callable(func):
        raise RuntimeError(f'vmap: Expected the first argument to be a callable, got '
                           f'{type(func).__name__}')

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _install_rules()
        name = getattr(func, '__name__', type(func).__name__)
        api = f'vmap({name}, in_dims={in_dims}, ...)(<inputs>)'
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f'{api}: expected `in_dims` to be int or a (potentially nested) '
                             f'tuple matching the structure of inputs, got: '
                             f'{type(in_dims)}.')
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f'{api}: in_dims is not compatible with the structure of '
                             f'`inputs`. in_dims has structure {_structure(in_dims)} but '
                             f'inputs has structure {_structure(args)}.')
        if not args:
            raise ValueError(f'{api}: got no inputs. Maybe you forgot to add inputs, or you '
                             'are trying to vmap over a function with no inputs. The latter '
                             'is unsupported.')
        leaves = _leaves(args)
        dims = _dims_for(in_dims, args, api, 'in_dims', 'inputs')
        size = None
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f'{api}: Got in_dim={d} for an input but the input is of type {type(x)}. '
                    'We cannot vmap over non-Tensor arguments, please use None as the '
                    'respective in_dim')
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(
                    f'{api}: Got in_dim={d} for some input, but that input is a Tensor of '
                    f'dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.')
            sizes.append(x.shape[d % n])
        if not sizes:
            raise ValueError(f'{api}: There are no Tensors that are being vmapped over '
                             '(all in_dims are None). Please pass at least one Tensor with '
                             'a non-None in_dim.')
        if len(set(sizes)) > 1:
            raise ValueError(f'vmap: Expected all tensors to have the same size in the mapped '
                             f'dimension, got sizes {sizes} for the mapped dimension')
        size = sizes[0]
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, args, kwargs, leaves, dims, size, chunk_size, randomness,
                            out_dims, name)
        return _call(func, args, kwargs, leaves, dims, size, randomness, out_dims, name)
    return wrapped


def _chunked(func, args, kwargs, leaves, dims, size, chunk_size, randomness, out_dims, name):
    """``chunk_size`` samples at a time (less memory at once), results joined."""
    from ..ops.shape import cat
    results = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        part = [x.narrow(d % x.dim(), start, n) if d is not None else x
                for x, d in zip(leaves, dims)]
        results.append(_call(func, args, kwargs, part, dims, n, randomness, out_dims, name))
    odims = _dims_for(out_dims, results[0], f'vmap({name}, ...)', 'out_dims', 'outputs')
    parts = [_leaves(r) for r in results]
    joined = [cat([p[j] for p in parts], dim=d) if d is not None else parts[0][j]
              for j, d in enumerate(odims)]
    return _rebuild(results[0], iter(joined))


def _call(func, args, kwargs, leaves, dims, size, randomness, out_dims, name):
    lvl = _batched.enter_level(size, randomness)
    try:
        inputs = [_enter(x, d, lvl.level) if d is not None else x
                  for x, d in zip(leaves, dims)]
        result = func(*_rebuild(args, iter(inputs)), **kwargs)
        outs = _leaves(result)
        odims = _dims_for(out_dims, result, f'vmap({name}, ...)', 'out_dims', 'outputs')
        exited = [_exit(o, d, lvl.level, size, name) for o, d in zip(outs, odims)]
    finally:
        _batched.exit_level(lvl)
    return _rebuild(result, iter(exited))


def _enter(x, d, level):
    """``x`` batched over ``level`` along its per-sample dim ``d``."""
    own = x._levels if x.__class__ is BatchedTensor else ()
    p = x._phys if own else x
    k = len(own)
    d = k + d % x.dim()
    if d != k:
        p = p.movedim(d, k)
    return batched(p, own + (level,))


def _exit(x, d, level, size, name):
    if not isinstance(x, Tensor):
        raise ValueError(f'vmap({name}, ...): `{name}` must only return Tensors, got type '
                         f'{type(x)}. Did you mean to set out_dims= to None for output?')
    own = x._levels if x.__class__ is BatchedTensor else ()
    if d is None:
        if level in own:
            raise ValueError(f'vmap({name}, ...): `{name}` can not return a BatchedTensor '
                             'when out_dim is None')
        return x
    if level not in own:      # the same for every sample: broadcast along the batch
        n = x.dim() + 1
        d = d % n
        return x.unsqueeze(d).expand(*[size if i == d else -1 for i in range(n)])
    i = own.index(level)
    rest = own[:i] + own[i + 1:]
    p = x._phys
    n = x.dim() + 1
    d = d % n
    target = len(rest) + d
    if i != target:
        p = p.movedim(i, target)
    return batched(p, rest)
