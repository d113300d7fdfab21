"""PyTorch's ``__torch_function__`` protocol, at no cost to programs that never use it.

A non-Tensor object whose class defines ``__torch_function__`` (linear_operator's operators,
tensor-like wrappers), a Tensor subclass (which inherits ``Tensor.__torch_function__``,
the default that runs the function and hands results back as the subclass), or an active
``TorchFunctionMode`` takes over the calls of the public functions and Tensor methods it
meets, as in PyTorch.

Looking for such arguments in every call would tax every op of every program. Instead the
public functions stay plain until the first class with its own ``__torch_function__``
exists (noticed by ``Tensor.__init_subclass__`` for Tensor subclasses, and by a watch on
class statements for the rest, removed once it fires) or a mode is entered. Then
``install()`` swaps the code of each public function, Tensor method and property getter
for a trampoline that checks the arguments and otherwise runs the original code, kept in a
copy of the function. Swapping code rather than the objects keeps every function the
object users already hold: ``func is torch.matmul`` holds for a table built before.
"""
import builtins
import sys
import threading
import types
import warnings

from .tensor import Tensor

_FunctionType = types.FunctionType


class _State(threading.local):
    """Per thread, as PyTorch's: whether overloaded arguments and modes are honoured, and
    the stack of active modes (innermost last)."""
    subclasses = True
    modes_on = True
    stack = ()


state = _State()
installed = False


class DisableTorchFunctionSubclass:
    """Within it, arguments' ``__torch_function__`` is not called (modes still are)."""
    __slots__ = ('_saved',)

    def __enter__(self):
        st = state
        self._saved = st.subclasses
        st.subclasses = False
        return self

    def __exit__(self, *exc):
        state.subclasses = self._saved


class DisableTorchFunction:
    """Within it, neither arguments' ``__torch_function__`` nor modes are called."""
    __slots__ = ('_saved',)

    def __enter__(self):
        st = state
        self._saved = (st.subclasses, st.modes_on)
        st.subclasses = st.modes_on = False
        return self

    def __exit__(self, *exc):
        state.subclasses, state.modes_on = self._saved


class _DisabledImpl:
    """``torch._C._disabled_torch_function_impl``: a class that sets it as its
    ``__torch_function__`` (nn.Parameter) is not overloaded; its instances compute as plain
    Tensors. A callable object rather than a function so that, like PyTorch's builtin, it
    does not bind as a method."""
    __slots__ = ()
    __name__ = __qualname__ = '_disabled_torch_function_impl'

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return '<built-in function disabled_torch_function_impl>'


disabled_torch_function_impl = _DisabledImpl()

_KINDS = {}   # type -> whether its instances are overloaded arguments
# Types seen not to be overloaded and not containers: a call whose positional arguments all
# are of these, with no keywords and no mode anywhere, skips the per-thread state and the
# full scan (the common call, once the dispatch is installed).
_PLAIN = {Tensor}


class _Modes:
    entered = 0     # modes active, all threads together


modes = _Modes()


def is_overloaded_type(t):
    kind = _KINDS.get(t)
    if kind is None:
        impl = getattr(t, '__torch_function__', None)
        kind = (t is not Tensor and impl is not None
                and getattr(impl, '__func__', impl) is not disabled_torch_function_impl)
        _KINDS[t] = kind
        if not kind and t is not list and t is not tuple:
            _PLAIN.add(t)
    return kind


def _add_overloaded(found, arg):
    """PyTorch's order: one argument per type, a subclass before its superclasses, else left
    to right."""
    t = type(arg)
    if found is None:
        return [arg]
    index = len(found)
    for i, other in enumerate(found):
        other_type = type(other)
        if other_type is t:
            return found
        if index == len(found) and issubclass(t, other_type):
            index = i
    found.insert(index, arg)
    return found


