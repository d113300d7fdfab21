"""``functional_call``: run a module with some parameters and buffers replaced for one call.

The replacements go into the modules' parameter and buffer tables for the call only and the
originals come back afterwards, even if the call raises. Tied tensors (one tensor under two
names) are replaced together unless ``tie_weights=False``."""
import warnings
from contextlib import contextmanager

from ...tensor import Tensor
from .parametrize import is_parametrized

__all__ = ['functional_call']


def _tied_names(module):
    """name -> every name of the same tensor (parameters and buffers, duplicates kept)."""
    by_id = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    return {name: names for names in by_id.values() if len(names) > 1 for name in names}


def _slot(module, name):
    """(table, key) holding ``name`` (dotted), or (module, key) for a plain attribute."""
    prefix, _, key = name.rpartition('.')
    owner = module.get_submodule(prefix)
    for table in (owner._parameters, owner._buffers):
        if key in table:
            return table, key
    return owner.__dict__, key


@contextmanager
def _reparametrize_module(module, values, tie_weights=True, strict=False):
    own = dict(module.named_parameters(remove_duplicate=False))
    own.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = sorted(k for k in own if k not in values)
        unexpected = sorted(k for k in values if k not in own)
        if missing or unexpected:
            msg = f'Error(s) in reparametrizing for {module._get_name()}:'
            if unexpected:
                msg += '\n\tUnexpected key(s): ' + ', '.join(repr(k) for k in unexpected) + '.'
            if missing:
                msg += '\n\tMissing key(s): ' + ', '.join(repr(k) for k in missing) + '.'
            raise RuntimeError(msg)
    values = dict(values)
    if tie_weights:
        for name, tied in _tied_names(module).items():
            given = [n for n in tied if n in values]
            if given and name not in values:
                values[name] = values[given[0]]
            for other in given:
                if values[other] is not values[given[0]]:
                    raise ValueError(f'functional_call got multiple values for keys {given}, '
                                     'which are tied. Consider using tie_weights=False')
    saved = []
    try:
        for name, value in values.items():
            prefix, _, key = name.rpartition('.')
            owner = module.get_submodule(prefix)
            if is_parametrized(owner, key):
                # as PyTorch: assigning goes through the parametrization's right_inverse
                old = getattr(owner, key)
                setattr(owner, key, value)
                saved.append((owner, key, None, old))
                continue
            table, key = _slot(module, name)
            saved.append((table, key, key in table, table.get(key)))
            table[key] = value
        yield
    finally:
        for table, key, existed, old in reversed(saved):
            if existed is None:
                setattr(table, key, old)
            elif existed:
                table[key] = old
            else:
                table.pop(key, None)


def call_with_state(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """What ``functional_call`` does, without its deprecation warning (``dynagrad.func``'s
    ``functional_call`` is this, as ``torch.func.functional_call`` is)."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged, seen = {}, set()
        repeated = []
        for d in parameters_and_buffers:
            for k in d:
                if k in seen:
                    repeated.append(k)
                seen.add(k)
            merged.update(d)
        if repeated:
            raise ValueError(f'{repeated} appeared in multiple dictionaries; behavior of '
                             'functional call is ambiguous')
        parameters_and_buffers = merged
    for name, value in parameters_and_buffers.items():
        if not isinstance(value, Tensor):
            raise TypeError(f'functional_call: the value of {name!r} must be a Tensor, got '
                            f'{type(value).__name__}')
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors named in ``parameters_and_buffers`` (a
    dict, or a tuple of dicts with distinct keys) used in place of its own."""
    warnings.warn('`dynagrad.nn.utils.stateless.functional_call` is deprecated as of PyTorch '
                  '2.0 and will be removed in a future version of PyTorch.', FutureWarning,
                  stacklevel=2)
    return call_with_state(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
