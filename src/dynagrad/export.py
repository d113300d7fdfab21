"""``dynagrad.export``: a module's forward captured once as an inspectable program, the
counterpart of ``torch.export``.

``export(mod, args)`` records ``mod(*args)`` as ``dynagrad.compile`` records a call (the
same tape and program, so the same ops and gradients) and returns an ``ExportedProgram``:
its ``graph`` lists each op with its inputs, output shape and dtype; ``graph_signature``
names the parameters, buffers and user inputs the program reads; ``module()`` is a module
that runs the program (not the original Python) on new inputs, checking them against the
example's shapes and dtypes. ``dynamic_shapes`` may make the first dimension of inputs a
``Dim`` (one program for any batch size, as ``dynamic=True`` in ``compile``); other
dimensions are refused.
"""
import inspect
import re

import numpy as np

from .compiler.api import ExportError, capture_program
from .compiler.capture import unflatten
from .compiler.program import call
from .compiler.symbolic import Sym
from .nn.module import Module
from .tensor import Tensor

__all__ = ['export', 'ExportedProgram', 'ExportGraphSignature', 'Dim']

_SHORT = {'float32': 'f32', 'float64': 'f64', 'float16': 'f16', 'bfloat16': 'bf16',
          'int64': 'i64', 'int32': 'i32', 'int16': 'i16', 'int8': 'i8', 'uint8': 'u8',
          'bool': 'b8', 'complex64': 'c64', 'complex128': 'c128'}


class Dim:
    """A dimension that may vary (``Dim('batch', min=2, max=1024)``), as torch.export.Dim."""

    def __init__(self, name, *, min=None, max=None):
        self.__name__, self.min, self.max = name, min, max

    def __repr__(self):
        return f"Dim('{self.__name__}')"


class ExportGraphSignature:
    """Which program inputs are parameters, buffers and user inputs, and the outputs."""

    def __init__(self, parameters, buffers, user_inputs, user_outputs, inputs_to_parameters,
                 inputs_to_buffers):
        self.parameters, self.buffers = parameters, buffers
        self.user_inputs, self.user_outputs = user_inputs, user_outputs
        self.inputs_to_parameters = inputs_to_parameters
        self.inputs_to_buffers = inputs_to_buffers

    def __repr__(self):
        fields = ('parameters', 'buffers', 'user_inputs', 'user_outputs',
                  'inputs_to_parameters', 'inputs_to_buffers')
        return 'ExportGraphSignature(\n' + ''.join(
            f'    {f}={getattr(self, f)!r},\n' for f in fields) + ')'


class Node:
    """One line of the graph: ``name = target(args)`` with the result's shape and dtype."""

    def __init__(self, op, name, target, args, meta):
        self.op, self.name, self.target, self.args, self.meta = op, name, target, args, meta

    def __repr__(self):
        return self.name