def overloaded_args(args, kwargs=None, plain=False):
    """The arguments (and elements of list or tuple arguments) that are overloaded, in
    PyTorch's order. PyTorch's functions written in Python (nn.functional,
    handle_torch_function) count plain Tensors too (``plain``: Tensor's default then
    declines in favour of the others)."""
    found = None
    for group in (args, kwargs.values() if kwargs else ()):
        for arg in group:
            t = type(arg)
            if t is Tensor:
                if plain:
                    found = _add_overloaded(found, arg)
            elif t is list or t is tuple:
                for item in arg:
                    if type(item) is Tensor:
                        if plain:
                            found = _add_overloaded(found, item)
                    elif is_overloaded_type(type(item)):
                        found = _add_overloaded(found, item)
            elif is_overloaded_type(t):
                found = _add_overloaded(found, arg)
    return found


def mode_active():
    st = state
    return bool(st.stack) and st.modes_on


def dispatch(public, found, args, kwargs, name, python_style=True):
    """Call the modes' then the overloaded arguments' ``__torch_function__`` until one
    answers something other than NotImplemented; PyTorch's TypeError when none does."""
    found = found or []
    kinds = tuple(type(a) for a in found)
    st = state
    mode = None
    if st.stack and st.modes_on:
        stack = st.stack
        mode = stack[-1]
        st.stack = stack[:-1]       # the mode's own calls do not come back to it
        try:
            result = mode.__torch_function__(public, kinds, args, kwargs)
        finally:
            st.stack = st.stack + (mode,)
        if result is not NotImplemented:
            return result
    for arg in found:
        impl = arg.__torch_function__
        if getattr(impl, '__self__', None) is arg:
            warnings.warn('Defining your `__torch_function__` as a plain method is deprecated '
                          'and will be an error in future, please define it as a classmethod.',
                          DeprecationWarning if python_style else UserWarning, stacklevel=3)
        result = impl(public, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    if python_style:
        message = (f"no implementation found for '{name}' on types that implement "
                   f'__torch_function__: {[type(a) for a in found]}')
        if mode is not None:
            message += f' nor in mode {mode}'
    else:
        lines = [f'  - mode object {mode}'] if mode is not None else []
        lines += [f'  - tensor subclass {type(a)}' for a in found]
        message = (f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                   'returned NotImplemented:\n\n' + '\n'.join(lines) + '\n\nFor more '
                   'information, try re-running with TORCH_LOGS=not_implemented')
    raise TypeError(message)


# -- Tensor's default ------------------------------------------------------------------------
def _convert(ret, cls):
    if isinstance(ret, Tensor):
        if not isinstance(ret, cls):
            ret = ret.as_subclass(cls)
    elif isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        make = getattr(type(ret), '_make', None)       # named tuples (max, sort, ...)
        ret = make(items) if make is not None else type(ret)(items)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor's ``__torch_function__``: run ``func`` without dispatching to subclasses and
    return Tensor results as ``cls``; NotImplemented when another argument's type is not
    a superclass of ``cls`` (so that type gets its turn)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        try:
            if func in _NOWRAP:
                return ret
        except TypeError:      # an unhashable callable
            pass
        return _convert(ret, cls)


_NOWRAP = set()


def _notice_subclass(cls, **kwargs):
    super(Tensor, cls).__init_subclass__(**kwargs)
    if not installed and is_overloaded_type(cls):
        install()


Tensor.__torch_function__ = classmethod(_tensor_torch_function)
Tensor.__init_subclass__ = classmethod(_notice_subclass)


# -- noticing other classes --------------------------------------------------------------
_build_class = builtins.__build_class__


def _is_pytorchs(cls):
    # real PyTorch's own classes, in a program that imports it beside dynagrad (a test
    # against it): their instances never reach dynagrad's functions
    module = cls.__dict__.get('__module__')
    return type(module) is str and (module == 'torch' or module.startswith('torch.'))


def _watching_build_class(func, name, *bases, **kwds):
    cls = _build_class(func, name, *bases, **kwds)
    if not installed and isinstance(cls, type) and not _is_pytorchs(cls):
        for klass in cls.__mro__:
            if '__torch_function__' in klass.__dict__:
                # a mode's class does nothing until the mode is entered (which installs)
                if (klass is not Tensor and not getattr(cls, 'is_torch_function_mode', False)
                        and is_overloaded_type(cls)):
                    install()
                break
    return cls


def watch():
    builtins.__build_class__ = _watching_build_class


def _unwatch():
    if builtins.__build_class__ is _watching_build_class:
        builtins.__build_class__ = _build_class


# -- trampolines -------------------------------------------------------------------------
_MARKS = ('<dynagrad plain types>', '<dynagrad modes>', '<dynagrad original>',
          '<dynagrad handler>')
_TEMPLATES = {}
_SWAPPED = []   # (function, its own code, whether __wrapped__ was added), to undo


def _template(nfree):
    """The trampoline's code, with ``nfree`` free variables (a function's code may only be
    swapped for one with as many as its closure). Its constants, placeholders here, become
    the plain-type set, the mode count, the original function and its handler: the common
    call (plain arguments, no mode) costs one frame and a type test per argument."""
    code = _TEMPLATES.get(nfree)
    if code is None:
        plain, modes_, orig, handle = (repr(m) for m in _MARKS)
        names = [f'_free{i}' for i in range(nfree)]
        lines = ['def outer():']
        if names:
            lines.append(f"    {' = '.join(names)} = None")
        lines.append('    def trampoline(*args, **kwargs):')
        if names:
            lines.append(f"        ({', '.join(names)},)")
        lines += ['        for arg in args:',
                  f'            if type(arg) not in {plain}:',
                  '                break',
                  '        else:',
                  f'            if not kwargs and not {modes_}.entered:',
                  f'                return {orig}(*args)',
                  f'        return {handle}(args, kwargs)',
                  '    return trampoline']
        namespace = {}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', SyntaxWarning)   # "'str' object is not callable"
            exec(compile('\n'.join(lines), __file__, 'exec'), namespace)
        code = namespace['outer']().__code__
        _TEMPLATES[nfree] = code
    return code


def _original(fn):
    orig = _FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                         fn.__closure__)
    orig.__kwdefaults__ = fn.__kwdefaults__
    orig.__qualname__ = fn.__qualname__
    orig.__module__ = fn.__module__
    orig.__doc__ = fn.__doc__
    return orig


