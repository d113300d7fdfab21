"""dynagrad.viz: the backward graph as DOT (make_dot) and as text (graph_str)."""
import re
import shutil
import sys
from collections import Counter

import pytest

import dynagrad as dg
from dynagrad import nn, viz
from dynagrad.nn import functional as F

graphviz = pytest.importorskip('graphviz', reason='the graphviz Python package (viz extra)')
needs_dot = pytest.mark.skipif(shutil.which('dot') is None,
                               reason='the dot program is not installed (CI installs it)')

_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')
_EDGE = re.compile(r'^\t(\w+) -> (\w+)(?: \[(.*)\])?$')
_NODE = re.compile(r'^\t(\w+) \[(.*)\]$')


def _attrs(text):
    out = {}
    for key, value in _ATTR.findall(text or ''):
        if value.startswith('"'):
            value = value[1:-1]
        out[key] = value.replace('\\n', '\n')
    return out


def parse(dot):
    """``(nodes, edges)`` of DOT source: nodes ``{id: (label, attrs)}``, edges a list of
    ``(src, dst, attrs)``. Every node must be declared exactly once."""
    nodes, edges = {}, []
    for line in dot.source.splitlines():
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), _attrs(m.group(3))))
            continue
        m = _NODE.match(line)
        if m and m.group(1) not in ('graph', 'node', 'edge'):
            assert m.group(1) not in nodes, f'node {m.group(1)} declared twice'
            attrs = _attrs(m.group(2))
            nodes[m.group(1)] = (attrs.pop('label'), attrs)
    for src, dst, _ in edges:
        assert src in nodes and dst in nodes
    return nodes, edges


def keyed(dot):
    """Nodes as a Counter of readable keys and edges as a Counter of key pairs (with
    ``dashed`` marked). An AccumulateGrad is keyed by the leaf that feeds it."""
    nodes, edges = parse(dot)
    key = {i: label for i, (label, _) in nodes.items()}
    for src, dst, _ in edges:
        if nodes[dst][0] == 'AccumulateGrad':
            key[dst] = f'AccumulateGrad[{nodes[src][0]}]'
    node_keys = Counter(key.values())
    edge_keys = Counter((key[s], key[d]) + (('dashed',) if a.get('style') == 'dashed' else ())
                        for s, d, a in edges)
    return node_keys, edge_keys


def xy():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = dg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    return x, y


# -- make_dot ---------------------------------------------------------------------------

def test_known_expression_has_exactly_the_expected_nodes_and_edges():
    x, y = xy()
    z = (x * y + x).sum()
    dot = viz.make_dot(z, params={'x': x, 'y': y})
    assert isinstance(dot, graphviz.Digraph)
    nodes, edges = keyed(dot)
    X, Y = 'x\n(3,) float32', 'y\n(3,) float32'
    AX, AY = f'AccumulateGrad[{X}]', f'AccumulateGrad[{Y}]'
    out = 'output\n() float32'
    assert nodes == Counter([out, 'SumBackward0', 'AddBackward0', 'MulBackward0',
                             AX, AY, X, Y])
    assert edges == Counter([('SumBackward0', out), ('AddBackward0', 'SumBackward0'),
                             ('MulBackward0', 'AddBackward0'), (AX, 'AddBackward0'),
                             (AX, 'MulBackward0'), (AY, 'MulBackward0'),
                             (X, AX), (Y, AY)])


def test_each_node_drawn_once_and_every_use_is_an_edge():
    x, _ = xy()
    h = x * 2
    z = h * h + h        # h's node reached three times
    nodes, edges = keyed(viz.make_dot(z))
    assert nodes['MulBackward0'] == 2 and nodes['AddBackward0'] == 1
    # the square's MulBackward0 takes h twice: two edges, as in next_functions
    assert edges[('MulBackward0', 'MulBackward0')] == 2
    assert edges[('MulBackward0', 'AddBackward0')] == 2


def test_leaves_without_params_show_shape_and_dtype_only():
    x = dg.ones(3, 4, dtype=dg.float64, requires_grad=True)
    nodes, _ = keyed(viz.make_dot((x * 2).sum()))
    assert '(3, 4) float64' in nodes
    assert 'AccumulateGrad[(3, 4) float64]' in nodes


