"""Pictures of the backward graph: ``make_dot`` (Graphviz) and ``graph_str`` (plain text).

    >>> from dynagrad.viz import make_dot, graph_str
    >>> loss = F.cross_entropy(model(x), y)
    >>> make_dot(loss, params=dict(model.named_parameters())).render('graph', format='svg')
    >>> print(graph_str(loss, params=dict(model.named_parameters())))

The picture reads from the leaves (blue: parameters and other tensors that require grad)
through the backward nodes (grey, one per op, named like ``MulBackward0``) to the output
tensors (green). Each arrow is an edge of ``next_functions`` drawn in the direction the
forward pass went. With ``show_saved=True`` the tensors each node saved for backward hang
off it in orange boxes on dashed lines.

``make_dot`` needs the ``graphviz`` Python package (``pip install dynagrad[viz]``) and
rendering needs the ``dot`` program from the system's Graphviz package
(``apt-get install graphviz``, ``brew install graphviz``). ``graph_str`` needs neither.

Both walk the graph with an explicit stack, so a graph of any depth can be drawn, and
visit each node once: a subgraph shared by several paths is drawn once (in the text form,
printed once and referred to as ``(see above)`` afterwards).
"""
import itertools

import numpy as np

from .autograd.graph import AccumulateGrad, SavedTensor
from .tensor import Tensor
from . import _platform

__all__ = ['graph_str', 'make_dot']

MISSING_DOT = (
    "rendering the graph needs the 'dot' program from the system's Graphviz package, and "
    "it was not found on PATH. Install it with 'apt-get install graphviz' (Debian, Ubuntu), "
    "'brew install graphviz' (macOS), 'conda install graphviz', or from "
    "https://graphviz.org/download/ - the graphviz Python package alone does not include it. "
    "The graph's DOT text is available without it as the .source attribute.")

MISSING_PACKAGE = (
    "dynagrad.viz.make_dot needs the graphviz Python package: pip install dynagrad[viz] "
    "(or pip install graphviz). dynagrad.viz.graph_str prints the graph as text without it.")

NO_PROCESS_HINT = ("The graph's DOT text is there as the .source attribute: draw it with a "
                   "Graphviz compiled to WebAssembly, as the dynagrad playground does.")

# Fill colours: backward nodes, leaves, outputs, saved tensors.
_OP, _LEAF, _OUTPUT, _SAVED = '#e6e6e6', '#b9d7f7', '#c9ecc3', '#fddcb0'


# -- shared helpers ----------------------------------------------------------------------

def _outputs(output):
    if isinstance(output, Tensor):
        return (output,)
    outputs = tuple(output)
    for t in outputs:
        if not isinstance(t, Tensor):
            raise TypeError('expected a tensor or a tuple of tensors, got an element of type '
                            f'{type(t).__name__}')
    return outputs


def _param_names(params):
    """``{id(tensor): name}`` from a dict or an iterable of ``(name, tensor)`` pairs."""
    if params is None:
        return {}
    items = params.items() if hasattr(params, 'items') else params
    names = {}
    for name, t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f'params[{name!r}] is a {type(t).__name__}, not a tensor')
        names[id(t)] = str(name)
    return names


def _meta(array):
    """``(3, 4) float32``: the shape as a Python tuple, and the dtype."""
    return f'{tuple(array.shape)} {array.dtype.name}'


def _leaf_text(var, names):
    name = names.get(id(var))
    return f'{name} {_meta(var._data)}' if name else _meta(var._data)


def _edges(fn):
    """The nodes ``fn`` passes gradients to, in input order (``None`` edges dropped)."""
    next_functions = fn.next_functions
    if not next_functions:
        return []
    return [nxt for nxt, _ in next_functions if nxt is not None]


# -- the text form -------------------------------------------------------------------------

