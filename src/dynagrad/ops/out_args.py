"""``out=`` arguments: PyTorch's rules for writing a function's result into given tensors,
in one place for every function form that takes them.

A function with ``out=`` computes its result as without it, then ``write_out`` stores the
result in ``out`` and returns ``out`` itself (a tuple of them for the functions of several
results, ``max(x, dim)``, ``sort``, ``topk``...). The rules, as PyTorch 2.13 applies them:

- nothing may require grad while grad mode is on (out= results have no history), checked
  before anything runs;
- the result's dtype must cast to ``out``'s under PyTorch's rule (no float into an integer,
  no complex into a real, nothing but bool into bool); the functions of several results,
  and the few of one that PyTorch checks that way (``argmax``...), want ``out``'s dtype
  exactly; a factory (``zeros``, ``arange``...) without ``dtype=`` makes ``out``'s dtype;
- an ``out`` of another shape is resized, with PyTorch's deprecation warning unless it was
  empty; resizing replaces the array the tensor holds, so the tensor keeps its identity;
- the write counts as one in place: ``out``'s version counter moves.

The function forms get ``out=`` either in their own signature, when a factory of
``_elementwise`` made them or where a frame counts (``add``: see ``arithmetic``), or
through ``with_out``, which ``give_out`` applies to the public namespaces (``dynagrad``,
``dynagrad.special``, ``dynagrad.linalg``, ``dynagrad.fft``): internal calls and Tensor
methods (which PyTorch gives no ``out=``) keep the plain function.
"""
import inspect
import warnings

from .. import _dtype
from ..backend import xp
from ..tensor import Tensor, grad_mode, bump_version

__all__ = []

# How the result's dtype meets out's: 'cast' (PyTorch's can_cast), 'exact' (the same dtype)
# or 'factory' (a creation function: out's dtype is the dtype made).
CAST, EXACT, FACTORY = 'cast', 'exact', 'factory'

# C++'s names of the scalar types, which PyTorch's exact-dtype message prints
_CPP_NAMES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half',
              'bfloat16': 'c10::BFloat16', 'int64': 'long int', 'int32': 'int',
              'int16': 'short int', 'int8': 'signed char', 'uint8': 'unsigned char',
              'uint16': 'short unsigned int', 'uint32': 'unsigned int',
              'uint64': 'long unsigned int', 'bool': 'bool',
              'complex64': 'c10::complex<float>', 'complex128': 'c10::complex<double>'}


def _cpp_name(d):
    return _CPP_NAMES.get(d.name, d.name)


def can_cast(from_, to):
    """PyTorch's casting rule between dtypes: no float to integer, no complex to real,
    nothing but bool to bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return from_ is _dtype.bool or to is not _dtype.bool


def check_no_grad(name, args, kwargs, out):
    """PyTorch's refusal of out= when anything would need a gradient."""
    if not grad_mode.grad_enabled:
        return
    for value in (*args, *kwargs.values(), out):
        if _requires_grad(value):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               'automatic differentiation, but one of the arguments requires '
                               'grad.')


def _requires_grad(value):
    if isinstance(value, Tensor):
        return value._requires_grad
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, Tensor) and v._requires_grad for v in value)
    return False


def check_out(name, out, count):
    """``out`` as a tuple of ``count`` tensors (one tensor when ``count`` is 1)."""
    if count == 1:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f'{type(out).__name__}')
        return (out,)
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f'{type(out).__name__}')
    if len(out) != count:
        raise TypeError(f'expected tuple of {count} elements but got {len(out)}')
    return tuple(out)


def write_out(result, out, name, dtype_rule=CAST):
    """Store ``result`` (a tensor, or a tuple of them) in ``out`` by PyTorch's rules and
    return ``out`` (as ``result``'s tuple type for several results). Every check runs
    before the first write."""
    several = isinstance(result, (tuple, list))
    results = tuple(result) if several else (result,)
    outs = check_out(name, out, len(results))
    exact = several or dtype_rule == EXACT
    for r, o in zip(results, outs):
        if exact and r.dtype != o.dtype:
            raise RuntimeError(f'Expected out tensor to have dtype {_cpp_name(r.dtype)}, but '
                               f'got {_cpp_name(o.dtype)} instead')
        if not can_cast(r.dtype, o.dtype):
            raise RuntimeError(f"result type {_dtype.type_name(r.dtype)} can't be cast to the "
                               f'desired output type {_dtype.type_name(o.dtype)}')
    for r, o in zip(results, outs):
        _store(r._data, o, name)
    if not several:
        return out
    return type(result)(*outs) if hasattr(result, '_fields') else type(result)(outs)


def _store(value, out, name):
    target = out._data
    if target.shape != value.shape:
        if target.size:
            warnings.warn(
                f'An output with one or more elements was resized since it had shape '
                f'{list(target.shape)}, which does not match the required output shape '
                f'{list(value.shape)}. This behavior is deprecated, and in a future PyTorch '
                'release outputs will not be resized unless they have zero elements. You can '
                'explicitly reuse an out tensor t by resizing it, inplace, to zero elements '
                'with t.resize_(0).', UserWarning, stacklevel=5)
        target = xp.empty_like(value, dtype=target.dtype)
        out._data = target
    # the result is a fresh array, or an input when out is that input (add(a, 0, out=a)):
    # NumPy's assignment copies through a buffer where the two overlap
    target[...] = value
    bump_version(out, f'{name}(out=...)')


