"""``dynagrad.compile``: torch.compile's API over capture (capture.py) and replay
(program.py).

A compiled callable keeps a cache of programs keyed by its guards: the shapes, dtypes and
``requires_grad`` of the tensor arguments, the other arguments' values, grad mode, the plain
values (numbers, strings, None) of the globals and closure variables the function's own code
names, and for a module the training flags and plain attributes of its submodules (a
dropout's ``p``, a ``scale``) and the identity, shape and dtype of its parameters and
buffers. A call whose key is new is captured: it runs eagerly while the
recorder writes its tape. The second call with that key is captured again, and the two tapes
must agree (ops, parameters, constants): a value computed outside the ops (a mask drawn by
Python, a shape read from data) would differ and sends that key to eager for good. From the
third call the program replays. A capture that breaks (capture.py) also sends its key to
eager, with the reason kept for ``explain``; ``fullgraph=True`` raises instead.

Unless ``dynamic=False``, a call whose key differs from an earlier capture's only in the
first dimension of its tensor arguments (a new batch size) is compared with that capture
(symbolic.py): where the two tapes differ only by multiples of the batch size, they make one
program for every batch size (except 0 and 1, which PyTorch specializes too), counted once
against the cache limit. Each further batch size is captured once and reuses that program
only if its tape gives the same one (see ``_try_dynamic``).

A module tree with forward or backward hooks runs eagerly: a hook's Python effects would
happen at captures only.
"""
import functools
import warnings

from ..autograd import batched
from ..autograd.grad_mode import is_grad_enabled
from ..nn.module import Module
from ..tensor import Tensor
from .decorators import current_stance
from .capture import GraphBreak, Recorder, Step, flatten as _flatten, unflatten as _unflatten
from .program import Program, call
from .symbolic import Differ, symbolize

BACKENDS = ('inductor', 'default', 'eager', 'aot_eager')
MODES = (None, 'default', 'reduce-overhead', 'max-autotune', 'max-autotune-no-cudagraphs')
CACHE_SIZE_LIMIT = 8     # torch._dynamo.config.cache_size_limit's default
_VERIFIED_KEYS_KEPT = 64


class _Eager:
    """A cache entry: this key runs eagerly, for ``reason``."""
    __slots__ = ('reason',)

    def __init__(self, reason):
        self.reason = reason


_SETTLED = False     # a key without batch sizes whose captures cannot make a dynamic program


class _FirstCapture:
    __slots__ = ('recorder', 'outputs', 'treedef')

    def __init__(self, recorder, outputs, treedef):
        self.recorder, self.outputs, self.treedef = recorder, outputs, treedef


# -- the compiled callable ---------------------------------------------------------------------