def graph_str(output, params=None):
    """The backward graph from ``output`` (a tensor or a tuple of tensors) as an indented tree.

    One line per node, its inputs indented below it; leaves read
    ``AccumulateGrad name (3, 4) float32``, named from ``params`` (for example
    ``dict(model.named_parameters())``) when given. A node reached a second time is
    printed once more with ``(see above)`` and not expanded again. Needs no graphviz.
    """
    names = _param_names(params)
    lines = []
    seen = set()
    for t in _outputs(output):
        fn = t._grad_fn
        if fn is None:
            if t._requires_grad:
                lines.append(f'{_leaf_text(t, names)} (a leaf: no backward graph)')
            else:
                lines.append(f'{_meta(t._data)} (does not require grad: no backward graph)')
            continue
        stack = [(fn, 0)]
        while stack:
            fn, depth = stack.pop()
            text = fn.name()
            if isinstance(fn, AccumulateGrad):
                text += ' ' + _leaf_text(fn.variable, names)
            if id(fn) in seen:
                lines.append('  ' * depth + text + ' (see above)')
                continue
            seen.add(id(fn))
            lines.append('  ' * depth + text)
            stack.extend((nxt, depth + 1) for nxt in reversed(_edges(fn)))
    return '\n'.join(lines)


# -- the picture ---------------------------------------------------------------------------

_digraph_class = None


def _import_graphviz():
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(MISSING_PACKAGE) from e
    return graphviz


