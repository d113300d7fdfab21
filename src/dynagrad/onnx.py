"""``dynagrad.onnx.export``: a model's forward, captured as ``dynagrad.compile`` captures it,
written as an ONNX graph with the ``onnx`` package (an optional dependency:
``pip install 'dynagrad[onnx]'``).

Each captured op becomes the ONNX operators that compute it; the model's parameters and
buffers (and any constant the forward made) become initializers. Ops with no ONNX
counterpart written here raise ``OnnxExporterError`` naming the op, before anything is
written: a file is either a complete graph or not there.
"""
import contextlib

import numpy as np

from .compiler.symbolic import has_symbols, instantiate

__all__ = ['export', 'is_in_onnx_export', 'OnnxExporterError']

_exporting = [False]


class OnnxExporterError(RuntimeError):
    """Raised by ``export``: what PyTorch raises when an export fails."""


def is_in_onnx_export():
    return _exporting[0]


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise ModuleNotFoundError(
            "dynagrad.onnx.export needs the onnx package: pip install 'dynagrad[onnx]' "
            '(or pip install onnx)') from None
    return onnx, helper, numpy_helper


class _Graph:
    """The ONNX graph being built: nodes, initializers, and a name for every slot."""

    def __init__(self, helper, numpy_helper):
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.initializers = [], []
        self.names = {}
        self.count = 0
        self.batch = None       # a 1-D int64 tensor holding the batch size, when dynamic

    def fresh(self, hint='t'):
        self.count += 1
        return f'{hint}_{self.count}'

    def constant(self, value, dtype=None, hint='c'):
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(self.numpy_helper.from_array(array, name))
        return name

    def ints_of(self, values):
        """A 1-D int64 tensor of ``values``, whose ``Sym`` entries (multiples of the batch
        size, see dynagrad.compiler.symbolic) are computed from the batch input's shape."""
        from .compiler.symbolic import Sym
        values = list(values)
        if not any(isinstance(v, Sym) for v in values):
            return self.constant(np.asarray(values, np.int64), hint='shape')
        if self.batch is None:
            raise OnnxExporterError('dynagrad.onnx.export: a batch-sized value in a graph '
                                    'exported without a dynamic batch')
        pieces, run = [], []
        for v in values + [None]:
            if isinstance(v, Sym) or v is None:
                if run:
                    pieces.append(self.constant(np.asarray(run, np.int64), hint='shape'))
                    run = []
                if isinstance(v, Sym):
                    pieces.append(self.node('Mul', [self.batch, self.constant(
                        np.asarray([v.k], np.int64))]))
            else:
                run.append(int(v))
        return pieces[0] if len(pieces) == 1 else self.node('Concat', pieces, {'axis': 0})

    def node(self, op, inputs, attrs=None, outputs=1, hint=None):
        names = [self.fresh(hint or op.lower()) for _ in range(outputs)]
        self.nodes.append(self.helper.make_node(op, list(inputs), names, **(attrs or {})))
        return names[0] if outputs == 1 else names


# -- converters: op class name -> fn(graph, step, input names, input arrays) -> output name ------

def _linear(g, step, names, arrays):
    x, w = names[0], names[1]
    wt = g.node('Transpose', [w], {'perm': [1, 0]}) if arrays[1].ndim == 2 else w
    out = g.node('MatMul', [x, wt])
    if len(names) > 2 and names[2] is not None:
        out = g.node('Add', [out, names[2]])
    return out


def _elementwise(op):
    def convert(g, step, names, arrays):
        return g.node(op, names)
    return convert


def _binary(op):
    def convert(g, step, names, arrays):
        alpha = step.params.get('alpha', 1)
        a, b = names
        if alpha != 1:
            b = g.node('Mul', [b, g.constant(alpha, arrays[1].dtype if hasattr(arrays[1], 'dtype')
                                              else arrays[0].dtype)])
        return g.node(op, [a, b])
    return convert


def _softmax(op):
    def convert(g, step, names, arrays):
        return g.node(op, [names[0]], {'axis': int(step.params['dim'])})
    return convert


