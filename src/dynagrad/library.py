"""``dynagrad.library``: ``torch.library``'s way of adding operators, for the libraries that
define their own (``@torch.library.custom_op``).

dynagrad has no dispatcher: a custom op is the Python function itself, run below autograd
(its own ops are not recorded), with the gradient formula ``register_autograd`` gives it
(an ``autograd.Function`` made for the op; without one, backward through it raises as
PyTorch's does). ``register_fake`` and ``register_kernel`` are kept: the fake (meta)
function is what shape inference would call, and a kernel registered for ``'cpu'`` replaces
the function. ``Library``, ``define`` and ``impl`` record schemas and implementations in the
same table; there is no ``torch.ops`` namespace to call them through yet.
"""
import inspect

from .autograd.custom_function import Function
from .autograd.grad_mode import is_grad_enabled, no_grad
from .tensor import Tensor

__all__ = ['custom_op', 'CustomOpDef', 'Library', 'define', 'impl', 'register_fake',
           'impl_abstract', 'register_autograd', 'register_kernel', 'infer_schema', 'get_ctx',
           'fallthrough_kernel', 'get_op']

_KINDS = ('DEF', 'IMPL', 'FRAGMENT')
_OPS = {}            # 'ns::name' -> CustomOpDef
_DEFINED_NAMESPACES = set()
_SCHEMA_TYPES = {'float': 'float', 'int': 'SymInt', 'bool': 'bool', 'str': 'str'}