class CompiledFunction:
    """``fn`` compiled; for a module, ``module`` holds the parameters and buffers it reads."""

    def __init__(self, fn, *, module=None, fullgraph=False, dynamic=None, backend='inductor',
                 mode=None, options=None):
        self.backend_fn = None
        if callable(backend) and not isinstance(backend, str):
            # a callable backend (a counter, a user's compiler) is handed each program made,
            # as PyTorch hands it each frame's graph; dynagrad's replay runs the program
            self.backend_fn, backend = backend, 'inductor'
        if backend not in BACKENDS:
            raise RuntimeError(f'Invalid backend: {backend!r}; dynagrad.compile takes one of '
                               f'{", ".join(BACKENDS)}')
        if mode not in MODES:
            raise RuntimeError(f'Unrecognized mode={mode}, should be one of: '
                               f'{", ".join(m for m in MODES if m)}')
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.cache = {}
        self.events = []       # (key, what happened): what explain() reports
        # for dynamic programs, per key without the batch sizes: the first capture seen at a
        # batch of 2 or more (with its batch sizes; later batch sizes are checked against
        # it), and, once made, the program for every batch size
        self._first_by_shape = {}
        self._by_numbers = {}  # per key, its numbers blanked: (kept capture, program)
        self._dynamic = {}
        self._aliases = 0      # cache entries pointing at a dynamic program made earlier
        self._places = None
        self._globals = self._cells = None
        functools.update_wrapper(self, fn)

    # -- guards --------------------------------------------------------------------------
    def _structure(self):
        """The module's submodules and where each parameter and buffer lives (a dict and a
        name), found once: reading them each call is then a few lookups. A parameter
        assigned anew is seen (the lookup finds it, its id changes the key); a submodule or
        parameter added after the first call is not."""
        if self._places is None:
            modules, places, seen = [], [], set()
            for m in self.module.modules():
                modules.append(m)
                for store in (m._parameters, m._buffers):
                    for name, t in store.items():
                        if t is not None and id(t) not in seen:
                            seen.add(id(t))
                            places.append((store, name))
            self._submodules, self._places = modules, places
            # plain attributes a forward may read as constants (a dropout's p, a scale)
            self._attributes = [(m.__dict__, name) for m in modules
                                for name, v in m.__dict__.items()
                                if name != 'training' and _guardable(v)]
        return self._submodules, self._places

    def _module_tensors(self):
        if self.module is None:
            return []
        return [store[name] for store, name in self._structure()[1]]

    def _read_names(self):
        """(globals dict, name) of the plain globals, and the closure cells, the function's
        own code reads (its helpers' are not followed): a replay bakes what they held."""
        if self._globals is None:
            fn = self.fn if self.module is None else getattr(self.module, 'forward', None)
            fn = getattr(fn, '__func__', fn)
            code = getattr(fn, '__code__', None)
            names, cells = [], []
            if code is not None:
                space = fn.__globals__
                names = [(space, n) for n in code.co_names if _guardable(space.get(n, ()))]
                cells = [c for c in (fn.__closure__ or ())
                         if _guardable(getattr(c, 'cell_contents', ()))]
            self._globals, self._cells = names, cells
        return self._globals, self._cells

    def _key(self, args, kwargs):
        parts = [is_grad_enabled()]
        names, cells = self._read_names()
        if names or cells:
            parts.append(tuple([_attribute_guard(space.get(n)) for space, n in names] +
                               [_attribute_guard(c.cell_contents) for c in cells]))
        for a in args:
            parts.append(_guard_value(a))
        if kwargs:
            for k in sorted(kwargs):
                parts.append((k, _guard_value(kwargs[k])))
        if self.module is not None:
            modules, places = self._structure()
            parts.append(tuple([m.training for m in modules]))
            parts.append(tuple([(len(m._forward_hooks), len(m._forward_pre_hooks),
                                 len(m._backward_hooks), len(m._backward_pre_hooks))
                                for m in modules]))
            parts.append(tuple([_attribute_guard(d.get(n)) for d, n in self._attributes]))
            parts.append(tuple([_tensor_guard(store[name]) for store, name in places]))
        return tuple(parts)

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self.backend == 'eager' or current_stance.eager:
            return self.fn(*args, **kwargs)
        key = self._key(args, kwargs)
        entry = self.cache.get(key)
        if entry is None:
            if len(self.cache) - self._aliases >= CACHE_SIZE_LIMIT:
                warnings.warn(f'dynagrad.compile: {getattr(self.fn, "__name__", self.fn)} '
                              f'reached the cache size limit ({CACHE_SIZE_LIMIT} programs); '
                              'new guards run eagerly', UserWarning, stacklevel=2)
                self.cache[key] = entry = _Eager('cache size limit reached')
                return self.fn(*args, **kwargs)
            return self._capture(key, args, kwargs, None)
        if entry.__class__ is Program:
            if (entry.lifted or entry.constant_versions) and not _lifted_unchanged(entry):
                self.cache[key] = None
                return self._capture(key, args, kwargs, None)
            tensors = _tensor_leaves(args, kwargs) + self._module_tensors() + entry.lifted
            return _unflatten(entry.treedef, call(entry, tensors, is_grad_enabled()))
        if entry.__class__ is _FirstCapture:
            return self._capture(key, args, kwargs, entry)
        return self.fn(*args, **kwargs)

    def _capture(self, key, args, kwargs, first):
        if _on_a_device(_tensor_leaves(args, kwargs) + self._module_tensors()):
            return self._run_eagerly(key, args, kwargs, 'tensors on a non-CPU device (a '
                                     'program replays its ops on the CPU only, not yet on a '
                                     'device)')
        if self.module is not None and any(
                m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                or m._backward_pre_hooks for m in self._structure()[0]):
            # a hook is Python run around a module's forward: what it does besides computing
            # (recording a feature, counting) would happen at captures only
            return self._run_eagerly(key, args, kwargs,
                                     'module hooks (their Python effects would not be replayed)')
        tensors = _tensor_leaves(args, kwargs) + self._module_tensors()
        known = {}
        for i, t in enumerate(tensors):
            known.setdefault(id(t), i)
        recorder = Recorder(known, self.fullgraph, len(tensors))
        recorder.arrays = {i: t._data for i, t in enumerate(tensors)}
        with recorder:
            result = self.fn(*args, **kwargs)
            leaves = []
            treedef = _flatten(result, leaves)
            outputs = [recorder.output_ref(x) if recorder.broken is None else None
                       for x in leaves]
        recorder.finish()
        if recorder.broken is not None:
            self.cache[key] = _Eager(recorder.broken)
            self.events.append((key, 'graph break: ' + recorder.broken))
            return result
        if first is None:
            capture = _FirstCapture(recorder, outputs, treedef)
            if self.dynamic is not False and self._same_but_numbers(key, capture, tensors):
                return result
            self.cache[key] = capture
            self.events.append((key, f'captured {len(recorder.steps)} ops'))
            if self.dynamic is not False:
                self._try_dynamic(key, capture, _batch_sizes(args, kwargs))
            return result
        if not _same_tape(first, recorder, outputs, treedef):
            reason = ('the captured program changed between two calls with the same guards '
                      '(a value computed outside the ops: data-dependent Python, a random '
                      'draw outside an op)')
            self.cache[key] = _Eager(reason)
            self.events.append((key, reason))
            if self.fullgraph:
                raise GraphBreak(f'dynagrad.compile(fullgraph=True): {reason}')
            return result
        self.cache[key] = program = _program(recorder, len(tensors), outputs, treedef)
        self.events.append((key, f'compiled {len(recorder.steps)} ops'))
        self._made(program, tensors)
        return result

    def _made(self, program, tensors):
        if self.backend_fn is not None:
            self.backend_fn(GraphModuleView(program), tensors + program.lifted)

    # -- one program for every value of a number argument --------------------------------
    # An int or float among the arguments (a step count, a schedule's weight in a dict) is
    # part of the key, so each value is captured anew. Where the tape of a new value is the
    # same as the kept capture's of another value (the number decided nothing the ops see),
    # the two make one program, which the new key then replays; every new value is still
    # captured once and compared, so a value that takes another Python branch, or reaches
    # an op as a constant, gets its own program. Keys verified so are kept up to a bound: a
    # value that changes every call (a step count) must not grow the cache without end.
    def _same_but_numbers(self, key, capture, tensors):
        blank = _without_numbers(key)
        if blank == key:
            return False
        seen = self._by_numbers.get(blank)
        if seen is None:
            self._by_numbers[blank] = (capture, None)
            return False
        kept, program = seen
        if not _same_tape(kept, capture.recorder, capture.outputs, capture.treedef):
            return False
        if program is None:
            program = _program(capture.recorder, len(tensors), capture.outputs,
                               capture.treedef)
            self._by_numbers[blank] = (kept, program)
            self.events.append((key, f'compiled {len(program.steps)} ops for any value of '
                                     'its number arguments (their captures agree)'))
            self._made(program, tensors)
        else:
            self.events.append((key, 'reused the program of other number values (checked)'))
        if self._aliases < _VERIFIED_KEYS_KEPT:
            self.cache[key] = program
            self._aliases += 1
        return True

    def _run_eagerly(self, key, args, kwargs, reason):
        """This key runs eagerly from now on, for ``reason`` (fullgraph=True raises)."""
        if self.fullgraph:
            raise GraphBreak(f'dynagrad.compile(fullgraph=True): the call cannot be '
                             f'captured whole: {reason}')
        self.cache[key] = _Eager(reason)
        self.events.append((key, 'graph break: ' + reason))
        return self.fn(*args, **kwargs)

    # -- one program for every batch size -------------------------------------------------
    # The first capture at a batch size of 2 or more is kept. A capture at another batch size
    # is compared with it: where the two differ only by multiples of the batch, they make the
    # program for every batch size. Every later batch size is still captured once (its first
    # call runs eagerly) and compared with the kept capture the same way: only a tape that
    # gives the same symbolic program reuses it. Python deciding on a shape (``if
    # x.shape[0] > 4``) would record another tape at some batch sizes; no guard could see
    # that, so each batch size is checked once instead of trusted.
    def _try_dynamic(self, key, capture, sizes):
        shape_key = _without_batch(key)
        seen = self._first_by_shape.get(shape_key)
        if seen is None:
            self._first_by_shape[shape_key] = (capture, sizes)
            return
        if seen is _SETTLED:
            return
        first, first_sizes = seen
        varying = [i for i, (a, b) in enumerate(zip(first_sizes, sizes)) if a != b]
        b1 = {first_sizes[i] for i in varying}
        b2 = {sizes[i] for i in varying}
        if not varying or len(b1) != 1 or len(b2) != 1:
            return
        if min(b1 | b2) < 2:
            # batches of 0 and 1 keep programs of their own (broadcasting may differ there)
            if min(b1) < 2 <= min(b2):
                self._first_by_shape[shape_key] = (capture, sizes)
            return
        (b1,), (b2,) = b1, b2
        made = self._dynamic.get(shape_key)
        try:
            program = _dynamic_program(first, capture, b1, b2)
        except Differ as e:
            if made is not None:
                self.events.append((key, _own_program(b2, e)))
                return
            self._first_by_shape[shape_key] = _SETTLED   # each batch size its own program
            self.events.append((key, f'no dynamic program: the captures at batch {b1} and '
                                     f'{b2} differ ({e})'))
            return
        if made is not None:
            if made.varying != varying or not _same_program(made, program):
                self.events.append((key, _own_program(b2, 'another symbolic program')))
                return
            program = made
            what = f'reused the program for any batch size at batch {b2} (checked)'
        else:
            program.batch_slot = varying[0]
            program.varying = varying
            program.fixed = {i: n for i, n in enumerate(sizes) if i not in varying}
            self._dynamic[shape_key] = program
            what = (f'compiled {len(program.steps)} ops for any batch size (batch dimension '
                    f'symbolic, seen at {b1} and {b2})')
        self.cache[key] = program
        self._aliases += 1
        self.events.append((key, what))

    # -- what it did -----------------------------------------------------------------------
    def programs(self):
        found = {id(p): p for p in self.cache.values() if p.__class__ is Program}
        return list(found.values())

    def reset(self):
        self.cache.clear()
        self.events.clear()
        self._first_by_shape.clear()
        self._by_numbers.clear()
        self._dynamic.clear()
        self._aliases = 0