def _view(g, step, names, arrays):
    return g.node('Reshape', [names[0], g.ints_of(step.params['shape'])])


_view.symbolic = True       # its shape may hold the batch symbol (g.ints_of builds it)


def _transpose(g, step, names, arrays):
    ndim = arrays[0].ndim
    perm = list(range(ndim))
    a, b = step.params['dim0'] % ndim, step.params['dim1'] % ndim
    perm[a], perm[b] = perm[b], perm[a]
    return g.node('Transpose', [names[0]], {'perm': perm})


def _matmul(g, step, names, arrays):
    return g.node('MatMul', names[:2])


def _sum(g, step, names, arrays):
    dim = step.params.get('dim')
    keep = int(bool(step.params.get('keepdim', False)))
    if dim is None:
        return g.node('ReduceSum', [names[0]], {'keepdims': keep})
    axes = g.constant(np.asarray([dim] if isinstance(dim, int) else list(dim), np.int64))
    return g.node('ReduceSum', [names[0], axes], {'keepdims': keep})


def _convolution(g, step, names, arrays):
    p = step.params
    if p.get('transposed') or len(arrays[1].shape) not in (3, 4, 5):
        return None
    pads = [a for a, _ in p['pads']] + [b for _, b in p['pads']]
    inputs = [n for n in names[:3] if n is not None]
    return g.node('Conv', inputs, {'strides': list(p['stride']), 'pads': pads,
                                   'dilations': list(p['dilation']), 'group': int(p['groups'])})


def _max_pool(g, step, names, arrays):
    p = step.params
    if p.get('return_indices'):
        return None
    k = list(p['k'])
    pads = list(p['p']) * 2
    attrs = {'kernel_shape': k, 'strides': list(p['s']), 'pads': pads,
             'dilations': list(p['d'])}
    # the output size dynagrad computed tells floor from ceil mode
    spatial = arrays[0].shape[-len(k):]
    floor = [(n + 2 * pad - dil * (kk - 1) - 1) // st + 1 for n, pad, dil, kk, st in
             zip(spatial, p['p'], p['d'], k, p['s'])]
    if list(p['out']) != floor:
        attrs['ceil_mode'] = 1
    return g.node('MaxPool', [names[0]], attrs)


def _identity(g, step, names, arrays):
    return g.node('Identity', [names[0]])


def _equal(g, step, names, arrays):
    return g.node('Equal', names[:2])


def _masked_fill(g, step, names, arrays):
    value = g.constant(np.asarray(arrays[2], arrays[0].dtype))
    return g.node('Where', [names[1], value, names[0]])


def _gelu(g, step, names, arrays):
    x, dtype = names[0], arrays[0].dtype
    half, one = g.constant(0.5, dtype), g.constant(1.0, dtype)
    if step.params.get('approximate', 'none') == 'tanh':
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.node('Mul', [g.node('Mul', [x, x]), x])
        inner = g.node('Add', [x, g.node('Mul', [cube, g.constant(0.044715, dtype)])])
        t = g.node('Tanh', [g.node('Mul', [inner, g.constant(np.sqrt(2 / np.pi), dtype)])])
    else:   # 0.5 x (1 + erf(x / sqrt 2))
        t = g.node('Erf', [g.node('Div', [x, g.constant(np.sqrt(2.0), dtype)])])
    return g.node('Mul', [g.node('Mul', [half, x]), g.node('Add', [one, t])])


def _slice(g, data, key, ndim):
    """``data[key]`` for a key of slices with constant bounds (None when it has more)."""
    key = key if isinstance(key, tuple) else (key,)
    if not all(isinstance(k, slice) for k in key) or len(key) > ndim:
        return None
    axes = [i for i, k in enumerate(key) if k != slice(None)]
    if not axes:
        return g.node('Identity', [data])
    big = np.iinfo(np.int64).max
    starts = [key[i].start or 0 for i in axes]
    ends = [big if key[i].stop is None else key[i].stop for i in axes]
    steps = [key[i].step or 1 for i in axes]
    return g.node('Slice', [data, g.constant(np.asarray(starts, np.int64)),
                            g.constant(np.asarray(ends, np.int64)),
                            g.constant(np.asarray(axes, np.int64)),
                            g.constant(np.asarray(steps, np.int64))])


