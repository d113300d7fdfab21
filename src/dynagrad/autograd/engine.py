"""The backward engine: dependency counting over the reachable graph, no recursion.

1. Walk the graph from the roots once, counting for each node how many edges reach it.
2. Run a node once every gradient bound for it has arrived (its count fell to zero),
   popping its gradient buffer as it runs, so memory is released along the way.
3. Free the node's saved tensors right after it ran, unless the graph is retained.

Gradients travel as NumPy arrays, the fast path, unless ``create_graph=True``: then they
are tensors and grad mode is on, so the backward pass itself is recorded.
"""
import itertools
import threading

import numpy as np

from .._device import backend_of
from .._dtype import is_floating
from ..backend import fp_errors_off, fp_errors_restore, xp
from ..tensor import Tensor, bump_version, wrap
from .graph import AccumulateGrad, grad_accumulator, real_grad_as
from .grad_mode import state as _grad_state
from .anomaly import state as _anomaly, run_checked
from .batched import break_capture, state as _batched_state
from .._coo import COO, SparseRefused, add_grads, to_dense as coo_to_dense
from .device_dispatch import as_array, backward_runner

__all__ = ['run_backward']

_ndarray = np.ndarray


def _run_node(node, grads, create_graph):
    return node._run_backward(grads, create_graph)


def _root_node(t):
    fn = t._grad_fn
    if fn is not None:
        return fn, t._output_nr
    return grad_accumulator(t), 0


def _why_no_grad(i, t):
    if getattr(t, '_volatile', False):
        return f'element {i} of variables tuple is volatile'
    base = f'element {i} of tensors does not require grad and does not have a grad_fn'
    if t._output_nr < 0:
        why = (' (It was computed while grad mode was off: under no_grad(), inference_mode() '
               'or set_grad_enabled(False). Compute it outside that block.)')
    else:
        why = (' (None of the tensors it was computed from requires grad: the parameters are '
               'frozen, or an input was cut from the graph by .detach(), .data, .item(), '
               '.numpy() or dynagrad.tensor(...), or the result comes from an op with no '
               'gradient such as argmax or a comparison.)')
    return base + why + (' Do not set requires_grad=True on the result: that silences this '
                         'error and trains nothing.')


def _make_root_grads(tensors, grads, create_graph):
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if g is None:
            if t._data.size != 1:
                raise RuntimeError('grad can be implicitly created only for scalar outputs')
            if t._data.dtype.kind == 'c':
                raise RuntimeError('grad can be implicitly created only for real scalar outputs '
                                   f'but got {t.dtype}')
            g = xp.ones_like(t._data)
            out.append(wrap(g) if create_graph else g)
            continue
        if not isinstance(g, Tensor):
            if isinstance(g, (int, float)):
                g = Tensor._make(backend_of(t._data).xp.full(t._data.shape, g, t._data.dtype),
                                 False, None, 0, None, Tensor)
            else:
                raise TypeError('gradients can be either Tensors or None, but got '
                                f'{type(g).__name__}')
        if g._data.shape != t._data.shape:
            from ..size import Size
            raise RuntimeError(f'Mismatch in shape: grad_output[{i}] has a shape of '
                               f'{Size(g._data.shape)} and output[{i}] has a shape of '
                               f'{Size(t._data.shape)}.')
        if g._data.dtype != t._data.dtype:
            g = g.to(t.dtype)
        out.append(g if create_graph else g._data)
    return out


def _count_dependencies(roots):
    deps = {}
    stack = list(roots)
    seen = set(roots)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                if nxt in seen:
                    deps[nxt] = deps.get(nxt, 0) + 1
                else:
                    seen.add(nxt)
                    deps[nxt] = 1
                    stack.append(nxt)
    return deps


def _needed_nodes(roots, targets):
    """Nodes with a path to one of ``targets``: only these run when gradients are captured."""
    needed = {}
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if node in needed and not expanded:
            continue
        if not expanded:
            stack.append((node, True))
            needed[node] = None  # in progress
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in needed:
                    stack.append((nxt, False))
        else:
            needed[node] = node in targets or any(
                nxt is not None and needed.get(nxt) for nxt, _ in node.next_functions)
    return {n for n, v in needed.items() if v}