def _handler(public, orig, name, python_style, operator):
    def handle(args, kwargs):
        st = state
        found = overloaded_args(args, kwargs) if st.subclasses else None
        if found is not None or (st.stack and st.modes_on):
            if python_style and found is not None:
                found = overloaded_args(args, kwargs, plain=True)
            kwargs = kwargs if kwargs or python_style else None
            if operator:
                try:
                    return dispatch(public, found, args, kwargs, name, python_style)
                except TypeError:
                    return NotImplemented       # Python then tries the reflected operator
            return dispatch(public, found, args, kwargs, name, python_style)
        return orig(*args, **kwargs)
    return handle


def _swap(fn, public, name, python_style=False, operator=False):
    code = fn.__code__
    nfree = len(code.co_freevars)
    orig = _original(fn)
    template = _template(nfree)
    handle = _handler(public, orig, name, python_style, operator)
    values = dict(zip(_MARKS, (_PLAIN, modes, orig, handle)))
    consts = tuple(values.get(c, c) if type(c) is str else c for c in template.co_consts)
    fn.__code__ = template.replace(co_consts=consts, co_name=code.co_name,
                                   co_qualname=code.co_qualname)
    if '__wrapped__' not in fn.__dict__:
        fn.__wrapped__ = orig           # inspect.signature reports the original's
        _SWAPPED.append((fn, code, True))
    else:
        _SWAPPED.append((fn, code, False))