def _basic_index(g, step, names, arrays):
    """``x[key]`` for ints, slices, None and Ellipsis: Slice, then Squeeze the int
    dimensions and Unsqueeze the new ones."""
    key = step.params['key']
    key = key if isinstance(key, tuple) else (key,)
    ndim = arrays[0].ndim
    if Ellipsis in key:
        at = key.index(Ellipsis)
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        key = key[:at] + (slice(None),) * (ndim - n_real) + key[at + 1:]
    real = [k for k in key if k is not None]
    real += [slice(None)] * (ndim - len(real))
    if any(isinstance(k, slice) and (k.step or 1) < 0 for k in real):
        return None
    out = _slice(g, names[0], tuple(slice(k, k + 1 if k != -1 else None)
                                    if not isinstance(k, slice) else k for k in real), ndim)
    dropped = [d for d, k in enumerate(real) if not isinstance(k, slice)]
    if dropped:
        out = g.node('Squeeze', [out, _ints(g, dropped)])
    new, position = [], 0
    for k in key:
        if k is None:
            new.append(position)
        if k is None or isinstance(k, slice):
            position += 1
    if new:
        out = g.node('Unsqueeze', [out, _ints(g, new)])
    return out


def _split(g, step, names, arrays):
    outs = [_slice(g, names[0], key, arrays[0].ndim) for key in step.params['keys']]
    return None if any(o is None for o in outs) else outs


def _island(g, step, names, arrays):
    """A function called eagerly inside the program: its ONNX form by what it is."""
    from .compiler.capture import unflatten
    fn = step.params['fn']
    args, kwargs = unflatten(step.params['treedef'], names)
    which = f'{fn.__module__.rsplit(".", 1)[-1]}.{fn.__name__}'
    bound = {}
    try:
        import inspect
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        bound = bound.arguments
    except (TypeError, ValueError):
        return None
    if which == 'dropout.dropout':
        if bound['training'] and bound['p'] > 0:
            return None                 # a random mask: no ONNX form (export in eval mode)
        return g.node('Identity', [bound['input']])
    if which == 'sparse.embedding':
        if bound.get('max_norm') is not None:
            return None
        return g.node('Gather', [bound['weight'], bound['input']], {'axis': 0})
    if which == 'normalization.layer_norm':
        shape = tuple(bound['normalized_shape']) if not isinstance(
            bound['normalized_shape'], int) else (bound['normalized_shape'],)
        dtype = arrays[0].dtype
        scale = bound['weight'] if bound['weight'] is not None else \
            g.constant(np.ones(shape, dtype))
        bias = bound['bias'] if bound['bias'] is not None else g.constant(np.zeros(shape, dtype))
        return g.node('LayerNormalization', [bound['input'], scale, bias],
                      {'axis': -len(shape), 'epsilon': float(bound['eps'])})
    if which == 'indexing.getitem':
        tensor_keys = [a for a in names[1:]]
        if tensor_keys:
            return None
        return _slice(g, names[0], bound['key'], arrays[0].ndim)
    return None


def _embedding(g, step, names, arrays):
    return g.node('Gather', [names[0], names[1]], {'axis': 0})


def _layer_norm(g, step, names, arrays):
    p = step.params
    dtype = arrays[0].dtype
    x, scale, bias = names
    scale = scale if scale is not None else g.constant(np.ones(p['wshape'], dtype))
    bias = bias if bias is not None else g.constant(np.zeros(p['wshape'], dtype))
    return g.node('LayerNormalization', [x, scale, bias],
                  {'axis': -len(p['wshape']), 'epsilon': float(p['eps'])})