def _without_numbers(part):
    """A key with the values of its int and float guards blanked."""
    if part.__class__ is tuple:
        if len(part) == 3 and part[0] == 'V' and (part[1] == 'int' or part[1] == 'float'):
            return ('V', part[1], None)
        return tuple([_without_numbers(p) for p in part])
    return part


def _tensor_leaves(args, kwargs):
    leaves = []
    for a in args:
        _flatten(a, leaves)
    for k in sorted(kwargs):
        _flatten(kwargs[k], leaves)
    return [x for x in leaves if isinstance(x, Tensor)]


_PLAIN = (bool, int, float, complex, str, type(None))


def _plain(value):
    """A value a trace may bake into a program: a number, a string, None, or a tuple of
    them."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, _PLAIN)


def _guardable(value):
    return _plain(value) or isinstance(value, Tensor)


def _attribute_guard(value):
    """A plain value as itself; a tensor by identity (a new tensor assigned makes a new
    program; writes into the same one are caught by the constants' versions)."""
    return ('tensor', id(value)) if isinstance(value, Tensor) else value


def _tensor_guard(t):
    data = t._data
    return (id(t), data.shape, data.dtype, t._requires_grad)


def _guard_value(a):
    if isinstance(a, Tensor):
        return ('T', a._data.shape, a._data.dtype, a._requires_grad,
                a._data.__class__.__name__)
    if isinstance(a, (tuple, list)):
        return (type(a).__name__,) + tuple(_guard_value(x) for x in a)
    if isinstance(a, dict):
        return ('dict',) + tuple((k, _guard_value(v)) for k, v in sorted(a.items()))
    try:
        hash(a)
        return ('V', type(a).__name__, a)
    except TypeError:
        return ('id', id(a))


def _on_a_device(tensors):
    return batched.state.devices and any(t.device.type != 'cpu' for t in tensors)


def _batch_sizes(args, kwargs):
    """The first dimension of each tensor argument (None for a 0-d one)."""
    return [t._data.shape[0] if t._data.ndim else None for t in _tensor_leaves(args, kwargs)]


def _without_batch(key):
    """The guard key with the first dimension of every tensor argument left out."""
    def strip(part):
        if isinstance(part, tuple) and part:
            if part[0] == 'T' and len(part) == 5:
                return ('T', part[1][1:] if part[1] else None) + part[2:]
            return tuple(strip(p) for p in part)
        return part
    return tuple(strip(p) for p in key)


class _Tape:
    __slots__ = ('steps', 'constants', 'n_slots', 'lifted', 'constant_versions')


def _dynamic_program(first, second, b1, b2):
    """The program of two captures at batch sizes ``b1`` and ``b2``, its batch-dependent
    values made symbols; raises ``Differ`` where the captures differ otherwise."""
    a, b = first.recorder, second.recorder
    if [id(t) for t in a.lifted] != [id(t) for t in b.lifted]:
        raise Differ('different tensors read through closures')
    if len(a.steps) != len(b.steps) or len(a.constants) != len(b.constants):
        raise Differ('different numbers of ops')
    if repr(first.treedef) != repr(second.treedef) or a.n_slots != b.n_slots:
        raise Differ('different results')
    for x, y in zip(a.constants, b.constants):
        symbolize(x, y, b1, b2)
    outputs = [_ref_template(x, y, b1, b2) for x, y in zip(first.outputs, second.outputs)]
    steps = []
    for x, y in zip(a.steps, b.steps):
        if (x.cls, x.casts, x.needs, x.outs, x.multi, x.inplace, x.real) != \
                (y.cls, y.casts, y.needs, y.outs, y.multi, y.inplace, y.real):
            raise Differ(f'{getattr(x.cls, "_node_name", x.cls)} against '
                         f'{getattr(y.cls, "_node_name", y.cls)}')
        refs = tuple(_ref_template(r, q, b1, b2) for r, q in zip(x.refs, y.refs))
        step = Step(y.cls, symbolize(x.params, y.params, b1, b2), refs, y.casts, y.needs,
                    symbolize(x.meta, y.meta, b1, b2), y.outs, y.multi, y.real, y.inplace)
        step.out_meta = symbolize(x.out_meta, y.out_meta, b1, b2)
        step.fill = symbolize(x.fill, y.fill, b1, b2)
        steps.append(step)
    tape = _Tape()
    tape.steps, tape.constants, tape.n_slots, tape.lifted = steps, b.constants, b.n_slots, b.lifted
    tape.constant_versions = b.constant_versions
    return _program(tape, b.n_inputs, outputs, second.treedef)


def _own_program(batch, why):
    return (f'batch {batch} records another program than the one for any batch size ({why}; '
            'Python deciding on the shape?): it gets its own')


def _same_program(a, b):
    """Whether two programs made from captures are the same program."""
    return (len(a.steps) == len(b.steps) and a.outputs == b.outputs
            and all(x.signature() == y.signature() for x, y in zip(a.steps, b.steps))
            and len(a.constants) == len(b.constants)
            and all(x.shape == y.shape and x.dtype == y.dtype and (x == y).all()
                    for x, y in zip(a.constants, b.constants)))


def _ref_template(x, y, b1, b2):
    """Where an input comes from must agree exactly; a number passed in may be a symbol."""
    if x is None or y is None:
        if x is not y:
            raise Differ('an output missing in one capture')
        return None
    if x[0] != y[0] or (x[0] != 'v' and x[1] != y[1]):
        raise Differ(f'inputs from {x} against {y}')
    return x if x[0] != 'v' else ('v', symbolize(x[1], y[1], b1, b2))


class _Node:
    __slots__ = ('op', 'target', 'name')

    def __init__(self, op, target, name):
        self.op, self.target, self.name = op, target, name

    def __repr__(self):
        return self.name


class _Graph:
    def __init__(self, nodes):
        self.nodes = nodes

    def __str__(self):
        return '\n'.join(f'{n.op} {n.name} {n.target}' for n in self.nodes)


class GraphModuleView:
    """What a callable backend is handed for a program: FX's GraphModule in the parts
    backends read (``graph.nodes`` with ``op``/``target``/``name``, ``forward``, calling
    it). Its nodes are the program's inputs ('placeholder'), ops ('call_function', the
    target is dynagrad's op class) and 'output'; ``forward`` replays the program on flat
    input tensors. What the backend returns is not used."""

    def __init__(self, program):
        self._program = program
        nodes = [_Node('placeholder', f'arg{i}', f'arg{i}') for i in range(program.n_inputs)]
        nodes += [_Node('call_function', step.cls, f'{step.cls.__name__.lower()}_{i}')
                  for i, step in enumerate(program.steps)]
        nodes.append(_Node('output', 'output', 'output'))
        self.graph = _Graph(nodes)

    def forward(self, *tensors):
        return call(self._program, list(tensors), is_grad_enabled())

    __call__ = forward

    @property
    def code(self):
        return str(self.graph)


def _program(recorder, n_args, outputs, treedef):
    """The program of a capture, its lifted tensors (refs ('p', i)) made input slots
    ``n_args + i`` and the computed slots moved up past them."""
    lifted = len(recorder.lifted)

    def move(ref):
        if ref is None:
            return None
        kind, v = ref
        if kind == 'p':
            return ('s', n_args + v)
        if kind == 's' and v >= n_args:
            return ('s', v + lifted)
        return ref
    for step in recorder.steps:
        step.refs = tuple(move(r) for r in step.refs)
        step.outs = tuple(None if o is None else o + lifted for o in step.outs)
    program = Program(recorder.steps, recorder.constants, n_args + lifted,
                      recorder.n_slots + lifted, [move(r) for r in outputs], treedef)
    program.lifted = list(recorder.lifted)
    program.lifted_guard = [_tensor_guard(t) for t in recorder.lifted]
    program.constant_versions = list(recorder.constant_versions)
    return program


def _lifted_unchanged(program):
    return all(_tensor_guard(t) == g for t, g in zip(program.lifted, program.lifted_guard)) \
        and all(vc.value == value for vc, value in program.constant_versions)


def _same_tape(first, recorder, outputs, treedef):
    a, b = first.recorder, recorder
    if [id(t) for t in a.lifted] != [id(t) for t in b.lifted]:
        return False
    if len(a.steps) != len(b.steps) or first.outputs != outputs or \
            repr(first.treedef) != repr(treedef) or len(a.constants) != len(b.constants):
        return False
    if any(x.signature() != y.signature() for x, y in zip(a.steps, b.steps)):
        return False
    return all(x.shape == y.shape and x.dtype == y.dtype and (x == y).all()
               for x, y in zip(a.constants, b.constants))


class OptimizedModule(Module):
    """A module compiled: it behaves as the module (parameters, ``state_dict`` under
    ``_orig_mod.``, ``train()``/``eval()``, hooks) and calls it through the compiled path."""

    def __init__(self, mod, **options):
        super().__init__()
        self._orig_mod = mod
        self.__dict__['_compiled'] = CompiledFunction(mod.__call__, module=mod, **options)

    def forward(self, *args, **kwargs):
        return self.__dict__['_compiled'](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules['_orig_mod'], name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None,
            options=None, disable=False):
    """Compile a function or module as ``torch.compile`` does (see the module docstring);
    also a decorator, with or without arguments."""
    options_ = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options)
    if model is None:
        return lambda m: compile(m, disable=disable, **options_)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, **options_)
    if not callable(model):
        raise RuntimeError('dynagrad.compile expects a callable (a function or a Module), '
                           f'got {type(model).__name__}')
    return CompiledFunction(model, **options_)


