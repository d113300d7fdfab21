"""The keyword names torch's argument parser accepts beyond a function's own parameters.

torch's parser (the functions and Tensor methods written in C++) takes NumPy's names as
aliases: ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (``x.sum(axis=1,
keepdims=True)``, ``torch.cat(ts, axis=1)``); and a parameter dynagrad declares as ``*sizes``
by its keyword (``x.view(size=...)``, ``torch.flip(x, dims=...)``). ``install`` wraps the
functions that need it, once, after every family has registered its functions and methods;
a call without keywords pays one frame for it.
"""
import functools
import inspect

from ..tensor import Tensor

NUMPY_ALIASES = {'axis': 'dim', 'keepdims': 'keepdim'}

# torch's own functions of these names are Python code, which takes no alias
NO_ALIASES = frozenset({'norm', 'split', 'unique', 'unique_consecutive', 'unflatten'})

# torch names these parameters otherwise under this name (swapaxes is transpose here)
RENAMED = {'swapaxes': {'axis0': 'dim0', 'axis1': 'dim1'}}

# a ``*sizes`` parameter and the keyword torch names it by
VARARG_KEYWORDS = {'flip': 'dims', 'view': 'size', 'reshape': 'shape', 'permute': 'dims',
                   'expand': 'size', 'repeat': 'repeats', 'new_zeros': 'size',
                   'new_ones': 'size', 'new_empty': 'size', 'sum_to_size': 'size',
                   'resize_': 'size'}


def _accepting(fn, aliases, vararg):
    """``fn`` taking ``aliases`` (alias -> parameter) and ``vararg`` (its ``*`` parameter's
    keyword, or None) as torch's parser does."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs:
            for alias, name in aliases.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                        f"'{name}'")
                    kwargs[name] = kwargs.pop(alias)
            if vararg is not None and vararg in kwargs:
                if len(args) > 1:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                    f"'{vararg}'")
                args = args + (kwargs.pop(vararg),)
        return fn(*args, **kwargs)
    call.accepts_torch_keywords = True
    return call


def _parameters(fn):
    """``fn``'s parameter names and whether it takes ``*args``, as ``inspect.signature``
    reports them; None where it has none. Read from the code object (following
    ``functools.wraps``) where there is one: ``inspect.signature`` over the 2,200 functions
    ``install`` visits cost about a sixth of ``import dynagrad``."""
    plain = fn
    while not hasattr(plain, '__signature__'):
        inner = getattr(plain, '__wrapped__', None)
        if inner is None:
            code = getattr(plain, '__code__', None)
            if code is None or plain.__class__ is not _FUNCTION:
                break
            count = code.co_argcount + code.co_kwonlyargcount
            star = bool(code.co_flags & inspect.CO_VARARGS)
            more = star + bool(code.co_flags & inspect.CO_VARKEYWORDS)
            return code.co_varnames[:count + more], star
        plain = inner
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return tuple(params), any(p.kind == p.VAR_POSITIONAL for p in params.values())


_FUNCTION = type(_parameters)


def _needs(name, fn):
    found = _parameters(fn)
    if found is None:
        return None
    params, star = found
    aliases = {} if name in NO_ALIASES or 'axis' in params else {
        alias: p for alias, p in NUMPY_ALIASES.items() if p in params}
    aliases.update(RENAMED.get(name, {}))
    vararg = VARARG_KEYWORDS.get(name)
    if vararg is not None and not star:
        vararg = None
    return (aliases, vararg) if aliases or vararg else None


_WRAPPED = {}     # one wrapper per function and keyword set, whichever namespace binds it


def wrapper(name, fn):
    """``fn`` (bound as ``name``) taking the keywords torch's parser would take for it."""
    if getattr(fn, 'accepts_torch_keywords', False):    # installed by an earlier call
        return fn
    need = _needs(name, fn)
    if need is None:
        return fn
    key = (id(fn), repr(need))
    if key not in _WRAPPED:
        _WRAPPED[key] = _accepting(fn, *need)
    return _WRAPPED[key]


def install(namespaces):
    """Wrap, in Tensor and in each module of ``namespaces`` (by the names they bind), the
    functions torch's parser would take more keywords for; one wrapper per function. Run
    again by a layer that binds more (nn's top-level functions), it wraps only the new."""
    for name, fn in list(vars(Tensor).items()):
        if not name.startswith('_') and inspect.isfunction(fn):
            setattr(Tensor, name, wrapper(name, fn))
    for module in namespaces:
        for name in getattr(module, '__all__', ()):
            fn = getattr(module, name, None)
            if inspect.isfunction(fn):
                setattr(module, name, wrapper(name, fn))