def _cat(g, step, names, arrays):
    kept = [(n, a) for n, a in zip(names, arrays) if not (a.ndim == 1 and a.shape[0] == 0)]
    if not kept:
        return None
    dim = step.params['dim'] % kept[0][1].ndim
    return g.node('Concat', [n for n, _ in kept], {'axis': dim})


def _ints(g, values):
    return g.constant(np.asarray(values, np.int64))


def _unbind(g, step, names, arrays):
    dim = step.params['dim']
    outs = []
    for key in step.params['keys']:
        if len(key) != 1 or not isinstance(key[0], int):
            return None
        outs.append(g.node('Gather', [names[0], g.constant(np.asarray(key[0], np.int64))],
                           {'axis': dim}))
    return outs


def _stack(g, step, names, arrays):
    dim = step.params['dim']
    if dim < 0:
        dim += arrays[0].ndim + 1
    parts = [g.node('Unsqueeze', [n, _ints(g, [dim])]) for n in names]
    return g.node('Concat', parts, {'axis': dim})


# PyTorch's gate blocks, and the order ONNX's operators want them in
_GATES = {'LSTM': ('ifgo', 'iofg'), 'GRU': ('rzn', 'zrn'), 'RNN_TANH': ('h', 'h'),
          'RNN_RELU': ('h', 'h')}


def _gates_for_onnx(g, w, hidden, mode):
    """``w``'s gate blocks reordered from PyTorch's order to ONNX's (LSTM: i, f, g, o to
    i, o, f, c; GRU: r, z, n to z, r, h)."""
    torch_order, onnx_order = _GATES[mode]
    if len(torch_order) == 1:
        return w
    blocks = g.node('Split', [w, _ints(g, [hidden] * len(torch_order))], {'axis': 0},
                    outputs=len(torch_order))
    by_gate = dict(zip(torch_order, blocks))
    return g.node('Concat', [by_gate[k] for k in onnx_order], {'axis': 0})


def _recurrent(g, step, names, arrays):
    """One recurrent layer over equal-length sequences as ONNX's LSTM, GRU or RNN operator
    (GRU with linear_before_reset, PyTorch's formula)."""
    p = step.params
    mode = p['mode']
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = names
    sizes = p['batch_sizes']
    if w_hr is not None or len(set(sizes)) != 1:
        return None
    steps, batch = len(sizes), sizes[0]
    hidden = arrays[4].shape[1]
    seq = g.node('Reshape', [x, _ints(g, [steps, batch, arrays[0].shape[1]])])
    W = g.node('Unsqueeze', [_gates_for_onnx(g, w_ih, hidden, mode), _ints(g, [0])])
    R = g.node('Unsqueeze', [_gates_for_onnx(g, w_hh, hidden, mode), _ints(g, [0])])
    inputs = [seq, W, R]
    if b_ih is not None:
        bias = g.node('Concat', [_gates_for_onnx(g, b_ih, hidden, mode),
                                 _gates_for_onnx(g, b_hh, hidden, mode)], {'axis': 0})
        inputs.append(g.node('Unsqueeze', [bias, _ints(g, [0])]))
    else:
        inputs.append('')
    inputs += ['', g.node('Unsqueeze', [h0, _ints(g, [0])])]
    attrs = {'hidden_size': hidden, 'direction': 'reverse' if p['reverse'] else 'forward'}
    if mode == 'LSTM':
        inputs.append(g.node('Unsqueeze', [c0, _ints(g, [0])]))
        y, y_h, y_c = g.node('LSTM', inputs, attrs, outputs=3)
    elif mode == 'GRU':
        attrs['linear_before_reset'] = 1
        y, y_h = g.node('GRU', inputs, attrs, outputs=2)
    else:
        attrs['activations'] = ['Relu' if mode == 'RNN_RELU' else 'Tanh']
        y, y_h = g.node('RNN', inputs, attrs, outputs=2)
    out = g.node('Reshape', [g.node('Squeeze', [y, _ints(g, [1])]),
                             _ints(g, [steps * batch, hidden])])
    finals = [out, g.node('Squeeze', [y_h, _ints(g, [0])])]
    if mode == 'LSTM':
        finals.append(g.node('Squeeze', [y_c, _ints(g, [0])]))
    return finals