# The functions of torch's get_ignored_functions() that dynagrad has: they take no tensor
# to dispatch on or are about the machinery itself.
IGNORED_NAMES = frozenset('''
    arange are_deterministic_algorithms_enabled as_strided as_tensor asarray
    autocast_decrement_nesting autocast_increment_nesting bartlett_window blackman_window
    broadcast_shapes can_cast clear_autocast_cache compile cond default_generator device dtype
    empty empty_permuted empty_strided enable_grad eye fill finfo from_file from_numpy
    frombuffer full get_autocast_cpu_dtype get_autocast_dtype get_autocast_gpu_dtype
    get_default_device get_default_dtype get_deterministic_debug_mode get_device_module
    get_float32_matmul_precision get_num_interop_threads get_num_threads get_rng_state
    hamming_window hann_window iinfo inference_mode init_num_threads initial_seed
    is_anomaly_check_nan_enabled is_anomaly_enabled is_autocast_cache_enabled
    is_autocast_cpu_enabled is_autocast_enabled is_deterministic_algorithms_warn_only_enabled
    is_grad_enabled is_inference_mode_enabled is_storage is_tensor is_warn_always_enabled
    kaiser_window layout linspace load logspace manual_seed memory_format no_grad normal ones
    promote_types rand rand_like randint randint_like randn randn_like randperm range
    result_type save scalar_tensor seed set_anomaly_enabled set_autocast_cache_enabled
    set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled
    set_autocast_gpu_dtype set_default_device set_default_tensor_type
    set_deterministic_debug_mode set_float32_matmul_precision set_flush_denormal
    set_grad_enabled set_num_interop_threads set_num_threads set_printoptions set_rng_state
    set_warn_always sparse_bsc_tensor sparse_bsr_tensor sparse_compressed_tensor
    sparse_coo_tensor sparse_csc_tensor sparse_csr_tensor tensor thread_safe_generator
    tril_indices triu_indices typename use_deterministic_algorithms vander vmap zeros
    handle_torch_function has_torch_function has_torch_function_unary
    has_torch_function_variadic'''.split())
# torch's get_ignored_functions() for Tensor, as it lists them (get_ignored_functions)
TENSOR_IGNORED = frozenset('''
    __delitem__ __dir__ __hash__ __iter__ __new__ __torch_dispatch__ as_subclass eig lstsq new
    new_empty new_empty_strided new_full new_ones new_tensor new_zeros reinforce solve stride
    symeig to_padded_tensor to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc
    to_sparse_csr unflatten'''.split())
# The Tensor members that do not dispatch (most of that list does, in practice): object
# plumbing, and pickling and copying, whose results are not tensors to convert.
NOT_DISPATCHED = frozenset('''
    __delitem__ __hash__ __iter__ __new__ __init__ __init_subclass__ __torch_function__
    __torch_dispatch__ __getattr__ __getattribute__ __setattr__ __delattr__ __reduce__
    __reduce_ex__ __getstate__ __setstate__ __deepcopy__ __copy__ __class_getitem__
    __sizeof__ __subclasshook__ as_subclass'''.split())
# Operators PyTorch reports as the method they compute (t + x: Tensor.add).
OPERATOR_FUNCS = {
    '__add__': 'add', '__radd__': 'add', '__sub__': 'sub', '__mul__': 'mul',
    '__rmul__': 'mul', '__truediv__': 'div', '__div__': 'div', '__rtruediv__': '__rdiv__',
    '__mod__': 'remainder', '__pow__': 'pow', '__matmul__': 'matmul', '__eq__': 'eq',
    '__ne__': 'ne', '__lt__': 'lt', '__le__': 'le', '__gt__': 'gt', '__ge__': 'ge',
    '__rand__': 'bitwise_and', '__ror__': 'bitwise_or', '__rxor__': 'bitwise_xor',
    '__iadd__': 'add_', '__isub__': 'sub_', '__imul__': 'mul_', '__itruediv__': 'div_',
    '__idiv__': 'div_', '__neg__': 'neg', '__abs__': 'abs', '__invert__': 'bitwise_not'}
BINARY_OPERATORS = frozenset('''
    add sub mul truediv div floordiv mod pow matmul and or xor lshift rshift'''.split())
