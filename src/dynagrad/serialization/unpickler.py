"""The unpicklers of ``dynagrad.load``.

``SafeUnpickler`` (``weights_only=True``) interprets the pickle opcode by opcode and never
imports or calls anything but what it allows: PyTorch's weights-only allowlist mapped onto
dynagrad (``rebuild.torch_globals``) plus what the user allowlisted with
``add_safe_globals``/``safe_globals``. Text-protocol opcodes and those that look up
objects another way (INST, OBJ, EXT*, PERSID) are refused. The few builtins it may call
(``set``, ``bytearray``, ``complex``, ``_codecs.encode``, ...) have their arguments checked
so no call allocates more than the pickle's own bytes justify, tuples may nest at most
``MAX_NESTING`` deep (hashing a deeper one would crash the interpreter), and a dict or set
may hold at most ``MAX_SAME_HASH`` keys of one hash (many colliding integer keys would make
building it quadratic). Every opcode does a bounded amount of work, so a pickle cannot make
it hang.

``full_unpickler`` (``weights_only=False``) is the standard unpickler, reading PyTorch's
names as dynagrad's: it runs any code the file names, as ``pickle`` does.
"""
import _compat_pickle
import codecs
import pickle
import struct
from collections import Counter, OrderedDict

from ..size import Size
from ..tensor import Tensor
from . import rebuild

MAX_NESTING = 1000
MAX_SAME_HASH = 100       # distinct keys of one dict or set with one hash: a flooding attack
BLOCKED_MODULES = ('sys', 'os', 'posix', 'nt')


class Refused(Exception):
    """The pickle asks for something weights-only loading does not allow."""


class Malformed(Exception):
    """The pickle is truncated or inconsistent."""


# -- the user's allowlist ------------------------------------------------------------------

_user_globals = set()


def _check_entries(entries):
    if not isinstance(entries, (list, tuple, set)):
        raise TypeError(f'expected a list of globals, got {type(entries).__name__}')
    for f in entries:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f'Expected tuple of length 2 (global, str of callable full '
                                 f'path), but got tuple of length: {len(f)}')
            if type(f[1]) is not str:
                raise TypeError(f'Expected second item in tuple to be str of callable full '
                                f'path, but got: {type(f[1])}')


def add_safe_globals(safe_globals):
    """Mark globals as safe for ``weights_only`` loading: classes or functions, or
    ``(obj, 'module.name')`` pairs when the name in the file differs from the object's.

    ``add_safe_globals([numpy._core.multiarray._reconstruct, numpy.ndarray, numpy.dtype,
    numpy.dtypes.Float32DType])``, for example, lets float32 NumPy arrays load.
    """
    global _user_globals
    _check_entries(safe_globals)
    _user_globals = _user_globals.union(safe_globals)


def get_safe_globals():
    """The globals marked safe with ``add_safe_globals`` (or ``safe_globals``)."""
    return list(_user_globals)


def clear_safe_globals():
    """Forget every global marked safe."""
    global _user_globals
    _user_globals = set()


class safe_globals:
    """Context manager: the given globals are safe inside the ``with`` block only."""

    def __init__(self, safe_globals):
        _check_entries(safe_globals)
        self.safe_globals = safe_globals
        self._added = ()

    def __enter__(self):
        global _user_globals
        self._added = set(self.safe_globals) - _user_globals
        _user_globals = _user_globals.union(self._added)

    def __exit__(self, *exc):
        global _user_globals
        _user_globals = _user_globals - self._added
        return False


def user_table():
    table = {}
    for f in _user_globals:
        if isinstance(f, tuple):
            table[f[1]] = f[0]
        else:
            table[f'{f.__module__}.{f.__qualname__}'] = f
    return table


# -- names ------------------------------------------------------------------------------------