def test_params_from_named_parameters_name_the_leaves():
    dg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss = F.cross_entropy(model(dg.randn(5, 4)), dg.tensor([0, 1, 2, 0, 1]))
    expected = {'0.weight\n(8, 4) float32', '0.bias\n(8,) float32',
                '2.weight\n(3, 8) float32', '2.bias\n(3,) float32'}
    for params in (dict(model.named_parameters()), list(model.named_parameters())):
        nodes, edges = keyed(viz.make_dot(loss, params=params))
        assert expected <= set(nodes)
        for label in expected:
            assert edges[(label, f'AccumulateGrad[{label}]')] == 1
        assert 'ReluBackward0' in nodes and 'output\n() float32' in nodes


def test_params_must_be_tensors():
    x, _ = xy()
    with pytest.raises(TypeError, match="params\\['w'\\] is a list"):
        viz.make_dot(x * 2, params={'w': [1.0]})


def test_several_outputs_and_leaf_outputs():
    x, y = xy()
    a, b = x * y, (x * y).exp()
    nodes, edges = keyed(viz.make_dot((a, b), params={'x': x}))
    assert {'output 0\n(3,) float32', 'output 1\n(3,) float32'} <= set(nodes)
    assert edges[('ExpBackward0', 'output 1\n(3,) float32')] == 1
    nodes, edges = keyed(viz.make_dot(x, params={'x': x}))
    assert nodes == Counter(['x\n(3,) float32']) and not edges
    nodes, edges = keyed(viz.make_dot(dg.ones(2)))
    assert nodes == Counter(['output\n(2,) float32']) and not edges


def test_show_saved_adds_saved_tensor_boxes_on_dashed_edges():
    x, y = xy()
    z = (x * y).exp().sum()
    plain_nodes, plain_edges = keyed(viz.make_dot(z, params={'x': x, 'y': y}))
    nodes, edges = keyed(viz.make_dot(z, params={'x': x, 'y': y}, show_saved=True))
    saved = {'saved input 0: x\n(3,) float32', 'saved input 1: y\n(3,) float32',
             'saved output\n(3,) float32'}
    assert set(nodes) - set(plain_nodes) == saved
    assert edges - plain_edges == Counter({
        ('saved input 0: x\n(3,) float32', 'MulBackward0', 'dashed'): 1,
        ('saved input 1: y\n(3,) float32', 'MulBackward0', 'dashed'): 1,
        ('saved output\n(3,) float32', 'ExpBackward0', 'dashed'): 1})
    assert not any('dashed' in e for e in plain_edges)


def test_show_saved_marks_inputs_without_grad_and_freed_nodes():
    x, _ = xy()
    c = dg.tensor([1.0, 1.0, 2.0])
    z = (x * c).sum()
    nodes, _ = keyed(viz.make_dot(z, params={'c': c}, show_saved=True))
    assert 'saved input: c (no grad)\n(3,) float32' in nodes
    z.backward()
    nodes, edges = keyed(viz.make_dot(z, show_saved=True))
    assert 'MulBackward0\n(saved tensors freed)' in nodes
    assert not any('dashed' in e for e in edges)