# -- capturing once, for export ------------------------------------------------------------

class ExportError(RuntimeError):
    """What ``capture_program`` raises; exporters re-raise it as their own error type."""


def capture_program(fn, module, args, batched, who, hint):
    """Capture ``fn(*args)`` whole (fullgraph) and return (program, result): the program of
    the example's shapes, or, when ``batched`` names tensor arguments (their positions among
    the tensors), the program for any batch size, made from two more captures at larger
    batches. ``who`` and ``hint`` word the errors (which exporter, what to do instead)."""
    compiled = CompiledFunction(fn, module=module, fullgraph=True,
                                dynamic=True if batched else False)
    try:
        for _ in range(2):
            result = compiled(*args)
        for extra_rows in ((1, 2) if batched else ()):
            compiled(*_grown(args, batched, extra_rows))
    except GraphBreak as e:
        raise ExportError(f'{who}: {e}') from None
    if not batched:
        return compiled.programs()[0], result, compiled
    if not compiled._dynamic:
        why = [what for _, what in compiled.events if what.startswith('no dynamic')]
        raise ExportError(f'{who}: a dynamic batch was asked for, but the captured program '
                          f'fixes it ({why[0] if why else "no program for any batch"}); {hint}')
    (program,) = compiled._dynamic.values()
    return program, result, compiled


def _grown(args, batched, extra_rows):
    """``args`` with each batched tensor ``extra_rows`` rows longer (its first rows again)."""
    import numpy as np
    from ..tensor import wrap
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    grown = list(args)
    for k in batched:
        t = args[positions[k]]._data
        grown[positions[k]] = wrap(np.concatenate([t] + [t[:1]] * extra_rows))
    return tuple(grown)