def call_into(out, name, fn, *args, _dtype_rule=CAST, **kwargs):
    """``fn(*args, **kwargs)`` written into ``out``: the out= path of a function form."""
    check_no_grad(name, args, kwargs, out)
    return write_out(fn(*args, **kwargs), out, name, _dtype_rule)


def with_out(fn, name=None, dtype_rule=CAST, needs_dim=False):
    """``fn`` with PyTorch's ``out=`` keyword: without it, ``fn`` itself is called (one
    frame more); with it, the result is written into ``out`` by ``write_out``'s rules.
    ``needs_dim``: only the overloads given a ``dim`` take out= (``sum(x, 0, out=o)``,
    not ``sum(x, out=o)``)."""
    name = name or fn.__name__

    if dtype_rule == FACTORY:
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return _factory_out(fn, name, args, kwargs, out)
    else:
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            if needs_dim and (args[1] if len(args) > 1 else kwargs.get('dim')) is None:
                raise TypeError(f'{name}() received an invalid combination of arguments: '
                                'out= takes a dim')
            # a dtype= asked for is the result's: out must have it
            rule = EXACT if kwargs.get('dtype') is not None else dtype_rule
            return call_into(out, name, fn, *args, _dtype_rule=rule, **kwargs)
    front = _front(fn, function)
    if front is function:   # inspect.signature then shows fn's, not (*args, **kwargs)
        function.__wrapped__ = fn
    front.__name__ = front.__qualname__ = fn.__name__
    front.__module__ = fn.__module__
    front.__doc__ = fn.__doc__
    front.takes_out = True
    return front


_FUNCTION = type(check_no_grad)
_FRONTS = {}    # one compiled template per parameter list: 200 fronts share about 90


def _front(fn, slow):
    """A function with ``fn``'s own signature plus ``out=None`` that calls ``fn`` without
    it and ``slow`` with it, made as ``collections.namedtuple`` makes its methods: a call
    without out= then costs one frame, not the packing of ``*args, **kwargs`` too (about
    40 ns against 120). ``slow`` itself where the signature cannot be copied, and for a
    decorated function (``vmap_function``...): its wrapper's rules read the call as it was
    made, which a copy passing every default would change.

    The parameters are read from ``fn``'s code object and its defaults are given to the
    copy as they are, so one template, compiled once, serves every function of the same
    parameter names (compiling each front was a tenth of ``import dynagrad``)."""
    if hasattr(fn, '__wrapped__') or fn.__class__ is not _FUNCTION:
        return slow
    code = fn.__code__
    if code.co_posonlyargcount:
        return slow
    positional = code.co_varnames[:code.co_argcount]
    keyword = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount:]
    star = rest[0] if code.co_flags & inspect.CO_VARARGS else None
    varkw = rest[bool(star)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    if {'out', '_fn', '_slow'} & set(positional + keyword):
        return slow
    defaulted = len(fn.__defaults__ or ())
    decl = [name + ('=None' if k >= len(positional) - defaulted else '')
            for k, name in enumerate(positional)]
    call = list(positional)
    decl.append('*' + star if star else '*')
    if star:
        call.append('*' + star)
    decl += list(keyword) + ['out=None']
    call += [f'{name}={name}' for name in keyword]
    if varkw:
        decl.append('**' + varkw)
        call.append('**' + varkw)
    args = ', '.join(call)
    source = (f'def front({", ".join(decl)}):\n'
              f'    if out is None:\n'
              f'        return _fn({args})\n'
              f'    return _slow({args}{", " if args else ""}out=out)\n')
    template = _FRONTS.get(source)
    if template is None:
        namespace = {}
        exec(source, namespace)   # noqa: S102 (source made here from a code object)
        template = _FRONTS[source] = namespace['front'].__code__
    front = _FUNCTION(template.replace(co_name=fn.__name__, co_qualname=fn.__qualname__),
                      {'_fn': fn, '_slow': slow, '__builtins__': __builtins__},
                      fn.__name__, fn.__defaults__)
    front.__kwdefaults__ = {**(fn.__kwdefaults__ or {}), 'out': None}
    return front


def _factory_out(fn, name, args, kwargs, out):
    check_out(name, out, 1)
    dtype = kwargs.get('dtype')
    if dtype is None:
        kwargs['dtype'] = out.dtype
    elif _dtype.to_dtype(dtype) != out.dtype:
        raise RuntimeError(f'dtype {_dtype.type_name(_dtype.to_dtype(dtype))} does not match '
                           f'dtype of out parameter ({_dtype.type_name(out.dtype)})')
    return call_into(out, name, fn, *args, **kwargs)


def give_out(namespace, names, dtype_rule=CAST, needs_dim=False):
    """Replace each of ``names`` in the module dict ``namespace`` by its ``with_out`` form
    (names already taking out=, made by a factory, are left as they are)."""
    for name in names.split():
        fn = namespace[name]
        if not getattr(fn, 'takes_out', False):
            wrapped = with_out(fn, name, dtype_rule, needs_dim)
            # pickled by reference: found again where it is bound, not as the plain function
            wrapped.__module__ = namespace.get('__name__', fn.__module__)
            namespace[name] = wrapped