def test_show_attrs_lists_what_the_op_kept_cut_to_max_attr_chars():
    class Scale(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            ctx.note = 'n' * 100
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None

    x, _ = xy()
    dot = viz.make_dot(Scale.apply(x, 2.5), show_attrs=True, max_attr_chars=20)
    nodes, _ = keyed(dot)
    label = next(k for k in nodes if k.startswith('ScaleBackward'))
    assert label.split('\n') == ['ScaleBackward', 'factor: 2.5', 'note: ' + "'" + 'n' * 16 + '...']
    nodes, _ = keyed(viz.make_dot(Scale.apply(x, 2.5)))
    assert 'ScaleBackward' in nodes


def test_a_10000_op_chain_makes_dot_source_without_recursion():
    x = dg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    dot = viz.make_dot(y)
    nodes, edges = parse(dot)
    assert len(nodes) == 10_000 + 3 and len(edges) == 10_000 + 2


# -- rendering ------------------------------------------------------------------------------

@needs_dot
def test_renders_svg_and_png(tmp_path):
    x, y = xy()
    dot = viz.make_dot((x * y + x).sum(), params={'x': x, 'y': y}, show_saved=True)
    svg = dot.render(tmp_path / 'graph', format='svg')
    with open(svg, encoding='utf-8') as f:
        text = f.read()
    assert '<svg' in text and 'MulBackward0' in text and '>x<' in text
    png = dot.render(tmp_path / 'graph', format='png')
    with open(png, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    assert dot.pipe(format='svg').lstrip().startswith(b'<?xml')


def test_missing_dot_program_says_how_to_install_it(tmp_path, monkeypatch):
    x, _ = xy()
    dot = viz.make_dot(x * 2)
    monkeypatch.setenv('PATH', str(tmp_path))  # an empty folder: no dot on PATH
    for render in (lambda: dot.render(tmp_path / 'g', format='svg'),
                   lambda: dot.pipe(format='png')):
        with pytest.raises(RuntimeError, match='apt-get install graphviz') as info:
            render()
        assert 'brew install graphviz' in str(info.value)
        assert isinstance(info.value.__cause__, graphviz.ExecutableNotFound)
    assert 'MulBackward0' in dot.source  # the DOT text needs no program


def test_missing_graphviz_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, 'graphviz', None)
    x, _ = xy()
    with pytest.raises(ImportError, match=re.escape('pip install dynagrad[viz]')):
        viz.make_dot(x * 2)
    assert viz.graph_str(x * 2) == 'MulBackward0\n  AccumulateGrad (3,) float32'


def test_digits_demo_writes_the_graph_of_one_training_step(tmp_path, monkeypatch):
    from dynagrad.examples import digits
    dg.manual_seed(0)
    model = digits.DigitsNet()
    images, labels = dg.randn(4, 1, 8, 8), dg.tensor([0, 1, 2, 3])
    path = tmp_path / 'digits-graph.svg'
    if shutil.which('dot') is not None:
        assert digits.write_graph(model, images, labels, str(path)).endswith(str(path))
        text = path.read_text(encoding='utf-8')
        assert 'conv1.weight' in text and 'NllLossBackward0' in text
        path.unlink()
    monkeypatch.setenv('PATH', str(tmp_path))
    note = digits.write_graph(model, images, labels, str(path))
    assert "skipped: the 'dot' program is missing" in note and '\n' not in note
    assert not path.exists()


# -- graph_str ------------------------------------------------------------------------------

def test_graph_str_of_the_known_expression():
    x, y = xy()
    z = (x * y + x).sum()
    assert viz.graph_str(z, params={'x': x, 'y': y}) == (
        'SumBackward0\n'
        '  AddBackward0\n'
        '    MulBackward0\n'
        '      AccumulateGrad x (3,) float32\n'
        '      AccumulateGrad y (3,) float32\n'
        '    AccumulateGrad x (3,) float32 (see above)')
    assert viz.graph_str(z) == (
        'SumBackward0\n'
        '  AddBackward0\n'
        '    MulBackward0\n'
        '      AccumulateGrad (3,) float32\n'
        '      AccumulateGrad (3,) float32\n'
        '    AccumulateGrad (3,) float32 (see above)')


def test_graph_str_shares_subgraphs_across_outputs_and_handles_leaves():
    x, y = xy()
    h = x * y
    a, b = h.exp(), h.sin()
    c = dg.zeros(2, 3)
    assert viz.graph_str((a, b, x, c), params={'x': x, 'y': y}) == (
        'ExpBackward0\n'
        '  MulBackward0\n'
        '    AccumulateGrad x (3,) float32\n'
        '    AccumulateGrad y (3,) float32\n'
        'SinBackward0\n'
        '  MulBackward0 (see above)\n'
        'x (3,) float32 (a leaf: no backward graph)\n'
        '(2, 3) float32 (does not require grad: no backward graph)')


def test_graph_str_of_a_deep_chain_is_iterative():
    x = dg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + 1
    lines = viz.graph_str(y, params={'x': x}).split('\n')
    assert len(lines) == 3001
    assert lines[-1] == '  ' * 3000 + 'AccumulateGrad x (1,) float32'