class ExportedProgram:
    """What ``export`` returns (see the module docstring)."""

    def __init__(self, program, treedef, signature, nodes, state, example, dynamic):
        self._program, self._treedef = program, treedef
        self.graph_signature = signature
        self.graph = nodes
        self.state_dict = state
        self._example = example        # (shape, dtype) of each user input
        self._dynamic = dynamic        # user input positions whose first dim may vary
        self.range_constraints = {'s0': (2, None)} if dynamic else {}

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self.state_dict[name]

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self):
        for name in self.graph_signature.buffers:
            yield name, self.state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def run_decompositions(self, decomp_table=None):
        """The program is made of dynagrad's own ops already: itself."""
        return self

    def module(self):
        """A module running the program on new inputs (gradients reach the parameters)."""
        return _ExportedModule(self)

    def _run(self, args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        self._check(tensors)
        state = [self.state_dict[name] for name in self._order]
        from .autograd.grad_mode import is_grad_enabled
        leaves = call(self._program, tensors + state + self._program.lifted,
                      is_grad_enabled())
        return unflatten(self._treedef, leaves)

    def _check(self, tensors):
        if len(tensors) != len(self._example):
            raise RuntimeError(f'Expected {len(self._example)} tensor inputs, but got '
                               f'{len(tensors)}')
        for i, (t, (shape, dtype)) in enumerate(zip(tensors, self._example)):
            if t._data.dtype != dtype:
                raise RuntimeError(f'Expected input at *args[{i}] to have dtype {dtype}, but '
                                   f'got {t._data.dtype}')
            got = tuple(t.shape)
            if len(got) != len(shape):
                raise RuntimeError(f'Expected input at *args[{i}] to have {len(shape)} '
                                   f'dimensions, but got {len(got)}')
            for d, (want, have) in enumerate(zip(shape, got)):
                if d == 0 and i in self._dynamic:
                    if have < 2:
                        raise RuntimeError(f'Expected input at *args[{i}].shape[0] to be '
                                           f'>= 2, but got {have}')
                elif want != have:
                    raise RuntimeError(f'Expected input at *args[{i}].shape[{d}] to be equal '
                                       f'to {want}, but got {have}')

    def __str__(self):
        lines = ['ExportedProgram:', '    class GraphModule(dynagrad.nn.Module):']
        inputs = [n for n in self.graph if n.op == 'placeholder']
        lines.append('        def forward(self, ' + ', '.join(
            f'{n.name}: "{n.meta}"' for n in inputs) + '):')
        for n in self.graph:
            if n.op == 'call_function':
                lines.append(f'            {n.name}: "{n.meta}" = {n.target}('
                             f'{", ".join(map(str, n.args))})')
            elif n.op == 'output':
                lines.append(f'            return ({", ".join(map(str, n.args))},)')
        lines.append(f'Graph signature: {self.graph_signature!r}')
        lines.append(f'Range constraints: {self.range_constraints}')
        return '\n'.join(lines)

    __repr__ = __str__


class _ExportedModule(Module):
    def __init__(self, exported):
        super().__init__()
        self.__dict__['_exported'] = exported

    def forward(self, *args):
        return self.__dict__['_exported']._run(args)


def _snake(name):
    """'NativeLayerNorm' -> 'native_layer_norm' (the names torch.export gives nodes)."""
    return re.sub(r'(?<=[a-z0-9])(?=[A-Z])', '_', name).lower()


def _meta(shape, dtype):
    dims = ', '.join((f'{d.k}*s0' if d.k != 1 else 's0') if isinstance(d, Sym) else str(d)
                     for d in shape)
    return f'{_SHORT.get(str(dtype), str(dtype))}[{dims}]'


def _dynamic_positions(mod, n_tensors, dynamic_shapes):
    """The user inputs whose first dimension ``dynamic_shapes`` makes a ``Dim``."""
    if not dynamic_shapes:
        return []
    if isinstance(dynamic_shapes, dict):
        names = list(inspect.signature(mod.forward).parameters)
        specs = [dynamic_shapes.get(name) for name in names[:n_tensors]]
    else:
        specs = list(dynamic_shapes)
    found = []
    for i, spec in enumerate(specs):
        if not spec:
            continue
        dims = dict(spec) if isinstance(spec, dict) else dict(enumerate(spec))
        others = [d for d, v in dims.items() if v is not None and d != 0]
        if others:
            raise RuntimeError(f'dynagrad.export: dynamic_shapes makes dimension(s) {others} '
                               f'of input {i} dynamic; only the first (batch) dimension can '
                               'vary in a dynagrad program')
        if dims.get(0) is not None:
            found.append(i)
    return found


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=()):
    """Capture ``mod(*args)`` as an ``ExportedProgram`` (see the module docstring)."""
    if not isinstance(mod, Module):
        raise ValueError(f'Expected `mod` to be an instance of `torch.nn.Module`, got '
                         f'{type(mod)}.')
    if kwargs:
        raise NotImplementedError('dynagrad.export: keyword inputs are not supported yet; '
                                  'pass the inputs positionally')
    args = tuple(args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    dynamic = _dynamic_positions(mod, len(tensors), dynamic_shapes)
    try:
        program, _, compiled = capture_program(
            mod.__call__, mod, args, dynamic, 'dynagrad.export',
            'export without dynamic_shapes')
    except ExportError as e:
        raise RuntimeError(str(e)) from None
    return _describe(mod, compiled, program, tensors, dynamic)


def _describe(mod, compiled, program, tensors, dynamic):
    """The ExportedProgram of ``program``: names for its slots, and its nodes."""
    arg_names = list(inspect.signature(mod.forward).parameters)[:len(tensors)]
    arg_names += [f'arg{i}' for i in range(len(arg_names), len(tensors))]
    fqn = {}
    for kind, named in (('p', mod.named_parameters()), ('b', mod.named_buffers())):
        for name, t in named:
            fqn.setdefault(id(t), (kind, name))
    names, placeholders, nodes = {}, [], []
    state, order, params, buffers = {}, [], [], []
    for i, t in enumerate(tensors):
        names[i] = arg_names[i]
        shape = (Sym(1),) + tuple(t.shape)[1:] if i in dynamic else tuple(t.shape)
        placeholders.append(Node('placeholder', arg_names[i], None, (),
                                 _meta(shape, t._data.dtype)))
    for j, t in enumerate(compiled._module_tensors()):
        kind, name = fqn[id(t)]
        (params if kind == 'p' else buffers).append(name)
        state[name] = t
        order.append(name)
        names[len(tensors) + j] = f'{kind}_{name.replace(".", "_")}'
        placeholders.insert(j, Node('placeholder', names[len(tensors) + j], None, (),
                                    _meta(tuple(t.shape), t._data.dtype)))
    for k in range(len(program.lifted)):
        names[len(tensors) + len(order) + k] = f'lifted_{k}'
    counts = {}
    for step in program.steps:
        if 'fn' in step.params:        # an eager island: named by its function
            target = base = step.params['fn'].__name__
        else:
            target = getattr(step.cls, '__qualname__', step.cls.__name__)
            base = _snake(step.cls._node_name.split('Backward')[0])
        args = [names[v] if kind == 's' else f'constant_{v}' if kind == 'c' else
                (f'array{v.shape}' if isinstance(v, np.ndarray) else repr(v))
                for kind, v in step.refs]
        if 'fn' not in step.params:
            args += [f'{k}={v!r}' for k, v in step.params.items()
                     if not isinstance(v, np.ndarray)]
        for slot, meta in zip(step.outs, step.out_meta or ()):
            if slot is None:
                continue
            count = counts[base] = counts.get(base, -1) + 1
            names[slot] = base if count == 0 else f'{base}_{count}'
            nodes.append(Node('call_function', names[slot], target, tuple(args),
                              _meta(tuple(meta[0]), meta[1])))
    outputs = [names[ref[1]] if ref and ref[0] == 's' else
               (f'constant_{ref[1]}' if ref else 'None') for ref in program.outputs]
    nodes.append(Node('output', 'output', None, tuple(outputs), ''))
    signature = ExportGraphSignature(
        params, buffers, arg_names, outputs,
        {f'p_{n.replace(".", "_")}': n for n in params},
        {f'b_{n.replace(".", "_")}': n for n in buffers})
    example = [(tuple(t.shape), t._data.dtype) for t in tensors]
    exported = ExportedProgram(program, program.treedef, signature, placeholders + nodes, state,
                               example, dynamic)
    exported._order = order
    return exported