def _split(qualname):
    ns, sep, name = qualname.partition('::')
    if not sep or not ns or not name:
        raise ValueError(f"Expected a qualified name of the form 'namespace::name', got "
                         f'{qualname!r}')
    return ns, name


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The operator schema of a type-annotated function (every parameter must be
    annotated, and the return type too)."""
    sig = inspect.signature(prototype_function)
    parts = []
    mutated = 0
    for p in sig.parameters.values():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(f'infer_schema(func): Parameter {p.name} must have a type '
                             f'annotation. Got func with signature {sig})')
        kind = getattr(p.annotation, '__name__', str(p.annotation))
        kind = 'Tensor' if p.annotation is Tensor else _SCHEMA_TYPES.get(kind, kind)
        if mutates_args == 'unknown' or p.name in mutates_args:
            kind += f'(a{mutated}!)'
            mutated += 1
        parts.append(f'{kind} {p.name}')
    if sig.return_annotation is inspect.Signature.empty:
        raise ValueError(f'infer_schema(func): No return type annotation was provided. Please '
                         f'add one. Got func with signature {sig})')
    ret = sig.return_annotation
    ret = '()' if ret is None else \
        'Tensor' if ret is Tensor else getattr(ret, '__name__', str(ret))
    return f'({", ".join(parts)}) -> {ret}'


class CustomOpDef:
    """What ``custom_op`` returns: call it as the op."""

    def __init__(self, namespace, name, schema, fn, mutates_args):
        self._namespace, self._name = namespace, name
        self._schema, self._init_fn, self._mutates_args = schema, fn, mutates_args
        self._kernels = {}
        self._abstract_fn = None
        self._backward_fn = self._setup_context_fn = None
        self._autograd = None
        self._signature = inspect.signature(fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__

    @property
    def _qualname(self):
        return f'{self._namespace}::{self._name}'

    def __repr__(self):
        return f'<CustomOpDef({self._qualname})>'

    def register_fake(self, fn, /):
        self._abstract_fn = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        def register(f):
            for d in [device_types] if isinstance(device_types, str) or device_types is None \
                    else device_types:
                self._kernels[d] = f
            return f
        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        self._backward_fn, self._setup_context_fn = backward, setup_context
        self._autograd = None   # made again on the next call

    def _kernel(self):
        for key in ('cpu', None, 'compositeexplicitautograd', 'default'):
            if key in self._kernels:
                return self._kernels[key]
        return self._init_fn

    def _function(self):
        """The ``autograd.Function`` that runs the op (its node is named as PyTorch's)."""
        if self._autograd is None:
            op, kernel = self, self._kernel()

            def forward(*args):
                return kernel(*args)

            def setup_context(ctx, inputs, output):
                if op._setup_context_fn is not None:
                    op._setup_context_fn(ctx, inputs, output)

            def backward(ctx, *grads):
                if op._backward_fn is None:
                    raise RuntimeError(
                        f'Trying to backward through {op._namespace}.{op._name}.default but no '
                        'autograd formula was registered. Please use register_autograd to add '
                        'one.')
                result = op._backward_fn(ctx, *grads)
                return result if isinstance(result, tuple) else (result,)

            self._autograd = type(
                f'GeneratedBackwardFor_{self._namespace}_{self._name}_default', (Function,),
                {'forward': staticmethod(forward), 'setup_context': staticmethod(setup_context),
                 'backward': staticmethod(backward)})
        return self._autograd

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        args = bound.args
        if is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return self._function().apply(*args)
        with no_grad():
            return self._kernel()(*args)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` an operator named ``'namespace::name'`` (a decorator when ``fn`` is
    omitted)."""
    namespace, opname = _split(name)

    def make(f):
        if mutates_args != 'unknown' and isinstance(mutates_args, str):
            raise ValueError('mutates_args must be a sequence of parameter names or "unknown"')
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        op = CustomOpDef(namespace, opname, text, f, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, f)
        _OPS[op._qualname] = op
        return op
    return make if fn is None else make(fn)


def _op(op):
    if isinstance(op, CustomOpDef):
        return op
    found = _OPS.get(op)
    if found is None:
        _split(op)
        raise RuntimeError(f'{op}: no such operator (define it with custom_op or '
                           'Library.define first)')
    return found


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    def register(f):
        return _op(op).register_fake(f)
    return register if func is None else register(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    return _op(op).register_kernel(device_types, func)


class _Context:
    """What ``get_ctx()`` returns inside a fake function: a way to make new sizes."""

    def new_dynamic_size(self, *, min=0, max=None):
        raise NotImplementedError('dynagrad runs no fake (meta) functions: sizes are real')


def get_ctx():
    return _Context()


def fallthrough_kernel():
    raise NotImplementedError('fallthrough_kernel is a marker for Library.impl, not a function')


def _defined(qualname, schema_text):
    """A CustomOpDef for a schema given as text (``Library.define``): its implementation
    arrives with ``impl``."""
    ns, name = _split(qualname)

    def unimplemented(*args, **kwargs):
        raise NotImplementedError(f'{qualname}: no implementation registered (use impl)')
    op = CustomOpDef(ns, name, schema_text, unimplemented, ())
    op._signature = inspect.Signature([inspect.Parameter('args', inspect.Parameter.VAR_POSITIONAL)])
    _OPS[qualname] = op
    return op


class Library:
    """A namespace of operators: ``kind`` is ``'DEF'`` (define them; one per namespace),
    ``'FRAGMENT'`` (define more) or ``'IMPL'`` (implement them)."""

    def __init__(self, ns, kind, dispatch_key=''):
        if kind not in _KINDS:
            raise ValueError(f'Unsupported kind: {kind}')
        if kind == 'DEF':
            if ns in _DEFINED_NAMESPACES:
                raise RuntimeError(
                    f'Only a single TORCH_LIBRARY can be used to register the namespace {ns}; '
                    'please put all of your definitions in a single TORCH_LIBRARY block.')
            _DEFINED_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def __repr__(self):
        return f'Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>'

    def define(self, schema, alias_analysis='', *, tags=()):
        name, paren, rest = schema.partition('(')
        _defined(f'{self.ns}::{name.split(".")[0].strip()}', paren + rest)
        return name

    def impl(self, op_name, fn, dispatch_key='', *, with_keyset=False, allow_override=False):
        name = op_name if isinstance(op_name, str) else op_name._qualname
        qualname = name if '::' in name else f'{self.ns}::{name}'
        op = _OPS.get(qualname) or _defined(qualname, '')
        if (dispatch_key or self.dispatch_key).lower() in ('autograd', 'compositeimplicitautograd'):
            op._init_fn = fn
        else:
            op.register_kernel(None if not (dispatch_key or self.dispatch_key)
                               else (dispatch_key or self.dispatch_key).lower(), fn)


def define(qualname, schema, *, lib=None, tags=()):
    _defined(qualname, schema)


def impl(qualname, types, func=None, *, lib=None):
    def register(f):
        op = _OPS.get(qualname) or _defined(qualname, '')
        op.register_kernel(types, f)
        return f
    return register if func is None else register(func)


def get_op(qualname):
    """The operator registered as ``'namespace::name'`` (dynagrad's stand-in for
    ``torch.ops.namespace.name``)."""
    return _op(qualname)