CONVERTERS = {
    '_RecurrentLayer': _recurrent, 'Unbind': _unbind, 'Stack': _stack,
    'Island': _island, 'EmbeddingOfTensor': _embedding, 'LayerNormOp': _layer_norm,
    'Split': _split, 'Cat': _cat, 'BasicIndex': _basic_index, 'Eq': _equal, 'MaskedFill': _masked_fill,
    'Clone': _identity, 'Gelu': _gelu,
    'Convolution': _convolution, 'MaxPoolOp': _max_pool,
    'LinearOp': _linear, 'Relu': _elementwise('Relu'), 'Tanh': _elementwise('Tanh'),
    'Sigmoid': _elementwise('Sigmoid'), 'Exp': _elementwise('Exp'), 'Log': _elementwise('Log'),
    'Sqrt': _elementwise('Sqrt'), 'Neg': _elementwise('Neg'), 'Abs': _elementwise('Abs'),
    'Add': _binary('Add'), 'Sub': _binary('Sub'), 'Mul': _binary('Mul'),
    'Div': _binary('Div'), 'SoftmaxOp': _softmax('Softmax'),
    'LogSoftmaxOp': _softmax('LogSoftmax'), 'View': _view, 'UnsafeView': _view,
    'Transpose': _transpose, 'Matmul': _matmul, 'Sum': _sum,
}


def _converter(step):
    for cls in step.cls.__mro__:
        convert = CONVERTERS.get(cls.__qualname__.split('.')[-1])
        if convert is not None:
            return convert
    return None


def _batch_inputs(tensors, input_names, dynamic_axes):
    """The positions of the inputs whose first dimension ``dynamic_axes`` makes dynamic
    (the one symbol a program carries: dynagrad.compiler.symbolic); other dimensions cannot
    vary in an exported graph yet, and asking for them is refused."""
    batched = []
    for i, name in enumerate(input_names[:len(tensors)]):
        axes = dynamic_axes.get(name, {})
        axes = {a: None for a in axes} if isinstance(axes, (list, tuple)) else axes
        others = [d for d in axes if d not in (0, -tensors[i].ndim)]
        if others:
            raise OnnxExporterError(
                f'dynagrad.onnx.export: dynamic_axes for {name!r} names dimension(s) '
                f'{others}; only the first (batch) dimension can be dynamic in dynagrad\'s '
                'exported graphs')
        if axes:
            batched.append(i)
    return batched