def _call_tensor_hooks(node, grads, as_tensors):
    """Tensor hooks registered on this node's outputs, then retain_grad, in PyTorch's order."""
    grads = list(grads)
    hooks = node._tensor_hooks
    if hooks:
        for nr, fns in hooks.items():
            if nr < len(grads) and grads[nr] is not None and fns:
                grads[nr] = _run_hooks(list(fns.values()), grads[nr], as_tensors)
    refs = node._retain_refs
    if refs:
        for nr, ref in refs.items():
            t = ref()
            if t is not None and nr < len(grads) and grads[nr] is not None:
                g = grads[nr]
                g = g._data if isinstance(g, Tensor) else g
                if t._grad is None:
                    t._grad = wrap(g.copy())
                else:
                    t._grad = wrap(t._grad._data + g)
    return grads


def _run_hooks(fns, g, as_tensors):
    gt = g if as_tensors else wrap(g)
    for fn in fns:
        result = fn(gt)
        if result is not None:
            if not isinstance(result, Tensor):
                raise TypeError(f'a tensor hook must return a Tensor or None, got '
                                f'{type(result).__name__}')
            if result._data.shape != gt._data.shape:
                raise RuntimeError(f'hook {getattr(fn, "__name__", fn)!r} has changed the size '
                                   f'of value: expected {list(gt._data.shape)}, got '
                                   f'{list(result._data.shape)}')
            gt = result
    return gt if as_tensors else gt._data


def _accumulate(var, g, create_graph, handed_out):
    """Add ``g`` into ``var.grad``; never let two leaves share one gradient buffer."""
    if create_graph:
        wanted = var._grad_dtype
        if wanted is not None and wanted is not False and g.dtype != wanted:
            g = g.to(wanted)
        if var._grad is None:
            var._grad = g if g._grad_fn is not None and id(g) not in handed_out else g.clone()
            handed_out.add(id(var._grad))
        else:
            var._grad = var._grad + g
        return
    if g.__class__ is COO or (var._grad is not None and var._grad._data.__class__ is COO):
        return _accumulate_sparse(var, g, handed_out)
    old = var._grad
    wanted = var._grad_dtype
    if wanted is False:         # the default: .grad in the leaf's own dtype
        if g.dtype != var._data.dtype:
            g = real_grad_as(g, var._data.dtype)
    elif wanted is not None and g.dtype != wanted.numpy:
        g = real_grad_as(g, wanted.numpy)
    if old is None:
        # (only NumPy's arrays can be read-only: CuPy's have no such flag)
        if g.base is not None or (g.__class__ is _ndarray and not g.flags.writeable) \
                or id(g) in handed_out:
            g = g.copy()
        handed_out.add(id(g))
        var._grad = wrap(g)
    elif old._requires_grad:
        var._grad = wrap(old._data + g)
    else:
        old._data += g
        bump_version(old, 'gradient accumulation into .grad')


def _accumulate_sparse(var, g, handed_out):
    """PyTorch's AccumulateGrad where a gradient is sparse: a first sparse gradient becomes
    ``.grad`` as it is; sparse onto sparse makes a sparse sum; sparse onto a dense ``.grad``
    adds into it in place; dense onto a sparse ``.grad`` makes a dense one."""
    wanted = var._grad_dtype
    wanted = var._data.dtype if wanted is False else None if wanted is None else wanted.numpy
    if wanted is not None and g.dtype != wanted:
        g = g.astype(wanted)
    old = var._grad
    if old is None:
        if id(g) in handed_out:
            g = g.copy()
        handed_out.add(id(g))
        var._grad = wrap(g)
    elif old._data.__class__ is COO:
        var._grad = wrap(add_grads(old._data, g))
    elif old._requires_grad:
        var._grad = wrap(add_grads(old._data, g))
    else:
        data = old._data
        if g.nnz:
            xp.add.at(data, tuple(g.indices), g.values.astype(data.dtype, copy=False))
        bump_version(old, 'gradient accumulation into .grad')


class _Passes(threading.local):
    """The backward passes running in this thread (a hook may start another inside one),
    each with the callbacks queued to run when it ends."""
    def __init__(self):
        self.stack = []     # [(pass id, callbacks, whether the graph is retained)]


_passes = _Passes()
_pass_ids = itertools.count()