def _graph_class(graphviz):
    """``graphviz.Digraph`` whose rendering explains a missing ``dot`` program."""
    global _digraph_class
    if _digraph_class is not None:
        return _digraph_class

    def explained(method):
        def wrapper(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except graphviz.ExecutableNotFound as e:
                raise RuntimeError(MISSING_DOT) from e
            except OSError as e:
                if not _platform.lacks_processes():
                    raise
                raise RuntimeError(_platform.no_processes_message(
                    f'Digraph.{method.__name__} (it runs the dot program)') + ' ' +
                    NO_PROCESS_HINT) from e
        wrapper.__name__ = method.__name__
        wrapper.__doc__ = method.__doc__
        return wrapper

    class Digraph(graphviz.Digraph):
        """A ``graphviz.Digraph``; a missing ``dot`` program raises a RuntimeError saying
        how to install it."""
        render = explained(graphviz.Digraph.render)
        pipe = explained(graphviz.Digraph.pipe)       # also behind Jupyter's display
        view = explained(graphviz.Digraph.view)
        unflatten = explained(graphviz.Digraph.unflatten)

    Digraph.__module__ = __name__
    _digraph_class = Digraph
    return Digraph


def _short(value, limit):
    if isinstance(value, np.ndarray):
        text = f'array {_meta(value)}'
    elif isinstance(value, Tensor):
        text = f'tensor {_meta(value._data)}'
    else:
        text = repr(value)
    text = ' '.join(text.split())
    if limit is not None and len(text) > limit:
        text = text[:max(limit - 3, 0)] + '...'
    return text


def _attrs(fn, limit):
    """``name: value`` lines for what an op kept besides its saved tensors."""
    lines = []
    for key, value in sorted(getattr(fn, '__dict__', {}).items()):
        if not key.startswith('_'):
            lines.append(f'{key}: {_short(value, limit)}')
    return lines


def _saved_role(fn, s, names):
    """What a saved value is to its node: ``input 1``, ``output 0``, or an array of its own."""
    if s.__class__ is not SavedTensor:
        return 'saved array' if isinstance(s, (np.ndarray, np.generic)) else 'saved value'
    t = s.tensor
    if t is None:
        return 'saved output' if fn._output_meta is None else f'saved output {s.output_nr}'
    if t._grad_fn is not None:
        edge = (t._grad_fn, t._output_nr)
    else:
        ref = t._grad_acc
        edge = (ref(), 0) if ref is not None else None
    # An input that requires grad is found among the node's edges; one that does not
    # has no edge to tell its position by.
    role = 'saved input'
    if edge is not None and edge[0] is not None:
        for i, (nxt, nr) in enumerate(fn.next_functions):
            if nxt is edge[0] and nr == edge[1]:
                role = f'saved input {i}'
                break
    name = names.get(id(t))
    if name:
        role += f': {name}'
    return role if t._requires_grad else role + ' (no grad)'


def make_dot(output, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The backward graph from ``output`` (a tensor or a tuple of tensors) as a Digraph.

    - ``params``: ``{name: tensor}`` (``dict(model.named_parameters())``) or
      ``(name, tensor)`` pairs, to name the leaves; others show shape and dtype only.
    - ``show_attrs``: list in each node what the op kept besides saved tensors (its
      parameters, such as ``dim`` or ``key``), each cut to ``max_attr_chars``.
    - ``show_saved``: draw the tensors each node saved for backward, with their shape,
      dtype and which input or output of the node they are, on dashed edges; nodes whose
      saved tensors were freed by a backward say so.

    Returns a ``graphviz.Digraph``: ``.source`` is the DOT text, ``.render(...)`` writes
    SVG, PNG, PDF... (needs the ``dot`` program), and Jupyter displays it inline.
    """
    graphviz = _import_graphviz()
    outputs = _outputs(output)
    names = _param_names(params)
    dot = _graph_class(graphviz)(
        name='dynagrad',
        graph_attr={'rankdir': 'TB', 'ranksep': '0.3', 'nodesep': '0.25'},
        node_attr={'shape': 'box', 'style': 'filled,rounded', 'fillcolor': _OP,
                   'fontname': 'Helvetica', 'fontsize': '10', 'height': '0.25',
                   'margin': '0.08,0.04'},
        edge_attr={'arrowsize': '0.6'})
    label = graphviz.nohtml

    ids = {}
    keep = []  # what ids were taken of stays alive, so no id is reused
    counter = itertools.count()

    def ident(obj):
        key = id(obj)
        node_id = ids.get(key)
        if node_id is None:
            node_id = ids[key] = f'n{next(counter)}'
            keep.append(obj)
        return node_id

    def text(*lines):
        return label('\n'.join(lines).replace('\\', '\\\\').replace('\n', '\\n'))

    leaves_drawn = set()

    def leaf(var):
        vid = ident(var)
        if vid not in leaves_drawn:
            leaves_drawn.add(vid)
            name = names.get(id(var))
            lines = [name, _meta(var._data)] if name else [_meta(var._data)]
            dot.node(vid, text(*lines), fillcolor=_LEAF)
        return vid

    roots = []
    for k, t in enumerate(outputs):
        fn = t._grad_fn
        if fn is None and t._requires_grad:
            leaf(t)
            continue
        title = names.get(id(t)) or ('output' if len(outputs) == 1 else f'output {k}')
        tid = ident(t)
        dot.node(tid, text(title, _meta(t._data)), fillcolor=_OUTPUT)
        if fn is not None:
            dot.edge(ident(fn), tid)
            roots.append(fn)

    seen = set()
    stack = list(reversed(roots))
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        nid = ident(fn)
        if isinstance(fn, AccumulateGrad):
            dot.node(nid, text(fn.name()))
            dot.edge(leaf(fn.variable), nid)
            continue
        lines = [fn.name()]
        if show_attrs:
            lines += _attrs(fn, max_attr_chars)
        saved = fn._saved
        if show_saved and saved is None:
            lines.append('(saved tensors freed)')
        dot.node(nid, text(*lines))
        if show_saved and saved:
            for s in saved:
                if s is None:
                    continue
                role = _saved_role(fn, s, names)
                if s.__class__ is SavedTensor:
                    body = _meta(s.data)
                elif isinstance(s, (np.ndarray, np.generic)):
                    body = _meta(np.asarray(s))
                else:
                    body = _short(s, max_attr_chars)
                sid = f'n{next(counter)}'
                dot.node(sid, text(role, body), fillcolor=_SAVED)
                dot.edge(sid, nid, style='dashed', arrowhead='none')
        children = _edges(fn)
        for nxt in children:
            dot.edge(ident(nxt), nid)
        stack.extend(nxt for nxt in reversed(children) if id(nxt) not in seen)
    return dot