def export(model, args=(), f=None, *extra, input_names=None, output_names=None,
           dynamic_axes=None, opset_version=None, **kwargs):
    """Write ``model`` (a Module or function) run on ``args`` to ``f`` (a path or a binary
    file) as an ONNX graph; returns the ``onnx.ModelProto``. ``dynamic_axes`` names the
    dimensions that may vary ({input or output name: {dim: label}})."""
    onnx, helper, numpy_helper = _onnx()
    from .compiler.api import ExportError, capture_program
    from .nn.module import Module
    from .autograd.grad_mode import no_grad
    from .tensor import Tensor
    args = args if isinstance(args, tuple) else (args,)
    module = model if isinstance(model, Module) else None
    tensors = [a for a in args if isinstance(a, Tensor)]
    input_names = list(input_names or [f'input_{i}' for i in range(len(tensors))])
    batched = _batch_inputs(tensors, input_names, dynamic_axes or {})
    _exporting[0] = True
    try:
        with no_grad():
            program, result, compiled = capture_program(
                model.__call__ if module is not None else model, module, args, batched,
                'dynagrad.onnx.export', 'export with a fixed batch (no dynamic_axes on '
                'dimension 0)')
    except ExportError as e:
        raise OnnxExporterError(str(e)) from None
    finally:
        _exporting[0] = False
    batch = tensors[batched[0]].shape[0] if batched else None
    named = {}
    if module is not None:
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            named.setdefault(id(t), name)
    inputs_all = tensors + compiled._module_tensors() + program.lifted
    g = _Graph(helper, numpy_helper)
    graph_inputs = []
    for i, t in enumerate(inputs_all):
        if i < len(tensors):
            name = input_names[i]
            shape = list(t.shape)
            for dim, label in (dynamic_axes or {}).get(name, {}).items():
                shape[dim] = label
            graph_inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(t._data.dtype), shape))
        else:
            name = named.get(id(t), f'param_{i}')
            g.initializers.append(numpy_helper.from_array(np.asarray(t._data), name))
        g.names[i] = name
    if batched:
        g.batch = g.node('Gather', [g.node('Shape', [g.names[program.batch_slot]]),
                                    _ints(g, [0])])
    # what each slot holds (shape, dtype) at the example's batch, for the converters that
    # read ranks and dtypes
    meta = {i: (t._data.shape, t._data.dtype) for i, t in enumerate(inputs_all)}
    for step in program.steps:
        for slot, m in zip(step.outs, step.out_meta or ()):
            if slot is not None:
                meta[slot] = instantiate(m, batch) if batched else m
    for step in program.steps:
        convert = _converter(step)
        if convert is None:
            raise OnnxExporterError(
                f'dynagrad.onnx.export: no ONNX form for {step.cls._node_name} '
                f'({getattr(step.cls, "__qualname__", step.cls.__name__)}) yet; the exporter '
                f'covers {", ".join(sorted(CONVERTERS))}')
        if batched and not getattr(convert, 'symbolic', False) and (
                has_symbols(step.params) or has_symbols(step.refs)):
            raise OnnxExporterError(
                f'dynagrad.onnx.export: the batch size reaches the arguments of '
                f'{step.cls._node_name}, which the exporter writes with fixed values only; '
                'export with a fixed batch (no dynamic_axes on dimension 0)')
        names, arrays = [], []
        for (kind, v), cast in zip(step.refs, step.casts):
            if kind == 's':
                name, array = g.names[v], np.empty(meta[v][0], meta[v][1])
            elif kind == 'c':
                array = program.constants[v]
                name = g.constant(array)
            else:
                array = None if v is None else np.asarray(v)
                name = None if v is None else g.constant(
                    v, dtype=meta[step.refs[0][1]][1] if step.refs[0][0] == 's' else None)
            if cast is not None:
                name = g.node('Cast', [name], {'to': helper.np_dtype_to_tensor_dtype(cast)})
                array = array.astype(cast)
            names.append(name)
            arrays.append(array)
        out = convert(g, step, names, arrays)
        if out is None:
            what = (step.params['fn'].__name__ if 'fn' in step.params else step.cls._node_name)
            raise OnnxExporterError(
                f'dynagrad.onnx.export: no ONNX form for {what} with these arguments yet')
        for slot, name in zip(step.outs, out if isinstance(out, list) else [out]):
            if slot is not None:
                g.names[slot] = name
    leaves = result if isinstance(result, tuple) else (result,)
    output_names = list(output_names or [f'output_{i}' for i in range(len(leaves))])
    graph_outputs = []
    for i, (ref, leaf) in enumerate(zip(program.outputs, leaves)):
        source = g.names[ref[1]]
        g.nodes.append(helper.make_node('Identity', [source], [output_names[i]]))
        shape = list(leaf.shape)
        for dim, label in (dynamic_axes or {}).get(output_names[i], {}).items():
            shape[dim] = label
        graph_outputs.append(helper.make_tensor_value_info(
            output_names[i], helper.np_dtype_to_tensor_dtype(leaf._data.dtype), shape))
    graph = helper.make_graph(g.nodes, 'dynagrad', graph_inputs, graph_outputs, g.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset_version or 17)],
                              producer_name='dynagrad')
    onnx.checker.check_model(proto)
    if f is not None:
        data = proto.SerializeToString()
        with (open(f, 'wb') if isinstance(f, (str, bytes)) or hasattr(f, '__fspath__')
              else contextlib.nullcontext(f)) as out:
            out.write(data)
    return proto