def current_pass():
    """An id of the innermost backward pass running in this thread (None outside one)."""
    return _passes.stack[-1][0] if _passes.stack else None


def graph_retained():
    """Whether the innermost backward pass keeps the graph (``retain_graph``): a node that
    frees what it saved as it goes (dynagrad.compiler's) asks."""
    return _passes.stack[-1][2] if _passes.stack else True


def queue_callback(fn):
    """Run ``fn()`` when the current backward pass has finished."""
    if not _passes.stack:
        raise RuntimeError('Final callbacks can only be installed during backward pass.')
    _passes.stack[-1][1].append(fn)


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 accumulate=True, allow_unused=False):
    """Backpropagate from ``tensors``; return the gradients of ``inputs`` when not accumulating."""
    if _batched_state.capture is not None:
        break_capture('a backward pass inside the function (a program replays its ops, not '
                      'the engine)')
    callbacks = []
    retained = create_graph if retain_graph is None else retain_graph
    _passes.stack.append((next(_pass_ids), callbacks, retained))
    try:
        result = _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs,
                               accumulate, allow_unused)
    finally:
        _passes.stack.pop()
    for fn in callbacks:
        fn()
    return result


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, accumulate,
                  allow_unused):
    for i, t in enumerate(tensors):
        if not t._requires_grad:
            raise RuntimeError(_why_no_grad(i, t))
    grads = _make_root_grads(tensors, grad_tensors, create_graph)
    if retain_graph is None:
        retain_graph = create_graph

    roots = []
    buffers = {}
    handed_out = set()
    for t, g in zip(tensors, grads):
        node, nr = _root_node(t)
        handed_out.add(id(g))
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = []
            roots.append(node)
        while len(buf) <= nr:
            buf.append(None)
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    targets = None
    capture = {}
    if inputs is not None:
        targets = {}
        for i, t in enumerate(inputs):
            if not t._requires_grad:
                raise RuntimeError('One of the differentiated Tensors does not require grad')
            key = _root_node(t)
            targets.setdefault(key[0], []).append((key[1], i))
        needed = _needed_nodes(roots, targets)
    deps = _count_dependencies(roots)

    ready = [n for n in roots if n not in deps]
    prev_mode = _grad_state.grad_enabled
    # inside inference_mode nothing records, create_graph or not (as in PyTorch)
    _grad_state.grad_enabled = create_graph and not _grad_state.inference
    fp_state = fp_errors_off()  # backward formulas meet 0 * inf and x / 0 as PyTorch's do
    on_device = backward_runner()   # None unless a non-CPU device is registered
    try:
        while ready:
            node = ready.pop()
            grads_out = buffers.pop(node, None)
            if node.__class__ is AccumulateGrad:
                if grads_out is not None:
                    _leaf(node, grads_out, create_graph, handed_out, targets, capture,
                          accumulate and (targets is None or node in needed))
                continue
            if grads_out is not None:
                if node._hooked:
                    grads_out = _before_node(node, grads_out, create_graph)
                if targets is not None:
                    _capture(node, grads_out, targets, capture)
                    if node not in needed:
                        grads_out = None
            if grads_out is not None:
                if node._output_meta is not None:
                    grads_out = _fill_missing(grads_out, node._output_meta, create_graph)
                if on_device is not None:
                    grads_in = on_device(node, grads_out, create_graph,
                                         run_checked if _anomaly.enabled else _run_node)
                elif _anomaly.enabled:
                    grads_in = run_checked(node, grads_out, create_graph)
                else:
                    grads_in = node._run_backward(grads_out, create_graph)
                if node._hooks:
                    for fn in list(node._hooks.values()):
                        replaced = fn(grads_in, tuple(grads_out))
                        if replaced is not None:
                            grads_in = tuple(replaced)
                if not retain_graph:
                    node._release_saved()
                for (nxt, nr), g in zip(node.next_functions, grads_in):
                    if nxt is None:
                        continue
                    if g is not None:
                        if not create_graph and g.__class__ is not _ndarray:
                            if g.__class__ is not COO:
                                g = as_array(g)  # NumPy gives scalars for 0-d results
                            elif not nxt.takes_sparse_grads:
                                g = coo_to_dense(g)  # a dense op's formula takes arrays
                        buf = buffers.get(nxt)
                        if buf is None:
                            buffers[nxt] = [g] if nr == 0 else [None] * nr + [g]
                        else:
                            if len(buf) <= nr:
                                buf.extend([None] * (nr + 1 - len(buf)))
                            try:
                                buf[nr] = g if buf[nr] is None else buf[nr] + g
                            except SparseRefused:   # a sparse gradient meets another
                                buf[nr] = add_grads(buf[nr], g)
                    count = deps[nxt] - 1
                    deps[nxt] = count
                    if count == 0:
                        ready.append(nxt)
            else:  # no gradient reached this node: release its children all the same
                for nxt, _ in node.next_functions:
                    if nxt is not None:
                        count = deps[nxt] - 1
                        deps[nxt] = count
                        if count == 0:
                            ready.append(nxt)
    finally:
        _grad_state.grad_enabled = prev_mode
        fp_errors_restore(fp_state)

    if inputs is None:
        return None
    if accumulate:
        for i, t in enumerate(inputs):  # leaves were accumulated by their AccumulateGrad
            if t._grad_fn is not None and capture.get(i) is not None:
                g = capture[i]
                g = g if create_graph else wrap(g.copy())
                t._grad = g if t._grad is None else t._grad + g
        return None
    result = []
    for i, t in enumerate(inputs):
        g = capture.get(i)
        if g is None:
            if not allow_unused:
                raise RuntimeError('One of the differentiated Tensors appears to not have been '
                                   'used in the graph. Set allow_unused=True if this is the '
                                   'desired behavior.')
            result.append(None)
        elif create_graph:
            result.append(g)
        else:
            if id(g) in handed_out or g.base is not None or (
                    g.__class__ is _ndarray and not g.flags.writeable):
                g = g.copy()
            handed_out.add(id(g))
            result.append(wrap(g))
    return tuple(result)