def fix_name(module, name):
    """Python 2 names (protocol 2 pickles write ``__builtin__.set``) as Python 3's."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _numpy_alias(full):
    """NumPy 2 moved ``numpy.core`` to ``numpy._core``: files name either."""
    if full.startswith('numpy.core.'):
        return 'numpy._core.' + full[len('numpy.core.'):]
    if full.startswith('numpy._core.'):
        return 'numpy.core.' + full[len('numpy._core.'):]
    return None


def unsupported_global_message(full):
    shown = full
    if full.startswith('builtins'):
        rest = full[len('builtins'):]
        shown = rest[1:] if rest.startswith('.') else 'builtins' + rest
    return (f'Unsupported global: GLOBAL {shown} was not an allowed global by default. '
            f'Please use `dynagrad.serialization.add_safe_globals([{shown}])` or the '
            f'`dynagrad.serialization.safe_globals([{shown}])` context manager to allowlist '
            f'this global if you trust this class/function.')


# -- argument checks of the builtins the safe unpickler may call ----------------------------

def _hashable(key):
    try:
        hash(key)
    except TypeError:
        raise Malformed(f'a dict key or set item is an unhashable '
                        f'{type(key).__name__}') from None
    return key


def _check_flooding(keys):
    """Refuse more than MAX_SAME_HASH keys of one hash among ``keys`` (hashable)."""
    counts = {}
    for key in keys:
        h = hash(key)
        counts[h] = counts.get(h, 0) + 1
        if counts[h] > MAX_SAME_HASH:
            raise Malformed(f'a dict or set holds more than {MAX_SAME_HASH} keys with one '
                            f'hash value (a hash-flooding file)')


def _check_set(args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, set, frozenset)):
        raise Malformed('set() is called with something other than a list')
    if args:
        for item in args[0]:
            _hashable(item)
        _check_flooding(args[0])


def _check_bytearray(args):
    if not args:
        return
    if type(args[0]) is bytes and len(args) == 1:
        return
    if type(args[0]) is str and len(args) == 2 and type(args[1]) is str:
        return
    raise Malformed('bytearray() is called with something other than bytes or a string '
                    '(a size would allocate memory the file does not hold)')


def _check_complex(args):
    if len(args) > 2 or not all(type(a) in (int, float) for a in args):
        raise Malformed('complex() is called with something other than numbers')


def _check_encode(args):
    if len(args) != 2 or type(args[0]) is not str or \
            args[1] not in ('latin1', 'latin-1', 'iso-8859-1', 'utf-8', 'utf8', 'ascii'):
        raise Malformed('_codecs.encode() is called with something other than a string and '
                        'a text encoding')


def _check_mapping(args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict, OrderedDict,
                                                         Counter)):
        raise Malformed('a dict type is called with something other than a list or dict')
    if args and type(args[0]) in (list, tuple):
        keys = [pair[0] if type(pair) in (tuple, list) and len(pair) == 2 else pair
                for pair in args[0]]
        for key in keys:
            _hashable(key)
        _check_flooding(keys)


def _check_counter(args):
    if args and type(args[0]) in (list, tuple):
        _check_set(args)            # Counter(iterable) counts the items: they are its keys
    else:
        _check_mapping(args)


def _check_size(args):
    if len(args) != 1 or type(args[0]) not in (tuple, list) or \
            not all(type(v) is int for v in args[0]):
        raise Malformed('torch.Size is called with something other than a tuple of ints')


_NO_CHECK = object()


def _callable_checks():
    """id -> argument check (or _NO_CHECK) of the allowlisted objects the pickle may call;
    the others (dtypes, storage classes, tensor classes) it may only name."""
    table = rebuild.torch_globals()
    checks = {id(set): _check_set, id(bytearray): _check_bytearray,
              id(complex): _check_complex, id(codecs.encode): _check_encode,
              id(OrderedDict): _check_mapping, id(Counter): _check_counter,
              id(Size): _check_size}
    for name, obj in table.items():
        if callable(obj) and (name.startswith('torch._utils.')
                              or name in ('torch._tensor._rebuild_from_type_v2', 'torch.device',
                                          'torch.serialization._get_layout')):
            checks[id(obj)] = _NO_CHECK       # they check their own arguments
    return checks


# -- the safe unpickler -----------------------------------------------------------------------

def _op_name(code):
    import pickletools
    for op in pickletools.opcodes:
        if op.code.encode('latin-1')[0] == code:
            return op.name
    return None


class SafeUnpickler:
    """Unpickles ``data[start:]`` allowing only safe globals; ``load()`` returns
    ``(object, position after STOP)``."""

    def __init__(self, data, persistent_load, encoding='utf-8', start=0):
        self.raw = data if isinstance(data, (bytes, bytearray)) else bytes(data)
        self.data = memoryview(self.raw).cast('B')
        self.pos = start
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.table = rebuild.torch_globals()
        self.user = user_table()
        self.user_ids = {id(v) for v in self.user.values()}
        self.checks = _callable_checks()
        self.named = {}         # id -> object, for every object a GLOBAL produced
        self.nesting = {}       # id -> (tuple or frozenset, depth) for depths above 1
        self.same_hash = {}     # (id of a dict or set, hash) -> keys inserted with it
        self.proto = 0

    # reading the stream
    def _take(self, n):
        if n < 0:
            raise Malformed(f'an opcode gives a negative length ({n})')
        end = self.pos + n
        if end > len(self.data):
            raise Malformed('the pickle ends in the middle of an opcode (truncated data)')
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def _line(self):
        end = self.raw.find(b'\n', self.pos, self.pos + 4096)
        if end < 0:
            raise Malformed('a GLOBAL opcode\'s name is not terminated')
        line = bytes(self.raw[self.pos:end])
        self.pos = end + 1
        try:
            return line.decode('utf-8')
        except UnicodeDecodeError:
            raise Malformed('a GLOBAL opcode\'s name is not UTF-8') from None

    def _unpack(self, fmt):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _pop(self):
        if not self.stack:
            raise Malformed('an opcode needs more values than the stack holds')
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise Malformed('an opcode needs a value but the stack is empty')
        return self.stack[-1]

    def _pop_mark(self):
        if not self.metastack:
            raise Malformed('an opcode expects a MARK that is not there')
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _nest(self, obj, items):
        depth = 1
        for x in items:
            if isinstance(x, (tuple, frozenset)):
                inner = self.nesting.get(id(x))
                depth = max(depth, (inner[1] if inner else 1) + 1)
        if depth > 1:
            if depth > MAX_NESTING:
                raise Malformed(f'tuples nest more than {MAX_NESTING} deep')
            self.nesting[id(obj)] = (obj, depth)
        return obj

    def _key(self, target, key):
        """``key``, checked to be hashable and not to flood ``target``'s hash table."""
        try:
            slot = (id(target), hash(key))
        except TypeError:
            raise Malformed(f'a dict key or set item is an unhashable '
                            f'{type(key).__name__}') from None
        n = self.same_hash.get(slot, 0) + 1
        if n > MAX_SAME_HASH:
            raise Malformed(f'a dict or set holds more than {MAX_SAME_HASH} keys with one hash '
                            f'value (a hash-flooding file)')
        self.same_hash[slot] = n
        return key

    def _text(self, raw):
        try:
            return str(raw, 'utf-8', 'surrogatepass')
        except UnicodeDecodeError:
            raise Malformed('a string in the pickle is not valid UTF-8') from None

    # the opcodes
    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        data = self.data
        n = len(data)
        ops = self._ops()
        while True:
            if self.pos >= n:
                raise Malformed('the pickle ends before its STOP opcode (truncated data)')
            code = data[self.pos]
            self.pos += 1
            if code == 0x2E:                               # STOP
                return self._pop(), self.pos
            handler = ops.get(code)
            if handler is None:
                name = _op_name(code)
                raise Refused(f'Unsupported operand {code}'
                              + (f' ({name})' if name else ''))
            handler()

    def _ops(self):
        s = self
        push = lambda v: s.stack.append(v)     # noqa: E731

        def proto():
            s.proto = s._take(1)[0]
            if s.proto > pickle.HIGHEST_PROTOCOL:
                raise Malformed(f'pickle protocol {s.proto} is not one Python knows')

        def frame():
            s._take(8)

        def mark():
            s.metastack.append(s.stack)
            s.stack = []

        def tuple_n(k):
            def op():
                if len(s.stack) < k:
                    raise Malformed('an opcode needs more values than the stack holds')
                items = tuple(s.stack[len(s.stack) - k:])
                del s.stack[len(s.stack) - k:]
                push(s._nest(items, items))
            return op

        def tuple_mark():
            items = tuple(s._pop_mark())
            push(s._nest(items, items))

        def list_mark():
            push(s._pop_mark())

        def dict_mark():
            items = s._pop_mark()
            if len(items) % 2:
                raise Malformed('DICT has an odd number of items')
            d = {}
            for i in range(0, len(items), 2):
                d[s._key(d, items[i])] = items[i + 1]
            push(d)

        def append():
            item = s._pop()
            target = s._top()
            if type(target) is not list:
                raise Refused(f'Can only append to lists, but got {type(target)}')
            target.append(item)

        def appends():
            items = s._pop_mark()
            target = s._top()
            if type(target) is not list:
                raise Refused(f'Can only extend lists, but got {type(target)}')
            target.extend(items)

        def setitems_into(target, items, op):
            if type(target) not in (dict, OrderedDict, Counter):
                raise Refused(f'Can only {op} for dict, collections.OrderedDict, '
                              f'collections.Counter, but got {type(target)}')
            for i in range(0, len(items) - 1, 2):
                target[s._key(target, items[i])] = items[i + 1]

        def setitem():
            value = s._pop()
            key = s._pop()
            setitems_into(s._top(), [key, value], 'SETITEM')

        def setitems():
            items = s._pop_mark()
            if len(items) % 2:
                raise Malformed('SETITEMS has an odd number of items')
            setitems_into(s._top(), items, 'SETITEMS')

        def additems():
            items = s._pop_mark()
            target = s._top()
            if type(target) is not set:
                raise Refused(f'Can only add items to sets, but got {type(target)}')
            for item in items:
                target.add(s._key(target, item))

        def frozenset_mark():
            items = s._pop_mark()
            for item in items:
                s._key(items, item)
            fs = frozenset(items)
            push(s._nest(fs, items))

        def get(fmt):
            def op():
                idx = s._unpack(fmt)
                if idx not in s.memo:
                    raise Malformed(f'the pickle refers to memo entry {idx}, which was never '
                                    f'stored')
                push(s.memo[idx])
            return op

        def put(fmt):
            def op():
                s.memo[s._unpack(fmt)] = s._top()
            return op

        def memoize():
            s.memo[len(s.memo)] = s._top()

        def text(fmt):
            return lambda: push(s._text(s._take(s._unpack(fmt))))

        def raw_bytes(fmt, kind=bytes):
            return lambda: push(kind(s._take(s._unpack(fmt))))

        def old_string(fmt):
            def op():
                raw = bytes(s._take(s._unpack(fmt)))
                if s.encoding == 'bytes':
                    push(raw)
                    return
                try:
                    push(raw.decode(s.encoding, 'strict'))
                except (UnicodeDecodeError, LookupError) as e:
                    raise Malformed(f'a string cannot be decoded ({e})') from None
            return op

        def long_n(fmt):
            return lambda: push(int.from_bytes(s._take(s._unpack(fmt)), 'little', signed=True))

        def pop():
            if s.stack:
                s.stack.pop()
            else:
                s._pop_mark()

        def global_text():
            module = s._line()
            name = s._line()
            push(s._resolve(module, name))

        def stack_global():
            name = s._pop()
            module = s._pop()
            if type(module) is not str or type(name) is not str:
                raise Malformed('STACK_GLOBAL needs two strings')
            push(s._resolve(module, name))

        return {
            0x80: proto, 0x95: frame, 0x28: mark, 0x30: pop, 0x31: lambda: s._pop_mark(),
            0x32: lambda: push(s._top()),
            0x4A: lambda: push(s._unpack('<i')), 0x4B: lambda: push(s._take(1)[0]),
            0x4D: lambda: push(s._unpack('<H')), 0x8A: long_n('<B'), 0x8B: long_n('<i'),
            0x4E: lambda: push(None), 0x88: lambda: push(True), 0x89: lambda: push(False),
            0x47: lambda: push(s._unpack('>d')),
            0x58: text('<I'), 0x8C: text('<B'), 0x8D: text('<Q'),
            0x54: old_string('<i'), 0x55: old_string('<B'),
            0x42: raw_bytes('<I'), 0x43: raw_bytes('<B'), 0x8E: raw_bytes('<Q'),
            0x96: raw_bytes('<Q', bytearray),
            0x29: lambda: push(()), 0x74: tuple_mark, 0x85: tuple_n(1), 0x86: tuple_n(2),
            0x87: tuple_n(3),
            0x5D: lambda: push([]), 0x6C: list_mark, 0x61: append, 0x65: appends,
            0x7D: lambda: push({}), 0x64: dict_mark, 0x73: setitem, 0x75: setitems,
            0x8F: lambda: push(set()), 0x90: additems, 0x91: frozenset_mark,
            0x68: get('<B'), 0x6A: get('<I'), 0x71: put('<B'), 0x72: put('<I'),
            0x94: memoize,
            0x63: global_text, 0x93: stack_global,
            0x52: s._reduce, 0x81: s._newobj, 0x92: s._newobj_ex, 0x62: s._build,
            0x51: s._binpersid,
        }

    # what can run code: each checked
    def _resolve(self, module, name):
        if self.proto < 3:
            module, name = fix_name(module, name)
        full = f'{module}.{name}'
        if module in BLOCKED_MODULES:
            raise Refused(f'Trying to load unsupported GLOBAL {full} whose module {module} is '
                          f'blocked.')
        obj = self.table.get(full)
        if obj is None:
            obj = self.user.get(full)
            if obj is None:
                alias = _numpy_alias(full)
                obj = self.user.get(alias) if alias else None
            if obj is None:
                raise Refused(unsupported_global_message(full))
        if isinstance(obj, rebuild.Unavailable):
            raise rebuild.LoadError(f'the file holds {obj.what}, which dynagrad does not have')
        self.named[id(obj)] = obj
        return obj

    def _call_check(self, func):
        if id(func) not in self.named:
            raise Refused(f'Trying to call reduce for unrecognized function {func!r:.100}')
        check = self.checks.get(id(func))
        if check is None and id(func) not in self.user_ids:
            raise Refused(f'Trying to call {func!r:.100}, which weights-only loading only '
                          f'allows naming (it would build a tensor from sizes, allocating '
                          f'memory the file does not hold)')
        return check

    def _reduce(self):
        args = self._pop()
        func = self._pop()
        check = self._call_check(func)
        if type(args) is not tuple:
            raise Malformed('REDUCE arguments are not a tuple')
        if check not in (None, _NO_CHECK):
            check(args)
        self.stack.append(self._call(func, args))

    def _call(self, func, args, kwargs=None):
        try:
            return func(*args, **(kwargs or {}))
        except (rebuild.LoadError, Refused, Malformed):
            raise
        except (TypeError, ValueError, OverflowError, KeyError) as e:
            name = getattr(func, '__name__', type(func).__name__)
            raise Malformed(f'calling {name} failed ({type(e).__name__}: {e})') from None

    def _construct(self, cls, args, kwargs=None):
        if id(cls) not in self.named:
            raise Refused(f'Can only create new object for nn.Parameter or classes allowlisted '
                          f'via `add_safe_globals` but got {cls!r:.100}')
        if cls is rebuild.torch_globals()['torch.nn.parameter.Parameter']:
            if kwargs or not args or not isinstance(args[0], Tensor):
                raise Malformed('a Parameter is created from something other than a tensor')
            return self._call(cls, args)
        if cls in (OrderedDict, Counter, set, Size) or id(cls) in self.user_ids:
            if kwargs and id(cls) not in self.user_ids:
                raise Malformed('NEWOBJ_EX passes keyword arguments')
            if cls is Size:
                _check_size(args)
            try:
                return cls.__new__(cls, *args, **(kwargs or {}))
            except (TypeError, ValueError) as e:
                raise Malformed(f'creating a {cls.__name__} failed ({e})') from None
        raise Refused(f'Can only create new object for nn.Parameter or classes allowlisted '
                      f'via `add_safe_globals` but got {cls!r:.100}')

    def _newobj(self):
        args = self._pop()
        cls = self._pop()
        if type(args) is not tuple:
            raise Malformed('NEWOBJ arguments are not a tuple')
        self.stack.append(self._construct(cls, args))

    def _newobj_ex(self):
        kwargs = self._pop()
        args = self._pop()
        cls = self._pop()
        if type(args) is not tuple or type(kwargs) is not dict:
            raise Malformed('NEWOBJ_EX arguments are not a tuple and a dict')
        self.stack.append(self._construct(cls, args, kwargs))

    def _build(self):
        state = self._pop()
        inst = self._top()
        cls = type(inst)
        if cls in (OrderedDict, Counter):
            if not isinstance(state, dict) or not all(type(k) is str for k in state):
                raise Malformed(f'the state of a {cls.__name__} is not a dict of attributes')
            inst.__dict__.update(state)
            return
        if id(cls) not in self.user_ids:
            raise Refused(f'Can only build Tensor, Parameter, OrderedDict or types allowlisted '
                          f'via `add_safe_globals`, but got {cls}')
        setstate = getattr(inst, '__setstate__', None)
        if setstate is not None:
            self._call(setstate, (state,))
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)

    def _binpersid(self):
        pid = self._pop()
        if type(pid) is not tuple:
            raise Refused(f'persistent_load id must be tuple, but got {type(pid)}')
        kind = pid[0] if pid else None
        if isinstance(kind, bytes):
            kind = kind.decode('ascii', 'replace')
        if kind != 'storage':
            raise Refused(f'Only persistent_load of storage is allowed, but got {kind!r:.50}')
        self.stack.append(self.persistent_load(pid))


# -- the full unpickler -----------------------------------------------------------------------

def full_unpickler(pickle_module, file, persistent_load, **kwargs):
    """``pickle_module.Unpickler`` over ``file``, reading PyTorch's names as dynagrad's."""
    table = rebuild.torch_globals()

    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            fixed = fix_name(module, name)
            obj = table.get(f'{fixed[0]}.{fixed[1]}')
            if isinstance(obj, rebuild.Unavailable):
                raise rebuild.LoadError(f'the file holds {obj.what}, which dynagrad does not '
                                        f'have')
            if obj is not None:
                return obj
            if fixed[0] == 'torch' or fixed[0].startswith('torch.'):
                raise rebuild.LoadError(
                    f'the file pickles {fixed[0]}.{fixed[1]}, a PyTorch object dynagrad cannot '
                    f'rebuild; in PyTorch, save its state_dict() instead of the object')
            return super().find_class(module, name)

        def persistent_load(self, pid):
            if type(pid) is not tuple or not pid or pid[0] not in ('storage', b'storage'):
                raise pickle.UnpicklingError(f'unsupported persistent id {pid!r:.100}')
            return persistent_load(pid)

    return Unpickler(file, **kwargs)