# Tensor methods PyTorch writes in Python, whose refusal reads as handle_torch_function's.
PYTHON_METHODS = frozenset('''
    __rsub__ __rdiv__ __rtruediv__ __floordiv__ __rfloordiv__ __rmod__ __rpow__ __rmatmul__
    __rlshift__ __rrshift__ __format__ __repr__ __len__ __array__ __contains__ __reversed__
    backward detach_ register_hook share_memory_ unique split norm lu stft istft
    unique_consecutive refine_names align_to rename module_load'''.split())
# (module, whether its functions are Python ones in PyTorch: handle_torch_function's wording
# and keyword dict). The first three are imported with dynagrad, the others on first use.
NAMESPACES = (('dynagrad', False), ('dynagrad.nn.functional', True), ('dynagrad.linalg', False),
              ('dynagrad.special', False), ('dynagrad.fft', False))


def _is_operator(name):
    if not (name.startswith('__') and name.endswith('__')):
        return False
    core = name[2:-2]
    for prefix in ('r', 'i'):
        if core.startswith(prefix) and core[1:] in BINARY_OPERATORS:
            return True
    return core in BINARY_OPERATORS or core in ('eq', 'ne', 'lt', 'le', 'gt', 'ge')


def _tensor_members(ignored=NOT_DISPATCHED):
    for name, member in list(vars(Tensor).items()):
        if name in ignored:
            continue
        if name.startswith('_') and not (name.startswith('__') and name.endswith('__')):
            continue
        yield name, member


def install():
    """Make every public function and Tensor method honour ``__torch_function__``."""
    global installed
    if installed:
        return
    installed = True
    _unwatch()
    import importlib
    done = set()
    for module_name, python_style in NAMESPACES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:        # an optional namespace that cannot load here
            continue
        for name, fn in list(vars(module).items()):
            if (type(fn) is not _FunctionType or name.startswith('_') or id(fn) in done
                    or name in IGNORED_NAMES
                    or not getattr(fn, '__module__', '').startswith('dynagrad')):
                continue
            done.add(id(fn))
            _swap(fn, fn, f'{module_name}.{name}', python_style)
    for name, member in _tensor_members():
        if type(member) is _FunctionType and id(member) not in done:
            done.add(id(member))
            public = getattr(Tensor, OPERATOR_FUNCS.get(name, name), member)
            _swap(member, public, f'dynagrad.Tensor.{name}', name in PYTHON_METHODS,
                  _is_operator(name))
        elif (type(member) is property and type(member.fget) is _FunctionType
              and id(member.fget) not in done):
            done.add(id(member.fget))
            _swap(member.fget, member.__get__, f'dynagrad.Tensor.{name}.__get__')
    for name in ('grad', '_base'):
        prop = Tensor.__dict__.get(name)
        if prop is not None:
            _NOWRAP.add(prop.__get__)


def uninstall():
    """Undo ``install()`` (tests): the functions get their own code back."""
    global installed
    while _SWAPPED:
        fn, code, added_wrapped = _SWAPPED.pop()
        fn.__code__ = code
        if added_wrapped:
            del fn.__wrapped__
    installed = False
    state.stack = ()
    modes.entered = 0
    watch()


def separate_methods():
    """Give each Tensor method its own function object. PyTorch's ``Tensor.add`` is not
    ``torch.add`` nor ``Tensor.__add__``, and overrides key their tables on them; dynagrad
    binds one function under several names, so each name gets a copy (same code, so the
    same speed), before anyone captures them."""
    import importlib
    seen = set()
    for module_name, _ in NAMESPACES[:3]:
        seen.update(id(v) for v in vars(importlib.import_module(module_name)).values()
                    if type(v) is _FunctionType)
    for name, member in _tensor_members(ignored=()):
        if type(member) is not _FunctionType:
            continue
        if id(member) in seen:
            copy = _original(member)
            copy.__dict__.update(member.__dict__)
            if getattr(sys.modules.get(copy.__module__), 'Tensor', None) is Tensor:
                copy.__qualname__ = f'Tensor.{name}'    # so that pickle finds the copy
            setattr(Tensor, name, copy)
            member = copy
        seen.add(id(member))