def _leaf(node, grads_out, create_graph, handed_out, targets, capture, accumulate):
    """An AccumulateGrad node: the leaf's hooks, then capture or accumulation."""
    var = node.variable
    if var._hooks:
        grads_out = [_run_hooks(list(var._hooks.values()), grads_out[0], create_graph)]
    if targets is not None:
        _capture(node, grads_out, targets, capture)
    g = grads_out[0]
    if accumulate and g is not None:
        if not create_graph and g.__class__ is not _ndarray and g.__class__ is not COO:
            g = as_array(g)
        _accumulate(var, g, create_graph, handed_out)
        if node._hooks:
            for fn in list(node._hooks.values()):
                fn((var._grad,), (g,))
        if var._post_acc_hooks:
            for fn in list(var._post_acc_hooks.values()):
                returned = fn(var)
                if isinstance(returned, Tensor):
                    raise RuntimeError('Tensor post accumulate grad hooks should return None.')
                if returned is not None:    # PyTorch's words; the hook must return None
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(returned).__name__}' (a post accumulate grad "
                                    'hook must return None)')


def _before_node(node, grads_out, create_graph):
    """Tensor hooks and retain_grad on the node's outputs, then the node's pre-hooks."""
    if node._tensor_hooks or node._retain_refs:
        grads_out = _call_tensor_hooks(node, grads_out, create_graph)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            replaced = fn(tuple(grads_out))
            if replaced is not None:
                grads_out = list(replaced)
    return grads_out


def _capture(node, grads_out, targets, capture):
    wanted = targets.get(node)
    if wanted:
        for nr, i in wanted:
            if nr < len(grads_out):
                capture[i] = grads_out[nr]


def fill_missing(grads, output_meta, as_tensors):
    """Zeros for the outputs of a multi-output node that got no gradient (its formula
    expects every one)."""
    return _fill_missing(grads, output_meta, as_tensors)


def _fill_missing(grads, output_meta, as_tensors):
    grads = list(grads) + [None] * (len(output_meta) - len(grads))
    ns = xp
    for g in grads:     # the zeros go where the gradients that did arrive are
        if g is not None:
            ns = backend_of(g._data if as_tensors else g).xp
            break
    for k, g in enumerate(grads):
        if g is None and output_meta[k] is not None:
            shape, dtype = output_meta[k]
            if is_floating(dtype):
                z = ns.zeros(shape, dtype)
                grads[k] = wrap(z) if as_tensors else z
    return grads
